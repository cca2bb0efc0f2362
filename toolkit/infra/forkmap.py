"""Work on numbered tasks in forked worker processes, results handed back in task order.

A lean alternative to ``multiprocessing.Pool`` for work that is many short tasks whose results are
small: no handler threads, no semaphores, no per-task wake-ups of a pool supervisor. Workers are
forked once (they see the parent's memory as it was, so the work needs no pickling of its inputs),
take task numbers from one shared pipe (4 bytes each; a read of 4 bytes from a pipe is whole), and
send ``pickle`` frames back on a pipe of their own. The parent feeds task numbers and reads results
through one selector and yields them in task order, holding results that arrive early.

A task whose result never comes (its worker raised, was killed, or could not pickle the result) is
yielded as ``MISSING``; the caller does that task itself, so a lost worker costs time, not results.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
from collections.abc import Callable, Iterator
from typing import Final, TypeVar

T = TypeVar("T")

MISSING: Final = object()  # the task's result did not arrive: do it in this process
_HEADER = 8  # bytes of a frame's length
_PIPE_SIZE = 1 << 20  # the default limit for an unprivileged process (/proc/sys/fs/pipe-max-size)


def available() -> bool:
    return hasattr(os, "fork")


def ordered_map(count: int, work: Callable[[int], T], jobs: int) -> Iterator[T | object]:
    """``work(0) .. work(count - 1)`` in ``jobs`` forked processes, yielded in task order.

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
            except OSError:  # no process to be had: fewer workers (none: every task comes back MISSING)
                fds.close(result_read)
                fds.close(result_write)
                break
            if pid == 0:  # pragma: no cover - the worker's side runs in the child, after the fork
                _worker(tasks_read, result_write, [fds.tasks, *fds.workers, result_read], work)
            fds.close(result_write)
            fds.workers[result_read] = pid
        fds.close(tasks_read)
        yield from _collect(count, fds)
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
    try:
        import fcntl
    except ImportError:
        return
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
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the parent decides what an interrupt stops
        for fd in others:
            os.close(fd)
        while len(raw := os.read(tasks, 4)) == 4:
            index = int.from_bytes(raw, "little")
            try:
                frame = pickle.dumps((index, work(index)), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - the parent does this task itself
                continue
            _write_all(results, len(frame).to_bytes(_HEADER, "little") + frame)
    except BaseException:  # noqa: BLE001 - a broken pipe or an interrupt: the parent has the rest
        status = 1
    finally:
        os._exit(status)  # no atexit handlers, no flush of the parent's buffered output


def _write_all(fd: int, data: bytes) -> None:  # pragma: no cover - runs in the workers
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _collect(count: int, fds: _Fds) -> Iterator[object]:
    """Feed task numbers, read frames, yield results in task order."""
    pending = b"".join(index.to_bytes(4, "little") for index in range(count))
    tasks = fds.tasks
    os.set_blocking(tasks, False)
    selector = selectors.DefaultSelector()
    buffers: dict[int, bytearray] = {}
    for fd in fds.workers:
        selector.register(fd, selectors.EVENT_READ)
        buffers[fd] = bytearray()
    selector.register(tasks, selectors.EVENT_WRITE)
    early: dict[int, object] = {}
    done = 0
    try:
        while done < count:
            if done in early:
                yield early.pop(done)
                done += 1
                continue
            if not buffers:  # every worker is gone: what is left is done here
                yield MISSING
                done += 1
                continue
            for key, _ in selector.select():
                fd = int(key.fd)
                if fd == tasks:
                    pending = pending[_feed(tasks, pending) :]
                    if not pending:  # all handed out: the workers see the end once it is drained
                        selector.unregister(tasks)
                        fds.close(tasks)
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    selector.unregister(fd)
                    del buffers[fd]
                    continue
                buffers[fd] += chunk
                for index, result in _frames(buffers[fd]):
                    early[index] = result
            if not buffers and fds.tasks != -1:  # no worker left to take the rest
                selector.unregister(tasks)
                fds.close(tasks)
    finally:
        selector.close()


def _feed(fd: int, pending: bytes) -> int:
    """Write as many whole task numbers as the pipe takes now; how many bytes went."""
    room = len(pending) - len(pending) % 4
    try:
        wrote = os.write(fd, pending[: min(room, 4096)])
    except BlockingIOError:
        return 0
    return wrote - wrote % 4  # a pipe write of at most 4096 bytes is whole


def _frames(buffer: bytearray) -> Iterator[tuple[int, object]]:
    """Complete frames taken off the front of ``buffer``."""
    while len(buffer) >= _HEADER:
        size = int.from_bytes(buffer[:_HEADER], "little")
        if len(buffer) < _HEADER + size:
            return
        index, result = pickle.loads(memoryview(buffer)[_HEADER : _HEADER + size])
        del buffer[: _HEADER + size]
        yield index, result


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
