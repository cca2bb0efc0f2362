"""Run lifecycle rules of ``cm-log-event``: resources, QA ``test_run`` invocations, completion.

The state of a run is the replay of the run's rows in the authoritative log (the project log with
``--specs-dir``, else the run's global log) under the writer's locks; the new event is checked
against it. The log's index (``logindex``) keeps that replay up to its offset, built with these
same functions (``replay_row``) and continued from there (``replay_into``); without it, ``replay``
reads the log from the start. Pure functions over plain rows; the readers take the log's lines as
bytes. Standard library only (the ``cm-*`` start-up path).

The rules (each numbered as in the parity issue):

1. ``resource`` events carry phase ``acquired``, ``released`` or ``cleanup_failed``, a
   ``resource_id`` (1-128 of ``A-Za-z0-9._-``, may start with a digit) and a ``resource_kind``
   (an identifier); ``acquired`` needs ``cleanup_required: true``. Per run and id: acquire once;
   ``released`` and ``cleanup_failed`` need the same kind as the acquisition; a released id is
   never acquired again; ``cleanup_failed`` may be followed by ``released``, never the reverse.
2. ``task_done``, ``run_done`` and ``done`` are refused while a resource is ``acquired`` or
   ``cleanup_failed``. A history that cannot be replayed (unreadable log, a row of the run that is
   not JSON or not a valid lifecycle row, a release with no acquisition) refuses resource and
   completion events as unverifiable.
3. ``test_run`` events with a phase form invocations: ``start`` opens one, ``case_start`` /
   ``case_complete`` / ``case_blocked`` open and close cases inside it, ``complete`` or
   ``abandoned`` close it, ``superseded`` retires a closed one. Completion is refused while an
   invocation is active, a case is open, or the last invocation ended abandoned or superseded. A
   ``complete`` with nothing active (rows written before phases were tracked) is ignored.
4. ``superseded`` is accepted only for the invocation that just completed, and only with reason
   ``declared_environment_failure`` (after a FAIL with failures: both case lists, a one-line
   reason) or ``host_evidence_problem`` (after a BLOCKED with no failures: the blocked cases).
   ``abandoned`` needs the active invocation, reason ``host_terminated`` and only PASS results.

An exact retry (the same ``event_id`` is already in the log) is answered deduplicated by the
writer before any of these checks run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from toolkit.cm import run_logs
from toolkit.core.errors import InvalidInput
from toolkit.core.strictjson import json_depth_exceeds

TYPE_CHECKING = False  # typing costs start-up on every event; type checkers read True
if TYPE_CHECKING:
    from typing import NoReturn

    from toolkit.core.jsontypes import JsonObject

RESOURCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
RESOURCE_PHASES = ("acquired", "released", "cleanup_failed")
OPEN_RESOURCE_PHASES = frozenset({"acquired", "cleanup_failed"})
TEST_RUN_PHASES = (
    "start",
    "case_start",
    "case_complete",
    "case_blocked",
    "complete",
    "abandoned",
    "superseded",
)
COMPLETION_EVENTS = frozenset({"task_done", "run_done", "done"})
# every field that binds a supersession or abandonment to its invocation
BINDING_FIELDS = (
    "repository_id",
    "run_id",
    "feature",
    "task",
    "package_digest",
    "qa_decision_id",
    "operation_id",
    "attempt",
    "mode",
    "case_count",
)
QA_WORKFLOW = "cm-ai"
QA_NODE = "N6"
MAX_ATTEMPT = 3
MAX_REASON_BYTES = 500
# A row the writer produced is at most ~10 KiB and 33 levels deep; anything far beyond is not ours
# (the limits are the log readers', ``run_logs.MAX_ROW_BYTES`` and ``MAX_ROW_DEPTH``: the same rows).
TOO_LARGE = "a log row of the run is too large or too deeply nested"


class LifecycleError(InvalidInput):
    """A refused event (exit 2). ``code`` is stable; ``message`` never echoes input values."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(code, message)


class Refused(LifecycleError):
    """The event is not allowed in the run's current state (or is malformed itself)."""


