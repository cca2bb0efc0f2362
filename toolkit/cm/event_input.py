"""The inputs of one CM event (the ``cm-log-event`` options) checked into a plan to write.

Every check that needs no log: identifiers, the detail, ``--data-json`` (``toolkit.cm.data_json``),
a model event's rules (``toolkit.cm.model_event_rules``), a lifecycle event's own fields, the
run id, the time, the directories, and last the shared privacy engine over every value that
reaches a log. A refusal is an ``EventError`` (exit 2) and nothing is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolkit.cm import lifecycle
from toolkit.cm.data_json import check_unicode, parse_data
from toolkit.cm.event_error import EventError
from toolkit.cm.model_event_rules import validate_model_event
from toolkit.core.cm_usage_format import IDENTIFIER_PATTERN, MAX_DETAIL
from toolkit.core.identifiers import CM_RUN_ID
from toolkit.core.timefmt import parse_rfc3339
from toolkit.privacy.engine import scan_value
from toolkit.privacy.types import Context

TYPE_CHECKING = False  # typing costs start-up on every event; type checkers read True
if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject

IDENTIFIER = re.compile(IDENTIFIER_PATTERN)


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
class EventPlan:
    """Validated inputs, ready to be written."""

    args: EventArgs
    data: JsonObject
    detail: str
    at: str
    at_moment: datetime
    project_root: Path | None
    specs_dir: Path | None
    project: str
    call_id: str | None = None  # a model event's checked call id


def validate(args: EventArgs, now: datetime) -> EventPlan:
    """Every input check that needs no log: raises EventError (exit 2)."""
    for label, value in (
        ("--workflow", args.workflow),
        ("--event", args.event),
        ("--phase", args.phase),
        ("--runtime", args.runtime),
    ):
        _identifier(label, value)
    detail = _detail(args.detail)
    data = parse_data(args.data_json, args.event)
    call_id = validate_model_event(args.event, args.phase, data)
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
    return EventPlan(args, data, detail, at, moment, root, specs, project, call_id)


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
    check_unicode(detail)
    return detail


def privacy_guard(detail: str, data: JsonObject, envelope: Mapping[str, str | None] | None = None) -> None:
    """The shared privacy engine over every value that reaches a log, in its event-log context.

    ``envelope`` holds the other written values (run id, workflow, event, phase, runtime,
    project): a secret passed as ``--run-id`` would otherwise land in the committed project
    log, the pointer, the index and a file name. Secrets, provider session ids, home paths,
    emails and transcript text never reach a log; the refusal names only the category.
    """
    written = {key: value for key, value in (envelope or {}).items() if value is not None}
    try:
        findings = scan_value({**written, "detail": detail, **data}, Context.EVENT_LOG)
    except ValueError:
        raise EventError("event data is nested too deeply to check") from None
    if findings:
        categories = ", ".join(sorted({f.category.value for f in findings}))
        raise EventError(f"event text contains private content ({categories})", code="PRIVATE_CONTENT")


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
        check_unicode(explicit)
        return explicit
    return root.name if root else "unscoped"
