"""The shapes ``workgroup usage`` builds: the price table, the report and its rows, the cost estimate,
the session view, the efficiency events and the status line's stored state; and what the counting
rules (``rules``) read of a decoded log line and of a kept call, whichever reader made them.

Each is a ``TypedDict`` (a plain dict at run time), declared once, its keys in the order the output
prints them. Imported only under ``TYPE_CHECKING`` (with ``from __future__ import annotations``):
the report, the status line and the worker processes never load this module or ``typing`` for it.
Its own annotations are evaluated (no ``from __future__ import annotations``), so a shape's optional
keys are known at run time too (``__required_keys__``, which the tests read).
"""

from collections.abc import Mapping
from datetime import date, tzinfo
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict

if TYPE_CHECKING:
    from toolkit.usage.rules import Pick

# -- prices and the cost estimate ------------------------------------------------------------------


class PriceTable(TypedDict):
    """The shipped table or a checked ``--prices FILE`` (``cost._check``): rates per million tokens."""

    source: str
    date: str
    currency: str
    unit: NotRequired[str]
    models: dict[str, dict[str, float]]


class PriceSource(TypedDict):
    source: str
    date: str
    currency: str


class EstimateRow(TypedDict):
    key: str
    amount: float | None  # None: every call of the group with tokens is unpriced
    unpriced_calls: int


class CostEstimate(TypedDict):
    """``--cost``: the report's ``estimate``."""

    label: str
    price_table: PriceSource
    rows: list[EstimateRow]
    total: float | None
    unpriced_calls: int
    carried_history_amount: float
    unpriced_calls_by_model: dict[str, int]


# -- the report --------------------------------------------------------------------------------------


class UsageTotals(TypedDict):
    """One group's verified counts (``fold.Totals.as_dict``)."""

    calls: int
    input: int
    output: int
    cache_write: int
    cache_read: int
    reasoning: int | None
    reread_share: float | None
    carried_history: int
    compactions: int
    subagent_share: float | None
    calls_without_final_usage: int


class ReportRow(TypedDict):
    """A report row: the group's key, then its ``UsageTotals``."""

    key: str
    calls: int
    input: int
    output: int
    cache_write: int
    cache_read: int
    reasoning: int | None
    reread_share: float | None
    carried_history: int
    compactions: int
    subagent_share: float | None
    calls_without_final_usage: int


class ReportNotes(TypedDict):
    """What the logs could not verify (``report.notes``)."""

    files_read: int
    bytes_read: int
    duplicate_lines_dropped: int
    unreadable_lines_skipped: int
    calls_without_final_usage: int
    codex_files_without_usage: int


class UsageReport(TypedDict):
    """``workgroup usage --json``: ``workgroup.usage-report/v1``."""

    schema: str
    by: str
    timezone: str
    rows: list[ReportRow]
    totals: UsageTotals
    notes: ReportNotes
    estimate: NotRequired[CostEstimate]  # --cost / --prices


class PageOptions(TypedDict):
    """The run's options as the HTML page states them (``html.Context`` less its notes)."""

    zone: tzinfo
    timezone: str | None
    source: str
    since: date | None
    until: date | None
    project: str | None


# -- the session view ------------------------------------------------------------------------------


class SubagentEntry(TypedDict):
    """A subagent thread folded under a main call: its number, first call time, then its totals."""

    subagent: int
    first_time: str
    calls: int
    input: int
    output: int
    cache_write: int
    cache_read: int
    reasoning: int | None
    reread_share: float | None
    carried_history: int
    compactions: int
    subagent_share: float | None
    calls_without_final_usage: int


class CallRow(TypedDict):
    """One main-thread call of ``workgroup usage session``."""

    time: str
    model: str
    input: int
    cache_write: int
    cache_read: int
    output: int
    reasoning: int | None
    carried_history: int
    compactions_before: int
    compactions_after: int
    resume: bool
    final_usage: bool
    subagents: list[SubagentEntry]


class SubagentsRow(TypedDict):
    """The row subagent calls fold under when the session has no main-thread call."""

    time: str
    model: str
    subagents: list[SubagentEntry]


class LogFacts(TypedDict):
    same_unit_discussion: bool
    declined: bool
    host_cannot_open: bool


class BoundaryVerdict(TypedDict):
    verdict: str | None
    order: int | None
    facts_from_log: LogFacts


class BoundaryPoint(TypedDict):
    """A compaction or resume point with the workflow's verdict and what was carried after it."""

    time: str
    kind: str
    verdict: str | None
    order: int | None
    facts_from_log: LogFacts
    calls_after: int
    carried_after: int


