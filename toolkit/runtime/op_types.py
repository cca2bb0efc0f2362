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


# --- capsule -----------------------------------------------------------------------------
# The closed ``knowzcode.context-capsule/v1`` record (toolkit.core.capsule_schema declares it; a
# test holds these to its fields, their order and which may be left out). A capsule keeps the
# key order it came in with, ``capsule_hash`` last once sealed.


class SpecRef(TypedDict):
    """A spec the task must satisfy, with the verification ids that prove it."""

    path: str
    verify_ids: list[str]


class Failure(TypedDict):
    """A failed command with a bounded summary and, optionally, an artifact reference."""

    command: str
    summary: str
    artifact: str | None


class Evidence(TypedDict):
    """Optional evidence; the only part of a capsule that overflow may move into an artifact."""

    kind: str
    summary: str
    artifact: NotRequired[str | None]


class ContextCapsule(TypedDict):
    """A capsule that passed the closed schema (``prepare_capsule``'s sealed answer)."""

    schema: str
    task_id: str
    workgroup_id: str
    phase: str
    objective: str
    node_ids: list[str]
    owned_files: list[str]
    read_files: list[str]
    specs: list[SpecRef]
    approved_decisions: list[str]
    checkpoint_sha: str | None
    failures: list[Failure]
    risks: list[str]
    constraints: list[str]
    next_action: str
    evidence: NotRequired[list[Evidence]]
    artifact_refs: NotRequired[list[str]]
    capsule_hash: str


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
