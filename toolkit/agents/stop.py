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
  prompt, compactions). A marker in the local state dir remembers what was already counted, so
  the events of one session add up to its total. Telemetry ``off`` records nothing.
"""

from __future__ import annotations

import json
import os

from toolkit.agents import answers, state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from toolkit.agents.answers import Answer
    from toolkit.agents.payload import HookInput
    from toolkit.usage.model import Call

MARKER_DIR = "agent-sessions"
_COUNTED = ("calls", "input", "cache_write", "cache_read", "output", "compactions")


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
    from pathlib import Path

    from toolkit.cm.boundary import Event, Facts, Lang, Workflow
    from toolkit.cm.session_boundary import run_boundary

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
    from toolkit.core.display import shown

    line = f"uncommitted changes in {len(paths)} file(s): " + ", ".join(shown(p) for p in paths)
    return line if len(line) <= 300 else line[:296].rsplit(",", 1)[0] + ", …"


# --- the efficiency event ----------------------------------------------------------------------


def transcript_files(agent: str, transcript: str | None) -> list[Any]:
    """The session's log files (the transcript and, for Claude, its subagents' files), or []."""
    from pathlib import Path

    from toolkit.usage.sources import LogFile

    if not transcript or not os.path.isabs(transcript) or not transcript.endswith(".jsonl"):
        return []
    path = Path(transcript)
    try:
        info = os.stat(path)
    except OSError:
        return []
    import stat

    if not stat.S_ISREG(info.st_mode):  # a FIFO named *.jsonl would block the hook
        return []
    root = _log_root(path, agent)
    files = [LogFile(agent, path, root, False, info.st_size, info.st_mtime)]
    if agent == "claude":
        subs = path.parent / path.stem / "subagents"
        if subs.is_dir() and not subs.is_symlink():
            for name in sorted(os.listdir(subs)):
                sub = subs / name
                if name.endswith(".jsonl") and sub.is_file() and not sub.is_symlink():
                    sub_info = sub.stat()
                    files.append(LogFile(agent, sub, root, False, sub_info.st_size, sub_info.st_mtime))
    return files


def _log_root(path: Path, agent: str) -> Path:
    """The folder the usage reader places a log under: Claude's ``projects/``, Codex's home."""
    from pathlib import Path

    marker = "projects" if agent == "claude" else "sessions"
    parts = path.parts[:-1]
    if marker in parts:
        at = len(parts) - 1 - parts[::-1].index(marker)
        return Path(*parts[: at + 1]) if agent == "claude" else Path(*parts[:at])
    return path.parent.parent if agent == "claude" else path.parent


def session_calls(agent: str, transcript: str | None) -> list[Call]:
    """The verified, deduplicated calls of the session's transcript (empty when there is none)."""
    from toolkit.usage.fold import read_logs

    files = transcript_files(agent, transcript)
    if not files:
        return []
    return list(read_logs(files).calls)


def record_usage(root: str, hook: HookInput) -> str:
    """Append the session's new usage as one event; the line that says what happened."""
    calls = session_calls(hook.agent, hook.transcript_path)
    if not calls:
        return "usage: no verified model calls in the session's transcript yet."
    layout = state.layout(root)
    task = state.session_task_id(hook.agent, hook.session_id)
    marker = layout.local / MARKER_DIR / f"{task}.json"
    counted = _read_marker(marker)
    new = calls[int(counted.get("calls", 0)) :] if counted.get("calls", 0) <= len(calls) else calls
    if not new:
        return "usage: nothing new since the last event."
    event = usage_event(hook.agent, hook.session_id or task, new)
    mode = telemetry_mode(root)
    if mode != "off":
        from toolkit.infra.store import file_lock
        from toolkit.infra.telemetrylog import append_held

        with file_lock(layout.lock("telemetry")):
            append_held(layout.telemetry_log, event)
    _write_marker(marker, {"calls": len(calls)})
    billed = event["billed"]
    total = sum(
        billed[k] or 0
        for k in (
            "uncached_input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        )
    )
    where = "recorded in the local telemetry log" if mode != "off" else "telemetry is off: not recorded"
    return f"usage: {len(new)} verified call(s), {total} billed tokens since the last event ({where})."


def usage_event(agent: str, session: str, calls: list[Call]) -> dict[str, Any]:
    """One normalized ``worker_usage`` event of ``calls`` (logical and billed apart)."""
    from toolkit.runtime.telemetry import normalize_event
    from toolkit.usage.events import SessionSums, session_event

    sums = SessionSums()
    for call in calls:
        sums.add(call, "")
    event, _dropped = normalize_event(session_event(agent, session, sums, sums.resume))
    return event


def telemetry_mode(root: str) -> str:
    """``context_efficiency.telemetry`` (``local`` when the config file is absent)."""
    from pathlib import Path

    if not os.path.lexists(os.path.join(root, ".workgroup", "config.yml")):
        return "local"
    from toolkit.infra.config import load_config

    return str(load_config(Path(root))["context_efficiency"]["telemetry"])


def _read_marker(path: Path) -> dict[str, int]:
    from toolkit.infra.boundedio import FileRefused, read_regular

    try:
        raw = read_regular(
            path, limit=4096, what="the session marker", follow_symlinks=False, missing_ok=True
        )
        data = json.loads(raw) if raw else {}
    except (FileRefused, OSError, ValueError):
        return {}
    if not isinstance(data, dict) or not all(isinstance(data.get(k, 0), int) for k in _COUNTED):
        return {}
    return {k: int(v) for k, v in data.items() if k in _COUNTED}


def _write_marker(path: Path, data: dict[str, int]) -> None:
    from toolkit.infra.store import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data) + "\n")
