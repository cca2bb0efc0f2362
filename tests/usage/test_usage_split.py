"""``workgroup usage`` on many small sessions: one worker per source, sessions put in order as they
are read, one walk per folder. Each way must give what one process reading in plan order gives."""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support.harness import cli
from support.usage_fixtures import _usage, _write, assistant, build

from toolkit.usage import claude, fold
from toolkit.usage.fold import Collect, Ledger, by_source, fold_logs, read_logs
from toolkit.usage.sources import LogFile, _walk, discover, hashed

T0 = 1_767_000_000.0
forking = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need fork")


def _calls(ledger: Ledger) -> list[tuple[object, ...]]:
    return [
        (c.session, c.thread, c.ts, c.model, c.input, c.output, c.cache_write, c.cache_read, c.carried)
        + (c.compactions, c.compactions_after, c.resume, c.subagent, ledger.logs[c.log].path_hash)
        for c in ledger.calls
    ]


def _counts(ledger: Ledger) -> tuple[object, ...]:
    return (
        ledger.files,
        ledger.bytes,
        ledger.duplicates,
        ledger.skipped_lines,
        ledger.files_without_usage,
        ledger.resumed_from,
        [log.path_hash for log in ledger.logs],
    )


def _auto(files: list[LogFile], jobs: int = 0) -> Ledger:
    ledger = Ledger()
    fold_logs(files, ledger, lambda led: Collect(led.calls), jobs)
    return ledger


