"""Codex calls from running totals, against a plain model of the reference note's rules.

A generated rollout of ``token_count`` events (totals that grow, are re-emitted unchanged, drop to a
new counter, come without a total, per rate-limit key) is read by the reader and by the model below;
the calls must agree field by field.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from support.usage_fixtures import _meta, _tc, _turn, _write

from toolkit.usage import codex
from toolkit.usage.model import Call
from toolkit.usage.sources import LogFile

Four = tuple[int, int, int, int]


def _model(events: list[tuple[Four | None, Four | None, str | None]]) -> list[tuple[int, ...]]:
    """The rules, written plainly: (input, cache read, output, reasoning, context) per call."""
    prev: dict[str | None, tuple[int, ...]] = {}
    calls: list[tuple[int, ...]] = []
    for total4, last, key in events:
        total = None if total4 is None else (*total4, total4[0] + total4[2])
        delta: tuple[int, ...] | None
        if total is None:
            delta = last
        else:
            before = prev.get(key)
            prev[key] = total
            if before is None:
                delta = total
            elif total == before:
                delta = None  # re-emitted: no new call
            elif any(a < b for a, b in zip(total, before, strict=True)):
                delta = last  # a new counter: the last call's own figures
            else:
                delta = tuple(a - b for a, b in zip(total, before, strict=True))
        if delta is None or not any(delta[:4]):
            continue
        cached = min(delta[1], delta[0])
        calls.append((delta[0] - cached, cached, delta[2], delta[3], last[0] if last else delta[0]))
    return calls


_STEP = st.tuples(st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 400), st.integers(0, 100))


@st.composite
def _events(draw: st.DrawFn) -> list[tuple[Four | None, Four | None, str | None]]:
    totals: dict[str | None, Four] = {}
    out = []
    for _ in range(draw(st.integers(1, 25))):
        key = draw(st.sampled_from([None, None, None, "codex_other"]))
        step = draw(_STEP)
        kind = draw(st.sampled_from(["grow", "grow", "grow", "same", "reset", "no-total", "no-last"]))
        old = totals.get(key, (0, 0, 0, 0))
        if kind == "same":
            total: Four | None = old
        elif kind == "reset":
            total = step
        elif kind == "no-total":
            total = None
        else:
            total = (old[0] + step[0], old[1] + step[1], old[2] + step[2], old[3] + step[3])
        if total is not None:
            totals[key] = total
        last = None if kind == "no-last" else step
        out.append((total, last, key))
    return out


@settings(max_examples=200, deadline=None)
@given(events=_events())
def test_calls_follow_the_running_total_rules(
    events: list[tuple[Four | None, Four | None, str | None]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        lines = [_meta("2026-02-10T09:00:00.000Z", "0000aaaa"), _turn("2026-02-10T09:00:01.000Z")]
        for n, (total, last, key) in enumerate(events):
            lines.append(_tc(f"2026-02-10T09:{n // 60:02d}:{n % 60:02d}.500Z", total, last, limit_id=key))
        path = home / "sessions" / "2026" / "02" / "10" / "rollout-2026-02-10T09-00-00-0000aaaa.jsonl"
        _write(path, lines)
        log = codex.read(LogFile("codex", str(path), home), 0, codex.Registry())
    got = [
        (c.input, c.cache_read, c.output, c.reasoning, c.context) for c in log.items if isinstance(c, Call)
    ]
    assert got == _model(events)
