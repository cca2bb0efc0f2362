"""infra/forkmap: numbered tasks in real forked workers, results in task order, lost ones MISSING."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolkit.infra import forkmap
from toolkit.infra.forkmap import MISSING, ordered_map

pytestmark = pytest.mark.skipif(not forkmap.available(), reason="needs fork")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else -1


def test_results_come_in_task_order_from_several_workers() -> None:
    got = list(ordered_map(300, lambda i: (i * i, os.getpid()), 3))
    assert [value for value, _ in got] == [i * i for i in range(300)]  # type: ignore[misc]
    pids = {pid for _, pid in got}  # type: ignore[misc]
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
    pids = {next(results) for _ in range(50)}  # type: ignore[misc]
    results.close()  # type: ignore[attr-defined]
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # neither running nor a zombie
            os.kill(pid, 0)  # type: ignore[arg-type]
    assert _open_fds() == before
