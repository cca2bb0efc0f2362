"""The JSON shapes the CM tools build (answers, pointer and index rows, packets, the report), each
declared once. For annotations only: import under ``if TYPE_CHECKING:`` (a ``TypedDict`` is a
plain dict at run time, so no output changes, and ``cm-log-event`` does not import this module).

A model-call row's fields are declared by ``toolkit.core.cm_usage_format``, not here. A value
copied from a row the log already holds (the first write of an exact retry) keeps the type
``object``: the log is read, not trusted.
"""

from __future__ import annotations

from typing import TypedDict


class WriteAnswer(TypedDict):
    """``cm-log-event``'s stdout object (the reference writer's keys, in its order)."""

    event_id: str
    run_id: str
    project_log: str | None
    global_log: str
    global_written: bool
    pointer_written: bool | None
    deduplicated: bool
    degraded: bool


class RunPointer(TypedDict):
    """The active-run pointer the writer keeps beside the project log."""

    schema_version: int
    run_id: object  # the written row's (the first write's, for an exact retry)
    workflow: str
    status: str
    global_log: str
    global_written: bool
    updated_at: object  # the written row's ``at``


class _IndexRowBase(TypedDict):
    schema_version: int
    at: object  # the written row's ``at``
    run_id: str
    status: str
    workflow: str
    runtime: str
    project: str


class IndexRow(_IndexRowBase, total=False):
    """One row of the global run index (``index.jsonl``): a run registered running, then done."""

    project_path: str | None  # the running row only
    specs_path: str | None  # the running row only
    log_file: str


class DegradeRow(TypedDict):
    """A ``degrade`` event: a mirror or pointer write that failed while the project log stands."""

    schema_version: object  # the envelope of the written row, copied
    run_id: object
    at: object
    workflow: object
    runtime: object
    project: object
    event: str
    phase: str
    detail: str
    error_type: str
    event_id: str


class InvocationsValue(TypedDict):
    """A run's replayed QA invocations as the log index stores them (``logindex``; JSON in SQLite)."""

    active: bool
    open_cases: list[str]
    start: dict[str, object] | None  # the invocation's start row, as the log holds it
    complete: dict[str, object] | None  # its complete row
    non_pass: bool
    passed_cases: list[str]
    ended: str | None


# --- cm-usage-report's JSON (the reference report's shape; the token names are the totalled token
# fields of ``cm_usage_format``, in its order: tests/cm/test_cm_usage_format.py holds them to it)


class ReportSummary(TypedDict):
    runs: int
    observed_calls: int
    unavailable_calls: int
    unresolved_claims: int
    invalid_calls: int
    outcomes: dict[str, int]
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    duration_ms: int
    duration_observed_calls: int


class UsageGroup(TypedDict):
    """Observed calls of one workflow, stage, role, adapter, model and outcome."""

    workflow: str
    stage: str
    role: str
    adapter: str
    model: str
    model_source: str
    outcome: str
    calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    duration_ms: int
    duration_observed_calls: int


class UnavailableGroup(TypedDict):
    workflow: str
    stage: str
    role: str
    outcome: str
    calls: int
    duration_ms: int
    duration_observed_calls: int


class UnresolvedGroup(TypedDict):
    workflow: str
    stage: str
    role: str
    adapter: str
    requested_model: str
    source: str
    claims: int


class NativeField(TypedDict):
    tokens: int | None  # None when no call reported the field
    observed_calls: int
    unavailable_calls: int


class NativeComponents(TypedDict):
    calls: int
    reasoning_is_output_subset: bool
    cache_counts_are_separate: bool
    fields: dict[str, NativeField]


class _UsageReportHead(TypedDict):
    schema_version: int
    source: str
    missing_usage_policy: str
    unresolved_claim_policy: str
    summary: ReportSummary
    groups: list[UsageGroup]
    unavailable_groups: list[UnavailableGroup]
    unresolved_groups: list[UnresolvedGroup]


class UsageReport(_UsageReportHead, total=False):
    """The report. ``native_components`` only when a native CLI call was counted; the last two are
    always there (declared here, after it, so the optional block keeps its place in the output)."""

    native_components: NativeComponents
    invalid_reasons: dict[str, int]
    unreadable_lines: int


# --- role packets (``toolkit.cm.packet``, ``toolkit.cm.assemble``)


class _DynamicPacketBase(TypedDict):
    workflow: str
    stage: str
    role: str
    objective: str
    identifiers: dict[str, object]
    constraints: list[str]
    expected_output: str


class DynamicPacket(_DynamicPacketBase, total=False):
    """A role packet's ``dynamic_packet`` (``packet.DYNAMIC_REQUIRED`` and ``DYNAMIC_OPTIONAL``):
    what the adapter's check lets through, or what ``workgroup packet`` assembles."""

    context: dict[str, object]  # the role's items: free JSON under fixed keys


class RolePacket(TypedDict):
    stable_prefix: dict[str, str]
    dynamic_packet: DynamicPacket


class PacketCheck(TypedDict):
    """``workgroup packet check``'s answer."""

    ok: bool
    role_known: bool
    prefix_digest: str
    missing: list[str]
    problems: list[str]


# --- the session boundary (``toolkit.cm.boundary``, ``toolkit.cm.session_boundary``)


class BoundaryDecision(TypedDict):
    """``Decision.as_dict``: a verdict, or the reason there is none."""

    workflow: str
    event: str
    boundary: bool
    verdict: str | None
    order: int | None
    no_verdict: str | None
    compact: bool
    command: str | None
    command_known: bool
    reason: str | None
    writes_handoff: bool


class HandoffWrite(TypedDict):
    written: bool
    path: str | None  # as displayed (relative to the project when inside it)
    reason: str | None  # why it was not written


class BoundaryReport(BoundaryDecision):
    """``workgroup boundary --json``: the decision (its reason as text), the language, the verdict
    lines and the handoff write."""

    lang: str
    lines: list[str]
    handoff: HandoffWrite | None
