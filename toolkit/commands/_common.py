"""Small helpers shared by command modules: JSON on stdout, text on stderr, the repository."""

from __future__ import annotations

import json
import sys
from typing import Any

from toolkit.infra.store import MAX_INPUT_FILE_BYTES as MAX_INPUT_FILE_BYTES  # re-exported for commands
from toolkit.infra.store import read_json_file as read_json_file


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")


def say(text: str) -> None:
    sys.stderr.write(text + ("" if text.endswith("\n") else "\n"))


def repository() -> Any:
    from toolkit.infra.git import discover

    return discover()