class Unverifiable(LifecycleError):
    """The run's history cannot be replayed, so no lifecycle decision can be made."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"resource state cannot be verified: {reason}", "STATE_UNVERIFIABLE")
        self.reason = reason


# ---------------------------------------------------------------- input checks (rule 1, 3)


def is_guarded(event: str, phase: str | None) -> bool:
    """Whether the event needs the run's replayed lifecycle before it may be written."""
    return event == "resource" or event in COMPLETION_EVENTS or (event == "test_run" and phase is not None)


def check_event(event: str, phase: str | None, data: Mapping[str, object]) -> None:
    """The shape rules of one new event, before any log is read. Raises ``Refused``."""
    if event == "resource":
        _check_resource_row(phase, data, Refused)
    elif event == "test_run" and phase is not None:
        _check_test_run_row(phase, data, Refused)


def _check_resource_row(
    phase: object, row: Mapping[str, object], error: type[LifecycleError]
) -> tuple[str, str]:
    """The row's checked (resource_id, resource_kind); ``error`` (or ``Unverifiable``) when malformed."""

    def fail(message: str, code: str) -> NoReturn:
        raise error(message, code) if error is Refused else Unverifiable("malformed resource row")

    if phase not in RESOURCE_PHASES:
        fail("resource events require phase acquired, released or cleanup_failed", "RESOURCE_PHASE")
    rid, kind = row.get("resource_id"), row.get("resource_kind")
    if not isinstance(rid, str) or not RESOURCE_ID.fullmatch(rid):
        fail("resource events require a valid resource_id", "RESOURCE_ID")
    if not isinstance(kind, str) or not IDENTIFIER.fullmatch(kind):
        fail("resource events require a valid resource_kind", "RESOURCE_KIND")
    if phase == "acquired" and row.get("cleanup_required") is not True:
        fail("resource acquisition requires cleanup_required: true", "CLEANUP_REQUIRED")
    return rid, kind


def _check_test_run_row(phase: object, row: Mapping[str, object], error: type[LifecycleError]) -> str | None:
    """The row's checked ``case_id`` (None for a phase without one); ``error`` (or
    ``Unverifiable``) when malformed."""
    if phase not in TEST_RUN_PHASES:
        if error is Refused:
            raise Refused("test_run phase must be one of " + ", ".join(TEST_RUN_PHASES), "TEST_RUN_PHASE")
        raise Unverifiable("malformed test_run row")
    if phase.startswith("case_"):
        case_id = row.get("case_id")
        if not isinstance(case_id, str) or not RESOURCE_ID.fullmatch(case_id):
            if error is Refused:
                raise Refused("test_run case events require a valid case_id", "CASE_ID")
            raise Unverifiable("malformed test_run case row")
        return case_id
    return None


# ---------------------------------------------------------------- resources (rules 1, 2)


class IndexedStates:
    """Resource states kept outside (a log index), read one id at a time; what ``Resources.apply``
    sets stays in ``changed`` until the owner writes it back."""

    def __init__(
        self, lookup: Callable[[str], tuple[str, str] | None], open_ids: Callable[[], Iterable[str]]
    ) -> None:
        self._lookup, self._open_ids = lookup, open_ids
        self.changed: dict[str, tuple[str, str]] = {}

    def get(self, resource_id: str) -> tuple[str, str] | None:
        if resource_id in self.changed:
            return self.changed[resource_id]
        return self._lookup(resource_id)

    def __setitem__(self, resource_id: str, value: tuple[str, str]) -> None:
        self.changed[resource_id] = value

    def unclosed(self) -> list[str]:
        """The ids left acquired or failed: those the index holds open, and those changed since."""
        candidates = set(self._open_ids()) | set(self.changed)
        return sorted(
            rid
            for rid in candidates
            if (found := self.get(rid)) is not None and found[0] in OPEN_RESOURCE_PHASES
        )


