"""Verification tiers (VERIFY CEO-10; reference contract test 23)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import runtime_call

from toolkit.models.budget import BudgetRequest, VerificationPlanRequest
from toolkit.runtime.protocol import RuntimeContext, execute
from toolkit.runtime.verification import TIERS

FULL = ["full-tests", "static-analysis", "build", "package", "install-smoke"]


@pytest.mark.parametrize(
    ("request_", "checks", "consolidated"),
    [
        ({"tier": "tdd"}, ["targeted"], False),  # narrowest check inside a red-green loop
        ({"tier": "microtask"}, ["affected-surface"], False),  # affected surface at microtask completion
        ({"tier": "gate3"}, FULL, True),  # consolidated set before Gate 3
        ({"tier": "audit-fix"}, ["targeted"], False),  # audit fix without production change
        ({"tier": "audit-fix", "production_changed_after_full_green": False}, ["targeted"], False),
        ({"tier": "audit-fix", "production_changed_after_full_green": True}, ["targeted", *FULL], True),
        # the flag matters only for audit-fix
        ({"tier": "tdd", "production_changed_after_full_green": True}, ["targeted"], False),
    ],
)
def test_tiers(request_: dict[str, Any], checks: list[str], consolidated: bool) -> None:
    frame = execute("verification-plan", request_, RuntimeContext())
    assert frame["result"] == {"checks": checks, "consolidated_required": consolidated, "artifact_logs": True}


@pytest.mark.parametrize(
    "request_",
    [
        {},
        {"tier": "gate-3"},
        {"tier": "GATE3"},
        {"tier": None},
        {"tier": "audit-fix", "production_changed_after_full_green": "yes"},
    ],
)
def test_invalid(request_: dict[str, Any]) -> None:
    assert execute("verification-plan", request_, RuntimeContext())["code"] == "INVALID_REQUEST"


def test_end_to_end() -> None:
    code, frame = runtime_call("verification-plan", {"tier": "gate3"})
    assert code == 0 and frame["result"]["checks"] == FULL


def test_tiers_exact() -> None:
    assert TIERS == ("tdd", "microtask", "gate3", "audit-fix")


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["tier", "production_changed_after_full_green"]),
        st.none() | st.booleans() | st.sampled_from([*TIERS, "other"]) | st.integers(),
    )
)
def test_model_agrees_with_op(request_: dict[str, Any]) -> None:
    from pydantic import ValidationError

    frame = execute("verification-plan", request_, RuntimeContext())
    try:
        VerificationPlanRequest.model_validate(request_, strict=True)
        model_ok = True
    except ValidationError:
        model_ok = False
    assert frame["ok"] is model_ok


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "used": st.none() | st.integers(-5, 50) | st.floats(-1, 50, allow_nan=False),
            # limits whose ratio overflows to infinity are refused by the op; test_budget covers them
            "limit": st.none()
            | st.integers(-5, 50)
            | st.floats(-1, 50, allow_nan=False).filter(lambda x: abs(x) > 1e-9),
            "kind": st.none() | st.sampled_from(["efficiency", "safety", "authentication", "other"]),
        },
    )
)
def test_budget_model_agrees_with_op(request_: dict[str, Any]) -> None:
    from pydantic import ValidationError

    frame = execute("budget", request_, RuntimeContext())
    try:
        model = BudgetRequest.model_validate(request_, strict=True)
        model_ok = model.limit is None or model.used is not None
    except ValidationError:
        model_ok = False
    assert frame["ok"] is model_ok
