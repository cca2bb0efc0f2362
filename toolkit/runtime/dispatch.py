"""Combined dispatch: lineage first, then routing, rollout and result policy in one decision.

Request (the reference's shape): ``{routing: {input} | input, rollout: {input} | input,
lineage?: {lineage, current, now?}, result_policy?: {input} | input}``.
Result: ``{routing, rollout, lineage | null, result_policy | null}``.

Rules (reference section 3 "Dispatch" and section 12):

* ``routing.role``/``routing.sensitivity`` that disagree with ``lineage.current`` are refused
  with ``DISPATCH_FACT_MISMATCH`` instead of silently weakening isolation (CEO-21).
* The lineage is evaluated before routing. Routing then takes the current role and
  sensitivity, ORs the independent-reviewer flag, and its ``lineage.compatible`` and
  ``lineage.resumable`` become ``state == HOT``: a caller's cached booleans never win over the
  lineage evaluated in the same request (CEO-05).
* Rollout's ``actual_mode`` and ``recommended_mode`` are both bound to the router's mode, so a
  canary or ``on`` stage can only execute the safe router result.

Routing goes through the router's own operation, so dispatch sees exactly what ``route`` sees
(workspace root, persistent active-writer registry). Standard library only.
"""

from __future__ import annotations

from toolkit.core.jscompat import js_strict_equal
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.lineage import evaluate_lineage, lineage_request_parts
from toolkit.runtime.result_policy import resolve_result_policy
from toolkit.runtime.rollout import select_rollout
from toolkit.runtime.router import op_route

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from toolkit.core.jsontypes import JsonObject
    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.op_types import DispatchDecision, LineageDecision, RolloutDecision
    from toolkit.runtime.route_types import RouteDecision

FACT_FIELDS: tuple[str, ...] = ("role", "sensitivity")
HOT = "HOT"


def _object(value: object) -> JsonObject:
    if not isinstance(value, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    return value


def _unwrap(value: object) -> object:
    """``x.input ?? x``: the reference accepts ``{input: {...}}`` or the facts themselves."""
    inner = value.get("input") if isinstance(value, dict) else None
    return value if inner is None else inner


def check_facts(routing_input: Mapping[str, object], current: Mapping[str, object]) -> None:
    """Refuse routing facts that contradict the lineage's current facts (both present, not equal)."""
    for name in FACT_FIELDS:
        if (
            name in routing_input
            and name in current
            and not js_strict_equal(routing_input[name], current[name])
        ):
            raise RuntimeOpError("DISPATCH_FACT_MISMATCH")


def reconcile_routing_input(
    routing_input: Mapping[str, object],
    lineage_record: object,
    current: Mapping[str, object],
    evaluated: Mapping[str, object],
) -> JsonObject:
    """The routing facts after the lineage evaluation: current facts win, compatibility is HOT only."""
    hot = evaluated["state"] == HOT
    prior = routing_input.get("lineage")
    record = lineage_record if isinstance(lineage_record, dict) else {}
    lineage_id = record.get("lineage_id")
    role = record.get("role")
    current_role = current.get("role")
    current_sensitivity = current.get("sensitivity")
    reconciled = dict(routing_input)
    reconciled["role"] = routing_input.get("role") if current_role is None else current_role
    reconciled["sensitivity"] = (
        routing_input.get("sensitivity") if current_sensitivity is None else current_sensitivity
    )
    reconciled["independent_reviewer"] = (
        routing_input.get("independent_reviewer") is True or current.get("independent_reviewer") is True
    )
    reconciled["lineage"] = {
        **(prior if isinstance(prior, dict) else {}),
        "lineage_id": lineage_id,
        "role": role,
        "compatible": hot,
        "resumable": hot,
    }
    return reconciled


def _route(routing_input: JsonObject, ctx: RuntimeContext) -> RouteDecision:
    return op_route({"input": routing_input}, ctx)


def _select_rollout(rollout_input: JsonObject, mode: str) -> RolloutDecision:
    # Bind both modes after the caller's fields: only the router's result may execute.
    return select_rollout({**rollout_input, "actual_mode": mode, "recommended_mode": mode})


def dispatch_with_facts(
    request: Mapping[str, object],
    ctx: RuntimeContext,
    router: Callable[[JsonObject, RuntimeContext], RouteDecision] | None = None,
) -> tuple[DispatchDecision, JsonObject]:
    """The dispatch result and the routing facts it was decided on (for routing evidence).

    ``router`` replaces the router's operation (the CLI's ``enabled: false`` answers ``local``
    without routing); lineage, fact checks, rollout and result policy still apply.
    """
    routing_input = _object(_unwrap(request.get("routing")))
    lineage_request = request.get("lineage")
    evaluated: LineageDecision | None = None
    if lineage_request is not None:
        parts = lineage_request if isinstance(lineage_request, dict) else {}
        record, current, now = lineage_request_parts(parts, ctx)
        check_facts(routing_input, current)
        evaluated = evaluate_lineage(record, current, now)
        routing_input = reconcile_routing_input(routing_input, record, current, evaluated)
    routing = (router or _route)(routing_input, ctx)
    rollout = _select_rollout(_object(_unwrap(request.get("rollout"))), routing["mode"])
    policy_input = _unwrap(request.get("result_policy"))
    result_policy = None if policy_input is None else resolve_result_policy(_object(policy_input))
    result: DispatchDecision = {
        "routing": routing,
        "rollout": rollout,
        "lineage": evaluated,
        "result_policy": result_policy,
    }
    return result, routing_input


def dispatch(request: Mapping[str, object], ctx: RuntimeContext) -> DispatchDecision:
    """Evaluate one combined dispatch request (see the module docstring for the rules)."""
    return dispatch_with_facts(request, ctx)[0]


def op_dispatch(request: Mapping[str, object], ctx: RuntimeContext) -> DispatchDecision:
    """``workgroup runtime dispatch``."""
    return dispatch(request, ctx)
