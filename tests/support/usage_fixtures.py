"""Fixture logs for ``workgroup usage``: every counting pitfall of the agent-logs reference note.

``build(root)`` writes a Claude config dir (``root/claude``) and a Codex home (``root/codex``) and
returns nothing; ``EXPECTED`` holds the totals our rules give. Every content field carries
``CANARY`` (messages, summaries, instructions, tool output, compaction text, paths, branches), so a
test can assert it never reaches any output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CANARY = "CANARY-7f3a-do-not-leak"
CWD = f"/home/dev/{CANARY}/demo"
BRANCH = f"feature/{CANARY}"


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _usage(inp: int, write: int, read: int, out: int, write_1h: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": write + write_1h,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": write_1h},
        "output_tokens": out,
        "service_tier": "standard",
    }


def user(session: str, ts: str, uuid: str, **extra: Any) -> str:
    return _line(
        {
            "type": "user",
            "uuid": uuid,
            "parentUuid": None,
            "isSidechain": False,
            "sessionId": session,
            "timestamp": ts,
            "cwd": CWD,
            "gitBranch": BRANCH,
            "version": "2.1.0",
            "message": {"role": "user", "content": f"please fix {CANARY}"},
            "toolUseResult": {"stdout": CANARY, "usage": {"input_tokens": 999}},
            **extra,
        }
    )


def assistant(
    session: str,
    ts: str,
    msg: str | None,
    req: str | None,
    usage: dict[str, Any],
    *,
    model: str = "claude-sonnet-4-5",
    sidechain: bool = False,
    stop: str | None = "end_turn",
    **extra: Any,
) -> str:
    message: dict[str, Any] = {
        "model": model,
        "role": "assistant",
        "stop_reason": stop,
        "content": [{"type": "text", "text": f"answer {CANARY}"}, {"type": "thinking", "thinking": CANARY}],
        "usage": usage,
    }
    if msg is not None:
        message["id"] = msg
    line: dict[str, Any] = {
        "type": "assistant",
        "uuid": f"a-{ts}",
        "parentUuid": "u",
        "isSidechain": sidechain,
        "sessionId": session,
        "timestamp": ts,
        "cwd": CWD,
        "gitBranch": BRANCH,
        "version": "2.1.0",
        "message": message,
        **extra,
    }
    if req is not None:
        line["requestId"] = req
    return _line(line)


def compact(session: str, ts: str, pre: int) -> str:
    return _line(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "c1",
            "parentUuid": None,
            "logicalParentUuid": "u3",
            "sessionId": session,
            "timestamp": ts,
            "cwd": CWD,
            "content": f"Conversation compacted {CANARY}",
            "compactMetadata": {"trigger": "auto", "preTokens": pre},
        }
    )


def summary() -> str:
    return _line({"type": "summary", "summary": f"summary {CANARY}", "leafUuid": "u3"})


def _write(path: Path, lines: list[str], mtime: float | None = None, newline: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + ("\n" if newline else ""), encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))


T0 = 1_767_000_000.0  # file modification times: originals before resumed copies


def build_claude(root: Path) -> None:
    proj = root / "claude" / "projects" / "-home-dev-demo"
    s = "s-aaaa"
    a1 = assistant(s, "2026-01-06T02:30:03.000Z", "msg_A", "req_A", _usage(3, 1200, 15000, 1), stop=None)
    a2 = assistant(s, "2026-01-06T02:30:05.000Z", "msg_A", "req_A", _usage(3, 1200, 15000, 180))
    b1 = assistant(s, "2026-01-06T02:31:00.000Z", "msg_C", "req_C", _usage(5, 300, 16200, 40))
    # one line per content block: same ids, the later block carries the full usage
    b2 = assistant(s, "2026-01-06T02:31:01.000Z", "msg_C", "req_C", _usage(5, 300, 16200, 95))
    c1 = assistant(s, "2026-01-06T02:32:00.000Z", "msg_D", "req_D", _usage(2, 100, 17000, 60))
    side = assistant(
        s, "2026-01-06T02:32:30.000Z", "msg_A", "req_Z", _usage(3, 1200, 15000, 180), sidechain=True
    )
    after = assistant(s, "2026-01-06T02:41:00.000Z", "msg_E", "req_E", _usage(10, 2000, 9000, 70))
    after2 = assistant(s, "2026-01-06T02:42:00.000Z", "msg_F", "req_F", _usage(4, 50, 11500, 30))
    nulls = assistant(s, "2026-01-06T02:43:00.000Z", "msg_N", None, _usage(1, 1, 1, 1)).replace(
        '"sessionId":"s-aaaa"', '"sessionId":"s-aaaa","requestId":null'
    )
    badver = assistant(s, "2026-01-06T02:44:00.000Z", "msg_V", "req_V", _usage(1, 1, 1, 1)).replace(
        '"version":"2.1.0"', '"version":"dev"'
    )
    synthetic = assistant(
        s, "2026-01-06T02:45:00.000Z", "msg_S", "req_S", _usage(0, 0, 0, 0), model="<synthetic>"
    )
    lines = [
        user(s, "2026-01-06T02:30:00.000Z", "u1"),
        a1,
        a2,
        b1,
        b2,
        c1,
        side,
        compact(s, "2026-01-06T02:40:00.000Z", 155000),
        summary(),
        after,
        after2,
        nulls,
        badver,
        synthetic,
        '{"type":"assistant","message":{"usage":{"input_tokens":',  # torn last line
    ]
    _write(proj / f"{s}.jsonl", lines, T0, newline=False)
    # a subagent of s-aaaa (new layout) with its own context and a fast-mode call
    sub = proj / s / "subagents" / "agent-x1.jsonl"
    _write(
        sub,
        [
            user(s, "2026-01-06T02:33:00.000Z", "x0", isSidechain=True, agentId="x1"),
            assistant(
                s,
                "2026-01-06T02:33:05.000Z",
                "msg_B",
                "req_B",
                _usage(8, 4000, 0, 200),
                sidechain=True,
                agentId="x1",
            ),
            assistant(
                s,
                "2026-01-06T02:33:40.000Z",
                "msg_B2",
                "req_B2",
                _usage(6, 500, 4000, 120),
                sidechain=True,
                agentId="x1",
                model="claude-haiku-4-5",
            ),
        ],
        T0,
    )
    (proj / s / "subagents" / "agent-x1.meta.json").write_text(
        json.dumps({"agentType": CANARY, "spawnDepth": 1}), encoding="utf-8"
    )
    # a resumed session: the copied history keeps the ids, then its own calls follow
    r = "s-bbbb"
    _write(
        proj / f"{r}.jsonl",
        [
            user(r, "2026-01-06T02:30:00.000Z", "u1"),
            a2.replace('"sessionId":"s-aaaa"', '"sessionId":"s-bbbb"'),
            b2.replace('"sessionId":"s-aaaa"', '"sessionId":"s-bbbb"'),
            user(r, "2026-01-07T09:00:00.000Z", "u7"),
            assistant(
                r,
                "2026-01-07T09:00:04.000Z",
                "msg_G",
                "req_G",
                _usage(20, 900, 17500, 300),
                model="claude-opus-4-5",
            ),
            assistant(
                r,
                "2026-01-07T09:01:00.000Z",
                "msg_H",
                "req_H",
                _usage(3, 200, 18600, 90),
                model="claude-opus-4-5",
                speed="x",
            ),
        ],
        T0 + 100,
    )
    # a gateway that reuses one message id without request ids, in two sessions: both are real calls
    gw = root / "claude" / "projects" / "-home-dev-gw"
    for name in ("s-gw01", "s-gw02"):
        _write(
            gw / f"{name}.jsonl",
            [assistant(name, "2026-01-08T12:00:00.000Z", "msg_same", None, _usage(100, 0, 0, 10))],
            T0 + 200,
        )


def _tc(
    ts: str,
    total: tuple[int, int, int, int] | None,
    last: tuple[int, int, int, int] | None,
    window: int | None = 272000,
    limit_id: str | None = None,
) -> str:
    def counts(v: tuple[int, int, int, int]) -> dict[str, int]:
        return {
            "input_tokens": v[0],
            "cached_input_tokens": v[1],
            "output_tokens": v[2],
            "reasoning_output_tokens": v[3],
            "total_tokens": v[0] + v[2],
        }

    info: dict[str, Any] = {"model_context_window": window}
    if total is not None:
        info["total_token_usage"] = counts(total)
    if last is not None:
        info["last_token_usage"] = counts(last)
    limits: dict[str, Any] | None = (
        {"limit_id": limit_id, "primary": {"used_percent": 3.0}} if limit_id else None
    )
    return _line(
        {
            "timestamp": ts,
            "type": "event_msg",
            "payload": {"type": "token_count", "info": info, "rate_limits": limits},
        }
    )


def _meta(ts: str, sid: str, **payload: Any) -> str:
    return _line(
        {
            "timestamp": ts,
            "type": "session_meta",
            "payload": {
                "id": sid,
                "cwd": CWD,
                "originator": "codex_cli_rs",
                "cli_version": "0.50.0",
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": CANARY},
                "git": {"branch": BRANCH},
                **payload,
            },
        }
    )


def _turn(ts: str, model: str = "gpt-5-codex") -> str:
    return _line(
        {
            "timestamp": ts,
            "type": "turn_context",
            "payload": {
                "cwd": CWD,
                "model": model,
                "approval_policy": "on-request",
                "user_instructions": CANARY,
                "developer_instructions": CANARY,
            },
        }
    )


def _item(ts: str) -> str:
    return _line(
        {
            "timestamp": ts,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": CANARY}],
            },
        }
    )


def _user_msg(ts: str) -> str:
    return _line(
        {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": CANARY}}
    )


def build_codex(root: Path) -> None:
    day = root / "codex" / "sessions" / "2026" / "01" / "05"
    parent = "0000aaaa"
    l3 = _tc("2026-01-05T15:00:09.000Z", (12000, 0, 400, 128), (12000, 0, 400, 128))
    l4 = _tc("2026-01-05T15:01:00.000Z", (25000, 11800, 650, 200), (13000, 11800, 250, 72))
    lines = [
        _meta("2026-01-05T15:00:00.000Z", parent),
        _turn("2026-01-05T15:00:01.000Z"),
        _user_msg("2026-01-05T15:00:02.000Z"),
        _item("2026-01-05T15:00:08.000Z"),
        l3,
        l3.replace("15:00:09", "15:00:10"),  # a re-emit: unchanged total, no new call
        l4,
        _line(
            {
                "timestamp": "2026-01-05T15:01:01.000Z",
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": None,
                    "rate_limits": {"primary": {"used_percent": 7.0, "window_minutes": 300}},
                },
            }
        ),
        _line(
            {
                "timestamp": "2026-01-05T15:05:00.000Z",
                "type": "compacted",
                "payload": {
                    "message": CANARY,
                    "replacement_history": [{"type": "message", "content": CANARY}],
                },
            }
        ),
        # after the compaction: a smaller context, then a call that re-reads more than it
        _tc("2026-01-05T15:06:00.000Z", (33000, 16800, 800, 250), (8000, 5000, 150, 50)),
        _tc("2026-01-05T15:07:00.000Z", (43000, 25800, 900, 260), (10000, 9000, 100, 10)),
        # fill_to_context_window: total set to the window with empty buckets
        _line(
            {
                "timestamp": "2026-01-05T15:07:30.000Z",
                "type": "event_msg",
                "payload": {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": {
                            "input_tokens": 0,
                            "cached_input_tokens": 0,
                            "output_tokens": 0,
                            "reasoning_output_tokens": 0,
                            "total_tokens": 272000,
                        },
                        "last_token_usage": None,
                        "model_context_window": 272000,
                    },
                    "rate_limits": None,
                },
            }
        ),
        # a second counter in the same file (another rate-limit id) runs its own total
        _tc("2026-01-05T15:08:00.000Z", (1000, 0, 50, 0), (1000, 0, 50, 0), limit_id="codex_other"),
        _tc("2026-01-05T15:09:00.000Z", (1500, 400, 70, 0), (500, 400, 20, 0), limit_id="codex_other"),
    ]
    _write(day / f"rollout-2026-01-05T10-00-00-{parent}.jsonl", lines)
    # the archived copy of the same session is ignored
    arch = root / "codex" / "archived_sessions"
    _write(arch / f"rollout-2026-01-05T10-00-00-{parent}.jsonl", lines)
    # a fork: its own session_meta, the parent's, a replay of lines 3-4 re-stamped, then one own call
    fork = "0000bbbb"
    _write(
        day / f"rollout-2026-01-05T11-00-00-{fork}.jsonl",
        [
            _meta("2026-01-05T16:00:00.000Z", fork, forked_from_id=parent),
            _meta("2026-01-05T15:00:00.000Z", parent),
            _turn("2026-01-05T16:00:00.000Z"),
            l3.replace("15:00:09", "16:00:00"),
            l4.replace("15:01:00", "16:00:02"),
            _user_msg("2026-01-05T16:01:00.000Z"),
            _tc("2026-01-05T16:01:30.000Z", (39000, 24800, 800, 230), (14000, 13000, 150, 30)),
        ],
    )
    # a subagent thread spawned by the parent: replays the parent's first call, then two own calls
    sub = "0000cccc"
    _write(
        day / f"rollout-2026-01-05T12-00-00-{sub}.jsonl",
        [
            _meta(
                "2026-01-05T17:00:00.000Z",
                sub,
                source={"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}},
            ),
            _turn("2026-01-05T17:00:00.000Z", model="gpt-5-codex-mini"),
            l3.replace("15:00:09", "17:00:00"),
            _tc("2026-01-05T17:00:30.000Z", (15000, 2000, 500, 150), (3000, 2000, 100, 22)),
            # the total drops (a new counter after a restart): this call's own numbers are used
            _tc("2026-01-05T17:01:00.000Z", (900, 0, 30, 0), (900, 0, 30, 0)),
        ],
    )
    # an orphan fork whose parent file is gone: ccusage's same-second rule drops the leading replay
    orphan = "0000dddd"
    _write(
        day / f"rollout-2026-01-05T13-00-00-{orphan}.jsonl",
        [
            _meta("2026-01-05T18:00:00.000Z", orphan, forked_from_id="0000zzzz"),
            _meta("2026-01-05T14:00:00.000Z", "0000zzzz"),
            _tc("2026-01-05T18:00:00.100Z", (5000, 0, 100, 0), (5000, 0, 100, 0)),
            _tc("2026-01-05T18:00:00.600Z", (9000, 4000, 200, 0), (4000, 4000, 100, 0)),
            _tc("2026-01-05T18:02:00.000Z", (12000, 6500, 260, 0), (3000, 2500, 60, 0)),
        ],
    )
    # an old build: turns, no token counts at all
    old = root / "codex" / "sessions" / "2025" / "08" / "01"
    _write(
        old / "rollout-2025-08-01T10-00-00-0000eeee.jsonl",
        [
            _meta("2025-08-01T10:00:00.000Z", "0000eeee"),
            _turn("2025-08-01T10:00:01.000Z"),
            _item("2025-08-01T10:00:05.000Z"),
        ],
    )


def build(root: Path) -> dict[str, str]:
    """Write both trees; return the environment that points the readers at them."""
    build_claude(root)
    build_codex(root)
    return {"CLAUDE_CONFIG_DIR": str(root / "claude"), "CODEX_HOME": str(root / "codex")}
