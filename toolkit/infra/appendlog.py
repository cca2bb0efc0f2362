"""The one append primitive of every log: a record lands whole or not at all.

Used by the vault journal, the telemetry log, the replay ledger, the profile-change log
(``store.append_jsonl``), the CM project and global logs (``cm.run_logs.append_line``) and the OTLP
spool (``infra.livespool``). Standard library only: the spool is written on the runtime path.

``os.write`` on a regular file may write part of what it was given (a full device takes what fits
in its last block, then refuses the rest). Every byte is therefore written in a loop; a write that
fails or stops making progress, and a failed ``fsync``, cut the file back to its size before the
append, so the log holds only the whole lines it held before and the command fails with a coded
environment error (exit 3) that names the log, never the record.
"""

from __future__ import annotations

import errno
import os

from toolkit.core.errors import EnvironmentFailure

DISK_FULL = "DISK_FULL"
WRITE_INCOMPLETE = "WRITE_INCOMPLETE"
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


class WriteFailed(EnvironmentFailure, OSError):
    """A write the file system did not complete (exit 3, coded).

    Also an ``OSError``: code that treats a refused write as the environment (a degraded mirror,
    telemetry that must never fail a decision) keeps doing so; the shell prints the code.
    """


def append_whole(fd: int, payload: bytes, what: str) -> None:
    """Append ``payload`` to the regular file open as ``fd`` (``O_APPEND``; the caller holds the
    log's exclusive lock), then fsync; whole or not at all.

    A torn last line (a crash mid-append) is fenced off first: the record starts on a fresh line.
    On failure the file is truncated back to its size before the call and ``WriteFailed`` is
    raised (``DISK_FULL`` for ENOSPC/EDQUOT, ``WRITE_INCOMPLETE`` otherwise). ``what`` names the
    log in the message.
    """
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        payload = b"\n" + payload  # never glue a record onto a torn line
    view = memoryview(payload)
    try:
        while view:
            written = os.write(fd, view)
            if written <= 0:  # no progress: the rest would never be written
                raise OSError(errno.EIO, "the write made no progress")
            view = view[written:]
        os.fsync(fd)
    except OSError as exc:
        restored = _truncate_back(fd, size)
        outcome = "nothing was appended" if restored else _PARTIAL
        raise write_failed(exc, what, outcome) from None
    except BaseException:  # an interrupt mid-append: take the part back, then let it through
        _truncate_back(fd, size)
        raise


def _truncate_back(fd: int, size: int) -> bool:
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        return False
    return True


_PARTIAL = "a partial line may remain (readers skip it; the next append fences it off)"


def write_failed(exc: OSError, what: str, outcome: str) -> WriteFailed:
    """The coded error for a write of ``what`` that failed with ``exc``; ``outcome`` says what the
    file holds now (never the data)."""
    if exc.errno in _FULL:
        failed = WriteFailed(DISK_FULL, f"{what}: the device is full; {outcome}")
    else:
        name = errno.errorcode.get(exc.errno or 0, "an I/O error")
        failed = WriteFailed(WRITE_INCOMPLETE, f"{what}: the write did not complete ({name}); {outcome}")
    failed.errno = exc.errno
    return failed
