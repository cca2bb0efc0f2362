"""A lean reader of Claude Code log lines: the reader's allowlisted fields, standard library only.

The status line refreshes after every model call and the agent waits for it; importing
``msgspec`` and the typed reader costs more than reading the appended lines. This scanner walks
one line's JSON with a compiled token pattern and takes only the fields ``claude``'s structs
name, with the same types: ``timestamp``, ``sessionId``, ``requestId``, ``version``,
``isSidechain``, ``subtype`` and, in ``message``, ``id``, ``model``, ``stop_reason`` and the
``usage`` numbers. ``cwd`` is checked for null, never read. Everything else (content, tool input
and output, summaries) is passed over by the pattern and never becomes a Python object; the
skipped values are still checked to be well-formed JSON, as the typed decoder checks them.

A line the scanner is not sure to read as the typed decoder does (a value of another type, an
escaped key or string where a field is read, a nesting deeper than ``MAX_DEPTH``, a number out of
the grammar, bytes that are not UTF-8 in a read string) raises ``Unsure``: the caller decodes that
line with ``claude``'s decoder instead. The counting rules themselves are ``rules``, shared with
the reader; ``tests/usage/test_usage_lean.py`` compares the two on the same logs.
"""

from __future__ import annotations

import re

from toolkit.core.errors import InvalidInput

TYPE_CHECKING = False  # typing is not imported on the status line's path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeAlias

    # A reader takes (data, pos, end) at a value (before its blanks) and returns (value, past it).
    _Reader: TypeAlias = Callable[[bytes, int, int], tuple[Any, int]]

MAX_DEPTH = 64  # nesting passed over here; deeper lines go to the typed decoder


class Unsure(InvalidInput):
    """This line is read by the typed decoder instead (caught by the callers, never shown)."""

    def __init__(self) -> None:
        super().__init__("USAGE_LINE_UNSURE", "the lean reader hands this line to the typed decoder")


