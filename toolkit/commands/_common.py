"""Small helpers shared by command modules: JSON on stdout, text on stderr, the repository."""

from __future__ import annotations

import json
import sys
from typing import Any

from toolkit.infra.clock import moment_or_now as moment_or_now  # --now, re-exported for commands
from toolkit.infra.output import ClosedStream as ClosedStream  # re-exported for the CLI
from toolkit.infra.output import OutputUnwritable, write_stdout
from toolkit.infra.store import MAX_INPUT_FILE_BYTES as MAX_INPUT_FILE_BYTES  # re-exported for commands
from toolkit.infra.store import read_json_file as read_json_file
from toolkit.infra.store import read_json_request as read_json_request


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")


def write_out(value: Any) -> None:
    """One JSON line on stdout, flushed now; an environment error (exit 3) if it cannot be written.

    For output that counts as delivered once written (a vault batch): the caller records the
    delivery only after this returned, so a closed stdout or a broken pipe loses nothing.
    """
    try:
        write_stdout(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")
    except OutputUnwritable as exc:
        raise OutputUnwritable(f"{exc.message}; nothing was recorded") from None


def say(text: str) -> None:
    sys.stderr.write(text + ("" if text.endswith("\n") else "\n"))


def repository() -> Any:
    from toolkit.infra.git import discover

    return discover()
