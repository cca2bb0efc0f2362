"""Standard output: the one guard every entry point runs under, and the quiet after a failed write.

A command's data goes to stdout. When stdout cannot take it (a closed descriptor, ``cmd >&-``; a
pipe whose reader has exited; ``/dev/full``), the command ends with exit 3 and one coded line on
stderr, ``error[OUTPUT_UNWRITABLE]: ...``, never a traceback, and never a second error from the
interpreter's last flush at exit. ``guarded`` gives every console script that behaviour:

* ``sys.stdout`` becomes a thin wrapper whose failed ``write``/``flush`` raises
  ``OutputUnwritable`` (a coded ``EnvironmentFailure``, exit 3) after pointing fd 1 at the null
  device, so what could not be written is not retried at exit;
* the data is flushed before the exit code is returned: a buffered pipe or file fails here;
* a failure that a handler along the way swallowed still ends as exit 3.

Standard library only (the hooks and the CM scripts start through it).
"""

from __future__ import annotations

import errno
import os
import sys

from toolkit.core.errors import EnvironmentFailure, ExitCode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

OUTPUT_UNWRITABLE = "OUTPUT_UNWRITABLE"


class OutputUnwritable(EnvironmentFailure):
    """stdout refused the data (exit 3)."""

    def __init__(self, message: str = "stdout cannot be written") -> None:
        super().__init__(OUTPUT_UNWRITABLE, message)


def silence_stdout() -> None:
    """After a failed write: point fd 1 at /dev/null so the interpreter's last flush is quiet.

    What could not be written must not be retried at exit (a second error, a traceback).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != 1:  # with fd 1 closed, the open itself took fd 1
            os.dup2(devnull, 1)
            os.close(devnull)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - lives as long as the process
    except OSError:
        sys.stdout = None


class ClosedStream:
    """Stands in for a stdout that was closed when the process started (``cmd >&-``): writing to
    it fails like writing to any dead stream (EBADF)."""

    encoding = "utf-8"
    errors = "strict"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


class GuardedStdout:
    """``sys.stdout`` under ``guarded``: the first write or flush the stream refuses raises
    ``OutputUnwritable`` (and every later one again); fd 1 is silenced at that moment."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.failed: OutputUnwritable | None = None

    def write(self, text: str) -> int:
        if self.failed is not None:
            raise self.failed
        try:
            return int(self.stream.write(text))
        except UnicodeError:  # the text, not the stream: not ours to recode
            raise
        except (OSError, ValueError) as exc:  # ValueError: a closed file object
            raise self._fail(exc) from None

    def flush(self) -> None:
        if self.failed is not None:
            raise self.failed
        try:
            self.stream.flush()
        except (OSError, ValueError) as exc:
            raise self._fail(exc) from None

    def _fail(self, exc: Exception) -> OutputUnwritable:
        number = exc.errno if isinstance(exc, OSError) else errno.EBADF
        reason = errno.errorcode.get(number or 0, "an I/O error")
        self.failed = OutputUnwritable(f"stdout cannot be written ({reason})")
        silence_stdout()
        return self.failed

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def guarded(run: Callable[[], int]) -> int:
    """Run an entry point's body with stdout guarded; its exit code, or 3 when stdout failed.

    Nested calls (``workgroup cm call`` runs the adapter's ``main``) share the outer guard.
    """
    current = sys.stdout
    if isinstance(current, GuardedStdout):
        return _run_guarded(run)
    closed = current is None or _on_closed_fd_1(current)
    if closed:  # started with fd 1 closed: hold fd 1 so that no file we open lands on it
        _hold_fd_1()
    guard = GuardedStdout(ClosedStream() if closed else current)
    sys.stdout = guard
    try:
        code = run()
        if guard.failed is None:
            guard.flush()  # the data is out before the exit code says so
    except OutputUnwritable as exc:
        code = _report(exc)
    finally:
        if sys.stdout is guard:  # else silenced after a failure: stays on the null device
            sys.stdout = current
    if guard.failed is not None and code != ExitCode.ENVIRONMENT:  # swallowed along the way
        code = _report(guard.failed)
    return code


def _run_guarded(run: Callable[[], int]) -> int:
    """Run a nested entry point under the outer guard: its exit code, or 3 when stdout failed."""
    try:
        return run()
    except OutputUnwritable as exc:
        return _report(exc)


def _on_closed_fd_1(stream: Any) -> bool:
    """Whether ``stream`` writes to fd 1 and fd 1 is closed (``os.close(1)`` before the start)."""
    try:
        if stream.fileno() != 1:
            return False
    except (OSError, ValueError, AttributeError):
        return False
    try:
        os.fstat(1)
    except OSError:
        return True
    return False


def _hold_fd_1() -> None:
    try:
        os.fstat(1)
    except OSError:
        try:
            held = os.open(os.devnull, os.O_WRONLY)
        except OSError:
            return
        if held != 1:
            os.close(held)


def _report(exc: OutputUnwritable) -> int:
    try:
        sys.stderr.write(exc.diagnostics() + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # stderr gone too: the exit code still says it
        pass
    return int(exc.exit_code)


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout and flush it now; ``OutputUnwritable`` when it did not get there
    (under ``guarded`` or not)."""
    stream = sys.stdout
    try:
        if stream is None:
            raise OSError(errno.EBADF, "stdout is closed")
        stream.write(text)
        stream.flush()
    except OutputUnwritable:
        raise
    except UnicodeError:
        raise
    except (OSError, ValueError) as exc:
        failed = GuardedStdout(stream)._fail(exc)
        raise failed from None
