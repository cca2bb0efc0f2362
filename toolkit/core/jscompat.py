"""JavaScript value semantics the reference runtime relies on, in one place (pure, standard library).

The reference is a Node program: string lengths are UTF-16 code units, truthiness treats empty
containers as true and ``NaN`` as false, ``===`` compares objects by identity, and
``String.prototype.trim`` strips its own whitespace set.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from typing import Any

# String.prototype.trim() strips exactly these (ECMAScript WhiteSpace and LineTerminator);
# Python's str.strip() differs (it strips U+001C..U+001F and U+0085, keeps U+FEFF).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def utf16_len(text: str) -> int:
    """String length as JavaScript counts it (UTF-16 code units), for min/maxLength."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_truthy(value: object) -> bool:
    """JavaScript truthiness: ``[]``/``{}`` are truthy; ``0``, ``""``, null, false, NaN are not."""
    if isinstance(value, float) and math.isnan(value):
        return False
    if isinstance(value, (dict, list)):
        return True
    return bool(value)


def js_strict_equal(left: Any, right: Any) -> bool:
    """``left === right`` for parsed JSON values: objects/arrays are never identical copies."""
    if type(left) is str and type(right) is str:  # the common case, first
        return left == right
    if isinstance(left, (dict, list)) or isinstance(right, (dict, list)):
        return left is right
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if left is None or right is None:
        return left is right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    return type(left) is type(right) and left == right


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(JS_WHITESPACE)
