"""The CM model-call row format is declared once (toolkit/core/cm_usage_format.py); every other form
of it is derived. Each test here holds one derived form to the declaration, so a form edited by
hand (or a declaration change a form does not follow) fails:

* the writer's closed field lists and value rules (cm-log-event: data_json, model_event_rules);
* the report's constants and verdicts (cm-usage-report);
* the pydantic model and the committed JSON Schema (schemas/usage-event.schema.json);
* the OTel lists (the live spool's fields, the span attribute names).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from toolkit.cm import data_json, model_event_rules, report, shapes
from toolkit.cm.event_error import EventError
from toolkit.core import cm_usage_format as fmt
from toolkit.models.cm_event import ModelCallEvent, ModelUsageEvent, UsageEvent
from toolkit.otel.spans import CM_ATTRIBUTES

ROOT = Path(__file__).resolve().parents[2]
ENVELOPE_ROW: dict[str, Any] = {
    "schema_version": 1,
    "event_id": "e",
    "run_id": "usage-format-0001",
    "at": "2026-08-06T10:00:00+00:00",
    "workflow": "cm-prd",
    "runtime": "codex",
    "project": "p",
    "detail": "d",
}
# per kind: a value the declaration accepts, and values it refuses
GOOD: dict[str, Any] = {
    fmt.IDENTIFIER: "planner",
    fmt.CALL_ID: "call-0001",
    fmt.TEXT: "design",
    fmt.COUNT: 0,
    fmt.POSITIVE: 1,
}
BAD: dict[str, list[Any]] = {
    fmt.IDENTIFIER: ["1planner", "a b", "", 7],
    fmt.CALL_ID: ["-call", "c" * 129, "", 7],
    fmt.TEXT: ["", "   ", "two\nlines", "x" * (fmt.MAX_TEXT + 1), 7],
    fmt.COUNT: [-1, True, 2.5, "3"],
    fmt.POSITIVE: [0, -1, True, "2"],
    fmt.CHOICE: ["nope", "", 1],
}


def _good(spec: fmt.FieldSpec) -> Any:
    return spec.choices[0] if spec.kind == fmt.CHOICE else GOOD[spec.kind]


def _data(event: str) -> dict[str, Any]:
    """The smallest valid ``--data-json`` of ``event``: its required fields (observed usage carries
    the counts it requires)."""
    data = {spec.name: _good(spec) for spec in fmt.EVENTS[event][1] if spec.required}
    if event == "model_usage":
        data.update(dict.fromkeys(fmt.OBSERVED_REQUIRES, 1))
    return data


def _writer_accepts(event: str, data: dict[str, Any]) -> bool:
    try:
        parsed = data_json.parse_data(json.dumps(data), event)
        model_event_rules.validate_model_event(event, fmt.EVENTS[event][0], parsed)
    except EventError:
        return False
    return True


def _model_accepts(event: str, data: dict[str, Any]) -> bool:
    row = {**ENVELOPE_ROW, "event": event, "phase": fmt.EVENTS[event][0], **data}
    try:
        UsageEvent.model_validate(row)
    except ValidationError:
        return False
    return True


CASES = [(event, spec) for event, (_p, fields, _d) in fmt.EVENTS.items() for spec in fields]


@pytest.mark.parametrize("event", sorted(fmt.EVENTS))
def test_the_smallest_declared_row_is_valid_everywhere(event: str) -> None:
    data = _data(event)
    assert _writer_accepts(event, data) and _model_accepts(event, data)
    if event == "model_usage":
        row = {**ENVELOPE_ROW, "event": event, "phase": "complete", **data}
        assert isinstance(report.check_usage(row), tuple)


@pytest.mark.parametrize(("event", "spec"), CASES, ids=[f"{e}.{s.name}" for e, s in CASES])
def test_each_declared_field_is_checked_by_its_kind_in_the_writer_and_the_model(
    event: str, spec: fmt.FieldSpec
) -> None:
    base = _data(event)
    accepted = {**base, spec.name: _good(spec)}
    assert _writer_accepts(event, accepted), spec.name
    assert _model_accepts(event, accepted), spec.name
    for bad in BAD[spec.kind]:
        refused = {**base, spec.name: bad}
        assert not _writer_accepts(event, refused), (spec.name, bad)
        assert not _model_accepts(event, refused), (spec.name, bad)
    if spec.required:
        missing = {k: v for k, v in base.items() if k != spec.name}
        assert not _writer_accepts(event, missing) and not _model_accepts(event, missing), spec.name


@pytest.mark.parametrize("event", sorted(fmt.EVENTS))
def test_the_closed_field_list_is_the_declared_one(event: str) -> None:
    declared = fmt.FIELDS_OF[event]
    assert declared == {spec.name for spec in fmt.EVENTS[event][1]}
    extra = {**_data(event), "surplus_field": "x"}
    with pytest.raises(EventError) as refused:
        data_json.parse_data(json.dumps(extra), event)
    assert "the accepted fields are " + ", ".join(sorted(declared)) in refused.value.message
    assert not _model_accepts(event, extra)


def test_the_cross_field_rules_hold_in_the_writer_the_model_and_the_report() -> None:
    usage = _data("model_usage")
    part, whole = fmt.SUBSET_OF
    cases = {
        "unavailable with a count": {**usage, "usage_state": "unavailable"},
        "observed without a required count": {
            k: v for k, v in usage.items() if k != fmt.OBSERVED_REQUIRES[0]
        },
        "a part larger than its whole": {**usage, whole: 1, part: 2},
    }
    for what, data in cases.items():
        row = {**ENVELOPE_ROW, "event": "model_usage", "phase": "complete", **data}
        assert not _writer_accepts("model_usage", data), what
        assert not _model_accepts("model_usage", data), what
        assert isinstance(report.check_usage(row), str), what
    unavailable = {k: v for k, v in usage.items() if k not in fmt.TOKEN_FIELDS}
    unavailable["usage_state"] = "unavailable"
    assert _writer_accepts("model_usage", unavailable) and _model_accepts("model_usage", unavailable)


def test_the_pydantic_model_has_exactly_the_declared_fields() -> None:
    for model, event in ((ModelCallEvent, "model_call"), (ModelUsageEvent, "model_usage")):
        declared = (*fmt.ENVELOPE, *fmt.EVENTS[event][1])
        assert set(model.model_fields) == {spec.name for spec in declared}
        required = {name for name, info in model.model_fields.items() if info.is_required()}
        assert required == {spec.name for spec in declared if spec.required}
        assert model.__doc__ == fmt.EVENTS[event][2]


def test_the_committed_schema_is_the_declared_format() -> None:
    schema = json.loads((ROOT / "schemas" / "usage-event.schema.json").read_text(encoding="utf-8"))
    for event, (phase, fields, _doc) in fmt.EVENTS.items():
        model = schema["$defs"]["".join(p.capitalize() for p in event.split("_")) + "Event"]
        declared = (*fmt.ENVELOPE, *fields)
        assert set(model["properties"]) == {spec.name for spec in declared}
        assert set(model["required"]) == {spec.name for spec in declared if spec.required}
        assert model["properties"]["phase"]["const"] == phase
        for spec in fields:
            prop = model["properties"][spec.name]
            typed = prop["anyOf"][0] if "anyOf" in prop else prop
            if spec.kind == fmt.CHOICE:
                assert typed["enum"] == list(spec.choices)
            if spec.kind == fmt.COUNT:
                assert typed == {"minimum": 0, "type": "integer"}
            if spec.kind == fmt.TEXT:
                assert typed["maxLength"] == fmt.MAX_TEXT


def test_the_report_reads_the_declared_constants() -> None:
    assert report.IDENTITY_FIELDS == fmt.IDENTITY_FIELDS
    assert report.OUTCOMES == fmt.OUTCOMES
    assert report.NATIVE_FIELDS == fmt.TOKEN_FIELDS
    assert set(report.TOKEN_FIELDS) == set(fmt.TOKEN_FIELDS) - {fmt.SUBSET_OF[0]}
    assert report.CALL_ID.pattern == fmt.CALL_ID_PATTERN
    assert (report.MANAGED_ADAPTER, report.MANAGED_SOURCE) == (fmt.MANAGED_ADAPTER, fmt.MANAGED_SOURCE)
    row = {**ENVELOPE_ROW, "event": "model_usage", "phase": "complete", **_data("model_usage")}
    for spec in fmt.EVENTS["model_usage"][1]:
        if spec.kind in (fmt.CALL_ID, fmt.CHOICE):  # what the report judges by value
            assert isinstance(report.check_usage({**row, spec.name: BAD[spec.kind][0]}), str), spec.name


def test_the_report_shapes_name_the_declared_token_fields() -> None:
    """The report's JSON shapes (toolkit/cm/shapes.py) spell out the totalled token fields: in the
    declared order, and the summary the report starts from has exactly the declared keys."""
    summary = list(shapes.ReportSummary.__annotations__)
    assert summary[6:-2] == list(fmt.TOTALLED_TOKEN_FIELDS)
    assert list(report.Totals.empty(3).summary) == summary
    group = list(shapes.UsageGroup.__annotations__)
    assert group[group.index("calls") + 1 : -2] == list(fmt.TOTALLED_TOKEN_FIELDS)
    assert list(shapes.NativeComponents.__annotations__)[0] == "calls"


def test_the_otel_lists_are_the_declared_ones() -> None:
    assert CM_ATTRIBUTES == fmt.OTEL_ATTRIBUTES
    assert set(CM_ATTRIBUTES) <= fmt.EXPORTED  # an attribute can only come from a spooled field
    content = {"detail", "project", "project_path", "specs_path"}
    assert not content & fmt.EXPORTED
    assert fmt.EXPORTED == {spec.name for spec in fmt.ALL_FIELDS} - content


def test_the_usage_text_order_is_a_permutation_of_the_required_texts() -> None:
    texts = {s.name for s in fmt.EVENTS["model_usage"][1] if s.kind == fmt.TEXT and s.required}
    assert sorted(fmt.required_texts("model_usage")) == sorted(texts)
    assert fmt.choice_words(fmt.OUTCOMES) == "success, error, blocked, or cancelled"
    assert fmt.choice_words(fmt.USAGE_STATES) == "observed or unavailable"
