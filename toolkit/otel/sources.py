"""Reading the records an export sends: the local telemetry log and the CM logs (standard library).

* The local telemetry log holds efficiency events and routing evidence (``--record``); each line
  is numbered among equal lines (``spans.Occurrences``), so its id survives later appends.
* CM model calls come from the private global log home (``CM_WORKFLOW_LOG_HOME``, as the usage
  report reads it) and from a project log (``<specs-dir>/运行日志.jsonl``) when one is named. A
  call present in both has one event id and is sent once.

Torn or invalid lines are counted as skipped, never fatal.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from toolkit.cm.report import load_run_refs, safe_log_path
from toolkit.cm.run_logs import PROJECT_LOG_NAME, iter_json_lines
from toolkit.infra.boundedio import FileRefused, loads_bounded, open_regular
from toolkit.infra.telemetrylog import iter_lines
from toolkit.otel.spans import (
    Occurrences,
    Skipped,
    SpanRecord,
    agent_span,
    cm_span,
    content_key,
    decision_span,
    efficiency_span,
)
from toolkit.usage.fold import Ledger, stream
from toolkit.usage.sources import discover, hashed

EFFICIENCY_SCHEMA = "knowzcode.efficiency-event/v1"
EVIDENCE_SCHEMA = "workgroup.routing-evidence/v1"


def telemetry_log_spans(path: Path, skipped: Skipped) -> Iterator[SpanRecord]:
    """Spans of the local telemetry log (every rotated segment, then the active log), in log order.

    Streamed line by line, each line within the line cap: a log of any total size is read in
    bounded memory (``toolkit.infra.telemetrylog``)."""

    occurrences = Occurrences()
    for line in iter_lines(path):
        if line.raw is None:  # past the line cap
            skipped.add("unreadable line")
            continue
        try:
            value = loads_bounded(line.raw, what="the telemetry log", strict=False)
        except FileRefused:
            skipped.add("unreadable line")
            continue
        schema = value.get("schema") if isinstance(value, dict) else None
        if schema == EFFICIENCY_SCHEMA:
            key = occurrences.key(content_key(value))
            span = efficiency_span(value, key, skipped)
        elif schema == EVIDENCE_SCHEMA:
            key = occurrences.key(content_key(value))
            span = decision_span(value, key, skipped)
        else:
            skipped.add("not an exported record")
            continue
        if span is not None:
            yield span


def _jsonl(path: Path, skipped: Skipped, seen: set[str] | None = None) -> Iterator[object]:
    """The CM usage rows of one log: regular files only (a FIFO never blocks), each line bounded.

    An unreadable line whose bytes are in ``seen`` was counted in an earlier log: not again."""

    try:
        handle = open_regular(path, what="a CM log", missing_ok=True)
    except FileRefused:
        skipped.add("unreadable log")
        return
    if handle is None:
        return
    with handle:
        for raw in handle:
            if b'"model_usage"' not in raw:
                continue  # only completed calls become spans
            try:
                yield loads_bounded(raw, what="a CM log line")
            except FileRefused:
                key = "raw:" + hashlib.sha256(raw.strip()).hexdigest()
                if seen is None or key not in seen:
                    skipped.add("unreadable line")
                    if seen is not None:
                        seen.add(key)


def _inside(raw: object, root: Path) -> bool:
    if not isinstance(raw, str) or not raw:
        return False
    try:
        Path(raw).resolve(strict=False).relative_to(root)
    except (ValueError, OSError):
        return False
    return True


def runs_of(home: Path, workdir: Path) -> set[str]:
    """Run ids the global index ties to ``workdir`` (its project root or specs dir is inside it).

    The global log home is shared by every project of the machine; an export speaks for one
    repository, so the other projects' runs stay out unless asked for.
    """

    root = workdir.resolve()
    runs: set[str] = set()
    for row in iter_json_lines(home / "index.jsonl"):
        run_id = row.get("run_id")
        if isinstance(run_id, str) and (
            _inside(row.get("project_path"), root) or _inside(row.get("specs_path"), root)
        ):
            runs.add(run_id)
    return runs


def cm_log_files(home: Path | None, specs_dir: Path | None, workdir: Path | None = None) -> list[Path]:
    """Run logs of the global log home (from its index) and the project log, if named.

    With ``workdir``, only the runs of that work tree (``runs_of``); without it, every run.
    """

    files: list[Path] = []
    if home is not None and home.is_dir():
        quiet = io.StringIO()  # the report's warnings: the export counts skipped lines instead
        mine = None if workdir is None else runs_of(home, workdir)
        for ref in load_run_refs(home, quiet):
            if mine is not None and ref.run_id not in mine:
                continue
            path = safe_log_path(home, ref.log_file, quiet)
            if path is not None and path not in files:
                files.append(path)
    if specs_dir is not None:
        files.append(specs_dir / PROJECT_LOG_NAME)
    return files


def _row_key(row: object) -> str:
    """A CM row's identity across logs: its event id, else its whole content."""
    event_id = row.get("event_id") if isinstance(row, dict) else None
    if isinstance(event_id, str):
        return "event:" + event_id
    text = json.dumps(row, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return "row:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def cm_spans(files: list[Path], skipped: Skipped) -> Iterator[SpanRecord]:
    """Spans of the completed model calls in ``files``, each event id once.

    A row the project log and the global log both hold is one record: sent once when a copy is
    valid, and counted once among the skipped records (when the iteration ends) when none is."""
    seen: set[str] = set()  # unreadable lines already counted
    sent: set[str] = set()
    refused: dict[str, str] = {}  # row key -> the reason its first copy was refused
    for path in files:
        for row in _jsonl(path, skipped, seen):
            key = _row_key(row)
            if key in sent:
                continue
            verdict = Skipped()
            span = cm_span(row, verdict)
            if span is None:
                for reason in verdict.reasons:
                    refused.setdefault(key, reason)
                continue
            sent.add(key)
            refused.pop(key, None)
            yield span
    for reason in refused.values():
        skipped.add(reason)


def agent_spans(environ: Mapping[str, str], workdir: Path | None, skipped: Skipped) -> Iterator[SpanRecord]:
    """Spans of the model calls in the Claude Code and Codex logs (``workgroup usage``'s readers).

    With ``workdir``, only the calls made in that work tree (the rule of ``workgroup usage
    --project``); without it, every call of the machine's logs. A call's key is the digest of its
    session, thread, time, model and counts, numbered among equals (the readers have deduplicated).
    """

    project = None if workdir is None else hashed(str(workdir.resolve()))
    occurrences = Occurrences()
    ledger = Ledger()
    for calls in stream(discover("all", environ), ledger):  # a session at a time, none kept
        for call in calls:
            if project is not None and call.project != project:
                continue
            # the span id comes from what the log says about the call, never from the reader's
            # in-process dedup key: a re-export sends the same ids
            parts = (call.source, call.session, call.thread, call.ts, call.model, call.input, call.output)
            key = occurrences.key(content_key({"call": [str(part) for part in parts]}))
            span = agent_span(call, key, skipped)
            if span is not None:
                yield span
    if ledger.skipped_lines:
        skipped.reasons["unreadable agent-log line"] = ledger.skipped_lines
