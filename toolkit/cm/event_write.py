"""One CM event appended under the writer's locks: the project log, the private global mirror,
the run index, the active-run pointer, and (live mode) the OTLP spool.

The authoritative log is ``{SPECS_DIR}/运行日志.jsonl`` when ``--specs-dir`` is given, else the
global run log. Exit 1 when a lock could not be taken or the authoritative log could not be
written (a write the device did not complete is cut back and named: ``(DISK_FULL)``); a failed
global mirror with a project log degrades (a ``degrade`` event goes to the project log) and the
write stands.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from toolkit.cm import lifecycle, logindex, run_logs
from toolkit.cm.event_error import EventError
from toolkit.cm.event_input import EventArgs, EventPlan, validate
from toolkit.cm.log_facts import CallFacts, check_call, event_id_for, scan
from toolkit.core.cm_usage_format import EXPORTED
from toolkit.core.errors import ToolkitError
from toolkit.core.timefmt import parse_rfc3339
from toolkit.infra import confined, livespool

TYPE_CHECKING = False  # typing costs start-up on every event; type checkers read True
if TYPE_CHECKING:
    from toolkit.cm.shapes import DegradeRow, IndexRow, RunPointer, WriteAnswer
    from toolkit.core.jsontypes import JsonObject


@dataclass
class WriteResult:
    """The stdout object of the reference plus the notes printed on stderr."""

    result: WriteAnswer
    notes: list[str] = field(default_factory=list)
    row: JsonObject | None = None  # the event as written (live mode spools model_usage rows)


def write_event(args: EventArgs, *, environ: Mapping[str, str], now: datetime | None = None) -> WriteResult:
    """Validate and append one event; the returned ``result`` is the writer's stdout object."""
    plan = validate(args, now or datetime.now(UTC))
    home = run_logs.log_home(environ)
    if args.specs_dir is not None:
        _confine_specs(args.specs_dir)
    with contextlib.ExitStack() as stack:
        if plan.specs_dir is not None:
            try:
                stack.enter_context(run_logs.locked(plan.specs_dir / run_logs.RUN_LOCK_NAME, private=False))
            except (OSError, ToolkitError):
                raise EventError("project run lock failed", exit_code=1, code="LOCK_FAILED") from None
        global_lock_error: BaseException | None = None
        try:
            run_logs.ensure_private_dir(home)
            stack.enter_context(run_logs.locked(home / run_logs.WRITE_LOCK_NAME, private=True))
        except (OSError, ToolkitError) as exc:  # the global mirror is optional when a project log exists
            global_lock_error = exc
            if plan.specs_dir is None:
                raise EventError("global-only log lock failed", exit_code=1, code="LOCK_FAILED") from None
        written = _write_locked(plan, home, global_lock_error)
    _emit_live(plan, written)
    return written


def _confine_specs(raw: str) -> None:
    """The specs dir's log, run lock and pointer are the repository's files: a symlink in their
    place, or a folder above them that leads outside the work tree, is refused before any lock or
    read (exit 1, as a log or lock that cannot be used; ``PATH_OUTSIDE_REPOSITORY``)."""
    specs = os.path.abspath(os.path.expanduser(raw))
    root = confined.root_for(specs)
    try:
        for name, what in (
            (run_logs.PROJECT_LOG_NAME, "the project log"),
            (run_logs.RUN_LOCK_NAME, "the project run lock"),
            (run_logs.POINTER_NAME, "the run pointer"),
            (run_logs.CHECKPOINT_NAME, "the run checkpoint"),
            (run_logs.INDEX_NAME, "the run index"),
            (run_logs.INDEX_JOURNAL_NAME, "the run index"),
        ):
            confined.resolve_inside(root, os.path.join(specs, name), what)
    except confined.PathOutsideRepository as exc:
        raise EventError(f"{exc.message} ({exc.code})", exit_code=1, code=exc.code) from None


def _emit_live(plan: EventPlan, written: WriteResult) -> None:
    """Live mode (``telemetry: otlp`` in the repository's config): spool a completed call, its
    exportable fields only (``cm_usage_format.EXPORTED``: never the detail or the project)."""
    row = written.row
    if row is None or row.get("event") != "model_usage":
        return
    start = plan.project_root or plan.specs_dir
    try:
        target = livespool.otel_target(str(start) if start else os.getcwd())
        if target is not None:
            livespool.emit(target, {"kind": "cm", "row": {k: v for k, v in row.items() if k in EXPORTED}})
    except (OSError, ValueError, TypeError):  # telemetry never fails a write that succeeded
        pass


