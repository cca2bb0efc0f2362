"""``workgroup usage`` with worker processes: sessions read ahead must come out as if read in turn.

A worker reads a session before the earlier ones are known, so its cross-session dedup questions
are noted and answered "not seen"; the parent merges the result only when the earlier sessions
give the same answers, and reads the session again otherwise. These tests run real worker
processes (fork) over real log files and compare every output with one process.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.harness import cli
from support.usage_fixtures import _usage, _write, assistant, build, compact

from toolkit.usage import fold
from toolkit.usage.dedup import Probe, Seen, answers_none, dedup_session
from toolkit.usage.fold import Collect, Ledger, auto_jobs, fold_logs, read_logs
from toolkit.usage.sources import LogFile, discover

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need fork")

T0 = 1_767_000_000.0


@pytest.fixture(autouse=True)
def _one_session_per_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures are small: without this every session would share one task (one worker)."""
    monkeypatch.setattr(fold, "_TASK_UNITS", 1)
    monkeypatch.setattr(fold, "_TASK_TIES", 0)  # sessions that start together too


def _outputs(tmp: Path, jobs: int, *extra: str) -> dict[str, bytes]:
    """stdout and every written file of one ``workgroup usage`` run."""
    events, page = tmp / f"events-{jobs}.jsonl", tmp / f"page-{jobs}.html"
    args = ["usage", "--timezone", "UTC", "--json", "--jobs", str(jobs), "--emit-events", str(events), *extra]
    args += ["--html", str(page)]
    # the page states when it was generated: a fixed SOURCE_DATE_EPOCH makes two runs comparable
    code, out, err = cli(*args, env={"SOURCE_DATE_EPOCH": "1767225600"})
    assert code == 0, err
    return {"stdout": out.encode(), "events": events.read_bytes(), "page": page.read_bytes()}


