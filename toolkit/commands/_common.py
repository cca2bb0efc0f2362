"""Small helpers shared by command modules: JSON on stdout, text on stderr, the repository."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolkit.errors import InvalidInput

MAX_INPUT_FILE_BYTES = 1_048_576


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")


def say(text: str) -> None:
    sys.stderr.write(text + ("" if text.endswith("\n") else "\n"))


def read_json_file(path: Path, *, limit: int = MAX_INPUT_FILE_BYTES, what: str = "input file") -> Any:
    """Read a JSON file with a size cap; coded errors (exit 2) for missing, huge or malformed files."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(limit + 1)
    except FileNotFoundError:
        raise InvalidInput("FILE_NOT_FOUND", f"{what} does not exist") from None
    except IsADirectoryError:
        raise InvalidInput("NOT_A_FILE", f"{what} is a directory") from None
    except PermissionError:
        raise InvalidInput("FILE_UNREADABLE", f"{what} cannot be read") from None
    if len(raw) > limit:
        raise InvalidInput("FILE_TOO_LARGE", f"{what} exceeds {limit} bytes")
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise InvalidInput("INVALID_JSON", f"{what} is not valid UTF-8 JSON") from None


def _reject(_: str) -> Any:
    raise ValueError("non-standard constant")


def repository() -> Any:
    from toolkit.git import discover

    return discover()
