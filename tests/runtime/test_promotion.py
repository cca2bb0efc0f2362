"""Promotion gates, pair bounds, thresholds and the signed envelope (CEO-13, CEO-19)."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.promotion_data import EXPECT, KEY_ID, NOW, RUN_ID, KeyPair, pairs, set_all, signed

from toolkit.core.timefmt import format_utc
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.promotion import evaluate_promotion
from toolkit.runtime.promotion_report import quantile
from toolkit.runtime.promotion_types import GateMetrics, PromotionDecision
from toolkit.runtime.protocol import RuntimeContext, execute

KEY = KeyPair()
TRUSTED = {KEY_ID: KEY.public_pem}


def _evaluate(items: list[dict[str, Any]], thresholds: Any = None, **options: Any) -> PromotionDecision:
    envelope = options.pop("envelope", None)
    if envelope is None:
        envelope = signed(items, KEY)
    kwargs: dict[str, Any] = {
        "now": NOW,
        "consumed_run_ids": [],
        "trusted_keys": TRUSTED,
        **EXPECT,
        **options,
    }
    return evaluate_promotion(items, thresholds, envelope=envelope, **kwargs)


def _gate(items: list[dict[str, Any]], gate: str, thresholds: Any = None) -> bool:
    return bool(_evaluate(items, thresholds)["gates"][gate])


def test_measured_signed_pairs_promote() -> None:
    result = _evaluate(pairs())
    assert result["promote"] is True
    assert result["provenance_failures"] == []
    assert list(result["gates"]) == [
        "provenance",
        "sample_size",
        "strata",
        "median_cost",
        "p75_cost",
        "p95_cost",
        "median_wall_time",
        "quality",
        "rework",
        "security",
        "reconciliation",
    ]
    # every gate carries its value and threshold
    assert {row["gate"] for row in result["gate_details"]} == set(result["gates"])
    assert all({"value", "threshold", "comparison", "passed"} <= set(row) for row in result["gate_details"])


def test_quantiles_linear_at_n_minus_1_p() -> None:
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5  # position 1.5
    assert quantile([4.0, 1.0, 3.0, 2.0], 0.75) == pytest.approx(3.25)  # position 2.25, sorted first
    assert quantile([5.0], 0.95) == 5.0
    assert quantile([], 0.5) is None


# --- each gate at its boundary: just passing, just failing ------------------------------------------


def test_sample_size_boundary() -> None:
    assert _gate(pairs(), "sample_size") is True  # 40
    assert _gate(pairs()[:-1], "sample_size") is False  # 39


def test_strata_boundary() -> None:
    items = pairs()
    assert _gate(items, "strata") is True  # 8 in each
    moved = copy.deepcopy(items)
    moved[0]["stratum"] = "backend-refactor"  # small-tier2 now has 7 (id stays unique)
    result = _evaluate(moved)
    assert result["gates"]["strata"] is False and result["gates"]["sample_size"] is True


def test_median_cost_boundary() -> None:
    assert _gate(set_all(pairs(), "candidate", billed_cost=75), "median_cost") is True  # exactly 0.25
    assert _gate(set_all(pairs(), "candidate", billed_cost=75.01), "median_cost") is False


def test_p75_cost_boundary_with_tightened_threshold() -> None:
    # p75 of the reductions is never below the median, so it is tested with a stricter threshold.
    items = pairs()
    for pair in items[29:]:
        pair["candidate"]["billed_cost"] = 50  # reduction 0.5 for the top eleven (p75 sits at 29.25)
    assert quantile([(100 - p["candidate"]["billed_cost"]) / 100 for p in items], 0.75) == 0.5
    assert _gate(items, "p75_cost", {"p75_cost_reduction": 0.5}) is True
    assert _gate(items, "p75_cost", {"p75_cost_reduction": 0.5001}) is False


def test_p95_regression_boundary() -> None:
    items = pairs()
    for pair in items[-3:]:  # sorted positions 37..39; p95 sits at 37.05
        pair["candidate"]["billed_cost"] = 110  # regression exactly 0.10
    assert _gate(items, "p95_cost") is True
    items[-3]["candidate"]["billed_cost"] = 110.01
    items[-2]["candidate"]["billed_cost"] = 110.01
    items[-1]["candidate"]["billed_cost"] = 110.01
    assert _gate(items, "p95_cost") is False


def test_wall_time_boundary() -> None:
    assert _gate(set_all(pairs(), "candidate", wall_time_ms=850), "median_wall_time") is True  # 0.15
    assert _gate(set_all(pairs(), "candidate", wall_time_ms=851), "median_wall_time") is False


def test_quality_boundary() -> None:
    assert _gate(set_all(pairs(), "candidate", quality_score=93), "quality") is True  # drop 2 points
    assert _gate(set_all(pairs(), "candidate", quality_score=92.9), "quality") is False


def test_rework_boundary() -> None:
    base = set_all(pairs(), "baseline", rework_rounds=20)
    assert _gate(set_all(base, "candidate", rework_rounds=21), "rework") is True  # +5 % relative
    assert _gate(set_all(base, "candidate", rework_rounds=22), "rework") is False


def test_rework_zero_baseline() -> None:
    zero = set_all(pairs(), "baseline", rework_rounds=0)
    assert _gate(set_all(zero, "candidate", rework_rounds=0), "rework") is True
    result = _evaluate(set_all(zero, "candidate", rework_rounds=1))
    assert result["gates"]["rework"] is False
    assert (
        result["metrics"]["rework_relative_regression"] is None
    )  # infinite, printed as null like the reference
    json.dumps(result, allow_nan=False)  # the result is always valid JSON


def test_security_boundary() -> None:
    items = set_all(
        set_all(pairs(), "baseline", escaped_high_critical=1), "candidate", escaped_high_critical=1
    )
    assert _gate(items, "security") is True  # equal escapes
    items[5]["candidate"]["escaped_high_critical"] = 2
    assert _gate(items, "security") is False  # one pair with more escapes is enough


def test_reconciliation_boundary() -> None:
    assert _gate(set_all(pairs(), "candidate", event_accounted_total=1020), "reconciliation") is True  # 0.02
    assert _gate(set_all(pairs(), "candidate", event_accounted_total=1021), "reconciliation") is False
    assert _gate(set_all(pairs(), "candidate", event_accounted_total=979), "reconciliation") is False


def test_missing_provider_totals_fail_reconciliation() -> None:
    items = pairs()
    del items[7]["candidate"]["provider_reported_total"]
    result = _evaluate(items)
    assert result["metrics"]["provider_accounting_complete"] is False
    assert result["gates"]["reconciliation"] is False and result["promote"] is False
    items = pairs(provider_reported_total=None, event_accounted_total=None)
    assert _evaluate(items)["gates"]["reconciliation"] is False


def test_weakened_thresholds_are_ignored() -> None:
    weak = {
        "minimum_sample_size": 1,
        "minimum_per_stratum": 0,
        "required_strata": [],
        "median_cost_reduction": -1,
        "p75_cost_reduction": -1,
        "max_p95_regression": 10,
        "median_wall_time_reduction": -1,
        "max_quality_drop_points": 100,
        "max_rework_relative_regression": 100,
        "provider_reconciliation_tolerance": 1,
    }
    result = _evaluate(pairs()[:1], weak)
    assert result["thresholds"]["minimum_sample_size"] == 40
    assert result["gates"]["sample_size"] is False and result["gates"]["strata"] is False
    bad = _evaluate(set_all(pairs(), "candidate", billed_cost=90), weak)
    assert bad["gates"]["median_cost"] is False and bad["thresholds"]["median_cost_reduction"] == 0.25


def test_tightened_thresholds_apply() -> None:
    result = _evaluate(pairs(), {"median_cost_reduction": 0.5, "required_strata": ["extra-stratum"]})
    assert result["gates"]["median_cost"] is False
    assert result["gates"]["strata"] is False  # the extra required stratum has no pairs


@pytest.mark.parametrize(
    "thresholds",
    [
        [1],
        {"median_cost_reduction": "0.3"},
        {"x": None},
        {"max_p95_regression": True},
        {"required_strata": [1]},
    ],
)
def test_malformed_thresholds_are_errors(thresholds: Any) -> None:
    with pytest.raises(RuntimeOpError) as info:
        _evaluate(pairs(), thresholds)
    assert info.value.code == "PROMOTION_INPUT_INVALID"


# --- pair bounds and identity: violations are errors, not failed gates ------------------------------


def _mutate(path: str, value: Any) -> list[dict[str, Any]]:
    items = pairs()
    target: Any = items[3]
    *parents, leaf = path.split(".")
    for part in parents:
        target = target[part]
    if value is KeyError:
        del target[leaf]
    else:
        target[leaf] = value
    return items


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("id", "small-tier2-01"),  # duplicate id
        ("id", "task-acme-7"),  # not anonymous
        ("id", KeyError),
        ("stratum", "frontend"),
        ("baseline.billed_cost", 0),  # baseline cost must be > 0
        ("baseline.billed_cost", 1_000_000_000.5),  # above 1e9
        ("candidate.billed_cost", -1),
        ("baseline.wall_time_ms", 2_678_400_001),  # above 31 days
        ("candidate.quality_score", 101),
        ("candidate.rework_rounds", 0.5),
        ("baseline.escaped_high_critical", -1),
        ("candidate.escaped_high_critical", True),
        ("candidate.billed_cost", "60"),
        ("candidate.provider_reported_total", 0),
        ("candidate.event_accounted_total", 10.5),
        ("baseline", None),
    ],
)
def test_pair_violations_are_errors(path: str, value: Any) -> None:
    with pytest.raises(RuntimeOpError) as info:
        _evaluate(_mutate(path, value))
    assert info.value.code == "PROMOTION_INPUT_INVALID"


def test_pair_bounds_inclusive_edges_pass() -> None:
    items = pairs()
    items[0]["baseline"]["billed_cost"] = 1_000_000_000
    items[0]["candidate"]["billed_cost"] = 0
    items[1]["baseline"]["wall_time_ms"] = 2_678_400_000
    items[2]["candidate"]["quality_score"] = 100
    items[2]["baseline"]["quality_score"] = 0
    assert _evaluate(items)["metrics"]["sample_size"] == 40  # inclusive edges are accepted


@pytest.mark.parametrize("value", [[], {}, "pairs", None])
def test_pairs_must_be_non_empty_array(value: Any) -> None:
    with pytest.raises(RuntimeOpError):
        evaluate_promotion(value, now=NOW)


# --- provenance ------------------------------------------------------------------------------------


def _failures(items: list[dict[str, Any]] | None = None, **kwargs: Any) -> list[str]:
    items = items or pairs()
    result = _evaluate(items, **kwargs)
    assert result["gates"]["provenance"] is (not result["provenance_failures"])
    if result["provenance_failures"]:
        assert result["promote"] is False
    return list(result["provenance_failures"])


def test_unsigned_or_self_asserted_pairs_do_not_promote() -> None:
    assert _failures(envelope="not-an-envelope") == ["ENVELOPE_INVALID"]
    result = evaluate_promotion(pairs(), now=NOW, consumed_run_ids=[], trusted_keys=TRUSTED, **EXPECT)
    assert result["provenance_failures"] == ["ENVELOPE_MISSING"] and result["promote"] is False


def test_synthetic_or_unmeasured_pairs_never_promote() -> None:
    relabeled = pairs()
    for pair in relabeled:
        pair["provenance"] = {"kind": "synthetic-relabeled", "empirical": True, "promotion_authorized": True}
    assert _failures(relabeled) == ["PAIRS_NOT_MEASURED"]
    assert _failures(synthetic=True) == ["SYNTHETIC_DATA"]


def test_tampered_pairs() -> None:
    items = pairs()
    envelope = signed(items, KEY)
    tampered = copy.deepcopy(items)
    tampered[0]["candidate"]["billed_cost"] = 1
    assert _failures(tampered, envelope=envelope) == ["CORPUS_DIGEST_MISMATCH"]


def test_bad_signature_wrong_key_unknown_key() -> None:
    items = pairs()
    envelope = signed(items, KEY)
    assert _failures(items, envelope={**envelope, "signature": "AA=="}) == ["SIGNATURE_INVALID"]
    assert _failures(items, envelope={**envelope, "signature": "not base64!"}) == ["SIGNATURE_MALFORMED"]
    other = KeyPair()
    assert _failures(items, envelope=signed(items, other)) == ["SIGNATURE_INVALID"]  # trusted id, other key
    unknown = signed(items, KEY, signer_key_id="measurement-key-stranger")
    assert _failures(items, envelope=unknown) == ["UNTRUSTED_SIGNER_KEY"]
    # a field changed after signing breaks the signature
    assert _failures(items, envelope={**envelope, "measured_at": "2026-07-30T12:00:01Z"}) == [
        "SIGNATURE_INVALID"
    ]


def test_freshness_window_boundaries() -> None:
    items = pairs()
    at_edge = format_utc(NOW - timedelta(days=30))
    assert _failures(items, envelope=signed(items, KEY, measured_at=at_edge)) == []
    stale = format_utc(NOW - timedelta(days=30, seconds=1))
    assert _failures(items, envelope=signed(items, KEY, measured_at=stale)) == ["MEASUREMENT_STALE"]
    skew = format_utc(NOW + timedelta(minutes=5))
    assert _failures(items, envelope=signed(items, KEY, measured_at=skew)) == []
    future = format_utc(NOW + timedelta(minutes=5, seconds=1))
    assert _failures(items, envelope=signed(items, KEY, measured_at=future)) == ["MEASUREMENT_FROM_FUTURE"]


def test_replayed_run_in_callers_list() -> None:
    assert _failures(consumed_run_ids=[RUN_ID]) == ["RUN_ID_REPLAYED"]
    assert _failures(consumed_run_ids=["measurement-ffffffffffffffff"]) == []
    assert "CONSUMED_RUN_IDS_INVALID" in _failures(consumed_run_ids=None)


@pytest.mark.parametrize(
    ("option", "value", "code"),
    [
        ("expected_candidate_version", "candidate-v2", "CANDIDATE_VERSION_MISMATCH"),
        ("expected_corpus_version", "corpus-v2", "CORPUS_VERSION_MISMATCH"),
        ("expected_runtime_digest", "sha256:" + "2" * 64, "RUNTIME_DIGEST_MISMATCH"),
    ],
)
def test_version_and_digest_mismatches(option: str, value: str, code: str) -> None:
    options: dict[str, Any] = {option: value}
    assert _failures(None, **options) == [code]


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"accounting_source": "provider-reported"}, "ACCOUNTING_NOT_AUTHORITATIVE"),
        ({"promotion_authorized": False}, "PROMOTION_NOT_AUTHORIZED"),
        ({"pair_count": 39}, "PAIR_COUNT_MISMATCH"),
        ({"measurement_run_id": "measurement-xyz"}, "RUN_ID_INVALID"),
        ({"schema": "knowzcode.measurement-envelope/v1"}, "SCHEMA_INVALID"),
        ({"measured_at": "2026-07-30 12:00:00"}, "MEASURED_AT_INVALID"),
    ],
)
def test_signed_but_unacceptable_envelopes(overrides: dict[str, Any], code: str) -> None:
    items = pairs()
    assert code in _failures(items, envelope=signed(items, KEY, **overrides))


def test_envelope_key_set_is_exact() -> None:
    items = pairs()
    assert _failures(items, envelope=signed(items, KEY, omit=("candidate_version",))) == [
        "ENVELOPE_FIELDS_INVALID"
    ]
    assert _failures(items, envelope=signed(items, KEY, note="x")) == ["ENVELOPE_FIELDS_INVALID"]


# --- report-only additions -------------------------------------------------------------------------


def test_bootstrap_is_deterministic_and_report_only() -> None:
    items = pairs()
    for index, pair in enumerate(items):
        pair["candidate"]["billed_cost"] = 50 + index  # spread the reductions
    first, second = _evaluate(items), _evaluate(items)
    ci = first["report"]["bootstrap"]["median_cost_reduction"]
    assert ci == second["report"]["bootstrap"]["median_cost_reduction"]
    assert ci["low"] is not None and ci["estimate"] is not None and ci["high"] is not None
    assert ci["low"] <= ci["estimate"] <= ci["high"] and ci["low"] < ci["high"]
    assert [row["stratum"] for row in first["report"]["strata"]][:1] == ["small-tier2"]
    assert first["report"]["strata"][0]["n"] == 8


# --- the runtime op --------------------------------------------------------------------------------


def test_runtime_op_takes_the_library_arguments() -> None:
    items = pairs()
    request: dict[str, Any] = {
        "pairs": items,
        "options": {
            "measurement_envelope": signed(items, KEY),
            "now": "2026-07-31T12:00:00Z",
            "consumed_measurement_run_ids": [],
            "trusted_measurement_public_keys": TRUSTED,
            **EXPECT,
        },
    }
    frame = execute("promotion", request, RuntimeContext())
    assert frame["ok"] and frame["result"]["promote"] is True
    # keys may come from the reference's environment variable instead
    del request["options"]["trusted_measurement_public_keys"]
    ctx = RuntimeContext(environ={"KNOWZCODE_TRUSTED_MEASUREMENT_KEYS": json.dumps(TRUSTED)})
    assert execute("promotion", request, ctx)["result"]["promote"] is True
    assert execute("promotion", request, RuntimeContext(environ={}))["result"]["provenance_failures"] == [
        "UNTRUSTED_SIGNER_KEY"
    ]


def test_runtime_op_errors() -> None:
    assert execute("promotion", {"pairs": []}, RuntimeContext())["code"] == "PROMOTION_INPUT_INVALID"
    bad_now = {"pairs": pairs(), "options": {"now": "2026-02-30T00:00:00Z"}}
    assert execute("promotion", bad_now, RuntimeContext())["code"] == "INVALID_DATE_TIME"
    assert (
        execute("promotion", {"pairs": pairs(), "options": 3}, RuntimeContext())["code"] == "INVALID_REQUEST"
    )


def test_runtime_op_also_consults_the_repository_ledger(git_repo: Any) -> None:
    items = pairs()
    request = {
        "pairs": items,
        "options": {
            "measurement_envelope": signed(items, KEY),
            "now": "2026-07-31T12:00:00Z",
            "consumed_measurement_run_ids": [],
            "trusted_measurement_public_keys": TRUSTED,
            **EXPECT,
        },
    }
    ctx = RuntimeContext(cwd=str(git_repo.path), environ={})
    assert execute("promotion", request, ctx)["result"]["promote"] is True
    ledger = git_repo.path / ".git" / "workgroup" / "replay-ledger.jsonl"
    ledger.parent.mkdir(parents=True)
    ledger.write_text('{"torn":\n' + json.dumps({"measurement_run_id": RUN_ID}) + "\n", encoding="utf-8")
    result = execute("promotion", request, ctx)["result"]
    assert result["promote"] is False and result["provenance_failures"] == ["RUN_ID_REPLAYED"]
    assert not (git_repo.path / ".workgroup").exists()  # the runtime op itself never writes


_leaf = st.none() | st.booleans() | st.integers(-5, 2**54) | st.floats(allow_nan=False) | st.text(max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    index=st.integers(0, 39),
    side=st.sampled_from(["baseline", "candidate"]),
    field=st.sampled_from(
        [
            "billed_cost",
            "wall_time_ms",
            "quality_score",
            "rework_rounds",
            "escaped_high_critical",
            "provider_reported_total",
            "event_accounted_total",
            "extra",
        ]
    ),
    value=_leaf,
    thresholds=st.dictionaries(
        st.sampled_from(
            ["median_cost_reduction", "minimum_sample_size", "required_strata", "max_p95_regression", "zzz"]
        ),
        _leaf,
        max_size=2,
    ),
    now=st.sampled_from([None, "2026-07-31T12:00:00Z", "garbage"]),
)
def test_fuzz_promotion_op(
    index: int, side: str, field: str, value: Any, thresholds: dict[str, Any], now: str | None
) -> None:
    items = pairs()
    envelope = ENVELOPE_CACHE.setdefault("e", signed(items, KEY))
    items[index][side][field] = value
    options: dict[str, Any] = {
        "measurement_envelope": envelope,
        "consumed_measurement_run_ids": [],
        "trusted_measurement_public_keys": TRUSTED,
        **EXPECT,
    }
    if now is not None:
        options["now"] = now
    frame = execute(
        "promotion",
        {"pairs": items, "thresholds": thresholds, "options": options},
        RuntimeContext(environ={}),
    )
    if frame["ok"]:
        result = frame["result"]
        json.dumps(result, allow_nan=False)
        assert result["promote"] == all(result["gates"].values())
        assert result["thresholds"]["median_cost_reduction"] >= 0.25  # never weakened
    else:
        assert frame["code"] in {"PROMOTION_INPUT_INVALID", "INVALID_DATE_TIME"}


ENVELOPE_CACHE: dict[str, Any] = {}


def test_gate_table_is_one_named_rule_per_gate() -> None:
    from toolkit.runtime.promotion import GATES

    result = _evaluate(pairs())
    assert [name for name, _ in GATES] == list(result["gates"])
    assert len({rule for _, rule in GATES}) == len(GATES)  # no rule serves two gates
    # each rule alone answers its row: the same metrics give the same row as the evaluation
    # the rules read the metrics before JSON: the rework regression is a number (finite here)
    rework = result["metrics"]["rework_relative_regression"]
    assert rework is not None
    metrics: GateMetrics = {**result["metrics"], "rework_relative_regression": rework}
    limits = result["thresholds"]
    for (name, rule), row in zip(GATES, result["gate_details"], strict=True):
        passed, value, threshold, comparison = rule(metrics, limits, True)
        assert (name, bool(passed), threshold, comparison) == (
            row["gate"],
            row["passed"],
            row["threshold"],
            row["comparison"],
        )
        assert value == row["value"]


def _op(items: list[dict[str, Any]], envelope: Any) -> dict[str, Any]:
    options: dict[str, Any] = {"consumed_measurement_run_ids": [], "trusted_measurement_public_keys": TRUSTED}
    if envelope is not None:
        options["measurement_envelope"] = envelope
    frame = execute(
        "promotion", {"pairs": items, "options": {**options, **EXPECT}}, RuntimeContext(environ={})
    )
    return dict(frame)


@pytest.mark.parametrize("with_envelope", [True, False])
@pytest.mark.parametrize("value", [2**53, -(2**53), 10**30])
@pytest.mark.parametrize("side", ["baseline", "candidate"])
def test_a_number_rfc8785_cannot_represent_is_promotion_input_invalid(
    side: str, value: int, with_envelope: bool
) -> None:
    # the signer digests the pairs with RFC 8785, which has no exact form for such an integer, so
    # no validly signed envelope can hold it: an input error, envelope or not (never INVALID_REQUEST)
    items = pairs()
    envelope = signed(items, KEY) if with_envelope else None
    items[3][side]["provider_reported_total"] = value
    frame = _op(items, envelope)
    assert (frame["ok"], frame.get("code")) == (False, "PROMOTION_INPUT_INVALID")


@pytest.mark.parametrize("value", [2**53, 10**30, "lone \ud800 surrogate", {"\udfff": 1}])
def test_an_unread_pair_field_must_be_rfc8785_representable(value: Any) -> None:
    items = pairs()
    envelope = signed(items, KEY)
    items[0]["baseline"]["note"] = value
    assert _op(items, envelope).get("code") == "PROMOTION_INPUT_INVALID"
    items[0]["baseline"]["note"] = 2**53 - 1  # the largest safe integer is representable: evaluated
    frame = _op(items, envelope)
    assert frame["ok"] and "CORPUS_DIGEST_MISMATCH" in frame["result"]["provenance_failures"]


def test_envelope_check_never_raises_on_unrepresentable_data() -> None:
    from toolkit.core.canonical import NotCanonical, signing_bytes
    from toolkit.runtime.envelope import check_envelope, parse_trusted_keys

    with pytest.raises(NotCanonical) as caught:
        signing_bytes({"n": 2**53})
    assert caught.value.code == "NOT_CANONICAL_JSON" and caught.value.exit_code == 2
    items = pairs()
    envelope = signed(items, KEY)
    check = {
        "now": NOW,
        "consumed_run_ids": [],
        "expected_candidate_version": EXPECT["expected_candidate_version"],
        "expected_corpus_version": EXPECT["expected_corpus_version"],
        "expected_runtime_digest": EXPECT["expected_runtime_digest"],
        "trusted_keys": parse_trusted_keys(TRUSTED),
    }
    assert check_envelope(items, envelope, **check) == []
    bad_pairs = copy.deepcopy(items)
    bad_pairs[0]["baseline"]["provider_reported_total"] = 10**30
    assert check_envelope(bad_pairs, envelope, **check) == ["CORPUS_DIGEST_MISMATCH"]
    assert "SIGNATURE_INVALID" in check_envelope(items, {**envelope, "pair_count": 2**53}, **check)
