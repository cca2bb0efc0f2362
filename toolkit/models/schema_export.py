"""The JSON Schemas in ``schemas/``, generated from the models: one file per entry of
``toolkit.models.registry`` (sorted keys, indent 2, trailing newline).
"""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING

from toolkit.models.registry import SCHEMA_MODELS

if TYPE_CHECKING:
    from pydantic import BaseModel

    from toolkit.core.jsontypes import JsonObject


def render_schema(target: str) -> str:
    """The schema text of ``module:Model``."""
    module_name, _, class_name = target.partition(":")
    model: type[BaseModel] = getattr(importlib.import_module(module_name), class_name)
    schema: JsonObject = model.model_json_schema(by_alias=True)  # the JSON that leaves, as pydantic built it
    return json.dumps(schema, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def render_all() -> tuple[dict[str, str], list[str]]:
    """``({file name: text}, [file names whose model is missing])``."""

    rendered: dict[str, str] = {}
    missing: list[str] = []
    for name, target in sorted(SCHEMA_MODELS.items()):
        try:
            rendered[name] = render_schema(target)
        except (ImportError, AttributeError):
            missing.append(name)
    return rendered, missing