@dataclass(frozen=True)
class _Target:
    """Where the event goes: its run, the authoritative log, and (global-only) the global log."""

    run_id: str
    pointer: JsonObject | None
    project_log: Path | None
    global_log: Path | None  # with a project log, chosen after the append (step 5)

    @property
    def authoritative(self) -> Path:
        log = self.project_log or self.global_log
        assert log is not None
        return log


def _write_locked(plan: EventPlan, home: Path, global_lock_error: BaseException | None) -> WriteResult:
    """The write under the locks, step by step: each step a named function below."""
    guarded = lifecycle.is_guarded(plan.args.event, plan.args.phase)
    target = _select_target(plan, home, guarded)  # 1. the run and its logs
    event, event_id = _compose_event(plan, target.run_id)  # 2. the row, with its content-derived id
    facts = _check_against_log(plan, event, event_id, target, guarded)  # 3. call identity and lifecycle
    notes: list[str] = []
    global_log = target.global_log
    if target.project_log is not None:
        event = _append_authoritative(target.project_log, event, facts)  # 4. the project log
        global_log, global_lock_error = _mirror_location(plan, event, home, target, global_lock_error)  # 5.
    assert global_log is not None
    global_written, global_duplicate, degraded = _mirror_or_degrade(  # 6. the private global mirror
        plan, event, event_id, home, global_log, target, facts, global_lock_error, notes
    )
    pointer_written: bool | None = None
    if plan.specs_dir is not None and target.project_log is not None:  # 7. the active-run pointer
        pointer_written = _update_pointer(
            plan, event, home, global_log, global_written, notes, target.project_log
        )
        degraded = degraded or not pointer_written
    result: WriteAnswer = {
        "event_id": event_id,  # an exact retry's first write was found by this id
        "run_id": target.run_id,
        "project_log": str(target.project_log) if target.project_log else None,
        "global_log": str(global_log),
        "global_written": global_written,
        "pointer_written": pointer_written,
        "deduplicated": facts.duplicate is not None if target.project_log else global_duplicate,
        "degraded": degraded,
    }
    return WriteResult(result, notes, event)


def _select_target(plan: EventPlan, home: Path, guarded: bool) -> _Target:
    """Step 1: the run id (explicit, the pointer's, or a new one) and, global-only, its log."""
    specs = plan.specs_dir
    pointer = run_logs.load_pointer(specs)
    project_log = specs / run_logs.PROJECT_LOG_NAME if specs else None
    try:
        run_id, _new_run = run_logs.select_run_id(
            explicit=plan.args.run_id,
            event=plan.args.event,
            pointer=pointer,
            project=run_logs.project_runs(project_log, _checkpoint_of(project_log)),
            now=plan.at_moment,
        )
        global_log = (
            None
            if project_log is not None
            else run_logs.select_global_log(home=home, run_id=run_id, at=plan.at_moment, pointer=pointer)
        )
    except run_logs.RunSelectionError as exc:
        raise EventError(exc.message) from None
    except OSError:
        raise _unreadable(guarded, plan.args.event) from None
    return _Target(run_id, pointer, project_log, global_log)


def _compose_event(plan: EventPlan, run_id: str) -> tuple[JsonObject, str]:
    """Step 2: the row as written and its ``event_id``, derived from its content."""
    args = plan.args
    event: JsonObject = {
        "schema_version": run_logs.SCHEMA_VERSION,
        "run_id": run_id,
        "at": plan.at,
        "workflow": args.workflow,
        "event": args.event,
        "runtime": args.runtime,
        "project": plan.project,
        "detail": plan.detail,
    }
    if args.phase:
        event["phase"] = args.phase
    event.update(plan.data)
    event_id = event["event_id"] = event_id_for(event)
    return event, event_id


def _check_against_log(
    plan: EventPlan, event: JsonObject, event_id: str, target: _Target, guarded: bool
) -> CallFacts:
    """Step 3: what the authoritative log holds for this event and call, and the rules it decides."""
    try:
        facts = scan(target.authoritative, target.run_id, event_id, plan.call_id)
    except OSError:
        raise _unreadable(guarded, plan.args.event) from None
    check_call(event, facts)
    if guarded and facts.duplicate is None:
        _check_lifecycle(target.authoritative, target.run_id, plan, event, event_id)
    return facts


def _append_authoritative(project_log: Path, event: JsonObject, facts: CallFacts) -> JsonObject:
    """Step 4: append to the project log; an exact retry keeps the first write's row (and timestamp)."""
    if facts.duplicate is not None:
        return facts.duplicate
    try:
        run_logs.append_line(project_log, event, private=False)
    except OSError as exc:
        raise EventError(
            "authoritative project log write failed" + _cause(exc), exit_code=1, code="LOG_WRITE_FAILED"
        ) from None
    return event


