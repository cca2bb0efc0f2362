"""Strict JSON, the one loader: standard JSON only (``NaN``/``Infinity`` refused), UTF-8 bytes or
text, and a linear nesting-depth check that runs before any recursive walk.

Each caller wraps ``ValueError`` in its own coded error (``UnicodeDecodeError`` is a
``ValueError``; a ``RecursionError`` from the decoder is turned into one). Standard library only,
no I/O: the runtime's start-up path imports it.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from typing import Any

MAX_JSON_DEPTH = 256

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


def reject_constant(_: str) -> Any:
    raise ValueError("non-standard JSON constant")


def finite_float(text: str) -> float:
    """A JSON number that stays finite ("1e999" would parse as infinity, which has no JSON form)."""
    value = float(text)
    if value - value != 0.0:  # infinite (inf - inf is NaN); NaN never reaches here
        raise ValueError("number out of range")
    return value


# built once: json.loads with options constructs a new decoder on every call
_STRICT = json.JSONDecoder(parse_constant=reject_constant)
_FINITE = json.JSONDecoder(parse_constant=reject_constant, parse_float=finite_float)


def json_error_at(exc: json.JSONDecodeError) -> str:
    """Where and why the decoder stopped: ``Expecting ',' delimiter at line 3 column 7``.

    Only the decoder's own fixed wording and the position: never the document's content (the
    file may hold a secret; the error line goes to logs and CI output)."""
    return f"{exc.msg} at line {exc.lineno} column {exc.colno}"


def loads_strict(raw: bytes | str, *, finite: bool = False) -> Any:
    """The value of ``raw`` (bytes are decoded as strict UTF-8); ``ValueError`` when it is not
    standard JSON. ``finite`` also refuses numbers too large for a float."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return (_FINITE if finite else _STRICT).decode(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply for the decoder") from None


def json_depth_exceeds(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """True when the brackets outside strings nest deeper than ``max_depth`` (linear, no recursion)."""
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return False  # cannot nest deeper than the number of openers
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    depth = 0
    for byte in brackets:
        if byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False
