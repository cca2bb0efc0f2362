"""Budget tiers (reference contract test 21; seed "Leases, fan-out, and budgets")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import runtime_call

from toolkit.runtime.budget import BUDGET_STATES, evaluate_budget
from toolkit.runtime.protocol import RuntimeContext, execute

SOFT = ["STOP_SPECULATIVE_FANOUT", "PREFER_SMALLER_MODE"]
CHECKPOINT = ["STOP_DISCRETIONARY_FANOUT", "PERSIST_CAPSULE"]
HARD = [
    "STOP_DISCRETIONARY_WORK",
    "FINISH_ATOMIC_SAFE_STEP",
    "PERSIST_CAPSULE",
    "PAUSE_IF_MANDATORY_WORK_REMAINS",
]


@pytest.mark.parametrize(
    ("used", "limit", "state", "actions"),
    [
        (0, 10, "NORMAL", []),
        (6.99, 10, "NORMAL", []),  # just below 0.7
        (7, 10, "SOFT", SOFT),  # 0.7 exactly is soft
        (8.99, 10, "SOFT", SOFT),
        (9, 10, "CHECKPOINT", CHECKPOINT),  # 0.9 exactly is a checkpoint
        (9.99, 10, "CHECKPOINT", CHECKPOINT),
        (10, 10, "HARD", HARD),  # 1.0 exactly is hard
        (25, 10, "HARD", HARD),
        (5, None, "UNBOUNDED", []),  # null limit
        (None, None, "UNBOUNDED", []),
    ],
)
def test_tiers(used: Any, limit: Any, state: str, actions: list[str]) -> None:
    result = evaluate_budget(used, limit)
    assert result["state"] == state and result["actions"] == actions
    assert result["mandatory_gates_preserved"] is True
    assert set(result) == {"state", "ratio", "actions", "mandatory_gates_preserved"}


def test_ratio_printed_like_javascript() -> None:
    code, frame = runtime_call("budget", {"used": 10, "limit": 10})
    assert code == 0
    assert frame == {
        "ok": True,
        "operation": "budget",
        "result": {"state": "HARD", "ratio": 1, "actions": HARD, "mandatory_gates_preserved": True},
    }
    assert evaluate_budget(1, 4)["ratio"] == 0.25
    assert evaluate_budget(1, None)["ratio"] is None


@pytest.mark.parametrize("kind", ["safety", "authentication"])
def test_safety_boundaries_pause(kind: str) -> None:
    hit = evaluate_budget(3, 3, kind)
    assert hit["state"] == "HARD" and hit["pause"] is True and hit["actions"] == ["PAUSE", "PERSIST_CAPSULE"]
    assert "PREFER_SMALLER_MODE" not in hit["actions"]
    assert evaluate_budget(1, 3, kind)["pause"] is False


def test_efficiency_budgets_checkpoint_and_fall_back() -> None:
    soft = evaluate_budget(75, 100, "efficiency")
    assert soft["pause"] is False and "PREFER_SMALLER_MODE" in soft["actions"]
    assert evaluate_budget(95, 100, "efficiency")["actions"] == CHECKPOINT
    assert evaluate_budget(100, 100, "efficiency")["pause"] is False


@pytest.mark.parametrize(
    "request_",
    [
        {"used": -1, "limit": 10},
        {"used": 1, "limit": 0},
        {"used": 1, "limit": -5},
        {"used": True, "limit": 10},
        {"used": "1", "limit": 10},
        {"limit": 10},  # used is required with a limit
        {"used": 1, "limit": 10, "kind": "money"},
        {"used": 1, "limit": 10, "kind": 3},
        {"used": 1e308, "limit": 1e-308},  # ratio overflows to infinity
    ],
)
def test_invalid(request_: dict[str, Any]) -> None:
    frame = execute("budget", request_, RuntimeContext())
    assert frame == {"ok": False, "code": "INVALID_REQUEST", "message": frame["message"]}


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, max_value=1e6), st.floats(min_value=1e-3, max_value=1e6))
def test_state_is_monotonic_in_ratio(used: float, limit: float) -> None:
    result = evaluate_budget(used, limit)
    ratio = used / limit
    assert result["state"] in BUDGET_STATES
    order = ["NORMAL", "SOFT", "CHECKPOINT", "HARD"]
    assert order.index(result["state"]) == sum(ratio >= t for t in (0.7, 0.9, 1.0))


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["used", "limit", "kind", "x"]),
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    )
)
def test_fuzz_never_crashes(request_: dict[str, Any]) -> None:
    frame = execute("budget", request_, RuntimeContext())
    assert frame["ok"] or frame["code"] == "INVALID_REQUEST"