@dataclass
class Resources:
    """Each resource id of one run: (last phase, kind)."""

    states: dict[str, tuple[str, str]] | IndexedStates = field(default_factory=dict)

    def apply(self, resource_id: str, kind: str, phase: str) -> None:
        """Apply one transition or raise ``Refused`` (the state is unchanged then)."""
        previous = self.states.get(resource_id)
        if previous is None:
            if phase != "acquired":
                raise Refused("resource release has no acquisition", "RESOURCE_NOT_ACQUIRED")
            self.states[resource_id] = (phase, kind)
            return
        last, first_kind = previous
        if kind != first_kind:
            raise Refused("resource_kind does not match its acquisition", "RESOURCE_KIND_MISMATCH")
        if phase == "acquired":
            if last == "acquired":
                raise Refused(
                    "active resource_id already has an acquisition; acquire a new resource_id",
                    "RESOURCE_LIVE",
                )
            raise Refused(
                f"{'released' if last == 'released' else 'failed-cleanup'} resource_id cannot be reused; "
                "acquire a new resource_id",
                "RESOURCE_REUSED",
            )
        if phase == "cleanup_failed" and last == "released":
            raise Refused("a released resource cannot fail cleanup", "RESOURCE_RELEASED")
        self.states[resource_id] = (phase, kind)

    def unclosed(self) -> list[str]:
        if isinstance(self.states, IndexedStates):
            return self.states.unclosed()
        return sorted(rid for rid, (phase, _) in self.states.items() if phase in OPEN_RESOURCE_PHASES)


# ---------------------------------------------------------------- QA invocations (rules 3, 4)


@dataclass
class Invocations:
    """The QA ``test_run`` invocations of one run, replayed in log order."""

    active: bool = False
    open_cases: set[str] = field(default_factory=set)
    start: JsonObject | None = None
    complete: JsonObject | None = None
    non_pass: bool = False
    passed_cases: set[str] = field(default_factory=set)
    ended: str | None = None  # "complete", "abandoned" or "superseded" for the last invocation

    def apply(self, row: Mapping[str, object], case_id: str | None) -> None:
        """Apply one ``test_run`` row with a phase, or raise ``Refused``; ``case_id`` is the row's,
        as ``_check_test_run_row`` returned it."""
        phase = row["phase"]
        if phase == "complete" and not self.active and not self.open_cases:
            return  # a legacy complete without a tracked invocation: nothing to close
        if phase == "start":
            if self.active:
                raise Refused("test_run start while an invocation is active", "QA_ACTIVE")
            self.active, self.start, self.complete = True, dict(row), None
            self.open_cases, self.passed_cases, self.non_pass, self.ended = set(), set(), False, None
        elif phase == "case_start":
            assert case_id is not None  # a case phase's row holds a checked case id
            self._need_active("case_start")
            if case_id in self.open_cases:
                raise Refused("test_run case already started", "QA_CASE_OPEN")
            self.open_cases.add(case_id)
        elif phase in ("case_complete", "case_blocked"):
            assert case_id is not None
            self._need_active(phase)
            if case_id not in self.open_cases:
                raise Refused("test_run case has no case_start", "QA_CASE_NOT_STARTED")
            self.open_cases.discard(case_id)
            if phase == "case_complete" and row.get("result") == "PASS":
                self.passed_cases.add(case_id)
            else:
                self.non_pass = True
        elif phase == "complete":
            self._need_active("complete")
            if self.open_cases:
                raise Refused("test_run complete has unfinished cases", "QA_CASES_OPEN")
            self.active, self.complete, self.ended = False, dict(row), "complete"
        elif phase == "abandoned":
            check_abandonment(self, row)
            self.active, self.open_cases, self.ended = False, set(), "abandoned"
        else:  # superseded
            check_supersession(self, row)
            self.ended = "superseded"

    def _need_active(self, phase: str) -> None:
        if not self.active:
            raise Refused(f"test_run {phase} has no active invocation", "QA_NOT_ACTIVE")

    def blockers(self) -> list[str]:
        """Why completion is refused now (empty: allowed)."""
        reasons = []
        if self.active:
            reasons.append("active invocation")
        if self.open_cases:
            reasons.append("open cases: " + ", ".join(sorted(self.open_cases)))
        if self.ended in ("abandoned", "superseded"):
            reasons.append(f"last invocation {self.ended}")
        return reasons


def _bound(row: Mapping[str, object], *others: Mapping[str, object] | None) -> bool:
    """Every binding field present on the row and equal (same JSON type) on each other row."""
    for name in BINDING_FIELDS:
        value = row.get(name)
        if value is None:
            return False
        for other in others:
            if other is None or name not in other or not _same(other[name], value):
                return False
    return True