@pytest.fixture
def two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures are far below the size where ``--jobs 0`` starts workers."""
    monkeypatch.setattr(fold, "auto_jobs", lambda files: 2)


def test_by_source_is_for_many_small_files_of_both_sources(tmp_path: Path) -> None:
    def logs(source: str, count: int, size: int) -> list[LogFile]:
        return [
            LogFile(source, str(tmp_path / f"{source}{n}.jsonl"), tmp_path, size=size) for n in range(count)
        ]

    for workers in (2, 4):
        assert by_source(logs("claude", 300, 40_000) + logs("codex", 200, 40_000), workers)
        assert not by_source(logs("claude", 300, 40_000), workers)  # one source: nothing to share
        assert not by_source(logs("claude", 300, 40_000) + logs("codex", 10, 40_000), workers)  # 3 %
        assert not by_source([], workers)
    # large files: the session pool when it has more than two workers
    assert by_source(logs("claude", 60, 4_000_000) + logs("codex", 60, 4_000_000), 2)
    assert not by_source(logs("claude", 60, 4_000_000) + logs("codex", 60, 4_000_000), 4)


@forking
def test_codex_read_in_a_worker_while_claude_is_read_here_gives_what_one_process_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_workers: None
) -> None:
    env = build(tmp_path / "logs")
    files = discover("all", env)
    assert by_source(files, 2)
    marks = tmp_path / "marks"
    marks.mkdir()
    real = fold._read_source

    def marked(group: list[LogFile], sink_for: object) -> bytes:
        (marks / f"{group[0].source}-{os.getpid()}").write_text("")
        return real(group, sink_for)  # type: ignore[arg-type]

    monkeypatch.setattr(fold, "_read_source", marked)
    split = _auto(files)
    # the Codex files were read by another process (it leaves its mark), the Claude files here
    done = [p.name.split("-") for p in marks.iterdir()]
    assert len(done) == 1 and done[0][0] == "codex" and int(done[0][1]) != os.getpid()
    one = read_logs(files, 1)
    assert _calls(split) == _calls(one) and _counts(split) == _counts(one)
    assert one.resumed_from and {c.source for c in one.calls} == {"claude", "codex"}


@forking
@pytest.mark.parametrize("how", ["raises", "killed"])
def test_when_the_codex_worker_fails_its_files_are_read_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_workers: None, how: str
) -> None:
    files = discover("all", build(tmp_path / "logs"))

    def failing(group: list[LogFile], sink_for: object) -> bytes:
        if how == "killed":
            os.kill(os.getpid(), 9)  # the worker is gone mid-task (killed, out of memory)
        raise RuntimeError("the Codex worker fails")

    monkeypatch.setattr(fold, "_read_source", failing)
    split = _auto(files)
    one = read_logs(files, 1)
    assert _calls(split) == _calls(one) and _counts(split) == _counts(one)


@forking
def test_a_worker_still_running_is_ended_and_reaped_when_the_caller_stops() -> None:
    import time

    def slow() -> bytes:
        time.sleep(30)  # not a barrier: the worker is still running when the caller stops
        return b""

    aside = fold._Aside(slow)
    pid = aside.pid
    assert pid > 0
    started = time.monotonic()
    aside.close()
    assert time.monotonic() - started < 10
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no such child left
    assert aside.result() is None
    assert fold._Aside(lambda: b"done").result() == b"done"


@forking
def test_the_report_is_the_same_with_the_codex_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_workers: None
) -> None:
    for key, value in build(tmp_path / "logs").items():
        monkeypatch.setenv(key, value)
    outputs = []
    for jobs in ("0", "1"):
        events, page = tmp_path / f"events-{jobs}.jsonl", tmp_path / f"page-{jobs}.html"
        args = ["usage", "--timezone", "UTC", "--json", "--by", "session", "--cost", "--jobs", jobs]
        code, out, err = cli(
            *args, "--emit-events", str(events), "--html", str(page), env={"SOURCE_DATE_EPOCH": "1767225600"}
        )
        assert code == 0, err
        outputs.append((out, events.read_bytes(), page.read_bytes()))
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0][0])["totals"]["calls"] > 0


def _tied_sessions(root: Path, count: int) -> dict[str, str]:
    """``count`` sessions that all start with the same copied call (a chain of resumes), each going
    on past the one before; their files' modification times run the other way, so only their last
    times inside the logs order them."""
    proj = root / "claude" / "projects" / "-home-dev-x"
    history: list[str] = []
    for n in range(count):
        sid = f"s-{n:03d}"
        own = assistant(
            sid, f"2026-02-01T10:{n:02d}:30.000Z", f"msg_{n}", f"req_{n}", _usage(3, 10, 100 + n, 40)
        )
        # a last line longer than the 8 kB first read from a file's end
        tail = own.replace('"type":"assistant"', '"type":"assistant","note":"' + "x" * (9000 + n) + '"')
        copied = [line.replace('"sessionId":"s-', f'"sessionId":"{sid}","was":"s-') for line in history]
        _write(proj / f"{sid}.jsonl", [*copied, own, tail], T0 + 1000 - n)
        history.append(own)
    return {"CLAUDE_CONFIG_DIR": str(root / "claude")}


def _order(ledger: Ledger) -> list[str]:
    return list(dict.fromkeys(c.session for c in ledger.calls))


def test_sessions_that_start_together_are_put_in_order_as_they_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = discover("claude", _tied_sessions(tmp_path, 6))
    planned = fold.plan(files)  # the last times read from the files' ends first
    assert [u.first for u in planned] == [planned[0].first] * 6
    expected = [Path(u.files[0].path).stem for u in planned]
    assert expected == [f"s-{n:03d}" for n in range(6)]
    lazy = fold.plan(files, settle=True)
    assert all(u.settle for u in lazy) and [Path(u.files[0].path).stem for u in lazy] == expected[::-1]

    def no_second_read(path: Path) -> str | None:
        raise AssertionError("a last time read from the file's end")

    monkeypatch.setattr(claude, "last_stamp", no_second_read)
    ledger = Ledger()
    fold._fold_units(lazy, ledger, Collect(ledger.calls), fold.Seen())
    assert _order(ledger) == expected
    monkeypatch.undo()
    reference = read_logs(files, 1)
    assert _calls(ledger) == _calls(reference) and _counts(ledger) == _counts(reference)
    assert reference.resumed_from  # the copies were dropped and named their originals


def test_a_long_run_of_sessions_that_start_together_reads_their_ends_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = discover("claude", _tied_sessions(tmp_path, 5))
    reference = read_logs(files, 1)
    monkeypatch.setattr(fold, "_TASK_TIES", 0)  # no run is held parsed: the plan's way
    reads: list[str] = []
    real = claude.last_stamp

    def counted(path: str) -> str | None:
        reads.append(Path(path).stem)
        return real(path)

    monkeypatch.setattr(claude, "last_stamp", counted)
    ledger = read_logs(files, 1)
    assert sorted(reads) == [f"s-{n:03d}" for n in range(5)]
    assert _calls(ledger) == _calls(reference) and _counts(ledger) == _counts(reference)
    assert _order(ledger) == [f"s-{n:03d}" for n in range(5)]


@pytest.mark.parametrize(
    "lines",
    [
        [b'{"timestamp":"2026-02-01T10:00:00.000Z","a":1}', b'{"timestamp":"2026-02-01T11:00:00.000Z"}'],
        # the last line is longer than the first windows read from the end
        [
            b'{"timestamp":"2026-02-01T10:00:00.000Z"}',
            b'{"timestamp":"2026-02-01T12:00:00.000Z","t":"' + b"y" * 40_000 + b'"}',
        ],
        # a torn last line (a session being written) is passed over
        [b'{"timestamp":"2026-02-01T10:00:00.000Z"}', b'{"timestamp":"2026-02-01T13:00:00.000Z","t":"to'],
        # nested and invalid times are not the line's own
        [
            b'{"timestamp":"2026-02-01T10:00:00.000Z"}',
            b'{"message":{"timestamp":"2026-02-09T10:00:00.000Z"}}',
        ],
        [b'{"timestamp":"yesterday"}', b"not json"],
        [b""],
    ],
)
def test_a_last_time_from_the_bytes_read_is_the_one_read_from_the_end(
    tmp_path: Path, lines: list[bytes]
) -> None:
    for end in (b"\n", b""):
        path = tmp_path / "log.jsonl"
        data = b"\n".join(lines) + end
        path.write_bytes(data)
        assert claude.last_stamp_in(data) == claude.last_stamp(path)
        # the first time read with the size the walk found, as with the size asked of the file
        assert claude.first_stamp(path, len(data)) == claude.first_stamp(path)


def test_the_walk_lists_what_os_walk_lists_in_its_order(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    for rel in (
        "b/2.jsonl",
        "b/1.jsonl",
        "a/x/3.jsonl",
        "a/4.jsonl",
        "a/notes.txt",
        "5.jsonl",
        "c/d/e/6.jsonl",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "7.jsonl").write_text("{}\n")
    (root / "linked").symlink_to(outside, target_is_directory=True)  # a symlinked folder: not entered
    (root / "a" / "link.jsonl").symlink_to(outside / "7.jsonl")  # a symlinked file: listed
    (root / "a" / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")  # dangling: listed, never read
    (root / "a" / "dir.jsonl").mkdir()  # a folder named like a log is walked, not listed

    expected: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        expected.extend(os.path.join(dirpath, name) for name in filenames if name.endswith(".jsonl"))
    assert _walk(root) == expected
    assert len(expected) == 8
    found = discover("claude", {"CLAUDE_CONFIG_DIR": str(tmp_path)})
    assert sorted(os.path.basename(f.path) for f in found) == [
        "1.jsonl",
        "2.jsonl",
        "3.jsonl",
        "4.jsonl",
        "5.jsonl",
    ] + [
        "6.jsonl",
        "link.jsonl",
    ]


def test_the_walk_passes_over_a_folder_it_cannot_read(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every folder")
    root = tmp_path / "projects"
    (root / "open").mkdir(parents=True)
    (root / "open" / "1.jsonl").write_text("{}\n")
    (root / "shut").mkdir()
    (root / "shut" / "2.jsonl").write_text("{}\n")
    (root / "shut").chmod(0)
    try:
        assert _walk(root) == [str(root / "open" / "1.jsonl")]
    finally:
        (root / "shut").chmod(0o755)


def test_a_report_loads_no_module_it_does_not_use(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, **build(tmp_path / "logs")}
    code = (
        "import sys\nfrom toolkit.entry import main\n"
        "rc = main(['usage', '--json', '--timezone', 'UTC'])\n"
        "sys.stderr.write('@@' + ' '.join(sorted(sys.modules)))\nraise SystemExit(rc)"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stderr.rpartition("@@")[2].split())
    assert "toolkit.usage.fold" in loaded and json.loads(proc.stdout)["totals"]["calls"] > 0
    # what the interpreter loads before our code (under coverage, its own modules) does not count
    bare = subprocess.run(
        [sys.executable, "-c", "import sys; sys.stderr.write('@@' + ' '.join(sorted(sys.modules)))"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    before = set(bare.stderr.rpartition("@@")[2].split())
    # (shutil and dataclasses come with the typer app itself, the one front door)
    unused = {"toolkit.usage.html", "toolkit.usage.cost", "toolkit.usage.events"}
    assert (loaded - before) & unused == set()


def test_the_walk_runs_with_the_cyclic_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from toolkit.commands import _usage_report as usage_cli
    from toolkit.usage import sources

    env = build(tmp_path / "logs")
    states: list[bool] = []
    real = sources.discover

    def watched(source: str, environ: object) -> list[LogFile]:
        states.append(gc.isenabled())
        return real(source, environ)  # type: ignore[arg-type]

    monkeypatch.setattr(sources, "discover", watched)
    assert gc.isenabled()
    runs: tuple[Callable[[], int], ...] = (
        lambda: usage_cli.report_command(env, timezone="UTC", jobs=1),
        lambda: usage_cli.session_command(env, "s-aaaa", timezone="UTC", jobs=1),
    )
    for run in runs:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert run() == 0
    assert states == [False, False] and gc.isenabled()  # paused for the walk, on again after


def test_a_working_folder_is_hashed_once_and_the_same() -> None:
    from toolkit.usage import sources

    assert (
        sources.project_hash("/home/dev/x")
        == sources.hashed("/home/dev/x")
        == sources.project_hash("/home/dev/x")
    )
    assert "/home/dev/x" in sources._PROJECTS
    for n in range(5000):  # the memo stays bounded whatever the history
        assert sources.project_hash(f"/tmp/p{n}") == sources.hashed(f"/tmp/p{n}")
    assert len(sources._PROJECTS) <= 4096


@pytest.mark.parametrize("jobs", [1, 2, 0])
def test_files_that_vanish_between_the_walk_and_the_read_are_passed_over(tmp_path: Path, jobs: int) -> None:
    """A session file and a rollout removed after the walk found them: the run reads what is left,
    as a walk after the removal would, and counts neither file (no error, no partial record)."""
    env = build(tmp_path)
    walked = discover("all", env)
    gone = [
        next(f for f in walked if f.source == "claude" and os.sep + "subagents" + os.sep not in f.path),
        next(f for f in walked if f.source == "codex"),
    ]
    for log in gone:
        os.unlink(log.path)
    left = discover("all", env)
    assert len(left) == len(walked) - 2
    reference = read_logs(left, 1)
    ledger = read_logs(walked, jobs)
    assert _calls(ledger) == _calls(reference) and _counts(ledger) == _counts(reference)
    read = {log.path_hash for log in ledger.logs}
    assert read and not read & {hashed(log.path, "f-") for log in gone}
