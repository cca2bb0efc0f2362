"""Work on numbered tasks in forked worker processes, results handed back in task order.

A lean alternative to ``multiprocessing.Pool`` for work that is many short tasks whose results are
small: no handler threads, no semaphores, no per-task wake-ups of a pool supervisor. Workers are
forked once (they see the parent's memory as it was, so the work needs no pickling of its inputs),
take task numbers from one shared pipe (4 bytes each; a read of 4 bytes from a pipe is whole), and
report on a pipe of their own: a task taken, a task's result (pickled), a task failed. The parent
feeds task numbers at most ``window`` ahead of the oldest result not yet handed back (so results
held early stay few), reads the reports through one selector and yields results in task order.

A task whose result never comes (it raised, its worker was killed, or its result could not be
pickled) is yielded as ``MISSING``; the caller does that task itself, so a lost worker costs time,
not results.
"""

from __future__ import annotations

import fcntl  # POSIX, as the fork this module runs on
import os
import pickle
import selectors
import signal
from collections.abc import Callable, Generator, Iterator
from typing import Final, TypeVar

T = TypeVar("T")

MISSING: Final = object()  # the task's result did not arrive: do it in this process
_TOOK, _RESULT, _FAILED = b"T", b"R", b"F"  # a report: kind, task number (4 bytes), [length (8), pickle]
_PIPE_SIZE = 1 << 20  # the default limit for an unprivileged process (/proc/sys/fs/pipe-max-size)


def ordered_map(
    count: int, work: Callable[[int], T], jobs: int, window: int = 0
) -> Generator[T | object, None, None]:
    """``work(0) .. work(count - 1)`` in ``jobs`` forked processes, yielded in task order.

    At most ``window`` tasks (default: 16 per worker, at least 64) are handed out beyond the
    oldest one not yet yielded.

    ``work`` runs in the workers only; a result that did not arrive is ``MISSING``. Closing the
    iterator early (or an exception in the caller) stops and reaps the workers.
    """
    fds = _Fds()
    try:
        tasks_read, fds.tasks = os.pipe()
        fds.own += [tasks_read, fds.tasks]
        for _ in range(max(1, min(jobs, count))):
            result_read, result_write = os.pipe()
            fds.own += [result_read, result_write]
            _widen(result_write)
            try:
                pid = os.fork()
            except (OSError, AttributeError):  # no process to be had (or no fork here): fewer workers,
                # and with none every task comes back MISSING
                fds.close(result_read)
                fds.close(result_write)
                break
            if pid == 0:  # pragma: no cover - the worker's side runs in the child, after the fork
                _worker(tasks_read, result_write, [fds.tasks, *fds.workers, result_read], work)
            fds.close(result_write)
            fds.workers[result_read] = pid
        fds.close(tasks_read)
        yield from _collect(count, fds, window or max(64, 16 * len(fds.workers)))
    finally:
        fds.close_all()
        _reap(fds.workers)


class _Fds:
    """The parent's pipe ends, each closed exactly once."""

    def __init__(self) -> None:
        self.tasks = -1  # write end of the task pipe, open until every task number is in it
        self.workers: dict[int, int] = {}  # result pipe's read end -> worker pid
        self.own: list[int] = []  # every descriptor opened here and not yet closed

    def close(self, fd: int) -> None:
        if fd in self.own:
            self.own.remove(fd)
            os.close(fd)
        if fd == self.tasks:
            self.tasks = -1

    def close_all(self) -> None:
        for fd in list(self.own):
            self.close(fd)


def _widen(fd: int) -> None:
    """A larger pipe buffer (Linux), so a worker seldom waits for the parent to read its result."""
    command = getattr(fcntl, "F_SETPIPE_SZ", None)
    if command is not None:
        try:
            fcntl.fcntl(fd, command, _PIPE_SIZE)
        except OSError:
            pass  # the system's default size: slower, not wrong


