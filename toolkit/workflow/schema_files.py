"""The shipped ``schemas/`` folder: written from, or compared with, the models' rendered schemas.

The rendering is pure (``toolkit.models.schema_export``); reading and writing the folder is here,
above both the models and the file layer.
"""

from __future__ import annotations

from pathlib import Path

from toolkit.infra.resources import data_dir
from toolkit.infra.store import atomic_write
from toolkit.models.schema_export import render_all


def schemas_dir() -> Path:
    return data_dir("schemas")


def stale_schemas(directory: Path, rendered: dict[str, str]) -> list[str]:
    stale = []
    for name, text in rendered.items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale


def export(directory: Path, *, check: bool) -> tuple[list[str], list[str]]:
    """Write (or with ``check`` compare) every schema; returns ``(changed or stale, missing)``."""
    rendered, missing = render_all()
    stale = stale_schemas(directory, rendered)
    if not check:
        for name in stale:
            atomic_write(directory / name, rendered[name])
    return stale, missing
