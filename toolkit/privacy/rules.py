"""The rule record shared by every detector module, and the span a rule reports."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from toolkit.privacy.types import ALL_CONTEXTS, Category, Context

Check = Callable[[re.Match[str]], bool]


@dataclass(frozen=True)
class Rule:
    """One regex detector.

    ``group`` names the part of the match that is reported (and masked, and fingerprinted);
    ``check`` rejects look-alikes; ``keywords`` (lower case) are a cheap pre-filter over the
    whole text; ``priority`` decides which of two overlapping findings is kept. A ``heuristic``
    rule (entropy, assignments, flags) has no fixed format and does not run on generated data
    files (``FileKind.DATA``). ``literals`` are case-sensitive pre-checks over the original text
    (one fast substring search each), for rules whose pattern cannot start with one literal.

    Linear time: every pattern is written so that no position is tried more than a bounded
    number of times: bodies use possessive quantifiers (``{20,200}+``), a token that must start
    at a boundary says so with a look-behind placed *after* its literal prefix (see ``lead``),
    so a run of repeated prefixes is rejected in constant time per position.
    """

    id: str
    category: Category
    pattern: LazyPattern
    group: int | str = 0
    check: Check | None = None
    keywords: tuple[str, ...] = ()
    contexts: frozenset[Context] = ALL_CONTEXTS
    priority: int = 50
    doc: str = field(default="", compare=False)
    boundary: frozenset[str] = frozenset()
    anchor: LazyPattern | None = None
    heuristic: bool = False
    literals: tuple[str, ...] = ()

    @property
    def keyword_bytes(self) -> tuple[bytes, ...]:
        return _encoded(self.keywords)

    @property
    def literal_bytes(self) -> tuple[bytes, ...]:
        return _encoded(self.literals)

    def matches(self, text: str, low: str | None = None) -> Iterator[re.Match[str]]:
        """Non-overlapping matches; with an ``anchor`` only where it occurs.

        ``anchor`` is a case-sensitive regex of lower-case literals run over the lower-cased
        text: ``re`` skips ahead to a literal far faster than it tries a case-insensitive
        alternation at every position. The full pattern is then matched at each anchor.
        """
        if self.anchor is None or low is None or len(low) != len(text):
            yield from self.pattern.finditer(text)
            return
        compiled = self.pattern.compiled
        last_end = 0
        for start in self.anchor_hits(low):
            if start < last_end:
                continue
            match = compiled.match(text, start)
            if match is not None:
                last_end = max(match.end(), start + 1)
                yield match

    def anchor_hits(self, low: str) -> Iterator[int]:
        """Offsets of the anchor in ``low``. A text holding a non-ASCII character is stored at
        two or four bytes a character, where ``re`` runs several times slower; its anchor is
        then searched in the UTF-8 bytes (the engine encodes them once, ``LOWER_BYTES``) and
        byte offsets are turned back into character offsets incrementally."""
        assert self.anchor is not None
        cached = LOWER_BYTES[1]
        encoded = cached if LOWER_BYTES[0] is low and isinstance(cached, bytes) else None
        if encoded is None or low.isascii():
            for hit in self.anchor.finditer(low):
                yield hit.start()
            return
        byte_at, char_at = 0, 0
        for byte_hit in self.anchor.bytes_compiled.finditer(encoded):
            char_at += len(encoded[byte_at : byte_hit.start()].decode("utf-8", "surrogatepass"))
            byte_at = byte_hit.start()
            yield char_at

    def spans(self, text: str, low: str | None = None) -> Iterator[tuple[int, int]]:
        """Absolute (start, end) offsets of every accepted match in ``text``."""
        for match in self.matches(text, low):
            if not self.starts_token(text, match.start()):
                continue
            if self.check is not None and not self.check(match):
                continue
            start, end = match.span(self.group)
            if end > start:
                yield start, end

    def starts_token(self, text: str, start: int) -> bool:
        """The match is not glued to a preceding character of ``boundary``.

        A leading look-behind in the regex would stop ``re`` from skipping ahead to the
        pattern's first literal or character class, which makes scanning several times slower.
        """
        return not self.boundary or start == 0 or text[start - 1] not in self.boundary


_ENCODED: dict[tuple[str, ...], tuple[bytes, ...]] = {}


def _encoded(words: tuple[str, ...]) -> tuple[bytes, ...]:
    found = _ENCODED.get(words)
    if found is None:
        found = _ENCODED[words] = tuple(w.encode("utf-8") for w in words)
    return found


@dataclass(frozen=True)
class LineRule:
    """A detector that needs to see whole lines (multi-line chat dumps, JSON records)."""

    id: str
    category: Category
    find: Callable[[list[str]], Iterator[tuple[int, int, int]]]  # (line index, start, end)
    keywords: tuple[str, ...] = ()
    contexts: frozenset[Context] = ALL_CONTEXTS
    priority: int = 50
    doc: str = field(default="", compare=False)


WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
ALNUM = WORD - {"_"}


# (lower-cased text, its UTF-8 bytes) of the scan in progress, set by the engine (one scan at
# a time per process), so anchors can search bytes without each rule encoding the text again.
LOWER_BYTES: list[object] = [None, None]


class LazyPattern:
    """A regex compiled on first use: most rules never run on a small file (their keywords are
    absent), so the hook's cold start does not pay for compiling them."""

    __slots__ = ("source", "flags", "_compiled", "_bytes")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        self._bytes: re.Pattern[bytes] | None = None

    @property
    def bytes_compiled(self) -> re.Pattern[bytes]:
        """The same pattern over bytes (anchors: ASCII literals and classes only)."""
        if self._bytes is None:
            self._bytes = re.compile(self.source.encode("ascii"), self.flags)
        return self._bytes

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.compiled.search(text, pos)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def sub(self, repl: str, text: str) -> str:
        return self.compiled.sub(repl, text)


def lead(prefixes: tuple[str, ...] | list[str], before: str = "A-Za-z0-9_") -> str:
    """A regex for literal ``prefixes`` that are not glued to a preceding ``[before]`` character.

    The look-behind follows the literal, so ``re`` still jumps ahead to the literal, and a run
    such as ``sk-sk-sk-...`` fails in constant time at every repeat instead of reading a
    bounded body at each one.
    """
    parts = []
    for prefix in prefixes:
        literal = re.escape(prefix)
        parts.append(f"{literal}(?<![{before}]{literal})")
    return "(?:" + "|".join(parts) + ")"


def lazy(source: str, flags: int = 0) -> LazyPattern:
    """Declare a pattern that compiles when first used."""
    return LazyPattern(source, flags)
