"""Small helpers shared by command modules: JSON on stdout, text on stderr, the repository."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

from toolkit.infra.clock import moment_or_now as moment_or_now  # --now, re-exported for commands
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
    """One human-readable line on stderr. The whole line goes through ``shown`` (issue 24): a
    path, id, name or reason formatted into it cannot retitle or recolour the terminal, and a line
    break inside it is printed as ``\\n``, so it cannot forge a line. Pass values raw (escaping
    them first would escape twice); several lines are several calls (``say_lines``)."""
    from toolkit.core.display import shown

    sys.stderr.write(shown(text.removesuffix("\n")) + "\n")


def say_lines(lines: Iterable[str]) -> None:
    """Deliberate multi-line text on stderr: one ``say`` per line, so only our line breaks print."""
    for line in lines:
        say(line)


def echo(text: str) -> None:
    """One human-readable line on stdout, escaped like ``say`` (JSON goes through ``emit_json``)."""
    from toolkit.core.display import shown

    _stdout_line(shown(text.removesuffix("\n")))


def echo_row(*fields: object) -> None:
    """A tab-separated row on stdout: each field escaped on its own, the tabs between them kept."""
    from toolkit.core.display import shown

    _stdout_line("\t".join(map(shown, fields)))


def _stdout_line(line: str) -> None:
    import typer

    typer.echo(line)


def repository() -> Any:
    from toolkit.infra.git import discover

    return discover()
