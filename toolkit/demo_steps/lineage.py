"""Demo step: lineage (not yet written)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.demo import Demo


def run(demo: Demo) -> None:
    return None