@pytest.mark.parametrize("by", ["day", "week", "month", "session", "project", "model"])
def test_every_output_is_the_same_with_workers(
    by: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in build(tmp_path / "logs").items():
        monkeypatch.setenv(key, value)
    one = _outputs(tmp_path, 1, "--by", by, "--cost")
    two = _outputs(tmp_path, 2, "--by", by, "--cost")
    assert one == two
    report = json.loads(one["stdout"])
    assert report["totals"]["calls"] > 0 and report["estimate"]["rows"]
    assert one["events"].count(b"\n") >= 2


def test_a_session_read_ahead_is_read_again_when_an_earlier_one_holds_its_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the fixture's resumed session copies an earlier session's calls: its read-ahead is refused
    env = build(tmp_path / "logs")
    verdicts: list[bool] = []
    real = fold._still_right

    def counted(*args: object) -> bool:
        verdict = real(*args)  # type: ignore[arg-type]
        verdicts.append(verdict)
        return verdict

    monkeypatch.setattr(fold, "_still_right", counted)
    files = discover("all", env)
    two = read_logs(files, 2)
    assert False in verdicts and True in verdicts  # both ways were taken
    one = read_logs(files, 1)
    assert _calls(two) == _calls(one)
    assert two.resumed_from == one.resumed_from != {}
    assert (two.duplicates, two.skipped_lines, two.files, two.bytes) == (
        one.duplicates,
        one.skipped_lines,
        one.files,
        one.bytes,
    )
    # each call points at its own file in the merged ledger
    assert [two.logs[c.log].path_hash for c in two.calls] == [one.logs[c.log].path_hash for c in one.calls]


def _calls(ledger: Ledger) -> list[tuple[object, ...]]:
    return [
        (
            c.session,
            c.thread,
            c.ts,
            c.model,
            c.input,
            c.output,
            c.cache_write,
            c.cache_read,
            c.carried,
            c.compactions,
            c.compactions_after,
            c.resume,
            c.subagent,
        )
        for c in ledger.calls
    ]


def test_a_probe_answers_not_seen_and_keeps_the_questions(tmp_path: Path) -> None:
    proj = tmp_path / "claude" / "projects" / "-home-dev-x"
    first = assistant("s-a", "2026-02-01T10:00:00.000Z", "msg_A", "req_A", _usage(3, 10, 100, 40))
    _write(proj / "s-a.jsonl", [first], T0)
    copied = first.replace('"sessionId":"s-a"', '"sessionId":"s-b"')
    own = assistant("s-b", "2026-02-02T10:00:00.000Z", "msg_B", "req_B", _usage(3, 10, 200, 9))
    _write(proj / "s-b.jsonl", [copied, own], T0 + 10)
    units = fold.plan(discover("claude", {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}))
    parsed = [[log for log in fold._parse_unit(unit) if log is not None] for unit in units]
    seen = Seen()
    dedup_session(parsed[0], seen, {})
    probe = Probe()
    resumed: dict[str, str] = {}
    assert dedup_session(parsed[1], probe, resumed) == 0 and resumed == {}
    assert [len(part) for part in probe.asked] == [2, 2, 0] and probe.left is not None
    # the earlier session holds msg_A: the probe's "not seen" was wrong for s-b
    assert not answers_none(seen, probe.asked)
    assert answers_none(Seen(), probe.asked)
    # what the probe would leave equals what the session leaves when read in turn
    again = [[log for log in fold._parse_unit(unit) if log is not None] for unit in units]
    alone = Seen()
    dedup_session(again[1], alone, {})
    replay = Seen()
    replay.absorb(*probe.left)
    assert (replay.keys, replay.ids, replay.sessions) == (alone.keys, alone.ids, alone.sessions)


def test_automatic_jobs_wait_for_enough_logs(tmp_path: Path) -> None:
    small = [LogFile("claude", str(tmp_path / "a.jsonl"), tmp_path, size=1 << 20)]
    large = [LogFile("codex", str(tmp_path / f"{n}.jsonl"), tmp_path, size=40 << 20) for n in range(2)]
    assert auto_jobs(small) == 1
    assert auto_jobs(large) == max(1, min(4, os.cpu_count() or 1))


# -- generated histories: copies across sessions, /btw replays, partials, compactions, file order ----------

_ID = st.integers(0, 7)  # a small pool of message ids, so sessions copy each other's calls


@st.composite
def _histories(draw: st.DrawFn) -> list[list[tuple[str, int, int, bool, bool, int]]]:
    """Sessions, each a list of lines: (kind, message id, request id, sidechain, final, output)."""
    sessions = []
    for _ in range(draw(st.integers(2, 5))):
        lines = []
        for _ in range(draw(st.integers(1, 6))):
            kind = draw(st.sampled_from(["call", "call", "call", "compact"]))
            lines.append(
                (
                    kind,
                    draw(_ID),
                    draw(st.integers(0, 2)),
                    draw(st.booleans()),
                    draw(st.booleans()),
                    draw(st.integers(1, 90)),
                )
            )
        sessions.append(lines)
    return sessions


def _write_histories(
    root: Path,
    sessions: list[list[tuple[str, int, int, bool, bool, int]]],
    order: int,
    days: list[int] | None = None,
) -> None:
    proj = root / "claude" / "projects" / "-home-dev-x"
    mtimes = list(range(len(sessions)))
    random.Random(order).shuffle(mtimes)
    for number, lines in enumerate(sessions):
        sid = f"s-{number}"
        text = []
        for step, (kind, msg, req, side, final, out) in enumerate(lines):
            day = days[number] if days else 1 + number  # a day shared: sessions that start together
            ts = f"2026-02-{day:02d}T10:{step:02d}:00.000Z"
            if kind == "compact":
                text.append(compact(sid, ts, 5000))
                continue
            usage = _usage(3, 10 * (msg + 1), 100 * (msg + 1) + step, out)
            text.append(
                assistant(
                    sid,
                    ts,
                    f"msg_{msg}",
                    f"req_{msg}_{req}",
                    usage,
                    stop="end_turn" if final else None,
                    sidechain=side,
                )
            )
        _write(proj / f"{sid}.jsonl", text, T0 + mtimes[number])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions=_histories(), order=st.integers(0, 1000))
