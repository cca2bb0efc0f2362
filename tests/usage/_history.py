"""A realistic history of Claude Code and Codex logs for the HTML report: UUID session ids over
several weeks, a few sessions with zero tokens (``<synthetic>`` calls), both tools on most days.

``write_history(root, claude=…, codex=…, days=…)`` writes ``root/claude`` and ``root/codex`` and
returns the environment that points the readers at them. The numbers come from a seeded generator,
so the same arguments write the same logs.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

from support.usage_fixtures import _meta, _tc, _turn, _usage, _write, assistant

START = "2026-03-02"


def _ts(day: int, second: int) -> str:
    from datetime import date, timedelta

    moment = date.fromisoformat(START) + timedelta(days=day)
    return f"{moment.isoformat()}T{9 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


def write_history(
    root: Path, *, claude: int = 30, codex: int = 12, days: int = 21, zero: int = 3
) -> dict[str, str]:
    rng = random.Random(20260302)
    project = root / "claude" / "projects" / "-home-dev-shop"
    for index in range(claude + zero):
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        day = rng.randrange(days)
        lines = []
        calls = 1 if index >= claude else rng.randrange(3, 25)
        context = rng.randrange(8_000, 20_000)
        for n in range(calls):
            if index >= claude:  # a session of zero-token <synthetic> calls
                usage, model = _usage(0, 0, 0, 0), "<synthetic>"
            else:
                model = rng.choice(("claude-sonnet-4-5-20250929", "claude-opus-4-5", "claude-haiku-4-5"))
                write = rng.randrange(100, 3_000)
                usage = _usage(rng.randrange(1, 40), write, context, rng.randrange(50, 2_500))
                context += write
            lines.append(
                assistant(
                    session,
                    _ts(day, 60 * n + index),
                    f"msg_{index}_{n}",
                    f"req_{index}_{n}",
                    usage,
                    model=model,
                )
            )
        _write(project / f"{session}.jsonl", lines)
    for index in range(codex):
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        day = rng.randrange(days)
        stamp = _ts(day, index)
        folder = root / "codex" / "sessions" / stamp[:4] / stamp[5:7] / stamp[8:10]
        lines = [_meta(stamp, session), _turn(_ts(day, index + 1))]
        total = [0, 0, 0, 0]
        for n in range(rng.randrange(2, 12)):
            last = (rng.randrange(9_000, 40_000), 0, rng.randrange(100, 3_000), 0)
            cached = rng.randrange(0, last[0])
            last = (last[0], cached, last[2], rng.randrange(0, last[2]))
            total = [a + b for a, b in zip(total, last, strict=True)]
            lines.append(_tc(_ts(day, index + 30 + 60 * n), tuple(total), last))  # type: ignore[arg-type]
        _write(folder / f"rollout-{stamp[:19].replace(':', '-')}-{session}.jsonl", lines)
    return {"CLAUDE_CONFIG_DIR": str(root / "claude"), "CODEX_HOME": str(root / "codex"), "HOME": str(root)}
