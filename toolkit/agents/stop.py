"""Stop and session end: the CM boundary verdict, the handoff, and one efficiency event.

* ``stop_hook_active`` (a stop hook already made the agent go on once): nothing is done and
  nothing blocks; this hook never blocks a stop at all, so it can never block twice.
* The verdict: ``toolkit.cm.session_boundary.run_boundary`` at the run's end (``run_done`` of the
  workflow, ``cm-ai`` unless ``--workflow`` says otherwise), with the agent's own command as the
  original command; it writes ``.reviews/session-handoff.md`` (privacy-checked, confined) and its
  lines are shown to the user.
* The event: the session's own transcript is read by the usage readers (allow-listed fields
  only, verified and deduplicated) and one ``knowzcode.efficiency-event/v1`` ``worker_usage``
  event carries what was billed since this session's previous event (``billed``: the provider's
  own counts, ``provider-reported``) apart from the logical measures (``logical``: the largest
  prompt, compactions). A marker in the local state dir remembers, per call (Claude: its message
  and request ids), the counts already in an event, so a call is never counted twice, a streamed
  call whose final line came later adds only its growth, and the events of one session add up to
  its verified total. Telemetry ``off`` records nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from toolkit.agents import answers, state
from toolkit.cm.boundary import Event, Facts, Lang, Workflow
from toolkit.cm.session_boundary import run_boundary
from toolkit.core.display import shown
from toolkit.infra.boundedio import FileRefused, read_regular
from toolkit.infra.store import atomic_write, file_lock
from toolkit.infra.telemetrylog import append_held
from toolkit.runtime.telemetry import normalize_event
from toolkit.usage.events import SessionSums, session_event
from toolkit.usage.fold import read_logs
from toolkit.usage.sources import LogFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.agents.answers import Answer
    from toolkit.agents.payload import HookInput, Options
    from toolkit.usage.model import Call

MARKER_DIR = "agent-sessions"


def handle(hook: HookInput, options: Options) -> Answer:
    return stop(hook, options.workflow, options.lang)


def stop(hook: HookInput, workflow: str, lang: str) -> Answer:
    if hook.stop_hook_active:
        return answers.allow()
    root = state.repo_root(hook.cwd)
    if root is None:
        return answers.allow()
    lines = boundary_lines(root, hook, workflow, lang)
    usage = record_usage(root, hook)
    return answers.message("\n".join([*lines, usage]))


def boundary_lines(root: str, hook: HookInput, workflow: str, lang: str) -> list[str]:
    """The verdict lines, the handoff's line last (``run_boundary`` writes the handoff)."""
    changed = state.changed_files(root, limit=20)
    done = [_changed_line(changed)] if changed else []
    facts = Facts(workflow=Workflow(workflow), event=Event.RUN_DONE, original_command=hook.agent)
    lines, _report = run_boundary(
        facts,
        lang=Lang(lang),
        specs_dir=Path(root),
        archive_dir=None,
        tasks=None,
        done=done,
        project_root=Path(root),
    )
    return lines


def _changed_line(paths: list[str]) -> str:
    line = f"uncommitted changes in {len(paths)} file(s): " + ", ".join(shown(p) for p in paths)
    return line if len(line) <= 300 else line[:296].rsplit(",", 1)[0] + ", …"


# --- the efficiency event ----------------------------------------------------------------------


def transcript_files(agent: str, transcript: str | None) -> list[LogFile]:
    """The session's log files (the transcript and, for Claude, its subagents' files), or []."""
    if not transcript or not os.path.isabs(transcript) or not transcript.endswith(".jsonl"):
        return []
    path = Path(transcript)
    info = _regular_stat(path)
    if info is None:
        return []
    root = _log_root(path, agent)
    files = [LogFile(agent, str(path), root, False, info.st_size, info.st_mtime)]
    if agent == "claude":
        files += _subagent_files(agent, path, root)
    return files


def _regular_stat(path: Path) -> os.stat_result | None:
    """The transcript's stat when it is a regular file (a FIFO named *.jsonl would block the
    hook), else None (also when it cannot be read)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _subagent_files(agent: str, path: Path, root: Path) -> list[LogFile]:
    """The ``*.jsonl`` files of a Claude transcript's ``<session>/subagents/`` folder, by name; a
    folder or file that is a symlink is not followed."""
    subs = path.parent / path.stem / "subagents"
    if not subs.is_dir() or subs.is_symlink():
        return []
    files: list[LogFile] = []
    for name in sorted(os.listdir(subs)):
        sub = subs / name
        if name.endswith(".jsonl") and sub.is_file() and not sub.is_symlink():
            sub_info = sub.stat()
            files.append(LogFile(agent, str(sub), root, False, sub_info.st_size, sub_info.st_mtime))
    return files


def _log_root(path: Path, agent: str) -> Path:
    """The folder the usage reader places a log under: Claude's ``projects/``, Codex's home."""
    marker = "projects" if agent == "claude" else "sessions"
    parts = path.parts[:-1]
    if marker in parts:
        at = len(parts) - 1 - parts[::-1].index(marker)
        return Path(*parts[: at + 1]) if agent == "claude" else Path(*parts[:at])
    return path.parent.parent if agent == "claude" else path.parent


def session_calls(agent: str, transcript: str | None) -> list[Call]:
    """The verified, deduplicated calls of the session's transcript (empty when there is none)."""
    files = transcript_files(agent, transcript)
    if not files:
        return []
    return list(read_logs(files).calls)


