"""The shapes the router builds and reads, for annotations only (#25).

Every class here is a ``TypedDict``: a plain dict at run time, so a decision or evidence record
built against one is byte for byte the JSON it was before. ``toolkit.runtime.router`` and its
callers import this module only under ``if TYPE_CHECKING:`` (``workgroup runtime route`` does not
import ``typing`` at run time); nothing imports it at run time.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

# --- the decision --------------------------------------------------------------------------


class RouteDecision(TypedDict):
    """``route``: ``{mode, reason_codes}`` (the codes deduplicated, in the vocabulary's order)."""

    mode: str
    reason_codes: list[str]


# --- the persistent registry ---------------------------------------------------------------


class RegistryWriter(TypedDict):
    """One writer of the registry file as ``registry_writers`` checked it: a string lease expiry,
    and each path list, when present, a list of strings. The keys are in the order the owners
    command writes them (``toolkit.records.owners.LeaseRow``); the router does not check the
    lineage id or the acquisition time (the index and the owners command do)."""

    lineage_id: NotRequired[object]
    owned_files: NotRequired[list[str]]
    owned_globs: NotRequired[list[str]]
    resolved_owned_files: NotRequired[list[str]]
    acquired_at: NotRequired[object]
    lease_expires_at: str


# --- the routing evidence ------------------------------------------------------------------


class EvidenceSizes(TypedDict):
    """The non-negative integer sizes of the request (null when absent or of another type)."""

    capsule_bytes: int | None
    inherited_context_bytes: int | None
    expected_output_bytes: int | None


class InvalidationResult(TypedDict):
    """The lineage's state and its string invalidation codes, as the request gave them."""

    state: str | None
    invalidations: list[str]


class RoutingEvidence(TypedDict):
    """``routing_evidence``: the seed's evidence of one decision (typed fields only; anything else
    is null), in the order it is recorded."""

    schema: str
    recorded_at: str
    task_id: str | None
    node_id: str | None
    phase: str | None
    role: str | None
    owned_files: list[str]
    dependency_ready: bool | None
    blocking: bool | None
    coupling: str | None
    context_reuse: str | None
    sensitivity: str | None
    independent_reviewer: bool | None
    sizes: EvidenceSizes
    latency_priority: str | None
    lineage_candidate: str | None
    invalidation_result: InvalidationResult
    mode: str
    reason_codes: list[str]
