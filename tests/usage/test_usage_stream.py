"""``workgroup usage`` a session at a time: what survives a session, scoped dedup, stable digests, families."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

from support.usage_fixtures import _meta, _tc, _turn, _usage, _write, assistant, build

from toolkit.usage.dedup import Seen, digest
from toolkit.usage.fold import By, Ledger, LocalDays, read_logs, resolve_tz, stream
from toolkit.usage.report import Fold
from toolkit.usage.sources import discover

T0 = 1_767_000_000.0


def _claude_session(root: Path, sid: str, calls: int, mtime: float, day: int = 10) -> None:
    lines = []
    for n in range(calls):
        ts = f"2026-02-{day:02d}T10:{n // 60:02d}:{n % 60:02d}.000Z"
        partial = _usage(3, 100, 1000 + n, 1)
        final = _usage(3, 100, 1000 + n, 50 + n)
        lines.append(assistant(sid, ts, f"msg_{sid}_{n}", f"req_{sid}_{n}", partial, stop=None))
        lines.append(assistant(sid, ts, f"msg_{sid}_{n}", f"req_{sid}_{n}", final))
    _write(root / "projects" / "-home-dev-x" / f"{sid}.jsonl", lines, mtime)


def _codex_rollout(home: Path, sid: str, calls: int, day: int = 10, **meta: object) -> Path:
    lines = [
        _meta(f"2026-02-{day:02d}T09:00:00.000Z", sid, **meta),
        _turn(f"2026-02-{day:02d}T09:00:01.000Z"),
    ]
    total = (0, 0, 0, 0)
    for n in range(calls):
        last = (1000 + n, 500, 40, 10)
        total = tuple(a + b for a, b in zip(total, last, strict=True))  # type: ignore[assignment]
        lines.append(_tc(f"2026-02-{day:02d}T09:{n // 60:02d}:{n % 60:02d}.500Z", total, last))
    path = (
        home / "sessions" / "2026" / "02" / f"{day:02d}" / f"rollout-2026-02-{day:02d}T09-00-00-{sid}.jsonl"
    )
    _write(path, lines)
    return path


def _env(root: Path) -> dict[str, str]:
    return {"HOME": str(root), "CLAUDE_CONFIG_DIR": str(root / "claude"), "CODEX_HOME": str(root / "codex")}


def _folded_peak(root: Path, sessions: int) -> tuple[int, int]:
    """(peak traced bytes, calls) of the report's fold over ``sessions`` Claude and Codex sessions of 20 calls."""
    for n in range(sessions):
        _claude_session(root / "claude", f"s-{n:05d}", 20, T0 + n)
        _codex_rollout(root / "codex", f"0000{n:05d}", 20)
    files = discover("all", _env(root))
    fold = Fold(By.DAY, LocalDays(resolve_tz("UTC")))
    ledger = Ledger()
    tracemalloc.start()
    try:
        for calls in stream(files, ledger):
            fold.add_all(calls)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    data = fold.data(ledger, "UTC")
    return peak, data["totals"]["calls"]


def test_memory_follows_the_largest_session_not_the_history(tmp_path: Path) -> None:
    small_peak, small_calls = _folded_peak(tmp_path / "a", 20)
    large_peak, large_calls = _folded_peak(tmp_path / "b", 200)
    assert (small_calls, large_calls) == (20 * 40, 200 * 40)
    # what grows with the history is the digests (two small ints per Claude call) and one record per
    # file; a kept Call object alone is about 400 bytes, so keeping the calls would fail this
    per_call = (large_peak - small_peak) / (large_calls - small_calls)
    assert per_call < 200, per_call


def test_only_digests_cross_sessions(tmp_path: Path) -> None:
    env = build(tmp_path / "logs")
    ledger = Ledger()
    seen_sessions = []
    for calls in stream(discover("claude", env), ledger):
        seen_sessions.append({c.session for c in calls})
    assert all(len(s) <= 1 for s in seen_sessions)  # one session at a time
    assert all(log.items == [] for log in ledger.logs)  # no file keeps its calls once folded
    seen = Seen()
    from toolkit.usage.dedup import dedup_session
    from toolkit.usage.model import Call

    call = Call(
        "claude",
        "s",
        "p",
        "t",
        False,
        "2026-01-01T00:00:00Z",
        "m",
        1,
        1,
        0,
        0,
        None,
        1,
        key="a\x00b",
        msg_id="a",
    )
    from toolkit.usage.model import FileLog

    dedup_session([FileLog("claude", "f", "s", "p", [call])], seen, {})
    assert seen.keys == {digest("a\x00b"): 0} and seen.ids == {digest("a") & ~1}
    assert all(0 <= k < 2**60 for k in [*seen.keys, *seen.ids])


def test_digests_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    env = build(tmp_path / "logs")
    code = "from toolkit.usage.dedup import digest; print(digest('msg_A\\x00req_A'))"
    outs = set()
    for seed in ("1", "2"):
        run_env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=run_env, check=True
        )
        outs.add(proc.stdout.strip())
        report = subprocess.run(
            [sys.executable, "-m", "toolkit", "usage", "--json", "--by", "session", "--timezone", "UTC"],
            capture_output=True,
            text=True,
            env={**run_env, **env},
            check=True,
        )
        outs.add(json.dumps(json.loads(report.stdout)["rows"]))
    assert (
        len(outs) == 2 and str(digest("msg_A\x00req_A")) in outs
    )  # the same digest and rows under both seeds
    assert (
        digest("msg_A\x00req_A")
        == int.from_bytes(__import__("hashlib").blake2b(b"msg_A\x00req_A", digest_size=8).digest(), "little")
        >> 4
    )


