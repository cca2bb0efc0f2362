"""Demo step: real agent sessions. ``workgroup usage`` on generated Claude Code and Codex logs.

The logs are written beside the throwaway repository in the shapes Claude Code and Codex use (a
streaming partial, a subagent file, a compaction, a re-emitted Codex total), so the step shows the
counting rules at work: each call once, carried history per context, the boundary verdict at the
compaction point.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from toolkit.demo.runner import Demo

SESSION = "demo-session-0001"
COMPACT = (",", ":")  # both tools write compact JSON lines
CWD = "/work/demo-project"


class CodexTokenUsage(TypedDict):
    """A Codex ``token_count`` event's usage object (``total_token_usage`` / ``last_token_usage``)."""

    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    reasoning_output_tokens: int
    total_tokens: int


def _dumps(value: object) -> str:
    return json.dumps(value, separators=COMPACT)


def _assistant(ts: str, msg: str, read: int, write: int, out: int, stop: str | None = "end_turn") -> str:
    return _dumps(
        {
            "type": "assistant",
            "sessionId": SESSION,
            "requestId": f"req-{msg}",
            "timestamp": ts,
            "cwd": CWD,
            "version": "2.1.0",
            "isSidechain": False,
            "message": {
                "id": msg,
                "model": "claude-sonnet-4-5",
                "stop_reason": stop,
                "content": [{"type": "text", "text": "(reply text: never read by the tool)"}],
                "usage": {
                    "input_tokens": 6,
                    "cache_creation_input_tokens": write,
                    "cache_read_input_tokens": read,
                    "output_tokens": out,
                },
            },
        }
    )


def _codex_count(ts: str, total: tuple[int, int, int], last: tuple[int, int, int]) -> str:
    def usage(v: tuple[int, int, int]) -> CodexTokenUsage:
        return {
            "input_tokens": v[0],
            "cached_input_tokens": v[1],
            "output_tokens": v[2],
            "reasoning_output_tokens": v[2] // 4,
            "total_tokens": v[0] + v[2],
        }

    info = {"total_token_usage": usage(total), "last_token_usage": usage(last)}
    payload = {"type": "token_count", "info": info, "rate_limits": None}
    return _dumps({"timestamp": ts, "type": "event_msg", "payload": payload})


def write_samples(base: Path) -> dict[str, str]:
    """Write one Claude Code session (with a subagent) and one Codex rollout; return the environment."""
    project = base / "claude" / "projects" / "-work-demo-project"
    project.mkdir(parents=True, exist_ok=True)
    lines = [
        _assistant("2026-01-06T09:00:02.000Z", "msg-1", 0, 14000, 1, stop=None),  # streaming partial
        _assistant("2026-01-06T09:00:04.000Z", "msg-1", 0, 14000, 420),
        _assistant("2026-01-06T09:02:00.000Z", "msg-2", 14000, 2500, 300),
        _assistant("2026-01-06T09:05:00.000Z", "msg-3", 16500, 3000, 500),
        _assistant("2026-01-06T09:09:00.000Z", "msg-4", 19500, 2000, 250),
        _dumps(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "sessionId": SESSION,
                "timestamp": "2026-01-06T09:10:00.000Z",
                "compactMetadata": {"trigger": "auto", "preTokens": 21500},
            }
        ),
        _assistant("2026-01-06T09:11:00.000Z", "msg-5", 6000, 1500, 200),
        _assistant("2026-01-06T09:13:00.000Z", "msg-6", 7500, 900, 180),
    ]
    (project / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    sub = project / SESSION / "subagents"
    sub.mkdir(parents=True, exist_ok=True)
    sub_line = json.loads(_assistant("2026-01-06T09:03:00.000Z", "msg-s1", 0, 5000, 600))
    sub_line["isSidechain"] = True
    (sub / "agent-a1.jsonl").write_text(_dumps(sub_line) + "\n", encoding="utf-8")
    day = base / "codex" / "sessions" / "2026" / "01" / "06"
    day.mkdir(parents=True, exist_ok=True)
    meta = {
        "id": "demo-rollout-0001",
        "cwd": CWD,
        "source": "cli",
        "base_instructions": {"text": "(never read)"},
    }
    first = _codex_count("2026-01-06T10:00:09.000Z", (12000, 0, 400), (12000, 0, 400))
    rollout = [
        _dumps({"timestamp": "2026-01-06T10:00:00.000Z", "type": "session_meta", "payload": meta}),
        _dumps(
            {"timestamp": "2026-01-06T10:00:01.000Z", "type": "turn_context", "payload": {"model": "gpt-5"}}
        ),
        first,
        first.replace("10:00:09", "10:00:10"),  # a re-emitted total: not a new call
        _codex_count("2026-01-06T10:01:00.000Z", (25000, 11800, 650), (13000, 11800, 250)),
    ]
    (day / "rollout-2026-01-06T10-00-00-demo-rollout-0001.jsonl").write_text("\n".join(rollout) + "\n")
    return {"CLAUDE_CONFIG_DIR": str(base / "claude"), "CODEX_HOME": str(base / "codex")}


def _show(demo: Demo, text: str) -> None:
    demo.say("\n".join(f"  {line}" for line in text.rstrip("\n").splitlines()))


def run(demo: Demo) -> None:
    demo.heading("Real agent sessions: verified usage and carried history from Claude Code and Codex logs")
    env = write_samples(demo.root.parent / "agent-logs")
    demo.say("Sample logs in the shapes Claude Code and Codex write: a streaming partial (counted once, with")
    demo.say("its final output), a subagent file, a compaction, and a Codex total re-emitted unchanged.")
    proc = demo.run("usage", "--by", "session", "--timezone", "UTC", env=env)
    demo.say(f"$ workgroup usage --by session --timezone UTC   (exit {proc.returncode})")
    _show(demo, proc.stdout)
    demo.say("'carried' is cache read beyond each context's base: history re-read that a fresh session with")
    demo.say("a capsule would not re-read. The session call by call, with the verdict at the compaction:")
    proc = demo.run("usage", "session", SESSION, "--timezone", "UTC", env=env)
    demo.say(f"$ workgroup usage session {SESSION} --timezone UTC   (exit {proc.returncode})")
    _show(demo, proc.stdout)
    if proc.returncode != 0:
        raise RuntimeError("workgroup usage session failed")