def test_workers_agree_with_one_process_on_generated_histories(
    sessions: list[list[tuple[str, int, int, bool, bool, int]]], order: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write_histories(root, sessions, order)
        files = discover("claude", {"CLAUDE_CONFIG_DIR": str(root / "claude")})
        one, two = read_logs(files, 1), read_logs(files, 2)
        assert _calls(two) == _calls(one)
        assert (two.resumed_from, two.duplicates, two.skipped_lines) == (
            one.resumed_from,
            one.duplicates,
            one.skipped_lines,
        )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sessions=_histories(),
    days=st.lists(st.integers(1, 2), min_size=5, max_size=5),
    per_task=st.integers(1, 4),
    order=st.integers(0, 1000),
)
def test_sessions_read_ahead_together_agree_with_one_process(
    sessions: list[list[tuple[str, int, int, bool, bool, int]]], days: list[int], per_task: int, order: int
) -> None:
    # sessions that start at the same time share a task and answer each other's questions in the
    # worker; tasks are cut at random sizes, so copies cross tasks too (questions go to the parent)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write_histories(root, sessions, order, days)
        files = discover("claude", {"CLAUDE_CONFIG_DIR": str(root / "claude")})
        one = read_logs(files, 1)
        saved = fold._TASK_UNITS, fold._TASK_TIES
        fold._TASK_UNITS, fold._TASK_TIES = per_task, 64 << 20
        try:
            two = read_logs(files, 2)
        finally:
            fold._TASK_UNITS, fold._TASK_TIES = saved
        assert _calls(two) == _calls(one)
        assert (two.resumed_from, two.duplicates, two.skipped_lines, two.files) == (
            one.resumed_from,
            one.duplicates,
            one.skipped_lines,
            one.files,
        )


def test_a_resumed_copy_read_with_its_original_is_merged_as_read_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # s-b starts with s-a's history (same first time): both go to one task, whose worker answers
    # s-b's questions from s-a; the parent merges the task without folding it again
    proj = tmp_path / "claude" / "projects" / "-home-dev-x"
    first = assistant("s-a", "2026-02-01T10:00:00.000Z", "msg_A", "req_A", _usage(3, 10, 100, 40))
    _write(proj / "s-a.jsonl", [first], T0)
    copied = first.replace('"sessionId":"s-a"', '"sessionId":"s-b"')
    own = assistant("s-b", "2026-02-02T10:00:00.000Z", "msg_B", "req_B", _usage(3, 10, 200, 9))
    _write(proj / "s-b.jsonl", [copied, own], T0 + 10)
    files = discover("claude", {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")})
    one = read_logs(files, 1)
    assert one.resumed_from == {"s-b": "s-a"} and one.duplicates == 1
    verdicts: list[bool] = []
    real = fold._still_right

    def counted(*args: object) -> bool:
        verdict = real(*args)  # type: ignore[arg-type]
        verdicts.append(verdict)
        return verdict

    monkeypatch.setattr(fold, "_still_right", counted)
    for ties, expected in ((64 << 20, [True]), (0, [True, False])):
        monkeypatch.setattr(fold, "_TASK_TIES", ties)
        verdicts.clear()
        two = read_logs(files, 2)
        assert verdicts == expected  # one task merged; else s-b's own task is refused and folded here
        assert _calls(two) == _calls(one)
        assert (two.resumed_from, two.duplicates) == (one.resumed_from, one.duplicates)
        assert [c.resume for c in two.calls] == [False, True]


def test_the_starts_read_by_workers_give_the_same_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the fixture's Claude sessions (resumed copies, subagents, older agent files) and Codex
    # families (forks, spawned threads, archived copies), a few files per task
    env = build(tmp_path / "logs")
    files = discover("all", env)
    monkeypatch.setattr(fold, "_PREPARE_FILES", 3)
    known = fold.prepare(files, 2)
    assert known.stamps and known.heads
    plain = fold.plan(files)
    assert fold.plan(files, known) == plain
    real = fold._prepare_task

    def dies_on_the_second_task(task: int) -> object:
        if task == 1:
            os._exit(9)  # the worker is gone: the plan reads those files itself
        return real(task)

    monkeypatch.setattr(fold, "_prepare_task", dies_on_the_second_task)
    partial = fold.prepare(files, 2)
    assert len(partial.stamps) + len(partial.heads) < len(known.stamps) + len(known.heads)
    assert fold.plan(files, partial) == plain
    assert _calls(read_logs(files, 2)) == _calls(read_logs(files, 1))


@pytest.mark.parametrize("width", [10, 20_000, 70_000, 1_200_000])
def test_a_rollout_head_is_read_whole_however_long_its_first_lines(tmp_path: Path, width: int) -> None:
    from toolkit.usage import codex

    path = tmp_path / "rollout.jsonl"
    lines = [
        _compact_json(
            {
                "timestamp": "2026-02-01T10:00:00.000Z",
                "type": "session_meta",
                "payload": {
                    "id": "child",
                    "forked_from_id": "parent",
                    "base_instructions": {"text": "x" * width},
                },
            }
        ),
        _compact_json(
            {
                "timestamp": "2026-02-01T10:00:00.000Z",
                "type": "session_meta",
                "payload": {"id": "parent", "base_instructions": {"text": "y" * width}},
            }
        ),
        _compact_json(
            {"timestamp": "2026-02-01T10:00:01.000Z", "type": "turn_context", "payload": {"a": "z" * width}}
        ),
    ]
    path.write_text("\n".join(lines) + "\n")
    log = LogFile("codex", str(path), tmp_path, size=path.stat().st_size)
    keep: dict[LogFile, codex.Head] = {}
    got = fold._head_of(log, keep)
    assert got == codex.head(path.read_bytes())
    assert (got.session, got.parent, got.metas) == ("child", "parent", 2)
    assert keep == {log: got}  # every line it looked at was read whole: the read of the file needs no other


@pytest.mark.parametrize("width", [10, 20_000, 70_000])
def test_a_rollout_head_cut_short_is_not_kept_for_the_read(tmp_path: Path, width: int) -> None:
    """A rollout still being written, its first line not yet ended: the head read is not kept (the
    read of the whole file takes its own), whatever the number of reads it took."""
    from toolkit.usage import codex

    path = tmp_path / "rollout.jsonl"
    meta = {"timestamp": "2026-02-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": "a" * width}}
    path.write_text(_compact_json(meta)[:-2])
    log = LogFile("codex", str(path), tmp_path, size=path.stat().st_size)
    keep: dict[LogFile, codex.Head] = {}
    assert fold._head_of(log, keep) == codex.head(path.read_bytes())
    assert keep == {}


def _compact_json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))  # as the agents write their logs


