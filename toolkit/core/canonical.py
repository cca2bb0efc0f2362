"""Canonical JSON bytes and ``sha256:`` digests.

Two functions, on purpose (DESIGN.md, Decisions):

* ``capsule_digest`` reproduces the reference runtime's capsule hash: keys sorted recursively,
  ``capsule_hash`` dropped at any depth, compact separators, UTF-8, numbers printed as
  JavaScript prints them (``100.0`` -> ``100``).
* ``signing_bytes`` is RFC 8785 (JCS) via ``rfc8785``, for envelopes and corpus digests.
"""

from __future__ import annotations

import hashlib
import json
import math
import re

from toolkit.core.errors import InvalidInput

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from typing import Any

SHA256_PREFIX = "sha256:"


_MAX_SAFE_INTEGER = 2**53
_MAX_ARRAY_INDEX = 2**32 - 2
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number_text(value: int | float) -> str:
    """A number exactly as JavaScript's ``JSON.stringify`` prints it.

    Python and JavaScript both print the shortest round-trip digits, but place them
    differently: JavaScript writes ``100`` for ``100.0``, ``0.00001`` for ``1e-05``, ``1e-7`` for
    ``1e-07`` and ``123456789012345680000`` for ``1.2345678901234568e+20``. Integers beyond
    2**53 are first rounded to the double JavaScript would have parsed.
    """
    if isinstance(value, bool):
        raise TypeError("a boolean is not a number")
    if isinstance(value, int) and abs(value) <= _MAX_SAFE_INTEGER:
        return str(value)
    number = float(value)  # OverflowError for integers beyond the double range
    if math.isnan(number) or math.isinf(number):
        raise ValueError("non-finite number")
    if number == 0:
        return "0"  # JSON.stringify(-0) is "0"
    digits, point = _shortest_digits(abs(number))
    return ("-" if number < 0 else "") + _place_point(digits, point)


def _shortest_digits(magnitude: float) -> tuple[str, int]:
    """(significant digits, decimal point position) of the shortest round-trip form of a
    positive double: ``0.0125`` is ``("125", -1)``, ``1.5e+20`` is ``("15", 21)``."""
    mantissa, _, exponent = repr(magnitude).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    return stripped.rstrip("0"), point


def _place_point(digits: str, n: int) -> str:
    """The digits written as ECMAScript's Number::toString places them around the point ``n``:
    an integer up to 21 digits, a plain fraction down to 1e-6, exponent notation otherwise."""
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = (
            (digits[0] + ("." + digits[1:] if k > 1 else "")) + "e" + ("+" if e >= 0 else "-") + str(abs(e))
        )
    return body


def _string_text(value: str) -> str:
    # JSON.stringify escapes quotes, backslashes and C0 controls like Python, and lone surrogates
    # as \udxxx (Python would leave them raw, which UTF-8 cannot encode).
    text = json.dumps(value, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) <= _MAX_ARRAY_INDEX


def _key_order(keys: list[str]) -> list[str]:
    """``Object.keys(v).sort()`` then JavaScript's own-key order: array-index keys first, ascending."""
    ordered = sorted(keys, key=lambda k: k.encode("utf-16-be", "surrogatepass"))  # UTF-16 code units
    indexes = sorted((k for k in ordered if _is_array_index(k)), key=int)
    return indexes + [k for k in ordered if not _is_array_index(k)]


def _write_object(value: dict[Any, Any], drop_key: str | None, out: list[str]) -> None:
    """An object with its keys in JavaScript's order (``drop_key`` left out); a key that is not
    a string is a ``TypeError``."""
    out.append("{")
    first = True
    for key in _key_order([k for k in value if k != drop_key]):
        if not isinstance(key, str):
            raise TypeError("object keys must be strings")
        if not first:
            out.append(",")
        first = False
        out.append(_string_text(key))
        out.append(":")
        _write(value[key], drop_key, out)
    out.append("}")


def _write_array(value: list[Any] | tuple[Any, ...], drop_key: str | None, out: list[str]) -> None:
    """An array, its items in order."""
    out.append("[")
    for index, item in enumerate(value):
        if index:
            out.append(",")
        _write(item, drop_key, out)
    out.append("]")


def _write(value: Any, drop_key: str | None, out: list[str]) -> None:
    if isinstance(value, dict):
        _write_object(value, drop_key, out)
    elif isinstance(value, (list, tuple)):
        _write_array(value, drop_key, out)
    elif isinstance(value, str):
        out.append(_string_text(value))
    elif value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, (int, float)):
        out.append(js_number_text(value))
    else:
        raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def canonical_bytes(value: Any, *, drop_key: str | None = None) -> bytes:
    """The reference's canonical JSON: recursively sorted keys (as JavaScript orders them),
    compact, UTF-8 (not escaped), JavaScript number printing; ``drop_key`` removed at any depth."""
    out: list[str] = []
    _write(value, drop_key, out)
    return "".join(out).encode("utf-8")


def sha256_digest(data: bytes) -> str:
    return SHA256_PREFIX + hashlib.sha256(data).hexdigest()


def capsule_digest(capsule: Any) -> str:
    """The reference's ``capsule_hash``: sha256 over canonical bytes without ``capsule_hash``."""
    return sha256_digest(canonical_bytes(capsule, drop_key="capsule_hash"))


class NotCanonical(InvalidInput):
    """A value RFC 8785 cannot represent exactly, so nothing holding it can be signed or checked."""

    def __init__(self) -> None:
        super().__init__(
            "NOT_CANONICAL_JSON",
            "the data holds a value RFC 8785 cannot represent (an integer beyond +-(2**53-1), "
            "a lone surrogate or a non-finite number)",
        )


def signing_bytes(value: Any) -> bytes:
    """RFC 8785 canonical bytes, for everything that is signed; ``NotCanonical`` (a coded
    ``InvalidInput``) for a value RFC 8785 cannot represent exactly."""
    import rfc8785  # lazy: only signing paths need it

    try:
        return bytes(rfc8785.dumps(value))
    except ValueError:  # rfc8785's integer/float domain errors, a lone surrogate (also in a key)
        raise NotCanonical() from None
