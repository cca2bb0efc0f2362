"""Budget tiers (``workgroup runtime budget``), standard library only.

The request is the reference library function's arguments, ``evaluateBudget(used, limit)``:
``{used, limit}``. The ratio ``used / limit`` picks the tier: below 0.7 ``NORMAL``, from 0.7
``SOFT`` (stop speculative fan-out, prefer a smaller mode), from 0.9 ``CHECKPOINT`` (stop
discretionary fan-out, persist a capsule), from 1.0 ``HARD`` (stop discretionary work, finish
the atomic safe step, persist, pause if mandatory work remains). A null or absent limit is
``UNBOUNDED``. Mandatory gates are always preserved.

Extension (the seed's "Leases, fan-out, and budgets"): an optional ``kind`` says what the
limit protects. ``efficiency`` (the default: money, input, output, duration, turns) behaves
exactly as above. ``safety`` and ``authentication`` boundaries are not fallen back from: when
hit they pause, so their ``HARD`` actions are ``PAUSE`` and ``PERSIST_CAPSULE`` and the result
carries ``kind`` and ``pause``. Without ``kind`` the result has the reference's four keys only.

Stricter than the reference: a given ``used`` must be a finite number >= 0 even without a limit
(the reference ignores it then), and booleans are not numbers.
"""

from __future__ import annotations

import math

from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.promotion_types import BudgetAnswer

BUDGET_STATES: tuple[str, ...] = ("UNBOUNDED", "NORMAL", "SOFT", "CHECKPOINT", "HARD")
BUDGET_KINDS: tuple[str, ...] = ("efficiency", "safety", "authentication")
SOFT_RATIO = 0.7
CHECKPOINT_RATIO = 0.9
HARD_RATIO = 1.0

_EFFICIENCY_ACTIONS: dict[str, list[str]] = {
    "UNBOUNDED": [],
    "NORMAL": [],
    "SOFT": ["STOP_SPECULATIVE_FANOUT", "PREFER_SMALLER_MODE"],
    "CHECKPOINT": ["STOP_DISCRETIONARY_FANOUT", "PERSIST_CAPSULE"],
    "HARD": [
        "STOP_DISCRETIONARY_WORK",
        "FINISH_ATOMIC_SAFE_STEP",
        "PERSIST_CAPSULE",
        "PAUSE_IF_MANDATORY_WORK_REMAINS",
    ],
}
# a safety or authentication boundary never degrades to a smaller mode: it stops and waits
_BOUNDARY_HARD_ACTIONS: list[str] = ["PAUSE", "PERSIST_CAPSULE"]


def _number(value: object) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuntimeOpError("INVALID_REQUEST")
    if isinstance(value, float) and not math.isfinite(value):
        raise RuntimeOpError("INVALID_REQUEST")
    return value


def _js_ratio(ratio: float) -> float | int:
    # printed as JavaScript prints numbers, so 1.0 is 1 (byte-compatible frames)
    return int(ratio) if ratio.is_integer() and abs(ratio) < 1e21 else ratio


def budget_state(ratio: float) -> str:
    """The tier for a finite, non-negative ratio."""
    if ratio >= HARD_RATIO:
        return "HARD"
    if ratio >= CHECKPOINT_RATIO:
        return "CHECKPOINT"
    if ratio >= SOFT_RATIO:
        return "SOFT"
    return "NORMAL"


def evaluate_budget(used: object, limit: object, kind: str | None = None) -> BudgetAnswer:
    """``{state, ratio, actions, mandatory_gates_preserved}`` (+ ``kind``, ``pause`` when kind is given)."""
    if kind is not None and kind not in BUDGET_KINDS:
        raise RuntimeOpError("INVALID_REQUEST")
    if used is not None and (_number(used) < 0):
        raise RuntimeOpError("INVALID_REQUEST")
    state, ratio = ("UNBOUNDED", None) if limit is None else _bounded_state(used, limit)
    boundary = kind in ("safety", "authentication")
    actions = list(_BOUNDARY_HARD_ACTIONS if boundary and state == "HARD" else _EFFICIENCY_ACTIONS[state])
    result: BudgetAnswer = {
        "state": state,
        "ratio": ratio,
        "actions": actions,
        "mandatory_gates_preserved": True,
    }
    if kind is not None:
        result["kind"] = kind
        result["pause"] = state == "HARD" and boundary
    return result


def _bounded_state(used: object, limit: object) -> tuple[str, float | int]:
    """(tier, ratio as JavaScript prints it) of ``used`` against a positive ``limit``; a limit
    that is not positive or a ratio that is not finite is ``INVALID_REQUEST``."""
    used_n, limit_n = _number(used), _number(limit)
    if limit_n <= 0:
        raise RuntimeOpError("INVALID_REQUEST")
    quotient = used_n / limit_n
    if not math.isfinite(quotient):
        raise RuntimeOpError("INVALID_REQUEST")
    return budget_state(quotient), _js_ratio(quotient)


def op_budget(request: Mapping[str, object], ctx: RuntimeContext) -> BudgetAnswer:
    """``workgroup runtime budget``: ``{used, limit, kind?}`` -> the tier and its actions."""
    kind = request.get("kind")
    if kind is not None and not isinstance(kind, str):
        raise RuntimeOpError("INVALID_REQUEST")
    return evaluate_budget(request.get("used"), request.get("limit"), kind)