def test_a_later_sessions_copy_never_changes_an_earlier_session(tmp_path: Path) -> None:
    proj = tmp_path / "claude" / "projects" / "-home-dev-x"
    a = assistant("s-old", "2026-02-01T10:00:00.000Z", "msg_X", "req_X", _usage(3, 10, 100, 100))
    _write(proj / "s-old.jsonl", [a], T0)
    # the copy in the newer session claims more output: across sessions the first read copy stays
    bigger = assistant("s-new", "2026-02-01T10:00:00.000Z", "msg_X", "req_X", _usage(3, 10, 100, 150))
    own = assistant("s-new", "2026-02-02T10:00:00.000Z", "msg_Y", "req_Y", _usage(3, 10, 200, 7))
    _write(proj / "s-new.jsonl", [bigger, own], T0 + 50)
    ledger = read_logs(discover("claude", _env(tmp_path)))
    by_session = {(c.session, c.output) for c in ledger.calls}
    assert by_session == {("s-old", 100), ("s-new", 7)}
    assert ledger.resumed_from == {"s-new": "s-old"} and ledger.duplicates == 1


def test_inside_a_session_the_larger_copy_wins_across_its_files(tmp_path: Path) -> None:
    # the same session id under two config folders is one session: its files are read together
    partial = assistant(
        "s-one", "2026-02-01T10:00:00.000Z", "msg_X", "req_X", _usage(3, 10, 100, 1), stop=None
    )
    final = assistant("s-one", "2026-02-01T10:00:01.000Z", "msg_X", "req_X", _usage(3, 10, 100, 90))
    _write(tmp_path / "c1" / "projects" / "-home-dev-x" / "s-one.jsonl", [partial], T0)
    _write(tmp_path / "c2" / "projects" / "-home-dev-x" / "s-one.jsonl", [final], T0 + 10)
    other = assistant("s-two", "2026-02-01T11:00:00.000Z", "msg_Z", "req_Z", _usage(1, 1, 1, 5))
    _write(tmp_path / "c1" / "projects" / "-home-dev-x" / "s-two.jsonl", [other], T0 + 5)
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": f"{tmp_path / 'c1'},{tmp_path / 'c2'}"}
    ledger = read_logs(discover("claude", env))
    assert sorted((c.session, c.output, c.final) for c in ledger.calls) == [
        ("s-one", 90, True),
        ("s-two", 5, True),
    ]
    assert ledger.resumed_from == {}


def test_a_fork_listed_before_its_parent_still_skips_the_replay(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    parent = _codex_rollout(home, "0000pppp", 3, day=12)
    replay = [line for line in parent.read_text().splitlines() if '"token_count"' in line][:2]
    fork_lines = [
        _meta("2026-02-13T09:00:00.000Z", "0000ffff", forked_from_id="0000pppp"),
        _meta("2026-02-12T09:00:00.000Z", "0000pppp"),
        *[line.replace("2026-02-12T09", "2026-02-13T09") for line in replay],
        _tc("2026-02-13T09:30:00.000Z", (2201, 1100, 90, 20), (200, 100, 10, 0)),
    ]
    # an earlier date folder: the fork's path sorts before its parent's
    _write(
        home / "sessions" / "2026" / "02" / "01" / "rollout-2026-02-01T09-00-00-0000ffff.jsonl", fork_lines
    )
    ledger = read_logs(discover("codex", _env(tmp_path)))
    fork = [c for c in ledger.calls if c.session == "0000ffff"]
    assert [(c.input + c.cache_read, c.output) for c in fork] == [(200, 10)]
    assert len([c for c in ledger.calls if c.session == "0000pppp"]) == 3


def test_a_btw_replay_copied_into_a_resumed_session_is_still_one_call(tmp_path: Path) -> None:
    proj = tmp_path / "claude" / "projects" / "-home-dev-x"
    main = assistant("s-a", "2026-02-01T10:00:00.000Z", "msg_A", "req_A", _usage(3, 10, 100, 40))
    side = assistant(
        "s-a", "2026-02-01T10:01:00.000Z", "msg_A", "req_Z", _usage(3, 10, 100, 40), sidechain=True
    )
    _write(proj / "s-a.jsonl", [main, side], T0)
    copied = [line.replace('"sessionId":"s-a"', '"sessionId":"s-b"') for line in (main, side)]
    # and a new /btw replay of the copied call, made in the resumed session (another request id)
    again = assistant(
        "s-b", "2026-02-02T09:00:00.000Z", "msg_A", "req_W", _usage(3, 10, 100, 40), sidechain=True
    )
    own = assistant("s-b", "2026-02-02T09:01:00.000Z", "msg_B", "req_B", _usage(5, 10, 300, 9))
    _write(proj / "s-b.jsonl", [*copied, again, own], T0 + 60)
    ledger = read_logs(discover("claude", _env(tmp_path)))
    assert sorted((c.session, c.output) for c in ledger.calls) == [("s-a", 40), ("s-b", 9)]
    assert ledger.resumed_from == {"s-b": "s-a"} and ledger.duplicates == 4
    resumed = [c for c in ledger.calls if c.session == "s-b"]
    assert resumed[0].resume and resumed[0].carried == 0  # its base is its own first call
