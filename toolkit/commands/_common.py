"""Small helpers shared by command modules: JSON on stdout, text on stderr, the repository."""

from __future__ import annotations

import json
import sys
from typing import Any

from toolkit.store import MAX_INPUT_FILE_BYTES as MAX_INPUT_FILE_BYTES  # re-exported for commands
from toolkit.store import read_json_file as read_json_file


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")


def write_out(value: Any) -> None:
    """One JSON line on stdout, flushed now; an environment error (exit 3) if it cannot be written.

    For output that counts as delivered once written (a vault batch): the caller records the
    delivery only after this returned, so a closed stdout or a broken pipe loses nothing.
    """
    from toolkit.errors import EnvironmentFailure

    stream = sys.stdout
    try:
        if stream is None:  # fd 1 was closed when the process started
            raise OSError("no stdout")
        stream.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
        stream.flush()
    except (OSError, ValueError):
        _silence_stdout()
        raise EnvironmentFailure(
            "OUTPUT_UNWRITABLE", "stdout cannot be written; nothing was recorded"
        ) from None


class ClosedStream:
    """Stands in for a stdout that was closed when the process started (``cmd >&-``).

    Writing to it is an OSError like writing to any dead stream, so the one error map turns it
    into an environment error (exit 3) instead of an AttributeError traceback on ``None``.
    """

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EBADF, "stdout is closed")

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


def silence_stdout() -> None:
    """After a failed write: point fd 1 at /dev/null so the interpreter's last flush is quiet."""
    _silence_stdout()


def _silence_stdout() -> None:
    # what could not be written must not be retried at exit (a second error, a traceback)
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != 1:  # with fd 1 closed, the open itself took fd 1
            os.dup2(devnull, 1)
            os.close(devnull)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - lives as long as the process
    except OSError:
        sys.stdout = None


def say(text: str) -> None:
    sys.stderr.write(text + ("" if text.endswith("\n") else "\n"))


def repository() -> Any:
    from toolkit.git import discover

    return discover()