def record_usage(root: str, hook: HookInput) -> str:
    """Append the session's usage billed since its previous event as one event; the line that says so."""
    calls = session_calls(hook.agent, hook.transcript_path)
    if not calls:
        return "usage: no verified model calls in the session's transcript yet."
    layout = state.layout(root)
    task = state.session_task_id(hook.agent, hook.session_id)
    marker = layout.local / MARKER_DIR / f"{task}.json"
    counted = _read_marker(marker)
    delta = Delta()
    for call in calls:
        delta.add(call, counted)
    if not delta.calls:
        return "usage: nothing new since the last event."
    event = delta.event(hook.agent, hook.session_id or task)
    mode = telemetry_mode(root)
    if mode != "off":
        with file_lock(layout.lock("telemetry")):
            append_held(layout.telemetry_log, event)
    _write_marker(marker, counted)
    total = delta.billed_tokens()
    where = "recorded in the local telemetry log" if mode != "off" else "telemetry is off: not recorded"
    return f"usage: {delta.calls} verified call(s), {total} billed tokens since the last event ({where})."


def call_identity(call: Call) -> str:
    """One model call across reads of a growing transcript: Claude's message and request ids (a
    streamed call keeps them while its counts grow), else its thread and time (Codex)."""
    raw = call.key if call.key else f"{call.thread}\x1f{call.ts}\x1f{call.model}"
    return hashlib.sha256(f"{call.session}\x1f{raw}".encode("utf-8", "surrogatepass")).hexdigest()[:24]


class Delta:
    """What was billed since the last event: per call, its counts minus what was counted before
    (a call seen for the first time counts whole; a streamed call that grew counts its growth)."""

    def __init__(self) -> None:
        self.sums = SessionSums()
        self.calls = 0

    def add(self, call: Call, counted: dict[str, list[int]]) -> None:
        ident = call_identity(call)
        now = [call.input, call.cache_write, call.cache_read, call.output]
        before = counted.get(ident)
        grown = [max(0, a - b) for a, b in zip(now, before or [0, 0, 0, 0], strict=True)]
        if before is not None and not any(grown):
            return
        counted[ident] = [max(a, b) for a, b in zip(now, before or [0, 0, 0, 0], strict=True)]
        sums = self.sums
        self.calls += 1
        sums.calls += 1
        sums.models[call.model] = sums.models.get(call.model, 0) + sum(grown)
        sums.first = min(sums.first, call.ts) if sums.first else call.ts
        sums.last = max(sums.last, call.ts)
        sums.largest_prompt = max(sums.largest_prompt, call.prompt)
        if before is None:
            sums.compactions += call.compactions + call.compactions_after
            sums.resume = sums.resume or call.resume
        sums.input += grown[0]
        sums.cache_write += grown[1]
        sums.cache_read += grown[2]
        sums.output += grown[3]

    def event(self, agent: str, session: str) -> Mapping[str, object]:
        """The normalized ``worker_usage`` event (logical and billed apart), as the log stores it."""
        event, _dropped = normalize_event(session_event(agent, session, self.sums, self.sums.resume))
        return event

    def billed_tokens(self) -> int:
        """What the event's billed counters add up to: the uncached input, cache writes, cache
        reads and output billed since the last event (the normalizer keeps these counts as they are)."""
        sums = self.sums
        return sums.input + sums.cache_write + sums.cache_read + sums.output


def telemetry_mode(root: str) -> str:
    """``context_efficiency.telemetry`` (``local`` when the config file is absent)."""
    if not os.path.lexists(os.path.join(root, ".workgroup", "config.yml")):
        return "local"
    from toolkit.infra.config import load_config  # YAML and the config's models: only when a config exists

    return str(load_config(Path(root))["context_efficiency"]["telemetry"])


MAX_MARKER_BYTES = 8 * 1024 * 1024


def _read_marker(path: Path) -> dict[str, list[int]]:
    """The counts already in an event, per call identity ({} when absent or not ours)."""
    try:
        raw = read_regular(
            path, limit=MAX_MARKER_BYTES, what="the session marker", follow_symlinks=False, missing_ok=True
        )
        data = json.loads(raw) if raw else {}
    except (FileRefused, OSError, ValueError, RecursionError):
        return {}
    counted = data.get("counted") if isinstance(data, dict) else None
    if not isinstance(counted, dict):
        return {}
    return {key: value for key, value in counted.items() if _is_counts(value)}


def _is_counts(value: object) -> bool:
    """Whether a marker entry is four counts (non-negative integers, not booleans)."""
    return isinstance(value, list) and len(value) == 4 and all(type(n) is int and n >= 0 for n in value)


def _write_marker(path: Path, counted: dict[str, list[int]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps({"counted": counted}, separators=(",", ":")) + "\n")
