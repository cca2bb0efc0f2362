"""The shapes of the runtime operations' answers, for annotations only (#25).

Every class here is a ``TypedDict``: a plain dict at run time, so an answer built against one is
byte for byte the JSON it was before. The operations import this module only under
``if TYPE_CHECKING:`` (``workgroup runtime OP`` does not import ``typing`` at run time); nothing
imports it at run time.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from toolkit.runtime.route_types import RouteDecision

# --- rollout -----------------------------------------------------------------------------


class RolloutDecision(TypedDict):
    """``select_rollout``: what is recorded and what executes, in the reference's key order."""

    rollout: str
    execute_recommendation: bool
    record_actual: bool
    record_recommendation: bool
    selected_mode: str | None
    canary_bucket: float | None


# --- result policy -----------------------------------------------------------------------


class ResultWrites(TypedDict):
    """The writes a result may make (``WRITE_KINDS``, in that order)."""

    handoff: bool
    artifact: bool
    vault: bool
    settings: bool
    workgroup: bool


class ResultPolicyDecision(TypedDict):
    """``resolve_result_policy``: ``{mode, write_prohibited, writes}``."""

    mode: str
    write_prohibited: bool
    writes: ResultWrites


# --- lineage -----------------------------------------------------------------------------


class LineageDecision(TypedDict):
    """``evaluate_lineage``: ``{state, invalidations}`` (the codes in the reference's order)."""

    state: str
    invalidations: list[str]


# --- dispatch ----------------------------------------------------------------------------


class DispatchDecision(TypedDict):
    """``dispatch``: the four parts in the reference's order (``lineage`` null without a lineage
    request, ``result_policy`` null without a result-policy request)."""

    routing: RouteDecision
    rollout: RolloutDecision
    lineage: LineageDecision | None
    result_policy: ResultPolicyDecision | None


# --- vault delta -------------------------------------------------------------------------


class SemanticDelta(TypedDict):
    """The normalized semantic view of a delta; hashed as sorted JSON, so its key order is free."""

    category: str | None
    title: str
    content: str
    semantic_key: str | None
    supersedes: str | None


class VaultDeltaDecision(TypedDict):
    """``evaluate_vault_delta``: ``{action, reason}``, plus ``KnowledgeId`` for amend and update."""

    action: str
    reason: str
    KnowledgeId: NotRequired[str]


# --- telemetry ---------------------------------------------------------------------------

Measure = int | float | bool | None
"""One checked measure of an efficiency event's namespace (``None``: not measured)."""
