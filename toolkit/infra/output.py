"""Standard output after a failed write (the one place that repoints fd 1)."""

from __future__ import annotations

import os
import sys


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
