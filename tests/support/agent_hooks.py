"""Shared helpers of the agent-hook tests: the recorded payloads, the real process, the transcripts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, NamedTuple

from support.harness import run_workgroup
from toolkit.privacy.providers import base62_crc32

PAYLOADS = Path(__file__).parents[1] / "agents" / "payloads"
DATA = Path(__file__).parents[1] / "agents" / "data" / "projects" / "-home-dev-demo"

# the recorded Claude session of data/ counted by hand (tests/agents/test_statusline.py): four kept calls
CLAUDE_BILLED = {
    "uncached_input_tokens": 20,
    "cache_creation_input_tokens": 4_300,
    "cache_read_input_tokens": 35_200,
    "output_tokens": 750,
    "accounting_source": "provider-reported",
}

# the Codex rollout of the reference note: two calls, 25,000 input of which 11,800 cached, 650 output
CODEX_ROLLOUT = [
    {
        "timestamp": "2026-01-05T15:00:00.000Z",
        "type": "session_meta",
        "payload": {
            "id": "0000aaaa",
            "cwd": "/srv/demo",
            "originator": "codex_cli_rs",
            "cli_version": "0.50.0",
        },
    },
    {
        "timestamp": "2026-01-05T15:00:01.000Z",
        "type": "turn_context",
        "payload": {"cwd": "/srv/demo", "model": "gpt-5-codex", "approval_policy": "on-request"},
    },
    {
        "timestamp": "2026-01-05T15:00:09.000Z",
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {
                "total_token_usage": {
                    "input_tokens": 12000,
                    "cached_input_tokens": 0,
                    "output_tokens": 400,
                    "reasoning_output_tokens": 128,
                    "total_tokens": 12400,
                },
                "last_token_usage": {
                    "input_tokens": 12000,
                    "cached_input_tokens": 0,
                    "output_tokens": 400,
                    "reasoning_output_tokens": 128,
                    "total_tokens": 12400,
                },
            },
            "rate_limits": None,
        },
    },
    {
        "timestamp": "2026-01-05T15:01:00.000Z",
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {
                "total_token_usage": {
                    "input_tokens": 25000,
                    "cached_input_tokens": 11800,
                    "output_tokens": 650,
                    "reasoning_output_tokens": 200,
                    "total_tokens": 25650,
                },
                "last_token_usage": {
                    "input_tokens": 13000,
                    "cached_input_tokens": 11800,
                    "output_tokens": 250,
                    "reasoning_output_tokens": 72,
                    "total_tokens": 13250,
                },
                "model_context_window": 272000,
            },
            "rate_limits": None,
        },
    },
]
CODEX_BILLED = {
    "uncached_input_tokens": 13_200,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 11_800,
    "output_tokens": 650,
    "accounting_source": "provider-reported",
}


def github_token(body: str = "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1") -> str:
    """A checksum-valid classic GitHub token shape (synthetic, built here so no literal sits in a file)."""
    return "ghp_" + body + base62_crc32(body)


class HookResult(NamedTuple):
    code: int
    data: dict[str, Any] | None
    stdout: str
    stderr: str

    @property
    def reason(self) -> str:
        inner = (self.data or {}).get("hookSpecificOutput", {})
        return str(inner.get("permissionDecisionReason") or self.data and self.data.get("reason") or "")

    @property
    def context(self) -> str:
        return str((self.data or {}).get("hookSpecificOutput", {}).get("additionalContext", ""))

    @property
    def message(self) -> str:
        return str((self.data or {}).get("systemMessage", ""))


def payload(agent: str, name: str, root: Path, transcript: Path | str = "") -> dict[str, Any]:
    """A recorded payload with the repository root and the transcript path filled in."""
    text = (PAYLOADS / agent / f"{name}.json").read_text(encoding="utf-8")
    text = text.replace("@ROOT@", str(root)).replace("@TRANSCRIPT@", str(transcript))
    data: dict[str, Any] = json.loads(text)
    return data


def hook(
    event: str,
    data: dict[str, Any] | None = None,
    *,
    raw: bytes | None = None,
    agent: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> HookResult:
    """Run the real ``workgroup agent-hook EVENT`` process with one payload on stdin."""
    args = ["agent-hook", event, *(["--agent", agent] if agent else []), *extra]
    stdin = raw if raw is not None else json.dumps(data).encode("utf-8")
    proc = run_workgroup(*args, stdin=stdin, cwd=cwd, env=env)
    out = proc.stdout.decode("utf-8")
    lines = out.splitlines()
    assert len(lines) <= 1, out  # at most one JSON object
    parsed = json.loads(lines[0]) if lines else None
    return HookResult(proc.returncode, parsed, out, proc.stderr.decode("utf-8"))


def claude_transcript(home: Path) -> Path:
    """The recorded Claude session (with its subagent log) under ``home``/projects/..."""
    target = home / "projects" / "-home-dev-demo"
    shutil.copytree(DATA, target)
    return target / "s-1111.jsonl"


def codex_transcript(home: Path) -> Path:
    """The reference note's Codex rollout under ``home``/sessions/2026/01/05/."""
    folder = home / "sessions" / "2026" / "01" / "05"
    folder.mkdir(parents=True)
    path = folder / "rollout-2026-01-05T10-00-00-0000aaaa.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in CODEX_ROLLOUT), encoding="utf-8")
    return path
