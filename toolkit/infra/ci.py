"""Facts about the CI job the toolkit runs in, read from the environment (standard library only)."""

from __future__ import annotations

import os


def github_actions() -> bool:
    """True inside a GitHub Actions job (``GITHUB_ACTIONS=true``): findings are then also written
    as workflow annotations (``toolkit/core/sarif.py``)."""
    return os.environ.get("GITHUB_ACTIONS") == "true"
