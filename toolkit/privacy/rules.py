"""The rule record shared by every detector module, and the span a rule reports."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from toolkit.privacy.scantext import ScanText
from toolkit.privacy.types import ALL_CONTEXTS, Category, Context

Check = Callable[[re.Match[str]], bool]


@dataclass(frozen=True)
class Rule:
    """One regex detector.

    ``group`` names the part of the match that is reported (and masked, and fingerprinted);
    ``check`` rejects look-alikes; ``keywords`` (lower case) are a cheap pre-filter over the
    lower-cased text; ``priority`` decides which of two overlapping findings is kept. A
    ``heuristic`` rule (entropy, assignments, flags) has no fixed format and does not run on
    generated data files (``FileKind.DATA``). ``literals`` are case-sensitive pre-checks: the
    rule runs only when one of them occurs in the text, and the engine finds which occur for
    every rule at once (``toolkit/privacy/needles.py``), not one search per literal.

    ``seeds`` locate where a match can start, so the pattern is tried only there instead of at
    every position: each match (each ``anchor`` match when the rule has an anchor) starts
    ``near[0]`` to ``near[1]`` characters before an occurrence of a seed. Seeds are searched in
    the original text when ``seed_case`` is true (provider prefixes), in the lower-cased text
    otherwise (labels such as ``password``). Where seeds are dense (hostile input), the rule
    falls back to one pass of its pattern, which is linear too.

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
    seeds: tuple[str, ...] = ()
    seed_case: bool = False
    near: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        for word in (*self.keywords, *self.literals, *self.seeds):
            # needles are searched in an ASCII view of the text where every other character is "?"
            if not word.isascii() or "?" in word or not word:
                raise ValueError(f"{self.id}: needle {word!r} must be ASCII without '?'")
        if any(w != w.lower() for w in self.keywords) or (
            not self.seed_case and any(w != w.lower() for w in self.seeds)
        ):
            raise ValueError(f"{self.id}: keywords and lower-case seeds must be lower case")

    def applies(self, view: ScanText) -> bool:
        """Whether the rule can match ``view`` at all: one of its keywords and literals occurs."""
        if self.keywords and not view.has_keyword(self.keywords):
            return False
        return not self.literals or view.has_literal(self.literals)

    def matches(self, view: ScanText) -> Iterator[re.Match[str]]:
        """Non-overlapping matches, leftmost first, exactly as ``finditer`` would give them.

        With ``seeds`` the pattern (or its ``anchor``) is tried only at the positions the seeds
        allow; with an ``anchor`` (a case-sensitive regex of lower-case literals run over the
        lower-cased text) the full pattern is matched only where the anchor matches.
        """
        starts = self._seed_starts(view) if self.seeds else None
        if starts is not None:
            yield from self._match_at(view, starts, seeded=True)
        elif self.anchor is not None:
            yield from self._match_at(view, self._anchor_starts(view), seeded=False)
        else:
            yield from self.pattern.finditer(view.text)

    def _seed_starts(self, view: ScanText) -> Iterator[int] | None:
        """Candidate starts, ascending and each once, or None when the seeds are too dense to be
        worth it (``ScanText.seed_starts``)."""
        return view.seed_starts(self.seeds, self.seed_case, self.near)

    def _anchor_starts(self, view: ScanText) -> Iterator[int]:
        assert self.anchor is not None
        for hit in self.anchor.bytes_compiled.finditer(view.low_ascii):
            yield hit.start()

    def _match_at(self, view: ScanText, starts: Iterable[int], *, seeded: bool) -> Iterator[re.Match[str]]:
        """Matches of the pattern at ``starts`` (ascending), skipping starts inside the previous
        match; ``seeded`` starts are candidates for the anchor, which is matched there first
        (skipping candidates inside the previous anchor match, as ``finditer`` does)."""
        text = view.text
        compiled = self.pattern.compiled
        anchor = self.anchor.bytes_compiled if seeded and self.anchor is not None else None
        anchor_end = 0
        last_end = 0
        for start in starts:
            if anchor is not None:
                if start < anchor_end:
                    continue  # inside the previous anchor match, as finditer would skip it
                hit = anchor.match(view.low_ascii, start)
                if hit is None:
                    continue
                anchor_end = hit.end()
            if start < last_end:
                continue
            match = compiled.match(text, start)
            if match is not None:
                last_end = max(match.end(), start + 1)
                yield match

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        """Absolute (start, end) offsets of every accepted match in the text."""
        text = view.text
        for match in self.matches(view):
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
    find: Callable[[str], Iterator[tuple[int, int]]]  # (start, end) in the text, each within one line
    keywords: tuple[str, ...] = ()
    contexts: frozenset[Context] = ALL_CONTEXTS
    priority: int = 50
    doc: str = field(default="", compare=False)


WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
ALNUM = WORD - {"_"}


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
