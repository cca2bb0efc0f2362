"""Lineage evaluation: every state, every invalidation code and its order, strict time (CEO-04, CEO-05)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.harness import runtime_call
from support.lineage_fixtures import HOT_LINEAGE, HOT_NOW, hot_current, hot_lineage

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.lineage import (
    CURRENT_KEYS,
    LINEAGE_FIELDS,
    MISMATCH_FIELDS,
    Invalidation,
    LineageState,
    evaluate_lineage,
    is_valid_lineage,
    op_lineage,
    reference_now,
)
from toolkit.runtime.op_types import LineageDecision
from toolkit.runtime.protocol import RuntimeContext, execute

NOW = HOT_NOW
LINEAGE = HOT_LINEAGE
lineage = hot_lineage
current = hot_current


_DEFAULT: Any = object()


def evaluate(lin: Any = _DEFAULT, cur: dict[str, Any] | None = None, now: Any = NOW) -> LineageDecision:
    return evaluate_lineage(lineage() if lin is _DEFAULT else lin, current() if cur is None else cur, now)


# a value that differs from the fixture's, for each compared field
OTHER_VALUE = {
    "platform": "codex",
    "workgroup_id": "kc-other",
    "role": "tester",
    "phase": "2B",
    "fix_loop_id": None,
    "spec_hash": "sha256:spec-v2",
    "scope_hash": "sha256:scope-v2",
    "checkpoint_sha": "1234567abcdef",
    "model": None,
    "effort": "high",
    "runtime_prefix_hash": "sha256:" + "d" * 64,
    "baseline_hash": None,
    "tools_hash": "sha256:tools-v2",
    "permissions_hash": "sha256:permissions-v2",
    "sensitivity": "restricted",
}


def test_schema_has_26_fields_and_current_16_keys() -> None:
    assert len(LINEAGE_FIELDS) == 26 and set(LINEAGE_FIELDS) == set(LINEAGE)
    assert len(CURRENT_KEYS) == 16 and "capsule_hash" in CURRENT_KEYS
    assert len(MISMATCH_FIELDS) == 15


def test_hot() -> None:
    assert evaluate() == {"state": "HOT", "invalidations": []}


@pytest.mark.parametrize("field,code", MISMATCH_FIELDS)
def test_each_field_invalidates_alone(field: str, code: Invalidation) -> None:
    # reference contract test 18: each of the 15 fields invalidates on its own
    assert evaluate(cur=current(**{field: OTHER_VALUE[field]})) == {
        "state": "INVALID",
        "invalidations": [code.value],
    }


def test_all_mismatches_reported_in_fixed_order() -> None:
    cur = current(**OTHER_VALUE, independent_reviewer=True)
    result = evaluate(lineage(resumable=False), cur)
    expected = ["REVIEW_LINEAGE_CONTAMINATION", *[code.value for _, code in MISMATCH_FIELDS], "NON_RESUMABLE"]
    assert result == {"state": "INVALID", "invalidations": expected}


def test_reviewer_contamination_with_role_mismatch() -> None:
    # the reference fixture "invalid-review-contamination"
    result = evaluate(cur=current(role="reviewer", independent_reviewer=True))
    assert result == {"state": "INVALID", "invalidations": ["REVIEW_LINEAGE_CONTAMINATION", "ROLE_MISMATCH"]}


@pytest.mark.parametrize("flag", [True, 1, "yes", [], {}])
def test_reviewer_flag_uses_javascript_truthiness(flag: Any) -> None:
    result = evaluate(cur=current(independent_reviewer=flag))
    assert result["invalidations"] == ["REVIEW_LINEAGE_CONTAMINATION"]


@pytest.mark.parametrize("flag", [False, 0, "", None])
def test_falsy_reviewer_flag_does_not_contaminate(flag: Any) -> None:
    assert evaluate(cur=current(independent_reviewer=flag))["state"] == "HOT"


def test_reviewer_over_non_builder_lineage_is_not_contamination() -> None:
    result = evaluate(lineage(role="tester"), current(role="tester", independent_reviewer=True))
    assert result["state"] == "HOT"


def test_non_resumable_alone() -> None:
    assert evaluate(lineage(resumable=False)) == {"state": "INVALID", "invalidations": ["NON_RESUMABLE"]}


def test_final_gate_comes_after_mismatches() -> None:
    assert evaluate(cur=current(final_gate=True)) == {"state": "INVALID", "invalidations": ["FINAL_GATE"]}
    assert evaluate(cur=current(final_gate=True, spec_hash="x"))["invalidations"] == ["SPEC_MISMATCH"]
    assert evaluate(cur=current(final_gate=1))["state"] == "HOT"  # strict === true


def test_capsule_change_requires_reconciliation() -> None:
    changed = current(capsule_hash="sha256:" + "f" * 64)
    assert evaluate(cur=changed) == {
        "state": "RECONCILE_REQUIRED",
        "invalidations": ["RECONCILIATION_REQUIRED"],
    }
    assert evaluate(cur=current(capsule_hash=None))["state"] == "RECONCILE_REQUIRED"
    assert evaluate(cur=current(reconcile_required=True))["state"] == "RECONCILE_REQUIRED"
    # final gate wins over reconciliation
    assert evaluate(cur=current(reconcile_required=True, final_gate=True))["invalidations"] == ["FINAL_GATE"]


def test_null_capsule_on_both_sides_is_unchanged() -> None:
    assert evaluate(lineage(capsule_hash=None), current(capsule_hash=None))["state"] == "HOT"


def test_leases() -> None:
    assert evaluate(now="2026-07-30T08:31:00Z") == {"state": "COLD_VALID", "invalidations": []}
    assert evaluate(now="2026-07-30T08:30:00Z")["state"] == "COLD_VALID"  # expiry instant is expired
    assert evaluate(now="2026-07-30T08:29:59.999Z")["state"] == "HOT"
    # compared in whole milliseconds, like Date.parse
    assert evaluate(now="2026-07-30T08:29:59.9999Z")["state"] == "HOT"
    # the same instant written with an offset
    assert evaluate(now="2026-07-30T10:30:00+02:00")["state"] == "COLD_VALID"
    # reference contract test 20: a null lease never authorizes a hot resume
    assert evaluate(lineage(lease_expires_at=None))["state"] == "COLD_VALID"


def test_scope_complete_without_continuation_is_cold() -> None:
    assert evaluate(cur=current(scope_complete=True))["state"] == "COLD_VALID"
    assert evaluate(cur=current(scope_complete=True, likely_continuation=True))["state"] == "HOT"
    assert evaluate(cur=current(scope_complete=True, likely_continuation="yes"))["state"] == "COLD_VALID"


@pytest.mark.parametrize("key", sorted(LINEAGE))
def test_missing_lineage_field_is_unknown_provenance(key: str) -> None:
    value = lineage()
    del value[key]
    assert evaluate(value) == {"state": "INVALID", "invalidations": ["UNKNOWN_PROVENANCE"]}


@pytest.mark.parametrize("key", CURRENT_KEYS)
def test_missing_current_key_is_unknown_provenance(key: str) -> None:
    cur = current()
    del cur[key]
    assert evaluate(cur=cur) == {"state": "INVALID", "invalidations": ["UNKNOWN_PROVENANCE"]}


BAD_FIELDS = [
    ("schema", "knowzcode.agent-lineage/v2"),
    ("lineage_id", ""),
    ("workgroup_id", "w" * 129),
    ("platform", "gemini"),
    ("platform_handle", ""),
    ("parent_lineage_id", 3),
    ("role", ""),
    ("scope", None),
    ("phase", "4"),
    ("fix_loop_id", "f" * 129),
    ("mode", "team"),
    ("model", ""),
    ("effort", 1),
    ("runtime_prefix_hash", "sha256:" + "B" * 64),
    ("runtime_prefix_hash", "sha256:" + "b" * 64 + "\n"),
    ("baseline_hash", "sha256:abc"),
    ("tools_hash", ""),
    ("permissions_hash", []),
    ("spec_hash", {}),
    ("scope_hash", True),
    ("checkpoint_sha", "abc123"),
    ("checkpoint_sha", None),
    ("capsule_hash", "md5:x"),
    ("sensitivity", "public"),
    ("created_at", "2026-02-31T00:00:00Z"),
    ("last_used_at", "2026-07-30 08:10:00Z"),
    ("resumable", 1),
    ("resumable", "true"),
    ("lease_expires_at", "2026-07-30T08:30:00"),
]


@pytest.mark.parametrize("key,value", BAD_FIELDS)
def test_invalid_field_is_unknown_provenance(key: str, value: Any) -> None:
    assert not is_valid_lineage(lineage(**{key: value}))
    assert evaluate(lineage(**{key: value})) == {"state": "INVALID", "invalidations": ["UNKNOWN_PROVENANCE"]}


def test_lengths_count_utf16_units_like_the_reference() -> None:
    # one astral character is two UTF-16 units: 64 of them fit maxLength 128, 65 do not
    assert is_valid_lineage(lineage(workgroup_id="\U0001f600" * 64))
    assert not is_valid_lineage(lineage(workgroup_id="\U0001f600" * 65))


@pytest.mark.parametrize("value", [None, 0, "", [], "lineage", 12, [LINEAGE]])
def test_non_object_lineage_is_unknown_provenance(value: Any) -> None:
    assert evaluate(value)["invalidations"] == ["UNKNOWN_PROVENANCE"]


def test_unknown_lineage_key_is_refused_closed_schema() -> None:
    assert evaluate(lineage(raw_transcript="x"))["invalidations"] == ["UNKNOWN_PROVENANCE"]


@pytest.mark.parametrize(
    "now",
    [
        "2026-02-31T00:00:00Z",  # reference contract test 19
        "2025-02-29T00:00:00Z",  # not a leap year
        "2026-07-30T08:20:00",  # no offset
        "2026-07-30T08:20:00+24:00",
        "2026-07-30t08:20:00z",
        "2026-07-30T08:20:60Z",
        "2026-07-30T08:20:00Z\n",
        "",
        None,
        1_785_000_000,
        [],
    ],
)
def test_now_must_be_strict(now: Any) -> None:
    with pytest.raises(RuntimeOpError) as info:
        evaluate(now=now)
    assert info.value.code == "INVALID_DATE_TIME"


def test_strict_now_is_checked_before_the_schema() -> None:
    with pytest.raises(RuntimeOpError):
        evaluate_lineage(None, {}, "yesterday")


def test_leap_day_now_is_accepted() -> None:
    assert evaluate(now="2028-02-29T00:00:00Z")["state"] == "COLD_VALID"


def test_states_enum_is_exhaustive() -> None:
    seen = {
        evaluate()["state"],
        evaluate(now="2026-08-01T00:00:00Z")["state"],
        evaluate(cur=current(reconcile_required=True))["state"],
        evaluate(lineage(resumable=False))["state"],
    }
    assert seen == {state.value for state in LineageState}


def test_op_defaults_now_to_the_clock_and_requires_current_object() -> None:
    ctx = RuntimeContext()
    # a lease far in the future: the clock's now is before it
    result = op_lineage(
        {"lineage": lineage(lease_expires_at="2999-01-01T00:00:00Z"), "current": current()}, ctx
    )
    assert result["state"] == "HOT"
    assert execute("lineage", {"lineage": lineage(), "current": []}, ctx)["code"] == "INVALID_REQUEST"
    assert execute("lineage", {"lineage": lineage()}, ctx)["code"] == "INVALID_REQUEST"
    # INVALID_REQUEST for current wins over a bad now, as in the reference's argument order
    assert (
        execute("lineage", {"lineage": lineage(), "current": 3, "now": "bad"}, ctx)["code"]
        == "INVALID_REQUEST"
    )
    assert (
        execute("lineage", {"lineage": lineage(), "current": current(), "now": None}, ctx)["code"]
        == "INVALID_DATE_TIME"
    )


def test_reference_now_format() -> None:
    from datetime import UTC, datetime

    assert reference_now(datetime(2026, 7, 30, 8, 20, 0, 123456, tzinfo=UTC)) == "2026-07-30T08:20:00.123Z"


def test_runtime_subprocess_frame() -> None:
    code, frame = runtime_call(
        "lineage", {"lineage": lineage(), "current": current(spec_hash="x"), "now": NOW}
    )
    assert (code, frame) == (
        0,
        {
            "ok": True,
            "operation": "lineage",
            "result": {"state": "INVALID", "invalidations": ["SPEC_MISMATCH"]},
        },
    )
    code, frame = runtime_call(
        "lineage", {"lineage": lineage(), "current": current(), "now": "2026-02-31T00:00:00Z"}
    )
    assert code == 1 and frame["code"] == "INVALID_DATE_TIME" and "2026" not in json.dumps(frame)


# ---------------------------------------------------------------- model agreement -------

FIELD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(alphabet=st.characters(max_codepoint=0xFFFF), max_size=9),
    st.sampled_from(
        [
            "",
            "abcdef1234567",
            "sha256:" + "e" * 64,
            "2026-07-30T08:00:00Z",
            "2026-02-30T08:00:00Z",
            "claude",
            "codex",
            "2B",
            "3",
            "resume",
            "isolated",
            "x" * 129,
            [],
            {},
        ]
    ),
)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.dictionaries(st.sampled_from(sorted(LINEAGE) + ["extra"]), FIELD_VALUES, max_size=4),
    st.lists(st.sampled_from(sorted(LINEAGE)), max_size=2),
)
def test_pydantic_model_agrees_with_the_runtime_validator(
    changes: dict[str, Any], removed: list[str]
) -> None:
    # The runtime checks lineages by hand (no pydantic on its path); the model is the file format's home.
    from pydantic import ValidationError

    from toolkit.models.lineage import AgentLineage

    value = lineage(**changes)
    for key in removed:
        value.pop(key, None)
    try:
        AgentLineage.model_validate(value)
        model_ok = True
    except ValidationError:
        model_ok = False
    assert model_ok == is_valid_lineage(value), value
