"""The answer shapes of toolkit.runtime.promotion_types (#25) against what ``workgroup runtime``
prints for promotion, budget, verification-plan and should-deep-query, and the runtime path free of
them: they are annotations only, never imported when an operation runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.harness import declared_keys, runtime_call, runtime_loads
from support.promotion_data import EXPECT, KEY_ID, KeyPair, pairs, set_all, signed

from toolkit.runtime.promotion_types import (
    BootstrapInterval,
    BudgetAnswer,
    DeepQueryAnswer,
    GateRow,
    PromotionDecision,
    PromotionMetrics,
    PromotionReport,
    StratumRow,
    Thresholds,
    VerificationPlan,
)

KEY = KeyPair()


def answer(op: str, request: dict[str, Any], cwd: Path | None = None) -> dict[str, Any]:
    code, frame = runtime_call(op, request, cwd=cwd)
    assert code == 0, frame
    result: dict[str, Any] = frame["result"]
    return result


def promotion_answer(items: list[dict[str, Any]], tmp_path: Path, **request: Any) -> dict[str, Any]:
    options = {
        "measurement_envelope": signed(items, KEY),
        "trusted_measurement_public_keys": {KEY_ID: KEY.public_pem},
        "consumed_measurement_run_ids": [],
        "now": "2026-07-31T12:00:00Z",
        **EXPECT,
    }
    return answer("promotion", {"pairs": items, "options": options, **request}, cwd=tmp_path)


def test_a_promotion_answers_in_its_shape(tmp_path: Path) -> None:
    result = promotion_answer(pairs(), tmp_path)
    assert result["promote"] is True  # every part is there: a trusted envelope, every gate passed
    assert list(result) == [key for key in declared_keys(PromotionDecision) if key != "recorded"]
    assert list(result["metrics"]) == declared_keys(
        PromotionMetrics
    )  # the provenance flags after the reference's
    assert list(result["thresholds"]) == declared_keys(Thresholds)
    assert [list(row) for row in result["gate_details"]] == [declared_keys(GateRow)] * 11
    assert list(result["report"]) == declared_keys(PromotionReport)
    for interval in result["report"]["bootstrap"].values():
        assert list(interval) == declared_keys(BootstrapInterval)
    rows = result["report"]["strata"]
    assert [list(row) for row in rows] == [declared_keys(StratumRow)] * 5


def test_a_required_stratum_without_pairs_has_a_short_row(tmp_path: Path) -> None:
    extra = {"thresholds": {"required_strata": ["unmeasured-stratum"]}}
    result = promotion_answer(pairs(), tmp_path, **extra)
    assert result["thresholds"]["required_strata"][-1] == "unmeasured-stratum"
    assert result["gates"]["strata"] is False
    rows = result["report"]["strata"]
    assert [list(row) for row in rows[:-1]] == [declared_keys(StratumRow)] * 5
    assert rows[-1] == {"stratum": "unmeasured-stratum", "n": 0}
    assert list(rows[-1]) == declared_keys(StratumRow)[:2]  # the stratum and n only


def test_an_infinite_rework_regression_is_null_in_place(tmp_path: Path) -> None:
    """The gates read the infinite regression (and fail); the answer prints it as null, in the
    same place among the metrics."""
    items = set_all(set_all(pairs(), "baseline", rework_rounds=0), "candidate", rework_rounds=1)
    result = promotion_answer(items, tmp_path)
    assert list(result["metrics"]) == declared_keys(PromotionMetrics)
    assert result["metrics"]["rework_relative_regression"] is None
    rework = next(row for row in result["gate_details"] if row["gate"] == "rework")
    assert (rework["passed"], rework["value"]) == (False, None)
    assert result["gates"]["rework"] is False and result["promote"] is False


@pytest.mark.parametrize(
    ("request_", "keys"),
    [
        ({"used": 1, "limit": 4}, 4),
        ({"used": 1, "limit": None}, 4),
        ({"used": 5, "limit": 4, "kind": "safety"}, 6),
    ],
)
def test_a_budget_answers_in_its_shape(request_: dict[str, Any], keys: int) -> None:
    assert (
        list(answer("budget", request_)) == declared_keys(BudgetAnswer)[:keys]
    )  # kind and pause with a kind


@pytest.mark.parametrize("tier", ["tdd", "microtask", "gate3", "audit-fix"])
def test_a_verification_plan_answers_in_its_shape(tier: str) -> None:
    assert list(answer("verification-plan", {"tier": tier})) == declared_keys(VerificationPlan)


@pytest.mark.parametrize("question", [None, "Which spec covers the token refresh?"])
def test_should_deep_query_answers_in_its_shape(question: str | None) -> None:
    assert list(answer("should-deep-query", {"question": question})) == declared_keys(DeepQueryAnswer)


@pytest.mark.parametrize(
    ("op", "request_"),
    [
        ("promotion", {"pairs": [], "options": {"now": "2026-07-31T12:00:00Z"}}),
        ("promotion", {"pairs": pairs(), "options": {"now": "2026-07-31T12:00:00Z"}}),  # every gate runs
        ("budget", {"used": 1, "limit": 2, "kind": "safety"}),
        ("verification-plan", {"tier": "gate3"}),
        ("should-deep-query", {"question": "Which spec covers the token refresh?"}),
    ],
)
@pytest.mark.usefixtures("without_coverage")  # what the child imports is the subject
def test_the_runtime_path_imports_no_annotation_module(op: str, request_: dict[str, Any]) -> None:
    assert (
        runtime_loads(op, request_, ("typing", "toolkit.runtime.promotion_types", "toolkit.core.jsontypes"))
        == []
    )
