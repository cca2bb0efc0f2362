"""The closed vocabularies are defined once (toolkit.runtime.vocabulary); models must not drift."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.runtime import vocabulary as v


def _enum(schema: dict[str, Any], field: str) -> tuple[str, ...]:
    """The enum of a property, following one $ref / anyOf level as pydantic emits them."""
    defs = schema.get("$defs", {})
    prop = schema["properties"][field]
    for candidate in [prop, *prop.get("anyOf", []), *([prop["items"]] if "items" in prop else [])]:
        if "$ref" in candidate:
            candidate = defs[candidate["$ref"].rsplit("/", 1)[1]]
        if "items" in candidate and "enum" not in candidate:
            candidate = candidate["items"]
            if "$ref" in candidate:
                candidate = defs[candidate["$ref"].rsplit("/", 1)[1]]
        if "enum" in candidate:
            return tuple(candidate["enum"])
    raise AssertionError(f"no enum for {field}")


@pytest.mark.parametrize(
    ("model", "field", "expected"),
    [
        ("toolkit.models.lineage:AgentLineage", "platform", v.PLATFORMS),
        ("toolkit.models.lineage:AgentLineage", "phase", v.PHASES),
        ("toolkit.models.lineage:AgentLineage", "mode", v.MODES),
        ("toolkit.models.lineage:AgentLineage", "sensitivity", v.SENSITIVITIES),
        ("toolkit.models.capsule:ContextCapsule", "phase", v.PHASES),
        ("toolkit.models.telemetry:EfficiencyEvent", "mode", v.MODES),
        ("toolkit.models.telemetry:EfficiencyEvent", "reason_codes", v.REASON_CODES),
    ],
)
def test_models_match_the_runtime_vocabulary(model: str, field: str, expected: tuple[str, ...]) -> None:
    import importlib

    module, name = model.split(":")
    schema = getattr(importlib.import_module(module), name).model_json_schema()
    assert set(_enum(schema, field)) == set(expected)


def test_runtime_modules_share_one_definition() -> None:
    from toolkit.runtime import lineage, rollout, router, telemetry

    assert router.MODES is v.MODES and rollout.MODES is v.MODES and lineage.MODES is v.MODES
    assert router.REASON_CODES is v.REASON_CODES and telemetry.REASON_CODES is v.REASON_CODES
    assert rollout.STRATA is v.STRATA