def _same(left: object, right: object) -> bool:
    return type(left) is type(right) and left == right


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _case_list(value: object, expected: object) -> bool:
    """Unique valid case ids, exactly ``expected`` of them."""
    count = _count(expected)
    return (
        isinstance(value, list)
        and count is not None
        and len(value) == count
        and all(isinstance(item, str) and RESOURCE_ID.fullmatch(item) for item in value)
        and len(set(value)) == len(value)
    )


def _one_line(value: object) -> bool:
    return (
        isinstance(value, str)
        and bool(value.strip())
        and len(value.encode("utf-8", "surrogatepass")) <= MAX_REASON_BYTES
        and not any(ch in value for ch in ("\r", "\n", "\0"))
    )


def _qa_scope(state: Invocations, row: Mapping[str, object]) -> bool:
    """The invocation is cm-ai's N6 QA, under the attempt limit, and the row names its start."""
    start = state.start
    attempt = _count(start.get("attempt")) if start else None
    return (
        start is not None
        and attempt is not None
        and attempt < MAX_ATTEMPT
        and row.get("workflow") == QA_WORKFLOW
        and row.get("node") == QA_NODE
        and _same(row.get("previous_test_run_id"), start.get("operation_id"))
    )


def check_supersession(state: Invocations, row: Mapping[str, object]) -> None:
    """Rule 4: retire the just-completed invocation for one of the two declared reasons."""
    complete = state.complete
    base_ok = (
        not state.active
        and not state.open_cases
        and state.ended == "complete"
        and complete is not None
        and _qa_scope(state, row)
        and _bound(row, state.start, complete)
    )
    reason = row.get("reason")
    if reason == "declared_environment_failure":
        failed = _count(complete.get("failed")) if complete else None
        if not (
            base_ok
            and complete is not None
            and complete.get("result") == "FAIL"
            and failed is not None
            and failed > 0
            and _case_list(row.get("failed_cases"), complete.get("failed"))
            and _case_list(row.get("blocked_cases"), complete.get("blocked"))
            and _one_line(row.get("environment_failure_reason"))
        ):
            raise Refused(
                "QA environment-failure supersession requires the matching completed FAIL invocation, "
                "both case lists and a one-line reason",
                "QA_SUPERSEDE_ENVIRONMENT",
            )
        return
    if reason == "host_evidence_problem":
        blocked = _count(complete.get("blocked")) if complete else None
        if not (
            base_ok
            and complete is not None
            and complete.get("result") == "BLOCKED"
            and _count(complete.get("failed")) == 0
            and blocked is not None
            and blocked > 0
            and _case_list(row.get("blocked_cases"), blocked)
        ):
            raise Refused(
                "QA superseded requires the matching completed BLOCKED invocation and blocked_cases",
                "QA_SUPERSEDE_BLOCKED",
            )
        return
    raise Refused(
        "QA superseded requires reason declared_environment_failure or host_evidence_problem",
        "QA_SUPERSEDE_REASON",
    )


def check_abandonment(state: Invocations, row: Mapping[str, object]) -> None:
    """The active invocation may be abandoned by the host when every finished case passed."""
    listed = row.get("partial_pass_cases", [])
    if not (
        state.active
        and not state.non_pass
        and row.get("reason") == "host_terminated"
        and _qa_scope(state, row)
        and _bound(row, state.start)
        and isinstance(listed, list)
        and all(isinstance(item, str) for item in listed)
        and sorted(listed) == sorted(state.passed_cases)
        and len(set(listed)) == len(listed)
    ):
        raise Refused(
            "QA abandonment requires the matching active invocation with only PASS results "
            "and matching partial_pass_cases",
            "QA_ABANDON",
        )


# ---------------------------------------------------------------- replay and decision


@dataclass
class RunLifecycle:
    """A run's replayed lifecycle plus the row with the new event's id, if the log has it."""

    resources: Resources = field(default_factory=Resources)
    invocations: Invocations = field(default_factory=Invocations)
    duplicate: JsonObject | None = None


def _row(raw: bytes) -> JsonObject:
    if len(raw) > run_logs.MAX_ROW_BYTES or json_depth_exceeds(raw, run_logs.MAX_ROW_DEPTH):
        raise Unverifiable(TOO_LARGE)
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise Unverifiable("a log row of the run is not valid JSON") from None
    if not isinstance(value, dict):
        raise Unverifiable("a log row of the run is not a JSON object")
    return value


