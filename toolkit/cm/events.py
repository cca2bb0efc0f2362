"""``cm-log-event``: append one CM event to the project log and the private global mirror.

Drop-in for the public CM writer (same arguments, stdout object, exit codes and refusals):

* exit 2: invalid input, including every model-call identity refusal (reused call id, usage
  without its claim, identity mismatch, a claim after usage, a changed claim);
* exit 1: a lock could not be taken or the authoritative log could not be written (a write the
  device did not complete is cut back and named: ``(DISK_FULL)``);
* exit 3: the event was written but stdout refused the answer (``OUTPUT_UNWRITABLE``);
* exit 0: written, deduplicated (an exact retry has the same UUIDv5 ``event_id``) or degraded
  (only the global mirror failed; a ``degrade`` event goes to the project log).

The authoritative log is ``{SPECS_DIR}/运行日志.jsonl`` when ``--specs-dir`` is given, else the
global run log. All checks of a call id and the append happen under the writer's locks, so a
claim is atomic across processes. Standard library only.

Deliberate differences: messages never echo input (no key names, no values); the envelope
leaves out the absolute ``project_path``/``specs_path`` (the project log is committed by many
teams; those paths stay in the private index); a run is always registered in ``index.jsonl``,
so the usage report sees global-only runs started with ``--run-id``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.cm import run_logs
from toolkit.core.errors import ToolkitError
from toolkit.core.identifiers import CM_RUN_ID
from toolkit.core.strictjson import loads_strict
from toolkit.core.timefmt import parse_rfc3339
from toolkit.infra.argparser import QuietArgumentParser

PROG = "cm-log-event"
IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
CALL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
SENSITIVE_KEY = re.compile(
    r"(api[_-]?key|authorization|cookie|password|passwd|private[_-]?key|recovery[_-]?code|secret|token)",
    re.IGNORECASE,
)
RESERVED_FIELDS = frozenset(
    {
        "schema_version",
        "event_id",
        "run_id",
        "at",
        "workflow",
        "event",
        "phase",
        "runtime",
        "project",
        "project_path",
        "specs_path",
        "detail",
    }
)
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
# reasoning tokens are a subset of the output tokens, reported separately by some runtimes
USAGE_TOKEN_FIELDS = (*TOKEN_FIELDS, "reasoning_tokens")
USAGE_STATES = ("observed", "unavailable")
OUTCOMES = ("success", "error", "blocked", "cancelled")
CALL_FIELDS = ("call_id", "stage", "role", "adapter", "requested_model", "source", "purpose")
USAGE_FIELDS = (
    frozenset(CALL_FIELDS)
    | frozenset(USAGE_TOKEN_FIELDS)
    | frozenset(
        {
            "effective_model",
            "provider",
            "node",
            "feature",
            "task",
            "usage_state",
            "duration_ms",
            "outcome",
            "attempt",
        }
    )
)
IDENTITY_FIELDS = ("workflow", "runtime", "stage", "role", "adapter", "requested_model", "source", "purpose")
MAX_DATA_BYTES = 8192
MAX_DATA_DEPTH = 32
MAX_DETAIL = 500
MAX_TEXT = 160
MANAGED_ADAPTER = "openai-compatible"
# usage rows from these sources must follow their own claim (the adapter's, or a native CLI's)
MANAGED_SOURCE = "native-cli-terminal"


class EventError(ToolkitError):
    """A refused write. ``exit_code`` is 2 (input) or 1 (lock / authoritative write)."""

    def __init__(self, message: str, exit_code: int = 2, code: str = "INVALID_EVENT") -> None:
        super().__init__(code, message, exit_code=exit_code)


@dataclass(frozen=True)
class EventArgs:
    """The writer's inputs, exactly the CLI options."""

    workflow: str
    event: str
    runtime: str
    detail: str
    phase: str | None = None
    project: str | None = None
    project_root: str | None = None
    specs_dir: str | None = None
    run_id: str | None = None
    at: str | None = None
    data_json: str = "{}"


@dataclass
class WriteResult:
    """The stdout object of the reference plus the notes printed on stderr."""

    result: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    row: dict[str, Any] | None = None  # the event as written (live mode spools model_usage rows)


# ---------------------------------------------------------------- validation (pure)


def _identifier(label: str, value: str | None) -> None:
    if value is not None and not IDENTIFIER.fullmatch(value):
        raise EventError(f"{label} must match {IDENTIFIER.pattern}")