def _cause(exc: BaseException) -> str:
    """`` (DISK_FULL)``: the code of a write the file system did not complete (nothing of it stays)."""
    return f" ({exc.code})" if isinstance(exc, ToolkitError) else ""


def _mirror_location(
    plan: EventPlan,
    event: JsonObject,
    home: Path,
    target: _Target,
    global_lock_error: BaseException | None,
) -> tuple[Path, BaseException | None]:
    """Step 5: the global log a project event is mirrored to (a retry: the month of the first write).

    When it cannot be chosen, this month's file is named and the failure kept: the mirror then
    degrades (step 6) instead of failing a write the project log already holds.
    """
    at = _moment_of(event, plan.at_moment)
    try:
        chosen = run_logs.select_global_log(home=home, run_id=target.run_id, at=at, pointer=target.pointer)
    except (run_logs.RunSelectionError, OSError) as exc:
        fallback = home / "runs" / plan.at_moment.strftime("%Y-%m") / f"{target.run_id}.jsonl"
        return fallback, global_lock_error or exc
    return chosen, global_lock_error


def _mirror_or_degrade(
    plan: EventPlan,
    event: JsonObject,
    event_id: str,
    home: Path,
    global_log: Path,
    target: _Target,
    facts: CallFacts,
    global_lock_error: BaseException | None,
    notes: list[str],
) -> tuple[bool, bool, bool]:
    """Step 6: (written, duplicate, degraded). Global-only, a failed mirror fails the write; with a
    project log it is recorded there as a ``degrade`` event and the write stands."""
    try:
        if global_lock_error is not None:
            raise global_lock_error
        duplicate = _mirror(
            plan, event, event_id, home, global_log, target.run_id, target.project_log is None, facts
        )
        return True, duplicate, False
    except (OSError, ValueError, ToolkitError) as exc:
        if target.project_log is None:
            raise EventError(
                "global-only log write failed" + _cause(exc), exit_code=1, code="LOG_WRITE_FAILED"
            ) from None
        _record_degrade(
            target.project_log,
            _degrade_event(event, "global_log", "全局日志镜像写入失败，项目日志继续作为权威来源", exc),
        )
        notes.append("global mirror unavailable; project log retained")
        return False, facts.duplicate is not None, True


def _unreadable(guarded: bool, event: str) -> EventError:
    """An unreadable authoritative log: lifecycle events cannot be verified (2), others fail (1)."""
    if guarded:
        subject = "test_run" if event == "test_run" else "resource"
        return EventError(
            f"{subject} state cannot be verified: the authoritative log cannot be read",
            code="STATE_UNVERIFIABLE",
        )
    return EventError("authoritative log could not be read", exit_code=1, code="LOG_UNREADABLE")


def _check_lifecycle(log: Path, run_id: str, plan: EventPlan, event: JsonObject, event_id: str) -> None:
    """Replay the run's resources and QA invocations from the log, then apply rules 1-4."""
    name = plan.args.event
    subject = "test_run" if name == "test_run" else "resource"
    kinds = lifecycle.needs(name, plan.args.phase or None)  # the row holds a phase only when one is given
    try:
        state = logindex.run_lifecycle(log, run_id, event_id, kinds, event.get("resource_id"))
        if state is None:  # the index cannot answer: replay the log
            with open(log, "rb") as handle:
                state = lifecycle.replay(handle, run_id, event_id, kinds)
    except FileNotFoundError:
        state = lifecycle.RunLifecycle()
    except OSError:
        raise _unreadable(True, name) from None
    except lifecycle.Unverifiable as exc:
        raise EventError(f"{subject} state cannot be verified: {exc.reason}", code=exc.code) from None
    try:
        lifecycle.decide(state, event)
    except lifecycle.LifecycleError as exc:
        raise EventError(exc.message, code=exc.code) from None


def _moment_of(row: Mapping[str, object], fallback: datetime) -> datetime:
    at = row.get("at")
    parsed = parse_rfc3339(at) if isinstance(at, str) else None
    return parsed if parsed is not None else fallback