def needs(event: str, phase: str | None) -> frozenset[str]:
    """Which histories an event is judged against: ``resource``, ``test_run`` or both.

    A resource event needs only the resources, a QA event only the invocations (an abandonment
    also the resources), a completion both: a damaged history of one kind never blocks the other.
    """
    if event in COMPLETION_EVENTS:
        return frozenset({"resource", "test_run"})
    if event == "resource":
        return frozenset({"resource"})
    if event == "test_run" and phase is not None:
        return frozenset({"test_run", "resource"}) if phase == "abandoned" else frozenset({"test_run"})
    return frozenset()


def replay(
    lines: Iterable[bytes],
    run_id: str,
    event_id: str,
    kinds: frozenset[str] = frozenset({"resource", "test_run"}),
) -> RunLifecycle:
    """Replay the run's rows of ``kinds`` (``resource``, ``test_run``) in log order; find the event id's row.

    Only lines that mention the run id or the event id are parsed (other runs' rows cannot
    change this run). Raises ``Unverifiable`` for a row of the run that cannot be trusted.
    """
    return replay_into(RunLifecycle(), lines, run_id, event_id, kinds)


def replay_into(
    state: RunLifecycle, lines: Iterable[bytes], run_id: str, event_id: str, kinds: frozenset[str]
) -> RunLifecycle:
    """``replay`` continued from ``state`` (a run replayed up to where ``lines`` begin)."""
    run_needle, id_needle = run_id.encode(), event_id.encode()
    for raw in lines:
        if run_needle not in raw and id_needle not in raw:
            continue
        if not raw.strip():
            continue
        row = _row(raw)
        if state.duplicate is None and row.get("event_id") == event_id:
            state.duplicate = row
        if row.get("run_id") != run_id:
            continue
        replay_row(state, row, kinds)
    return state


def check_row(raw: bytes) -> str | None:
    """Why ``replay`` would refuse this line of the run (the ``Unverifiable`` reason), or None."""
    try:
        _row(raw)
    except Unverifiable as exc:
        return exc.reason
    return None


def replay_row(state: RunLifecycle, row: JsonObject, kinds: frozenset[str]) -> None:
    """Apply one row of the run (of ``kinds``) to ``state``; ``Unverifiable`` when it cannot be."""
    event, phase = row.get("event"), row.get("phase")
    try:
        if event == "resource" and "resource" in kinds:
            rid, kind = _check_resource_row(phase, row, Unverifiable)
            state.resources.apply(rid, kind, str(phase))
        elif event == "test_run" and phase is not None and "test_run" in kinds:
            case_id = _check_test_run_row(phase, row, Unverifiable)
            state.invocations.apply(row, case_id)
    except Refused as exc:
        raise Unverifiable(f"the run's history is inconsistent ({exc.code})") from None


def decide(state: RunLifecycle, event: Mapping[str, object]) -> None:
    """Rules 1-4 for one new (not deduplicated) event against the replayed run. Raises ``Refused``."""
    name, phase = event.get("event"), event.get("phase")
    if name in COMPLETION_EVENTS:
        pending = state.resources.unclosed()
        if pending:
            raise Refused("completion blocked by unclosed resources: " + ", ".join(pending), "RESOURCES_OPEN")
        blockers = state.invocations.blockers()
        if blockers:
            raise Refused("completion blocked by incomplete test_run: " + "; ".join(blockers), "QA_OPEN")
    elif name == "resource":
        rid, kind = _check_resource_row(phase, event, Refused)  # as ``check_event`` passed it
        state.resources.apply(rid, kind, str(phase))
    elif name == "test_run" and phase is not None:
        if phase == "abandoned" and state.resources.unclosed():
            raise Refused("QA abandonment blocked by unclosed resources", "RESOURCES_OPEN")
        state.invocations.apply(event, _check_test_run_row(phase, event, Refused))


__all__ = [
    "COMPLETION_EVENTS",
    "IndexedStates",
    "Invocations",
    "LifecycleError",
    "Refused",
    "Resources",
    "RunLifecycle",
    "Unverifiable",
    "check_event",
    "decide",
    "is_guarded",
    "needs",
    "check_row",
    "replay",
    "replay_into",
    "replay_row",
]
