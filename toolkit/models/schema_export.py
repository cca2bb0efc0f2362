"""The JSON Schemas in ``schemas/``, generated from the models: one file per entry of
``toolkit.models.registry`` (sorted keys, indent 2, trailing newline).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def render_schema(target: str) -> str:
    """The schema text of ``module:Model``."""
    import importlib

    module_name, _, class_name = target.partition(":")
    model = getattr(importlib.import_module(module_name), class_name)
    schema: dict[str, Any] = model.model_json_schema(by_alias=True)
    return json.dumps(schema, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def render_all() -> tuple[dict[str, str], list[str]]:
    """``({file name: text}, [file names whose model is missing])``."""
    from toolkit.models.registry import SCHEMA_MODELS

    rendered: dict[str, str] = {}
    missing: list[str] = []
    for name, target in sorted(SCHEMA_MODELS.items()):
        try:
            rendered[name] = render_schema(target)
        except (ImportError, AttributeError):
            missing.append(name)
    return rendered, missing


def schemas_dir() -> Path:
    from toolkit.infra.resources import data_dir

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
    from toolkit.infra.store import atomic_write

    rendered, missing = render_all()
    stale = stale_schemas(directory, rendered)
    if not check:
        for name in stale:
            atomic_write(directory / name, rendered[name])
    return stale, missing
