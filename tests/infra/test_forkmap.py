"""infra/forkmap: numbered tasks in real forked workers, results in task order, lost ones MISSING."""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import pytest

from toolkit.infra import forkmap
from toolkit.infra.forkmap import MISSING, ordered_map

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else -1


def test_results_come_in_task_order_from_several_workers() -> None:
    got = cast(list[tuple[int, int]], list(ordered_map(300, lambda i: (i * i, os.getpid()), 3)))
    assert [value for value, _ in got] == [i * i for i in range(300)]
    pids = {pid for _, pid in got}
    assert os.getpid() not in pids and 1 <= len(pids) <= 3


def test_more_task_numbers_than_a_pipe_holds_and_results_larger_than_one() -> None:
    before = _open_fds()
    many = list(ordered_map(40_000, lambda i: i, 2))  # 160 kB of task numbers: fed as workers take them
    assert many == list(range(40_000))
    big = list(ordered_map(6, lambda i: bytes([i]) * (3 << 20), 2))  # 3 MB frames, read in pieces
    assert [len(b) for b in big] == [3 << 20] * 6  # type: ignore[arg-type]
    assert [b[0] for b in big] == list(range(6))  # type: ignore[index]
    assert _open_fds() == before  # every pipe end closed


def test_a_task_that_raises_comes_back_missing_and_the_rest_arrive() -> None:
    def work(i: int) -> int:
        if i in (7, 11):
            raise ValueError("boom")
        return i

    got = list(ordered_map(20, work, 2))
    assert [i for i, r in enumerate(got) if r is MISSING] == [7, 11]
    assert [r for r in got if r is not MISSING] == [i for i in range(20) if i not in (7, 11)]


def test_a_worker_that_dies_loses_only_its_task() -> None:
    def work(i: int) -> int:
        if i == 5:
            os._exit(3)  # the worker is gone mid-task
        return i

    got = list(ordered_map(40, work, 2))
    assert got[5] is MISSING
    assert [r for i, r in enumerate(got) if i != 5] == [i for i in range(40) if i != 5]


def test_when_every_worker_dies_every_task_comes_back_missing() -> None:
    def work(i: int) -> int:
        os._exit(1)

    assert list(ordered_map(10, work, 3)) == [MISSING] * 10


def test_a_platform_without_fork_hands_every_task_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "fork")
    before = _open_fds()
    assert list(ordered_map(3, lambda i: i, 2)) == [MISSING] * 3
    assert _open_fds() == before


def test_no_process_to_be_had_means_every_task_is_done_by_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    before = _open_fds()
    assert list(ordered_map(4, lambda i: i, 2)) == [MISSING] * 4
    assert _open_fds() == before


def test_stopping_early_reaps_the_workers() -> None:
    def work(i: int) -> int:
        return os.getpid()

    before = _open_fds()
    results = ordered_map(10_000, work, 2)
    pids = {next(results) for _ in range(50)}
    results.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # neither running nor a zombie
            os.kill(pid, 0)  # type: ignore[arg-type]
    assert _open_fds() == before


def _taken(log: Path) -> list[int]:
    return [int(x) for x in log.read_text().split()] if log.exists() else []


def test_no_task_is_handed_out_beyond_the_window(tmp_path: Path) -> None:
    from support.sync import wait_until

    log = tmp_path / "taken"
    window = 8

    def work(i: int) -> int:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.write(fd, f"{i}\n".encode())
        os.close(fd)
        if i == 0:
            # the other worker runs ahead to the window's edge, and no further while task 0 is out
            assert wait_until(lambda: window - 1 in _taken(log), timeout=20)
            beyond = wait_until(lambda: max(_taken(log)) >= window, timeout=0.5)
            return -1 if beyond else max(_taken(log))
        return i

    got = list(ordered_map(200, work, 2, window=window))
    assert got[0] == window - 1  # held back at the edge: tasks 1 .. window-1 only
    assert got[1:] == list(range(1, 200))


def test_a_worker_killed_before_it_reports_its_task_does_not_stall_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import signal

    real = forkmap._write_all

    def dies_at_three(fd: int, data: bytes) -> None:
        if data[:5] == b"T" + (3).to_bytes(4, "little"):
            os._exit(9)  # took task 3 and is gone before saying so: no trace of it
        real(fd, data)

    monkeypatch.setattr(forkmap, "_write_all", dies_at_three)

    def timed_out(signum: int, frame: object) -> None:
        raise TimeoutError("ordered_map stalled")

    previous = signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(30)
    try:
        got = list(ordered_map(100, lambda i: i, 2, window=4))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert got[3] is MISSING
    assert [r for i, r in enumerate(got) if i != 3] == [i for i in range(100) if i != 3]
