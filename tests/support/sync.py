"""Synchronisation for tests with real processes and threads: no fixed sleep is a barrier.

``StartLine`` holds racing processes at one start line and releases them together: each child
writes one byte on a shared "ready" pipe once it has imported everything, then blocks reading a
shared "go" pipe; the parent counts the ready bytes and closes the one write end of "go", so
every child's read returns at the same instant. ``wait_until`` polls a condition against a
deadline, for states no event announces (a file another process writes); ``wait_for_unlock``
blocks on a lock another process holds until it lets go.
"""

from __future__ import annotations

import fcntl
import os
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TypedDict

START_LINE_ENV = "WORKGROUP_TEST_START_LINE"

# Pasted into a child's ``-c`` script (which imports ``os``): call it where the race begins.
AT_START_LINE = """
def at_start_line():
    ready, go = (int(fd) for fd in os.environ["WORKGROUP_TEST_START_LINE"].split(","))
    os.write(ready, b".")
    os.close(ready)
    os.read(go, 1)  # returns when the parent closes the go pipe: every racer leaves at once
    os.close(go)
"""


class PopenStartLine(TypedDict):
    """The keyword arguments of ``subprocess.Popen`` that ``StartLine.popen_kwargs`` gives."""

    pass_fds: tuple[int, int]
    env: dict[str, str]


class StartLine:
    """A barrier across processes: ``popen_kwargs()`` for each child, then ``release(n)``."""

    def __init__(self) -> None:
        self._ready_r, self._ready_w = os.pipe()
        self._go_r, self._go_w = os.pipe()
        self._closed: set[int] = set()

    def popen_kwargs(self, env: dict[str, str] | None = None) -> PopenStartLine:
        """``pass_fds`` and the environment that tell a child where its start line is."""
        return {
            "pass_fds": (self._ready_w, self._go_r),
            "env": {**(os.environ if env is None else env), START_LINE_ENV: f"{self._ready_w},{self._go_r}"},
        }

    def release(self, count: int, timeout: float = 120.0) -> None:
        """Wait until ``count`` children stand at the line, then let them all go at once."""
        self._close(self._ready_w)  # only the children hold a write end now: all gone means EOF
        self._close(self._go_r)
        arrived = 0
        deadline = time.monotonic() + timeout
        while arrived < count:
            left = deadline - time.monotonic()
            readable, _, _ = select.select([self._ready_r], [], [], max(left, 0))
            if not readable:
                raise AssertionError(f"{arrived} of {count} processes reached the start line in {timeout} s")
            chunk = os.read(self._ready_r, count - arrived)
            if not chunk:
                raise AssertionError(f"the processes exited with {arrived} of {count} at the start line")
            arrived += len(chunk)
        self._close(self._go_w)

    def close(self) -> None:
        for fd in (self._ready_r, self._ready_w, self._go_r, self._go_w):
            self._close(fd)

    def _close(self, fd: int) -> None:
        if fd not in self._closed:
            self._closed.add(fd)
            os.close(fd)

    def __enter__(self) -> StartLine:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()  # a failed test never leaves a child waiting at the line


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.01) -> bool:
    """True as soon as ``condition()`` holds, False when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)  # not a barrier: the poll interval of a wait bounded by its deadline


def read_line(fd: int, timeout: float) -> bytes:
    """One line a child writes on a pipe (``b""`` if it exits first); a timeout fails the test."""
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        readable, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
        if not readable:
            raise AssertionError(f"no line from the child in {timeout} s")
        byte = os.read(fd, 1)
        if not byte:
            return line
        line += byte
    return line


def wait_for_unlock(lock: Path, timeout: float) -> bool:
    """True once no process holds the ``flock`` on ``lock`` (or there is no such file).

    A helper thread blocks on the lock itself and lets go at once, so the answer comes the moment
    the holder releases it; False after ``timeout``.
    """
    try:
        fd = os.open(lock, os.O_RDWR)
    except FileNotFoundError:
        return True
    free = threading.Event()

    def take_and_release() -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            fcntl.flock(fd, fcntl.LOCK_UN)
            free.set()
        finally:
            os.close(fd)

    threading.Thread(target=take_and_release, daemon=True).start()
    return free.wait(timeout)
