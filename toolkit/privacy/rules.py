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
    files (``FileKind.DATA``).

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
        for hit in self.anchor.finditer(low):
            if hit.start() < last_end:
                continue
            match = compiled.match(text, hit.start())
            if match is not None:
                last_end = max(match.end(), hit.start() + 1)
                yield match

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


class LazyPattern:
    """A regex compiled on first use: most rules never run on a small file (their keywords are
    absent), so the hook's cold start does not pay for compiling them."""

    __slots__ = ("source", "flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

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