def _detail(detail: str) -> str:
    if not detail.strip():
        raise EventError("--detail cannot be empty")
    if len(detail) > MAX_DETAIL:
        raise EventError("--detail cannot exceed 500 characters")
    if any(ch in detail for ch in ("\n", "\r", "\0")):
        raise EventError("--detail cannot contain control-line characters")
    _encodable(detail)
    return detail


def _encodable(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise EventError("event text must be valid Unicode") from None


def parse_data(raw: str, event: str) -> dict[str, Any]:
    """``--data-json``: a strict JSON object of at most 8 KiB, merged flat into the envelope."""
    try:
        size = len(raw.encode("utf-8"))
    except UnicodeEncodeError:
        raise EventError("--data-json must be valid Unicode") from None
    if size > MAX_DATA_BYTES:
        raise EventError("--data-json cannot exceed 8192 UTF-8 bytes")
    try:
        value = loads_strict(raw)
    except ValueError:
        raise EventError("--data-json must be a JSON object") from None
    if not isinstance(value, dict):
        raise EventError("--data-json must be a JSON object")
    if RESERVED_FIELDS.intersection(value):
        raise EventError("--data-json cannot override reserved fields")
    if event in MODEL_EVENT_FIELDS:
        _check_model_fields(event, value)
    allowed = frozenset(USAGE_TOKEN_FIELDS) if event == "model_usage" else frozenset()
    _check_tree(value, allowed)
    return value


MODEL_EVENT_FIELDS = {"model_call": frozenset(CALL_FIELDS), "model_usage": USAGE_FIELDS}
# a name that ends in "tokens" (or "token_count") counts tokens; "token" alone names a credential
_COUNT_NAME = re.compile(r"[A-Za-z0-9_.-]*(tokens|token_count|tokens_count)", re.IGNORECASE)
_NAMEABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


def _credential_word(key: str) -> str | None:
    """The credential word a field name holds (the signal), or None for a name that only counts tokens."""
    found = SENSITIVE_KEY.search(key)
    if found is None:
        return None
    if _COUNT_NAME.fullmatch(key) and not SENSITIVE_KEY.search(re.sub("(?i)token", "", key)):
        return None
    return found.group(0).lower()


def _shown(key: str) -> str:
    """A refused field's name as a message may show it: a plain identifier the privacy engine finds
    nothing in, else a placeholder (a pasted secret used as a key is not echoed)."""
    if _NAMEABLE.fullmatch(key):
        from toolkit.privacy.engine import scan_value
        from toolkit.privacy.types import Context

        try:
            if not scan_value(key, Context.EVENT_LOG):
                return repr(key)
        except ValueError:  # pragma: no cover - a string is never too deep
            pass
    return "(a field whose name is withheld)"


def _check_model_fields(event: str, data: dict[str, Any]) -> None:
    """A model event's fields are a closed list: an unknown one is named with the accepted names,
    and called sensitive only when its name holds a credential word."""
    allowed = MODEL_EVENT_FIELDS[event]
    unknown = sorted(set(data) - allowed)
    if not unknown:
        return
    for key in unknown:
        word = _credential_word(key)
        if word is not None:
            raise EventError(
                f"sensitive log field {_shown(key)} is refused: its name contains {word!r}, which marks a "
                "credential, and credentials are never logged"
            )
    import difflib

    named = ", ".join(_shown(key) for key in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
    hints = [
        f"{close[0]!r} for {key!r}"
        for key in unknown
        if _NAMEABLE.fullmatch(key)
        and (close := difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.75))
    ]
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    raise EventError(
        f"{event} contains unsupported fields: {named}; the accepted fields are {', '.join(sorted(allowed))}"
        + hint
    )


def _check_tree(data: dict[str, Any], top_allowed: frozenset[str]) -> None:
    """Bounded depth, finite numbers, valid Unicode, and no credential-like key at any depth."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_DATA_DEPTH:
            raise EventError("--data-json is nested too deeply")
        if isinstance(current, str):
            _encodable(current)
        elif isinstance(current, float) and not math.isfinite(current):
            raise EventError("--data-json must contain strict JSON numbers")
        elif isinstance(current, dict):
            for key, child in current.items():
                _encodable(key)
                if SENSITIVE_KEY.search(key) and not (current is data and key in top_allowed):
                    raise _sensitive(key)
                stack.append((child, depth + 1))
        elif isinstance(current, list):
            stack.extend((child, depth + 1) for child in current)


def _sensitive(key: str) -> EventError:
    """The refusal of a credential-like field name in free event data: the field, the word, the rule."""
    word = _credential_word(key)
    if word is None:  # a token-count name outside model_usage
        return EventError(
            f"--data-json field {_shown(key)} is refused: outside model_usage a name containing 'token' "
            "marks a credential; token counts go in a model_usage event as " + ", ".join(USAGE_TOKEN_FIELDS)
        )
    return EventError(
        f"sensitive log field {_shown(key)} is refused: its name contains {word!r}, which marks a "
        "credential, and credentials are never logged"
    )


def _short_text(label: str, value: Any, *, required: bool) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str) or not value.strip():
        raise EventError(f"model event requires a non-empty {label}")
    if len(value) > MAX_TEXT or any(ch in value for ch in ("\n", "\r", "\0")):
        raise EventError(f"model event {label} must be one line and at most 160 characters")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def validate_model_event(event: str, phase: str | None, data: dict[str, Any]) -> None:
    """The field allowlists and value rules of ``model_call/claimed`` and ``model_usage/complete``."""
    required: tuple[str, ...]
    if event == "model_call":
        allowed, wanted_phase, required = frozenset(CALL_FIELDS), "claimed", CALL_FIELDS[1:]
    elif event == "model_usage":
        allowed, wanted_phase, required = (
            USAGE_FIELDS,
            "complete",
            ("adapter", "requested_model", "source", "purpose", "stage"),
        )
    else:
        return
    if set(data) - allowed:
        raise EventError(f"{event} contains unsupported fields")
    if phase != wanted_phase:
        raise EventError(f"{event} events require phase {wanted_phase}")
    call_id = data.get("call_id")
    if not isinstance(call_id, str) or not CALL_ID.fullmatch(call_id):
        raise EventError(f"{event} requires a valid call_id")
    role = data.get("role")
    if not isinstance(role, str) or not IDENTIFIER.fullmatch(role):
        raise EventError(f"{event} requires a valid role")
    if event == "model_usage":
        _validate_usage_values(data)
    for name in required:
        _short_text(name, data.get(name), required=True)
    if event == "model_usage":
        for name in ("effective_model", "provider", "node", "feature", "task"):
            _short_text(name, data.get(name), required=False)


def _validate_usage_values(data: dict[str, Any]) -> None:
    state = data.get("usage_state")
    if state not in USAGE_STATES:
        raise EventError("model_usage usage_state must be observed or unavailable")
    if data.get("outcome") not in OUTCOMES:
        raise EventError("model_usage outcome must be success, error, blocked, or cancelled")
    attempt = data.get("attempt")
    if attempt is not None and (isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1):
        raise EventError("model_usage attempt must be a positive integer")
    if state == "unavailable" and any(name in data for name in USAGE_TOKEN_FIELDS):
        raise EventError("unavailable model_usage cannot contain token counts")
    if state == "observed":
        for name in ("input_tokens", "output_tokens"):
            if name not in data:
                raise EventError(f"observed model_usage requires {name}")
    for name in (*USAGE_TOKEN_FIELDS, "duration_ms"):
        if name in data and not _count(data[name]):
            raise EventError(f"model_usage {name} must be a non-negative integer")
    if "reasoning_tokens" in data and data["reasoning_tokens"] > data.get("output_tokens", 0):
        raise EventError("reasoning_tokens must be an output subset")


def privacy_guard(
    detail: str, data: dict[str, Any], envelope: Mapping[str, str | None] | None = None
) -> None:
    """The shared privacy engine over every value that reaches a log, in its event-log context.

    ``envelope`` holds the other written values (run id, workflow, event, phase, runtime,
    project): a secret passed as ``--run-id`` would otherwise land in the committed project
    log, the pointer, the index and a file name. Secrets, provider session ids, home paths,
    emails and transcript text never reach a log; the refusal names only the category.
    Imported here, after the cheap checks, to keep the start-up of the ``cm-*`` scripts short
    for input that is refused anyway.
    """
    from toolkit.privacy.engine import scan_value
    from toolkit.privacy.types import Context

    written = {key: value for key, value in (envelope or {}).items() if value is not None}
    try:
        findings = scan_value({**written, "detail": detail, **data}, Context.EVENT_LOG)
    except ValueError:
        raise EventError("event data is nested too deeply to check") from None
    if findings:
        categories = ", ".join(sorted({f.category.value for f in findings}))
        raise EventError(f"event text contains private content ({categories})", code="PRIVATE_CONTENT")


def event_id_for(event: dict[str, Any]) -> str:
    """UUIDv5 of the canonical event without ``at`` and ``event_id``: an exact retry has the same id."""
    identity = {k: v for k, v in event.items() if k not in ("at", "event_id")}
    text = json.dumps(identity, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return str(uuid.uuid5(uuid.NAMESPACE_URL, text))


def identity_of(row: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(row.get(name, "")) for name in IDENTITY_FIELDS)


def _timestamp(raw: str | None, now: datetime) -> tuple[str, datetime]:
    if raw is None:
        moment = now.astimezone(UTC).replace(microsecond=0)
        return moment.isoformat(timespec="seconds"), moment
    parsed = parse_rfc3339(raw)
    if parsed is None:
        raise EventError("--at must be an RFC 3339 timestamp with a timezone offset")
    return parsed.isoformat(timespec="seconds"), parsed


def _directory(label: str, raw: str | None) -> Path | None:
    if raw is None:
        return None
    try:
        path = Path(raw).expanduser().resolve(strict=False)
        ok = path.is_dir()
    except (OSError, ValueError, RuntimeError):
        ok = False
    if not ok:
        raise EventError(f"{label} is not an existing directory")
    return path


def _project_name(explicit: str | None, root: Path | None) -> str:
    if explicit:
        if len(explicit) > 120 or any(ch in explicit for ch in ("\n", "\r", "\0")):
            raise EventError("--project must be one line and at most 120 characters")
        _encodable(explicit)
        return explicit
    return root.name if root else "unscoped"


# ---------------------------------------------------------------- the write (I/O)


@dataclass
class _CallFacts:
    """What the authoritative log already holds for one event id and one call id."""

    duplicate: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    claim: dict[str, Any] | None = None


def _scan(log: Path, run_id: str, event_id: str, call_id: str | None) -> _CallFacts:
    """What ``log`` holds for the event id and the call id: from the log's index (``logindex``), or
    read plainly when the index cannot answer (the same answers)."""
    from toolkit.cm import logindex  # on the write path only: `--help` stays light

    found = logindex.call_rows(log, run_id, event_id, call_id)
    if found is not None:
        return _CallFacts(*found)
    return _scan_plainly(log, run_id, event_id, call_id)


def _scan_plainly(log: Path, run_id: str, event_id: str, call_id: str | None) -> _CallFacts:
    facts = _CallFacts()
    needles = [event_id.encode()] + ([call_id.encode()] if call_id else [])
    # only the lines that name the event or the call (found a block at a time; LOG_UNREADABLE: a
    # FIFO or a directory is never read)
    for raw in run_logs.iter_lines_with(log, needles):
        try:
            row = run_logs.loads_row(raw)
        except ValueError:
            continue  # torn, hostile or foreign: never a row this writer made
        if not isinstance(row, dict):
            continue
        if facts.duplicate is None and row.get("event_id") == event_id:
            facts.duplicate = row
        if call_id and row.get("run_id") == run_id and row.get("call_id") == call_id:
            if facts.usage is None and row.get("event") == "model_usage":
                facts.usage = row
            elif facts.claim is None and row.get("event") == "model_call" and row.get("phase") == "claimed":
                facts.claim = row
    return facts


def _check_call(event: dict[str, Any], facts: _CallFacts) -> None:
    """The claim/completion identity rules of the reference, checked under the lock."""
    name, event_id = event["event"], event["event_id"]
    if name == "model_usage":
        if facts.usage is not None and facts.usage.get("event_id") != event_id:
            raise EventError("model_usage call_id already used with different payload", code="CALL_ID_USED")
        managed = event.get("adapter") == MANAGED_ADAPTER or event.get("source") == MANAGED_SOURCE
        if managed and facts.claim is None:
            raise EventError("managed model_usage requires a prior model_call claim", code="CLAIM_MISSING")
        if facts.claim is not None and identity_of(facts.claim) != identity_of(event):
            raise EventError("model_usage identity does not match model_call claim", code="IDENTITY_MISMATCH")
    elif name == "model_call":
        if facts.usage is not None:
            raise EventError("model_call call_id already completed", code="CALL_COMPLETED")
        if facts.claim is not None and facts.claim.get("event_id") != event_id:
            raise EventError("model_call call_id already claimed with different payload", code="CALL_CLAIMED")


def _index_has(index: Path, run_id: str, status: str) -> bool:
    for row in run_logs.iter_json_lines(index, run_id.encode()):
        if row.get("run_id") == run_id and row.get("status") == status:
            return True
    return False


def _degrade_event(base: dict[str, Any], phase: str, detail: str, exc: BaseException) -> dict[str, Any]:
    record = {key: base[key] for key in ("schema_version", "run_id", "at", "workflow", "runtime", "project")}
    record.update(event="degrade", phase=phase, detail=detail, error_type=type(exc).__name__)
    record["event_id"] = event_id_for(record)
    return record


@dataclass
class _Plan:
    """Validated inputs, ready to be written."""

    args: EventArgs
    data: dict[str, Any]
    detail: str
    at: str
    at_moment: datetime
    project_root: Path | None
    specs_dir: Path | None
    project: str


def validate(args: EventArgs, now: datetime) -> _Plan:
    """Every input check that needs no log: raises EventError (exit 2)."""
    from toolkit.cm import lifecycle  # on the write path only: `--help` stays light

    for label, value in (
        ("--workflow", args.workflow),
        ("--event", args.event),
        ("--phase", args.phase),
        ("--runtime", args.runtime),
    ):
        _identifier(label, value)
    detail = _detail(args.detail)
    data = parse_data(args.data_json, args.event)
    validate_model_event(args.event, args.phase, data)
    try:
        lifecycle.check_event(args.event, args.phase, data)
    except lifecycle.LifecycleError as exc:
        raise EventError(exc.message, code=exc.code) from None
    if args.run_id is not None and not CM_RUN_ID.fullmatch(args.run_id):
        raise EventError("invalid --run-id")
    at, moment = _timestamp(args.at, now)
    root = _directory("--project-root", args.project_root)
    specs = _directory("--specs-dir", args.specs_dir)
    project = _project_name(args.project, root)
    envelope = {
        "run_id": args.run_id,
        "workflow": args.workflow,
        "event": args.event,
        "phase": args.phase,
        "runtime": args.runtime,
        "project": project,
    }
    privacy_guard(detail, data, envelope)
    return _Plan(args, data, detail, at, moment, root, specs, project)


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
    from toolkit.infra import confined

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


def _emit_live(plan: _Plan, written: WriteResult) -> None:
    """Live mode (``telemetry: otlp`` in the repository's config): spool a completed call."""
    if written.row is None or written.row.get("event") != "model_usage":
        return
    start = plan.project_root or plan.specs_dir
    try:
        from toolkit.otel.live import emit_cm_row

        emit_cm_row(str(start) if start else os.getcwd(), written.row)
    except (ImportError, OSError, ValueError, TypeError):  # telemetry never fails a write that succeeded
        pass


@dataclass(frozen=True)
class _Target:
    """Where the event goes: its run, the authoritative log, and (global-only) the global log."""

    run_id: str
    pointer: dict[str, Any] | None
    project_log: Path | None
    global_log: Path | None  # with a project log, chosen after the append (step 5)

    @property
    def authoritative(self) -> Path:
        log = self.project_log or self.global_log
        assert log is not None
        return log


def _write_locked(plan: _Plan, home: Path, global_lock_error: BaseException | None) -> WriteResult:
    """The write under the locks, step by step: each step a named function below."""
    from toolkit.cm import lifecycle  # on the write path only: `--help` stays light

    guarded = lifecycle.is_guarded(plan.args.event, plan.args.phase)
    target = _select_target(plan, home, guarded)  # 1. the run and its logs
    event = _compose_event(plan, target.run_id)  # 2. the row, with its content-derived id
    facts = _check_against_log(plan, event, target, guarded)  # 3. call identity and lifecycle, from the log
    out = WriteResult({})
    global_log = target.global_log
    if target.project_log is not None:
        event = _append_authoritative(target.project_log, event, facts)  # 4. the project log
        global_log, global_lock_error = _mirror_location(plan, event, home, target, global_lock_error)  # 5.
    assert global_log is not None
    global_written, global_duplicate, degraded = _mirror_or_degrade(  # 6. the private global mirror
        plan, event, home, global_log, target, facts, global_lock_error, out
    )
    pointer_written: bool | None = None
    if plan.specs_dir is not None and target.project_log is not None:  # 7. the active-run pointer
        pointer_written = _update_pointer(
            plan, event, home, global_log, global_written, out, target.project_log
        )
        degraded = degraded or not pointer_written
    out.row = event
    out.result = {
        "event_id": event["event_id"],
        "run_id": target.run_id,
        "project_log": str(target.project_log) if target.project_log else None,
        "global_log": str(global_log),
        "global_written": global_written,
        "pointer_written": pointer_written,
        "deduplicated": facts.duplicate is not None if target.project_log else global_duplicate,
        "degraded": degraded,
    }
    return out


def _select_target(plan: _Plan, home: Path, guarded: bool) -> _Target:
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


def _compose_event(plan: _Plan, run_id: str) -> dict[str, Any]:
    """Step 2: the row as written, its ``event_id`` derived from its content."""
    args = plan.args
    event: dict[str, Any] = {
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
    event["event_id"] = event_id_for(event)
    return event


def _check_against_log(plan: _Plan, event: dict[str, Any], target: _Target, guarded: bool) -> _CallFacts:
    """Step 3: what the authoritative log holds for this event and call, and the rules it decides."""
    call_id = plan.data.get("call_id") if plan.args.event in ("model_call", "model_usage") else None
    try:
        facts = _scan(target.authoritative, target.run_id, event["event_id"], call_id)
    except OSError:
        raise _unreadable(guarded, plan.args.event) from None
    _check_call(event, facts)
    if guarded and facts.duplicate is None:
        _check_lifecycle(target.authoritative, target.run_id, event)
    return facts


def _append_authoritative(project_log: Path, event: dict[str, Any], facts: _CallFacts) -> dict[str, Any]:
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
    plan: _Plan, event: dict[str, Any], home: Path, target: _Target, global_lock_error: BaseException | None
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
    plan: _Plan,
    event: dict[str, Any],
    home: Path,
    global_log: Path,
    target: _Target,
    facts: _CallFacts,
    global_lock_error: BaseException | None,
    out: WriteResult,
) -> tuple[bool, bool, bool]:
    """Step 6: (written, duplicate, degraded). Global-only, a failed mirror fails the write; with a
    project log it is recorded there as a ``degrade`` event and the write stands."""
    try:
        if global_lock_error is not None:
            raise global_lock_error
        duplicate = _mirror(plan, event, home, global_log, target.run_id, target.project_log is None, facts)
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
        out.notes.append("global mirror unavailable; project log retained")
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


def _check_lifecycle(log: Path, run_id: str, event: dict[str, Any]) -> None:
    """Replay the run's resources and QA invocations from the log, then apply rules 1-4."""
    from toolkit.cm import lifecycle, logindex  # on the write path only: `--help` stays light

    subject = "test_run" if event["event"] == "test_run" else "resource"
    kinds = lifecycle.needs(event["event"], event.get("phase"))
    try:
        state = logindex.run_lifecycle(log, run_id, event["event_id"], kinds, event.get("resource_id"))
        if state is None:  # the index cannot answer: replay the log
            with open(log, "rb") as handle:
                state = lifecycle.replay(handle, run_id, event["event_id"], kinds)
    except FileNotFoundError:
        state = lifecycle.RunLifecycle()
    except OSError:
        raise _unreadable(True, event["event"]) from None
    except lifecycle.Unverifiable as exc:
        raise EventError(f"{subject} state cannot be verified: {exc.reason}", code=exc.code) from None
    try:
        lifecycle.decide(state, event)
    except lifecycle.LifecycleError as exc:
        raise EventError(exc.message, code=exc.code) from None


def _moment_of(row: Mapping[str, Any], fallback: datetime) -> datetime:
    at = row.get("at")
    parsed = parse_rfc3339(at) if isinstance(at, str) else None
    return parsed if parsed is not None else fallback


def _mirror(
    plan: _Plan,
    event: dict[str, Any],
    home: Path,
    global_log: Path,
    run_id: str,
    global_only: bool,
    facts: _CallFacts,
) -> bool:
    """Append to the private global mirror and register the run in the index; True if a duplicate."""
    run_logs.ensure_private_dir(home / "runs")
    run_logs.ensure_private_dir(global_log.parent)
    if global_only:
        duplicate = facts.duplicate is not None
    else:
        duplicate = _scan(global_log, run_id, event["event_id"], None).duplicate is not None
    if not duplicate:
        run_logs.append_line(global_log, event, private=True)
    index = home / "index.jsonl"
    rel = str(global_log.relative_to(home))
    common = {"schema_version": run_logs.SCHEMA_VERSION, "at": event["at"], "run_id": run_id}
    tail = {"workflow": plan.args.workflow, "runtime": plan.args.runtime, "project": plan.project}
    # The reference registers only runs it starts; registering every run lets the report see
    # global-only runs that began with an explicit --run-id.
    if not _index_has(index, run_id, "running"):
        run_logs.append_line(
            index,
            {
                **common,
                "status": "running",
                **tail,
                "project_path": str(plan.project_root) if plan.project_root else None,
                "specs_path": str(plan.specs_dir) if plan.specs_dir else None,
                "log_file": rel,
            },
            private=True,
        )
    if plan.args.event in run_logs.TERMINAL_EVENTS and not _index_has(index, run_id, "done"):
        run_logs.append_line(index, {**common, "status": "done", **tail, "log_file": rel}, private=True)
    return duplicate


def _record_degrade(project_log: Path, record: dict[str, Any]) -> None:
    try:
        if _scan(project_log, record["run_id"], record["event_id"], None).duplicate is None:
            run_logs.append_line(project_log, record, private=False)
    except OSError as exc:
        raise EventError(
            "project degradation log failed" + _cause(exc), exit_code=1, code="LOG_WRITE_FAILED"
        ) from None


def _checkpoint_of(project_log: Path | None) -> Path | None:
    """The run-state checkpoint beside the project log (a cache: checked before use, else rebuilt)."""
    return project_log.parent / run_logs.CHECKPOINT_NAME if project_log is not None else None


def _run_state(project_log: Path, run_id: str, event: str) -> str:
    try:
        state = run_logs.project_runs(project_log, _checkpoint_of(project_log)).state(run_id)
    except OSError:
        state = None
    return state or ("done" if event in run_logs.TERMINAL_EVENTS else "running")


def _update_pointer(
    plan: _Plan,
    event: dict[str, Any],
    home: Path,
    global_log: Path,
    global_written: bool,
    out: WriteResult,
    project_log: Path,
) -> bool:
    assert plan.specs_dir is not None
    value = {
        "schema_version": run_logs.SCHEMA_VERSION,
        "run_id": event["run_id"],
        "workflow": plan.args.workflow,
        # the run's state as the authoritative log says after this write: a deduplicated old
        # run_done or resume leaves it as it was
        "status": _run_state(project_log, event["run_id"], plan.args.event),
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
                if _scan(global_log, record["run_id"], record["event_id"], None).duplicate is None:
                    run_logs.append_line(global_log, record, private=True)
        out.notes.append("active-run pointer unavailable; project log recovery retained")
        return False


# ---------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    parser = QuietArgumentParser(
        prog=PROG, description="Write one CM Workflow event to the project and global logs."
    )
    for name in ("--workflow", "--event", "--runtime", "--detail"):
        parser.add_argument(name, required=True)
    for name in ("--phase", "--project", "--project-root", "--specs-dir", "--run-id", "--at"):
        parser.add_argument(name)
    parser.add_argument("--data-json", default="{}")
    return parser


def _args_from(ns: argparse.Namespace) -> EventArgs:
    return EventArgs(
        workflow=ns.workflow,
        event=ns.event,
        runtime=ns.runtime,
        detail=ns.detail,
        phase=ns.phase,
        project=ns.project,
        project_root=ns.project_root,
        specs_dir=ns.specs_dir,
        run_id=ns.run_id,
        at=ns.at,
        data_json=ns.data_json,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Console script ``cm-log-event``, under the stdout guard (``toolkit.infra.output``)."""
    from toolkit.infra.output import guarded

    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    try:
        ns = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    try:
        written = write_event(_args_from(ns), environ=os.environ)
    except EventError as exc:
        sys.stderr.write(f"{PROG}: {exc.message}\n")
        return exc.exit_code
    for note in written.notes:
        sys.stderr.write(f"{PROG}: {note}\n")
    sys.stdout.write(json.dumps(written.result, ensure_ascii=True, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
