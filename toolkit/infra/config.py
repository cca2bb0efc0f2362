"""Read ``.workgroup/config.yml`` (PyYAML, imported lazily) into a plain, validated dict.

A missing file gives the defaults (the seed's ``context_efficiency:`` block plus toolkit
settings); a malformed or invalid file is refused with ``CONFIG_INVALID`` (exit 2) and a message
that names our keys only, never the file's content. ``fill_absent`` applies the rule of
DESIGN.md: request values always win, config only fills fields the request leaves out.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from toolkit.core.errors import InvalidInput
from toolkit.infra import confined
from toolkit.infra.boundedio import NOT_FOUND, FileRefused
from toolkit.infra.store import Layout
from toolkit.models.config import ContextEfficiency, ToolkitSettings, WorkgroupConfig

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

    from toolkit.core.jsontypes import JsonObject
    from toolkit.infra.config_shapes import LoadedConfig, RolloutDefaults, RoutingDefaults

MAX_CONFIG_BYTES = 65_536
CONFIG_INVALID = "CONFIG_INVALID"


def _config_path(layout_or_workdir: Layout | Path | str) -> Path:
    if isinstance(layout_or_workdir, Layout):
        return layout_or_workdir.config
    return Path(layout_or_workdir) / ".workgroup" / "config.yml"


def _read_text(path: Path) -> str | None:
    """The config through the confined layer (its work tree is ``path``'s grandparent): a
    ``.workgroup`` or ``config.yml`` symlink leaving the work tree, or a symlinked ``config.yml``,
    is ``PATH_OUTSIDE_REPOSITORY`` and is never read."""

    absolute = os.path.abspath(path)
    root = os.path.dirname(os.path.dirname(absolute))
    try:
        return confined.read_text(
            root, absolute, what=".workgroup/config.yml", limit=MAX_CONFIG_BYTES, missing_ok=True
        )
    except FileRefused as exc:
        if exc.code == NOT_FOUND:  # a dangling symlink: not absent, refused like any bad file
            raise InvalidInput(CONFIG_INVALID, ".workgroup/config.yml is a symlink to nothing") from None
        raise InvalidInput(CONFIG_INVALID, exc.message) from None


def read_config_text(path: Path) -> str | None:
    """The config's text through the bounded reader (``None`` when absent); ``CONFIG_INVALID`` otherwise."""
    return _read_text(path)


def parse_config_yaml(text: str) -> object:
    """YAML with the depth and error handling every config reader shares (any YAML value: the
    caller checks it is a mapping)."""
    return _parse_yaml(text)


def yaml_error_at(exc: BaseException) -> str:
    """`` (line L column C)`` where a YAML parser stopped, or ``""``: the position only, never the
    text there (the parser's own problem line quotes it)."""
    mark = getattr(exc, "problem_mark", None)
    line, column = getattr(mark, "line", None), getattr(mark, "column", None)
    return (
        f" (line {line + 1} column {column + 1})" if isinstance(line, int) and isinstance(column, int) else ""
    )


def _parse_yaml(text: str) -> object:
    import yaml  # lazy: only commands that read config pay for it

    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: an integer past Python's digit limit
        where = yaml_error_at(exc)
        raise InvalidInput(CONFIG_INVALID, f".workgroup/config.yml is not valid YAML{where}") from None
    except RecursionError:
        raise InvalidInput(CONFIG_INVALID, ".workgroup/config.yml nests too deeply") from None


def _describe(error: ErrorDetails, known: set[str]) -> str:
    # Only our own key names are printed; a misspelt (unknown) key is never echoed.
    location = [str(part) for part in error.get("loc", ()) if isinstance(part, str)]
    if error.get("type") == "extra_forbidden":
        parent = ".".join(part for part in location[:-1] if part in known) or "the top level"
        return f"unknown key in {parent}"
    named = ".".join(part for part in location if part in known)
    return f"{named or 'a value'} is invalid"


def validate_config(data: object) -> LoadedConfig:
    """Validate parsed YAML against ``WorkgroupConfig`` and return it with defaults filled in."""
    from pydantic import ValidationError

    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidInput(CONFIG_INVALID, ".workgroup/config.yml must be a mapping")
    try:
        model = WorkgroupConfig.model_validate(data)
    except ValidationError as exc:
        known = {
            "context_efficiency",
            "workgroup",
            "privacy",
            "artifact_paths",
            *ContextEfficiency.model_fields,
            *ToolkitSettings.model_fields,
        }
        details = sorted({_describe(error, known) for error in exc.errors()})
        raise InvalidInput(CONFIG_INVALID, ".workgroup/config.yml: " + "; ".join(details)) from None
    # the edge: the dump of the model just validated has the shape LoadedConfig declares
    # (tests/infra/test_config.py holds the two to the same keys in the same order)
    return cast("LoadedConfig", model.model_dump())


def load_config(layout_or_workdir: Layout | Path | str) -> LoadedConfig:
    """The effective configuration of a work tree (defaults when ``config.yml`` is absent)."""
    text = _read_text(_config_path(layout_or_workdir))
    return validate_config(None if text is None else _parse_yaml(text))


def default_config() -> LoadedConfig:
    return validate_config({})


def fill_absent(facts: Mapping[str, object], defaults: Mapping[str, object]) -> JsonObject:
    """``facts`` with each absent key taken from ``defaults``: request values always win."""
    merged = dict(facts)
    for key, value in defaults.items():
        merged.setdefault(key, value)
    return merged


def routing_defaults(config: LoadedConfig) -> RoutingDefaults:
    """The routing facts the config may fill (each under its own config key)."""
    block = config["context_efficiency"]
    return {
        "max_active_inherited": block["max_active_inherited"],
        "max_nesting_depth": block["max_nesting_depth"],
    }


def rollout_defaults(config: LoadedConfig) -> RolloutDefaults:
    block = config["context_efficiency"]
    return {"rollout": block["rollout"], "canary_percent": block["canary_percent"]}
