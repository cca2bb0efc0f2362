"""The shapes the OTLP export reads and writes as JSON: the normalized efficiency event it maps, the
records live mode spools, the flusher's ``status.json``, the export's summary and the answer of
``telemetry record --json``.

Each is a ``TypedDict`` (a plain dict at run time), declared once, its keys in the order the JSON
holds them. Imported only under ``TYPE_CHECKING`` (with ``from __future__ import annotations``):
the runtime path (``toolkit.otel.live``) and the CLI never load this module for it. Its own
annotations are evaluated (no ``from __future__ import annotations``), so a shape's optional keys
are known at run time too (``__required_keys__``, which the tests read).
"""

from typing import NotRequired, TypedDict

from toolkit.runtime.op_types import Measure

# -- the normalized efficiency event (``toolkit.runtime.telemetry.normalize_event``) ----------------


class BilledPart(TypedDict):
    """The event's ``billed`` namespace: the provider's counters, the checked currency, the units
    and the accounting source (``unknown`` when the raw event named none)."""

    uncached_input_tokens: int | None
    cache_creation_input_tokens: int | None
    cache_read_input_tokens: int | None
    output_tokens: int | None
    amount: int | float | None
    currency: str | None
    units: int | float | None
    accounting_source: str


class EfficiencyEvent(TypedDict):
    """A ``knowzcode.efficiency-event/v1`` once ``normalize_event`` projected and checked it: what
    the telemetry log holds, ``telemetry record --json`` prints and an efficiency span is made of.
    ``logical`` and ``outcome`` hold every measure of their namespace (null when not reported)."""

    schema: str
    event: str
    observed_at: str
    task_corpus_id: str | None
    provider: str
    runtime: str | None
    model: str | None
    profile: str | None
    mode: str | None
    reason_codes: list[str]
    logical: dict[str, Measure]
    billed: BilledPart
    outcome: dict[str, Measure]


class RecordAnswer(TypedDict):
    """``telemetry record --json``."""

    recorded: bool
    event: EfficiencyEvent
    dropped_keys: list[str]


# -- decisions ---------------------------------------------------------------------------------------


class DecisionProjection(TypedDict):
    """What of a decision may leave (``spans.decision_projection``): vocabulary values only."""

    op: str
    mode: str
    reason_codes: list[str]
    rollout: str | None


# -- what live mode spools (one JSON line each; ``toolkit.infra.livespool``) -------------------------


class SpooledDecision(TypedDict):
    """A route or dispatch decision as ``live.decision_record`` spools it: the mode and reason codes
    as the answer gave them (the flusher checks them again before anything leaves)."""

    kind: str  # "decision"
    id: str
    op: str
    mode: object
    reason_codes: list[object]
    at: str
    duration_ms: float
    rollout: NotRequired[str]


class SpooledEfficiency(TypedDict):
    """A normalized efficiency event with the span key ``telemetry export`` gives it too."""

    kind: str  # "efficiency"
    key: str
    event: EfficiencyEvent


# -- the flusher's status.json (written with sorted keys: declared in that order) --------------------


class LastError(TypedDict):
    """The last failed delivery of this flusher (``attempts`` and ``http_status`` when a send was
    tried)."""

    at: str
    attempts: NotRequired[int]
    code: str
    http_status: NotRequired[int | None]
    reason: str


# an earlier flusher's last error, as carried over: its string and integer fields
CarriedError = dict[str, str | int]


class TracesStatus(TypedDict):
    """``signals.traces``: the state of the last attempt, where to, the last success and error."""

    endpoint: NotRequired[str]
    last_error: LastError | CarriedError | None
    last_success: str | None
    pending_batches: NotRequired[int]
    state: str | None


class NotSentSignal(TypedDict):
    """A signal live mode does not send, and why."""

    reason: str
    state: str


class StatusSignals(TypedDict):
    metrics: NotSentSignal
    traces: TracesStatus


class FlusherStatus(TypedDict):
    """``status.json`` (``error`` and ``message`` when the last attempt failed)."""

    at: str
    error: NotRequired[str]
    message: NotRequired[str]
    ok: bool
    pending: int
    signals: StatusSignals
    withheld: int


# -- telemetry export ----------------------------------------------------------------------------------


class SignalReport(TypedDict):
    """How one signal's send went (``sdk.Delivery.as_json``): ``http_status`` and ``reason`` when
    it was not delivered."""

    state: str
    endpoint: str
    items: int
    attempts: int
    http_status: NotRequired[int | None]
    reason: NotRequired[str]


class ExportSummary(TypedDict):
    """What ``telemetry export --otlp --json`` prints (``signals`` once both signals were sent)."""

    spans: int
    by_source: dict[str, int]
    metric_points: int
    older_than_since: int
    skipped: dict[str, int]
    withheld: int
    exported: bool
    signals: NotRequired[dict[str, SignalReport]]


__all__ = [
    "BilledPart",
    "CarriedError",
    "DecisionProjection",
    "EfficiencyEvent",
    "ExportSummary",
    "FlusherStatus",
    "LastError",
    "NotSentSignal",
    "RecordAnswer",
    "SignalReport",
    "SpooledDecision",
    "SpooledEfficiency",
    "StatusSignals",
    "TracesStatus",
]