class SessionView(TypedDict):
    """``workgroup usage session ID --json``: ``workgroup.usage-session/v1``."""

    schema: str
    session: str
    source: str | None
    project: str | None
    workflow: str
    calls: list[CallRow | SubagentsRow]
    boundaries: list[BoundaryPoint]
    totals: UsageTotals
    resumed_from: str | None


# -- efficiency events -------------------------------------------------------------------------------


class LogicalCounts(TypedDict):
    estimated_context_occupancy: int
    compaction_count: int


class BilledCounts(TypedDict):
    uncached_input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int
    accounting_source: str


class SessionEvent(TypedDict):
    """One session's raw ``knowzcode.efficiency-event/v1`` (before the telemetry op normalizes it)."""

    schema: str
    event: str
    observed_at: str
    task_corpus_id: str
    provider: str
    runtime: str
    model: str
    mode: str | None
    logical: LogicalCounts
    billed: BilledCounts


class EventProvenance(TypedDict):
    reader: str
    source: str
    log_files: list[str]
    calls: int
    first_call_at: str
    last_call_at: str
    counts: str


class EventRecord(TypedDict):
    """One line of ``--emit-events`` (written with sorted keys)."""

    event: Mapping[str, object]  # what ``normalize_event`` returns
    provenance: EventProvenance


# -- the status line's stored state (``live``) -------------------------------------------------------

# a kept line as the state stores it (``live.pack``), a JSON array of 13: key, owner, time, sidechain,
# message id, model, speed, whether it has a stop reason, input, output, cache creation, cache read,
# [5 m, 1 h] writes or null (``live._checked`` checks each). It stays the list ``json.loads`` made:
# a tuple (the one exact type for it) costs a new object per call on every status-line refresh
# (measured: reading back a 50,000-call state took 1.6-3x as long, the cyclic collector walking
# the new tuples)
Packed = list[Any]


class FileStateDoc(TypedDict):
    ino: int
    size: int
    mtime_ns: int
    offset: int
    mark: str
    session: str
    picks: list[Packed]


class EarlierDoc(TypedDict):
    keys: list[str]
    ids: list[list[str | bool]]


class StateDoc(TypedDict):
    v: int
    files: dict[str, FileStateDoc]
    earlier: EarlierDoc


# -- what the counting rules read ---------------------------------------------------------------------
# A decoded Claude log line as either reader makes it (``claude._Line`` by msgspec, ``lean.Line`` by
# the byte scanner): the fields ``rules`` reads, read-only. Fields a log may leave out or set to
# anything are ``object`` (the rules check them); the counts are numbers once decoded.


class CacheCreationFields(Protocol):
    @property
    def ephemeral_5m_input_tokens(self) -> int: ...
    @property
    def ephemeral_1h_input_tokens(self) -> int: ...


class UsageFields(Protocol):
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cache_creation_input_tokens(self) -> int | None: ...
    @property
    def cache_read_input_tokens(self) -> int | None: ...
    @property
    def cache_creation(self) -> CacheCreationFields | None: ...
    @property
    def speed(self) -> object: ...


class MessageFields(Protocol):
    @property
    def id(self) -> object: ...
    @property
    def model(self) -> object: ...
    @property
    def stop_reason(self) -> str | None: ...
    @property
    def usage(self) -> UsageFields | None: ...


class LineFields(Protocol):
    @property
    def subtype(self) -> str | None: ...
    @property
    def timestamp(self) -> str | None: ...
    @property
    def sessionId(self) -> object: ...  # noqa: N802 - the log's spelling
    @property
    def requestId(self) -> object: ...  # noqa: N802
    @property
    def version(self) -> object: ...
    @property
    def cwd(self) -> object: ...
    @property
    def isSidechain(self) -> bool | None: ...  # noqa: N802
    @property
    def message(self) -> MessageFields | None: ...


class KeptCopy(Protocol):
    """A call inside one session's deduplication (``model.Call``, the status line's ``live._Rec``)."""

    dropped: bool

    @property
    def key(self) -> str | None: ...
    @property
    def msg_id(self) -> str | None: ...
    @property
    def sidechain(self) -> bool: ...
    @property
    def final(self) -> bool: ...
    @property
    def tokens(self) -> int: ...


class PickList(Protocol):
    """Where ``rules.admit_line`` appends a file's new calls (a list that may hold other items too)."""

    def append(self, pick: "Pick", /) -> None: ...


class PicksByKey(Protocol):
    """A file's calls by key (a dict, or the status line's ``live._First``)."""

    def get(self, key: str, /) -> "Pick | None": ...

    def __setitem__(self, key: str, pick: "Pick", /) -> None: ...