def test_stamps_are_the_first_and_last_times(tmp_path: Path) -> None:
    from toolkit.usage import claude

    path = tmp_path / "s.jsonl"
    body = [
        assistant("s", f"2026-02-01T10:{n:02d}:00.000Z", f"msg_{n}", f"req_{n}", _usage(1, 2, 3, 4))
        for n in range(40)
    ]
    _write(path, [*body, '{"type":"user","timestamp":"2026-02-01T11:00:00.000Z","x":"' + "w" * 30_000 + '"}'])
    assert claude.stamps(path) == (claude.first_stamp(path), claude.last_stamp(path))
    assert claude.stamps(path) == ("2026-02-01T10:00:00.000Z", "2026-02-01T11:00:00.000Z")
    assert claude.stamps(tmp_path / "gone.jsonl") == (None, None)


def test_a_collecting_sink_keeps_only_the_wanted_calls_from_every_process(tmp_path: Path) -> None:
    env = build(tmp_path / "logs")
    files = discover("all", env)
    every = read_logs(files, 1)
    name = every.calls[-1].session
    ledger_one, ledger_two = Ledger(), Ledger()
    got_one = fold_logs(files, ledger_one, lambda led: Collect(None, lambda c: c.session == name), 1)
    got_two = fold_logs(files, ledger_two, lambda led: Collect(None, lambda c: c.session == name), 2)
    assert [c.ts for c in got_one.calls] == [c.ts for c in got_two.calls] != []
    assert {c.session for c in got_two.calls} == {name}


