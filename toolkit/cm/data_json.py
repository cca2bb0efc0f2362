"""``--data-json``: the free fields of one CM event, checked before anything is written.

A strict JSON object of at most 8 KiB, merged flat into the envelope: no reserved envelope field,
bounded depth, finite numbers, valid Unicode, no credential-like key at any depth, and for a model
event a closed list of fields (``toolkit.core.cm_usage_format``). Messages never echo a value; a field
name is shown only when the privacy engine finds nothing in it.
"""

from __future__ import annotations

import difflib
import math
import re

from toolkit.cm.event_error import EventError
from toolkit.core.cm_usage_format import FIELDS_OF, RESERVED_FIELDS, TOKEN_FIELDS
from toolkit.core.strictjson import loads_strict
from toolkit.privacy.engine import scan_value
from toolkit.privacy.types import Context

TYPE_CHECKING = False  # typing costs start-up on every event; type checkers read True
if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject

SENSITIVE_KEY = re.compile(
    r"(api[_-]?key|authorization|cookie|password|passwd|private[_-]?key|recovery[_-]?code|secret|token)",
    re.IGNORECASE,
)
MAX_DATA_BYTES = 8192
MAX_DATA_DEPTH = 32


def check_unicode(text: str) -> None:
    """Event text that cannot be written as UTF-8 (a lone surrogate) is refused."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise EventError("event text must be valid Unicode") from None


def parse_data(raw: str, event: str) -> JsonObject:
    """``--data-json``: a strict JSON object of at most 8 KiB, merged flat into the envelope."""
    try:
        size = len(raw.encode("utf-8"))
    except UnicodeEncodeError:
        raise EventError("--data-json must be valid Unicode") from None
    if size > MAX_DATA_BYTES:
        raise EventError("--data-json cannot exceed 8192 UTF-8 bytes")
    try:
        value = loads_strict(raw)
    except ValueError:
        raise EventError("--data-json must be a JSON object") from None
    if not isinstance(value, dict):
        raise EventError("--data-json must be a JSON object")
    if RESERVED_FIELDS.intersection(value):
        raise EventError("--data-json cannot override reserved fields")
    if event in FIELDS_OF:
        _check_model_fields(event, value)
    allowed = frozenset(TOKEN_FIELDS) if event == "model_usage" else frozenset()
    _check_tree(value, allowed)
    return value


# a name that ends in "tokens" (or "token_count") counts tokens; "token" alone names a credential
_COUNT_NAME = re.compile(r"[A-Za-z0-9_.-]*(tokens|token_count|tokens_count)", re.IGNORECASE)
_NAMEABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


def _credential_word(key: str) -> str | None:
    """The credential word a field name holds (the signal), or None for a name that only counts tokens."""
    found = SENSITIVE_KEY.search(key)
    if found is None:
        return None
    if _COUNT_NAME.fullmatch(key) and not SENSITIVE_KEY.search(re.sub("(?i)token", "", key)):
        return None
    return found.group(0).lower()


def _shown(key: str) -> str:
    """A refused field's name as a message may show it: a plain identifier the privacy engine finds
    nothing in, else a placeholder (a pasted secret used as a key is not echoed)."""
    if _NAMEABLE.fullmatch(key):
        try:
            if not scan_value(key, Context.EVENT_LOG):
                return repr(key)
        except ValueError:  # pragma: no cover - a string is never too deep
            pass
    return "(a field whose name is withheld)"


def _check_model_fields(event: str, data: JsonObject) -> None:
    """A model event's fields are a closed list: an unknown one is named with the accepted names,
    and called sensitive only when its name holds a credential word."""
    allowed = FIELDS_OF[event]
    unknown = sorted(set(data) - allowed)
    if not unknown:
        return
    for key in unknown:
        word = _credential_word(key)
        if word is not None:
            raise EventError(
                f"sensitive log field {_shown(key)} is refused: its name contains {word!r}, which marks a "
                "credential, and credentials are never logged"
            )
    named = ", ".join(_shown(key) for key in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
    hints = [
        f"{close[0]!r} for {key!r}"
        for key in unknown
        if _NAMEABLE.fullmatch(key)
        and (close := difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.75))
    ]
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    raise EventError(
        f"{event} contains unsupported fields: {named}; the accepted fields are {', '.join(sorted(allowed))}"
        + hint
    )


def _check_tree(data: JsonObject, top_allowed: frozenset[str]) -> None:
    """Bounded depth, finite numbers, valid Unicode, and no credential-like key at any depth."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_DATA_DEPTH:
            raise EventError("--data-json is nested too deeply")
        if isinstance(current, str):
            check_unicode(current)
        elif isinstance(current, float) and not math.isfinite(current):
            raise EventError("--data-json must contain strict JSON numbers")
        elif isinstance(current, dict):
            for key, child in current.items():
                check_unicode(key)
                if SENSITIVE_KEY.search(key) and not (current is data and key in top_allowed):
                    raise _sensitive(key)
                stack.append((child, depth + 1))
        elif isinstance(current, list):
            stack.extend((child, depth + 1) for child in current)


def _sensitive(key: str) -> EventError:
    """The refusal of a credential-like field name in free event data: the field, the word, the rule."""
    word = _credential_word(key)
    if word is None:  # a token-count name outside model_usage
        return EventError(
            f"--data-json field {_shown(key)} is refused: outside model_usage a name containing 'token' "
            "marks a credential; token counts go in a model_usage event as " + ", ".join(TOKEN_FIELDS)
        )
    return EventError(
        f"sensitive log field {_shown(key)} is refused: its name contains {word!r}, which marks a "
        "credential, and credentials are never logged"
    )