def _mirror(
    plan: EventPlan,
    event: JsonObject,
    event_id: str,
    home: Path,
    global_log: Path,
    run_id: str,
    global_only: bool,
    facts: CallFacts,
) -> bool:
    """Append to the private global mirror and register the run in the index; True if a duplicate."""
    run_logs.ensure_private_dir(home / "runs")
    run_logs.ensure_private_dir(global_log.parent)
    if global_only:
        duplicate = facts.duplicate is not None
    else:
        duplicate = scan(global_log, run_id, event_id, None).duplicate is not None
    if not duplicate:
        run_logs.append_line(global_log, event, private=True)
    index = home / "index.jsonl"
    rel = str(global_log.relative_to(home))
    # The reference registers only runs it starts; registering every run lets the report see
    # global-only runs that began with an explicit --run-id.
    if not _index_has(index, run_id, "running"):
        running = _index_row(plan, event, run_id, "running")
        running["project_path"] = str(plan.project_root) if plan.project_root else None
        running["specs_path"] = str(plan.specs_dir) if plan.specs_dir else None
        running["log_file"] = rel
        run_logs.append_line(index, running, private=True)
    if plan.args.event in run_logs.TERMINAL_EVENTS and not _index_has(index, run_id, "done"):
        done = _index_row(plan, event, run_id, "done")
        done["log_file"] = rel
        run_logs.append_line(index, done, private=True)
    return duplicate


def _index_row(plan: EventPlan, event: JsonObject, run_id: str, status: str) -> IndexRow:
    """The keys every index row starts with, in the reference's order."""
    return {
        "schema_version": run_logs.SCHEMA_VERSION,
        "at": event["at"],
        "run_id": run_id,
        "status": status,
        "workflow": plan.args.workflow,
        "runtime": plan.args.runtime,
        "project": plan.project,
    }


def _record_degrade(project_log: Path, record: DegradeRow) -> None:
    try:
        if scan(project_log, _run_of(record), record["event_id"], None).duplicate is None:
            run_logs.append_line(project_log, record, private=False)
    except OSError as exc:
        raise EventError(
            "project degradation log failed" + _cause(exc), exit_code=1, code="LOG_WRITE_FAILED"
        ) from None


def _checkpoint_of(project_log: Path | None) -> Path | None:
    """The run-state checkpoint beside the project log (a cache: checked before use, else rebuilt)."""
    return project_log.parent / run_logs.CHECKPOINT_NAME if project_log is not None else None


def _run_of(row: Mapping[str, object]) -> str:
    """The run id a written row holds (the first write's, for an exact retry: its content-derived
    event id includes the run id, so it is this run's); "" for a row that holds none as text."""
    run_id = row.get("run_id")
    return run_id if isinstance(run_id, str) else ""


def _run_state(project_log: Path, run_id: str, event: str) -> str:
    try:
        state = run_logs.project_runs(project_log, _checkpoint_of(project_log)).state(run_id)
    except OSError:
        state = None
    return state or ("done" if event in run_logs.TERMINAL_EVENTS else "running")


def _update_pointer(
    plan: EventPlan,
    event: JsonObject,
    home: Path,
    global_log: Path,
    global_written: bool,
    notes: list[str],
    project_log: Path,
) -> bool:
    assert plan.specs_dir is not None
    value: RunPointer = {
        "schema_version": run_logs.SCHEMA_VERSION,
        "run_id": event["run_id"],
        "workflow": plan.args.workflow,
        # the run's state as the authoritative log says after this write: a deduplicated old
        # run_done or resume leaves it as it was
        "status": _run_state(project_log, _run_of(event), plan.args.event),
        "global_log": str(global_log.relative_to(home)),
        "global_written": global_written,
        "updated_at": event["at"],
    }
    try:
        run_logs.write_pointer(plan.specs_dir, value)
        return True
    except OSError as exc:
        record = _degrade_event(event, "run_pointer", "运行指针写入失败，将从权威项目日志恢复", exc)
        _record_degrade(project_log, record)
        if global_written:
            with contextlib.suppress(OSError):
                if scan(global_log, _run_of(record), record["event_id"], None).duplicate is None:
                    run_logs.append_line(global_log, record, private=True)
        notes.append("active-run pointer unavailable; project log recovery retained")
        return False


def _index_has(index: Path, run_id: str, status: str) -> bool:
    for row in run_logs.iter_json_lines(index, run_id.encode()):
        if row.get("run_id") == run_id and row.get("status") == status:
            return True
    return False


def _degrade_event(base: JsonObject, phase: str, detail: str, exc: BaseException) -> DegradeRow:
    record: DegradeRow = {
        "schema_version": base["schema_version"],
        "run_id": base["run_id"],
        "at": base["at"],
        "workflow": base["workflow"],
        "runtime": base["runtime"],
        "project": base["project"],
        "event": "degrade",
        "phase": phase,
        "detail": detail,
        "error_type": type(exc).__name__,
        "event_id": "",  # in its place; the id is derived without it
    }
    record["event_id"] = event_id_for(record)
    return record