class _Unset:
    """A field the line does not have (``msgspec.UNSET`` in the typed structs)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()  # noqa: F821 - a string annotation

# one token after optional blanks: { [ } ] , : " number true false null
_TOKEN = re.compile(
    rb"[ \t\n\r]*(?:(\{)|(\[)|(\})|(\])|(,)|(:)|(\")"
    rb"|(-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)|(true)|(false)|(null))"
)
_OPEN_OBJ, _OPEN_ARR, _CLOSE_OBJ, _CLOSE_ARR, _COMMA, _COLON, _QUOTE, _NUMBER = 1, 2, 3, 4, 5, 6, 7, 8
_TRUE, _FALSE, _NULL = 11, 12, 13
# the rest of a string after its opening quote: no raw control character, only JSON's escapes
_STRING = re.compile(rb'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"')
_END = re.compile(rb"[ \t\n\r]*")
_PLAIN = re.compile(rb'[\x20\x21\x23-\x5b\x5d-\x7e]*"?')  # a string's rest without escapes, in ASCII


def _token(data: bytes, pos: int, end: int) -> re.Match[bytes]:
    found = _TOKEN.match(data, pos, end)
    if found is None:
        raise Unsure
    return found


def _string_end(data: bytes, pos: int, end: int) -> int:
    """Past a string whose opening quote ends just before ``pos``."""
    found = _STRING.match(data, pos, end)
    if found is None:
        raise Unsure
    return found.end()


def _skip(data: bytes, pos: int, end: int, depth: int) -> int:
    """Past one well-formed JSON value (after blanks) that is not read."""
    tok = _token(data, pos, end)
    kind, pos = tok.lastindex, tok.end()
    if kind == _QUOTE:
        return _string_end(data, pos, end)
    if kind == _OPEN_OBJ:
        return _skip_members(data, pos, end, depth + 1)
    if kind == _OPEN_ARR:
        return _skip_items(data, pos, end, depth + 1)
    if kind in (_NUMBER, _TRUE, _FALSE, _NULL):
        return pos
    raise Unsure


def _skip_members(data: bytes, pos: int, end: int, depth: int) -> int:
    if depth > MAX_DEPTH:
        raise Unsure
    tok = _token(data, pos, end)
    if tok.lastindex == _CLOSE_OBJ:
        return tok.end()
    while True:
        if tok.lastindex != _QUOTE:
            raise Unsure
        colon = _token(data, _string_end(data, tok.end(), end), end)
        if colon.lastindex != _COLON:
            raise Unsure
        pos = _skip(data, colon.end(), end, depth)
        tok = _token(data, pos, end)
        if tok.lastindex == _CLOSE_OBJ:
            return tok.end()
        if tok.lastindex != _COMMA:
            raise Unsure
        tok = _token(data, tok.end(), end)


def _skip_items(data: bytes, pos: int, end: int, depth: int) -> int:
    if depth > MAX_DEPTH:
        raise Unsure
    tok = _token(data, pos, end)
    if tok.lastindex == _CLOSE_ARR:
        return tok.end()
    pos = _skip(data, pos, end, depth)
    while True:
        tok = _token(data, pos, end)
        if tok.lastindex == _CLOSE_ARR:
            return tok.end()
        if tok.lastindex != _COMMA:
            raise Unsure
        pos = _skip(data, tok.end(), end, depth)


# -- the fields read, with the typed structs' types ----------------------------------------------------


def _text(data: bytes, pos: int, end: int, *, keep: bool, nullable: bool = True) -> tuple[Any, int]:
    tok = _token(data, pos, end)
    kind = tok.lastindex
    if kind == _NULL and nullable:
        return None, tok.end()
    if kind != _QUOTE:
        raise Unsure  # another type: the typed decoder rejects the line, and says so
    start = tok.end()
    stop = _string_end(data, start, end)
    if not keep:
        # checked where it lies, never copied: no escape, and ASCII (the typed decoder checks UTF-8)
        if _PLAIN.match(data, start, end).end() != stop:  # type: ignore[union-attr]
            raise Unsure
        return "", stop
    raw = data[start : stop - 1]
    if b"\\" in raw:
        raise Unsure  # an escape: the typed decoder reads it
    try:
        return raw.decode("utf-8"), stop
    except UnicodeDecodeError:
        raise Unsure from None


def _str(data: bytes, pos: int, end: int) -> tuple[Any, int]:
    return _text(data, pos, end, keep=True)


def _str_unread(data: bytes, pos: int, end: int) -> tuple[Any, int]:
    """A string (or null) whose value is not needed: checked, never made a Python string."""
    return _text(data, pos, end, keep=False)


def _present(data: bytes, pos: int, end: int) -> tuple[Any, int]:
    """``cwd``: whether it is null or a string; its value (a path) is never read here."""
    value, pos = _text(data, pos, end, keep=False)
    return (None if value is None else "?"), pos


def _bool(data: bytes, pos: int, end: int) -> tuple[Any, int]:
    tok = _token(data, pos, end)
    kind = tok.lastindex
    if kind == _TRUE:
        return True, tok.end()
    if kind == _FALSE:
        return False, tok.end()
    if kind == _NULL:
        return None, tok.end()
    raise Unsure


def _number(data: bytes, pos: int, end: int, nullable: bool) -> tuple[Any, int]:
    tok = _token(data, pos, end)
    kind = tok.lastindex
    if kind == _NULL and nullable:
        return None, tok.end()
    if kind != _NUMBER or tok.start(9) != -1 or tok.start(10) != -1:
        raise Unsure  # not an integer
    return int(data[tok.start(8) : tok.end()]), tok.end()


def _int(data: bytes, pos: int, end: int) -> tuple[Any, int]:
    return _number(data, pos, end, False)


def _int_or_null(data: bytes, pos: int, end: int) -> tuple[Any, int]:
    return _number(data, pos, end, True)


def _object(data: bytes, pos: int, end: int, target: Any, fields: dict[bytes, tuple[str, _Reader]]) -> int:
    """The members of an object (its ``{`` just before ``pos``): the named ones read into
    ``target``'s attributes (the last of a repeated name wins, as in the typed decoder), the others
    passed over."""
    tok = _token(data, pos, end)
    if tok.lastindex == _CLOSE_OBJ:
        return tok.end()
    while True:
        if tok.lastindex != _QUOTE:
            raise Unsure
        start = tok.end()
        stop = _string_end(data, start, end)
        colon = _token(data, stop, end)
        if colon.lastindex != _COLON:
            raise Unsure
        pos = colon.end()
        name = data[start : stop - 1]
        field = fields.get(name)
        if field is not None:
            value, pos = field[1](data, pos, end)
            setattr(target, field[0], value)
        else:
            if b"\\" in name:
                raise Unsure  # an escaped name might spell a field's
            pos = _skip(data, pos, end, 2)
        tok = _token(data, pos, end)
        if tok.lastindex == _CLOSE_OBJ:
            return tok.end()
        if tok.lastindex != _COMMA:
            raise Unsure
        tok = _token(data, tok.end(), end)


def _struct(make: Callable[[], Any], fields: dict[bytes, tuple[str, _Reader]]) -> _Reader:
    """A reader of an object field (or null) into a new ``make()``."""

    def read(data: bytes, pos: int, end: int) -> tuple[Any, int]:
        tok = _token(data, pos, end)
        if tok.lastindex == _NULL:
            return None, tok.end()
        if tok.lastindex != _OPEN_OBJ:
            raise Unsure
        target = make()
        return target, _object(data, tok.end(), end, target, fields)

    return read


class CacheCreation:
    __slots__ = ("ephemeral_1h_input_tokens", "ephemeral_5m_input_tokens")

    def __init__(self) -> None:
        self.ephemeral_5m_input_tokens = 0
        self.ephemeral_1h_input_tokens = 0


class Usage:
    __slots__ = (
        "cache_creation",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "input_tokens",
        "output_tokens",
        "speed",
    )

    def __init__(self) -> None:
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_creation_input_tokens: int | None = 0
        self.cache_read_input_tokens: int | None = 0
        self.cache_creation: CacheCreation | None = None
        self.speed: Any = UNSET


class Message:
    __slots__ = ("id", "model", "stop_reason", "usage")

    def __init__(self) -> None:
        self.id: Any = UNSET
        self.model: Any = UNSET
        self.stop_reason: str | None = None
        self.usage: Usage | None = None


class Line:
    __slots__ = (
        "compactMetadata",
        "cwd",
        "isSidechain",
        "logicalParentUuid",
        "message",
        "requestId",
        "sessionId",
        "subtype",
        "timestamp",
        "type",
        "uuid",
        "version",
    )

    def __init__(self) -> None:
        self.type: str | None = None
        self.subtype: str | None = None
        self.timestamp: str | None = None
        self.uuid: str | None = None
        self.logicalParentUuid: str | None = None
        self.sessionId: Any = UNSET
        self.requestId: Any = UNSET
        self.version: Any = UNSET
        self.cwd: Any = UNSET
        self.isSidechain: bool | None = None
        self.message: Message | None = None
        self.compactMetadata: object | None = None


class _Compact:
    __slots__ = ("preTokens", "trigger")

    def __init__(self) -> None:
        self.trigger: str | None = None
        self.preTokens: int | None = None


def _fields(readers: dict[str, _Reader]) -> dict[bytes, tuple[str, _Reader]]:
    """A struct's allowlist keyed by the field's bytes as they stand in a line: (name, reader)."""
    return {name.encode(): (name, reader) for name, reader in readers.items()}


_CACHE_FIELDS = _fields(
    {
        "ephemeral_5m_input_tokens": _int,
        "ephemeral_1h_input_tokens": _int,
    }
)
_USAGE_FIELDS = _fields(
    {
        "input_tokens": _int,
        "output_tokens": _int,
        "cache_creation_input_tokens": _int_or_null,
        "cache_read_input_tokens": _int_or_null,
        "cache_creation": _struct(CacheCreation, _CACHE_FIELDS),
        "speed": _str,
    }
)
_MESSAGE_FIELDS = _fields(
    {
        "id": _str,
        "model": _str,
        "stop_reason": _str_unread,
        "usage": _struct(Usage, _USAGE_FIELDS),
    }
)
_COMPACT_FIELDS = _fields(
    {
        "trigger": _str_unread,
        "preTokens": _int_or_null,
    }
)
_LINE_FIELDS = _fields(
    {
        "type": _str_unread,
        "subtype": _str,
        "timestamp": _str,
        "uuid": _str_unread,
        "logicalParentUuid": _str_unread,
        "sessionId": _str,
        "requestId": _str,
        "version": _str,
        "cwd": _present,
        "isSidechain": _bool,
        "message": _struct(Message, _MESSAGE_FIELDS),
        "compactMetadata": _struct(_Compact, _COMPACT_FIELDS),
    }
)


def parse_line(data: bytes, start: int = 0, end: int | None = None) -> Line:
    """The allowlisted fields of the line ``data[start:end]`` (one JSON object); ``Unsure`` when the
    typed decoder must read it."""
    stop = len(data) if end is None else end
    tok = _token(data, start, stop)
    if tok.lastindex != _OPEN_OBJ:
        raise Unsure  # not an object: the typed decoder rejects it
    line = Line()
    pos = _object(data, tok.end(), stop, line, _LINE_FIELDS)
    if _END.match(data, pos, stop).end() != stop:  # type: ignore[union-attr]
        raise Unsure  # trailing characters
    return line


class _Stamp:
    __slots__ = ("timestamp",)

    def __init__(self) -> None:
        self.timestamp: str | None = None


_STAMP_FIELDS: dict[bytes, tuple[str, _Reader]] = {b"timestamp": ("timestamp", _str)}


def stamp_of(line: bytes) -> str | None:
    """A line's own top-level ``timestamp`` (the reader's ``claude._stamp_of`` without its type
    check of the rest); None when there is none or the line is not sure to read."""
    try:
        tok = _token(line, 0, len(line))
        if tok.lastindex != _OPEN_OBJ:
            return None
        found = _Stamp()
        pos = _object(line, tok.end(), len(line), found, _STAMP_FIELDS)
        if _END.match(line, pos).end() != len(line):  # type: ignore[union-attr]
            return None
    except Unsure:
        return None
    return found.timestamp