def test_a_session_marked_resumed_by_an_earlier_file_is_read_again(tmp_path: Path) -> None:
    # an older build's top-level agent file names session s-b and copies s-a's call: s-b is resumed
    # before its own unit is merged, which changes how its walk marks the resume point
    proj = tmp_path / "claude" / "projects" / "-home-dev-x"
    first = assistant("s-a", "2026-02-01T10:00:00.000Z", "msg_A", "req_A", _usage(3, 10, 100, 40))
    _write(proj / "s-a.jsonl", [first], T0)
    _write(proj / "agent-old.jsonl", [first.replace('"sessionId":"s-a"', '"sessionId":"s-b"')], T0 + 1)
    shared = assistant("s-b", "2026-02-02T10:00:00.000Z", "msg_C", "req_C", _usage(3, 10, 200, 9))
    own = assistant("s-b", "2026-02-02T10:05:00.000Z", "msg_D", "req_D", _usage(3, 10, 300, 9))
    _write(proj / "s-b" / "subagents" / "agent-y.jsonl", [shared], T0 + 1.5)
    _write(proj / "s-b.jsonl", [shared, own], T0 + 2)
    files = discover("claude", {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")})
    one, two = read_logs(files, 1), read_logs(files, 2)
    assert one.resumed_from == {"s-b": "s-a"}
    assert [c.resume for c in one.calls if c.ts.startswith("2026-02-02T10:05")] == [True]
    assert _calls(two) == _calls(one)


def test_filters_and_the_session_view_are_the_same_with_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = build(tmp_path / "logs")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    every = read_logs(discover("all", env), 1)
    project = every.calls[0].project
    name = every.calls[-1].session
    for args in (
        ["usage", "--json", "--timezone", "UTC", "--since", "2025-08-01", "--until", "2026-01-31"],
        ["usage", "--json", "--timezone", "America/New_York", "--project", project, "--by", "session"],
        ["usage", "session", name, "--json", "--timezone", "UTC"],
        ["usage", "session", name[:8], "--timezone", "UTC"],
    ):
        one, two = cli(*args, "--jobs", "1"), cli(*args, "--jobs", "2")
        assert one == two and one[0] in (0, 1), args
    code, out, _ = cli("usage", "session", name, "--json", "--timezone", "UTC", "--jobs", "2")
    assert code == 0 and json.loads(out)["calls"]


def test_an_interrupt_ends_the_run_with_130_and_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = build(tmp_path / "logs")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    real = fold._session
    merged: list[object] = []

    def interrupted(*args: object) -> object:
        if merged:  # the second session folded here: Ctrl-C arrives mid-run
            raise KeyboardInterrupt
        merged.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(fold, "_session", interrupted)
    code, out, err = cli("usage", "--json", "--jobs", "1")
    assert (code, out) == (130, "") and "Traceback" not in err


@pytest.mark.parametrize("per_task", [1, 2, 3, 32])
def test_sessions_sharing_a_task_and_a_lost_task_change_nothing(
    per_task: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = build(tmp_path / "logs")
    files = discover("all", env)
    one = read_logs(files, 1)
    monkeypatch.setattr(fold, "_TASK_UNITS", per_task)
    tasks = fold._tasks(fold.plan(files))
    if per_task < 32:
        assert len(tasks) > 1  # sessions are spread over several tasks, so over both workers
    assert _calls(read_logs(files, 2)) == _calls(one)
    lost = min(1, len(tasks) - 1)  # a task after the first, when there is one
    real = fold._read_ahead

    def dies_on_the_lost_task(task: int) -> object:
        if task == lost:
            os._exit(9)  # the worker process is gone mid-task (killed, out of memory)
        return real(task)

    monkeypatch.setattr(fold, "_read_ahead", dies_on_the_lost_task)
    two = read_logs(files, 2)
    assert _calls(two) == _calls(one)
    assert (two.resumed_from, two.duplicates, two.files) == (one.resumed_from, one.duplicates, one.files)


@pytest.mark.parametrize("walked", [0, 10, 3_000_000, 5_000_000])
def test_a_file_that_grew_or_shrank_since_the_walk_is_read_as_it_is_now(tmp_path: Path, walked: int) -> None:
    # the read takes the size the walk found, and reads on when the file is longer now
    path = tmp_path / "live.jsonl"
    data = os.urandom(1_500_000).hex().encode()  # 3 MB
    path.write_bytes(data)
    assert fold._read(LogFile("claude", str(path), tmp_path, size=walked)) == data
    assert fold._read(LogFile("claude", str(tmp_path / "gone.jsonl"), tmp_path, size=walked)) is None
