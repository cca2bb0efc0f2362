"""The value rules of ``model_call/claimed`` and ``model_usage/complete``, read off ``cm_usage_format``.

The checks and their order are the reference writer's (its messages, word for word); which field
is checked how comes from the one declaration (``toolkit.core.cm_usage_format``), so a field added
there is checked here with no edit. ``--data-json`` has already been held to the event's closed
field list with a naming message (``toolkit.cm.data_json``).
"""

from __future__ import annotations

import re

from toolkit.cm.event_error import EventError
from toolkit.core.cm_usage_format import (
    CALL_ID,
    CALL_ID_PATTERN,
    CHOICE,
    COUNT,
    EVENTS,
    FIELDS_OF,
    IDENTIFIER,
    IDENTIFIER_PATTERN,
    MAX_TEXT,
    OBSERVED_REQUIRES,
    POSITIVE,
    SUBSET_OF,
    TEXT,
    TOKEN_FIELDS,
    choice_words,
    required_texts,
)

TYPE_CHECKING = False  # typing costs start-up on every event; type checkers read True
if TYPE_CHECKING:
    from typing import TypeGuard

    from toolkit.core.jsontypes import JsonObject

_PATTERNS = {CALL_ID: re.compile(CALL_ID_PATTERN), IDENTIFIER: re.compile(IDENTIFIER_PATTERN)}
# (name, compiled pattern) of the patterned fields of each event, in declaration order
_PATTERNED = {
    event: tuple((f.name, _PATTERNS[f.kind]) for f in fields if f.kind in _PATTERNS)
    for event, (_phase, fields, _doc) in EVENTS.items()
}
_USAGE = EVENTS["model_usage"][1]
_CHOICES = tuple((f.name, f.choices) for f in _USAGE if f.kind == CHOICE)
_POSITIVE = tuple(f.name for f in _USAGE if f.kind == POSITIVE)
_COUNTS = tuple(f.name for f in _USAGE if f.kind == COUNT)
_OPTIONAL_TEXTS = tuple(f.name for f in _USAGE if f.kind == TEXT and not f.required)
_SUBSET_PART, _SUBSET_WHOLE = SUBSET_OF


def _short_text(label: str, value: object, *, required: bool) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str) or not value.strip():
        raise EventError(f"model event requires a non-empty {label}")
    if len(value) > MAX_TEXT or any(ch in value for ch in ("\n", "\r", "\0")):
        raise EventError(f"model event {label} must be one line and at most {MAX_TEXT} characters")


def _count(value: object, least: int = 0) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def validate_model_event(event: str, phase: str | None, data: JsonObject) -> str | None:
    """A model event's data: its field list, phase, patterned ids, usage values, then its texts.
    Returns the checked ``call_id`` of a model event (None for any other event)."""
    if event not in EVENTS:
        return None
    call_id: str | None = None
    wanted_phase = EVENTS[event][0]
    if set(data) - FIELDS_OF[event]:
        raise EventError(f"{event} contains unsupported fields")
    if phase != wanted_phase:
        raise EventError(f"{event} events require phase {wanted_phase}")
    for name, pattern in _PATTERNED[event]:
        value = data.get(name)
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise EventError(f"{event} requires a valid {name}")
        if name == "call_id":
            call_id = value
    if event == "model_usage":
        _validate_usage_values(data)
    for name in required_texts(event):
        _short_text(name, data.get(name), required=True)
    if event == "model_usage":
        for name in _OPTIONAL_TEXTS:
            _short_text(name, data.get(name), required=False)
    return call_id


def _validate_usage_values(data: JsonObject) -> None:
    for name, choices in _CHOICES:
        if data.get(name) not in choices:
            raise EventError(f"model_usage {name} must be {choice_words(choices)}")
    for name in _POSITIVE:
        if data.get(name) is not None and not _count(data[name], 1):
            raise EventError(f"model_usage {name} must be a positive integer")
    state = data.get("usage_state")
    if state == "unavailable" and any(name in data for name in TOKEN_FIELDS):
        raise EventError("unavailable model_usage cannot contain token counts")
    if state == "observed":
        for name in OBSERVED_REQUIRES:
            if name not in data:
                raise EventError(f"observed model_usage requires {name}")
    counts: dict[str, int] = {}  # every count the row holds, each checked
    for name in _COUNTS:
        if name in data:
            value = data[name]
            if not _count(value):
                raise EventError(f"model_usage {name} must be a non-negative integer")
            counts[name] = value
    if _SUBSET_PART in counts and counts[_SUBSET_PART] > counts.get(_SUBSET_WHOLE, 0):
        raise EventError(f"{_SUBSET_PART} must be an output subset")