def _worker(
    tasks: int, results: int, others: list[int], work: Callable[[int], object]
) -> None:  # pragma: no cover
    """A worker's whole life: take task numbers until the pipe is empty and closed, send results."""
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends a worker at once; the parent reaps it
        for fd in others:
            os.close(fd)
        while len(raw := os.read(tasks, 4)) == 4:
            _write_all(results, _TOOK + raw)
            try:
                frame = pickle.dumps(work(int.from_bytes(raw, "little")), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - the parent does this task itself
                _write_all(results, _FAILED + raw)
                continue
            _write_all(results, _RESULT + raw + len(frame).to_bytes(8, "little") + frame)
    except BaseException:  # noqa: BLE001 - a broken pipe or an interrupt: the parent has the rest
        status = 1
    finally:
        os._exit(status)  # no atexit handlers, no flush of the parent's buffered output


def _write_all(fd: int, data: bytes) -> None:  # pragma: no cover - runs in the workers
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Reports:
    """One worker's reports as they arrive: what it holds, what it has answered."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.held: set[int] = set()  # tasks taken and not yet answered

    def take(self, chunk: bytes, early: dict[int, object]) -> None:
        """Add ``chunk``; every complete report is applied (answers go to ``early``)."""
        buffer = self.buffer
        buffer += chunk
        while len(buffer) >= 5:
            kind, index = buffer[:1], int.from_bytes(buffer[1:5], "little")
            if kind == _RESULT:
                if len(buffer) < 13:
                    return
                size = int.from_bytes(buffer[5:13], "little")
                if len(buffer) < 13 + size:
                    return
                early[index] = pickle.loads(memoryview(buffer)[13 : 13 + size])
                del buffer[: 13 + size]
                self.held.discard(index)
                continue
            del buffer[:5]
            if kind == _TOOK:
                self.held.add(index)
            else:
                early[index] = MISSING
                self.held.discard(index)

    def lost(self, early: dict[int, object]) -> None:
        """The worker is gone: what it held will not be answered."""
        for index in self.held:
            early.setdefault(index, MISSING)
        self.held.clear()


def _collect(count: int, fds: _Fds, window: int) -> Iterator[object]:
    """Feed task numbers, read reports, yield results in task order."""
    tasks = fds.tasks
    os.set_blocking(tasks, False)
    selector = selectors.DefaultSelector()
    reports: dict[int, _Reports] = {}
    for fd in fds.workers:
        selector.register(fd, selectors.EVENT_READ)
        reports[fd] = _Reports()
    early: dict[int, object] = {}
    done = fed = 0
    try:
        while done < count:
            if done in early:
                yield early.pop(done)
                done += 1
                continue
            if not reports:  # every worker is gone: what is left is done here
                yield MISSING
                done += 1
                continue
            if fds.tasks != -1:
                fed += _feed(tasks, fed, min(count, done + window))
                if fed == count:  # all handed out: the workers see the end once it is drained
                    fds.close(tasks)
            if _read_ready(selector, reports, early):
                # a worker killed between taking a number and reporting it leaves no trace: hand
                # out everything, so the others finish and the rest comes back MISSING
                window = count
            if not reports and fds.tasks != -1:  # no worker left to take the rest
                fds.close(tasks)
    finally:
        selector.close()


def _read_ready(
    selector: selectors.BaseSelector, reports: dict[int, _Reports], early: dict[int, object]
) -> bool:
    """Read the reports of every worker pipe that is ready into ``early``; a closed pipe drops its
    worker (what it held comes back MISSING). True when a worker was lost."""
    lost = False
    for key, _ in selector.select():
        fd = int(key.fd)
        chunk = os.read(fd, _PIPE_SIZE)
        if chunk:
            reports[fd].take(chunk, early)
            continue
        selector.unregister(fd)
        reports.pop(fd).lost(early)
        lost = True
    return lost


def _feed(fd: int, fed: int, upto: int) -> int:
    """Write task numbers ``fed`` .. ``upto - 1`` as far as the pipe takes them now; how many went."""
    if fed >= upto:
        return 0
    numbers = b"".join(index.to_bytes(4, "little") for index in range(fed, min(upto, fed + 1024)))
    try:
        wrote = os.write(fd, numbers)  # at most 4,096 bytes: a pipe takes it whole or not at all
    except BlockingIOError:
        return 0
    return wrote // 4


def _reap(workers: dict[int, int]) -> None:
    """Wait for every worker; one still running (the caller stopped early) is terminated first."""
    for pid in workers.values():
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
        except (ChildProcessError, ProcessLookupError):
            pass
