"""Route with the provider's real capabilities: an unsupported mode degrades, nothing is fabricated."""

from __future__ import annotations

from toolkit.core.jsontypes import JsonObject
from toolkit.runtime.adapter import RuntimeContext
from toolkit.runtime.router import route_task
from toolkit.workflow.capabilities import fill_route_input

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolkit.runtime.route_types import RouteDecision

_ORDER_TAIL = "CAPABILITY_FALLBACK"


def route_for_provider(
    route_input: JsonObject,
    provider: str,
    *,
    workspace_root: str,
    active_writers: list[object] | None = None,
) -> RouteDecision:
    """Fill the router's capability facts from the table, route, and mark a degraded decision.

    The router already adds CAPABILITY_FALLBACK for unserved inheritance and teams; a compatible
    lineage the provider cannot resume is the one case it cannot see, so it is added here.
    """
    filled, lacking = fill_route_input(route_input, provider)
    decision = route_task(
        filled,
        workspace_root=workspace_root,
        ctx=RuntimeContext(cwd=workspace_root),
        active_writers=active_writers or [],
    )
    if lacking and decision["mode"] == "fresh-capsule" and _ORDER_TAIL not in decision["reason_codes"]:
        decision = {**decision, "reason_codes": [*decision["reason_codes"], _ORDER_TAIL]}
    return decision
