"""The rule record shared by every detector module, and the span a rule reports."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from toolkit.privacy.scantext import ScanText
from toolkit.privacy.types import ALL_CONTEXTS, Category, Context

Check = Callable[[re.Match[str]], bool]


@dataclass(frozen=True, kw_only=True)
class Tuning:
    """How a rule is run cheaply: where it runs at all and where its pattern is tried. None of it
    is what the rule finds (``Rule``); a rule without tuning runs its pattern over every text.

    ``keywords`` (lower case) are a pre-filter over the lower-cased text, ``literals`` a
    case-sensitive one (a provider's prefixes, or the gate words a family is written under): the
    rule runs only when one of its keywords and one of its literals occur, and the engine finds
    which occur for every rule at once (``toolkit/privacy/needles.py``), not one search per word.

    ``seeds`` locate where a match can start, so the pattern is tried only there instead of at
    every position: each match (each ``anchor`` match when the rule has an anchor) starts
    ``near[0]`` to ``near[1]`` characters before an occurrence of a seed. Seeds are searched in
    the original text when ``seed_case`` is true (provider prefixes), in the lower-cased text
    otherwise (labels such as ``password``). Where seeds are dense (hostile input), the rule
    falls back to one pass of its pattern, which is linear too. An ``anchor`` without seeds (a
    case-sensitive regex of lower-case literals run over the lower-cased text) is where the
    pattern is tried instead.

    Every word is ASCII without ``?`` (needles are searched in an ASCII view of the text where
    every other character is ``?``); keywords and lower-case seeds are lower case. ``Rule``
    checks this when it is made, naming the rule.
    """

    keywords: tuple[str, ...] = ()
    literals: tuple[str, ...] = ()
    seeds: tuple[str, ...] = ()
    seed_case: bool = False
    near: tuple[int, int] = (0, 0)
    anchor: LazyPattern | None = None


UNTUNED = Tuning()


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One regex detector: what it finds (its meaning), and how it is run fast (``tuning``).

    Meaning: ``id`` (what a finding carries, and what an allowlist entry or ``workgroup: allow``
    names), ``category``, ``pattern``, ``group`` (the part of the match that is reported, masked
    and fingerprinted), ``check`` (rejects look-alikes), ``boundary`` (characters the match must
    not be glued to), ``contexts`` it applies in, ``priority`` (which of two overlapping findings
    is kept), ``heuristic`` (no fixed format: entropy, assignments, flags; it does not run on
    generated data files, ``FileKind.DATA``) and ``doc`` (a note for readers). A new rule states
    only what differs from the defaults.

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
    boundary: frozenset[str] = frozenset()
    contexts: frozenset[Context] = ALL_CONTEXTS
    priority: int = 50
    heuristic: bool = False
    doc: str = field(default="", compare=False)
    tuning: Tuning = UNTUNED

    def __post_init__(self) -> None:
        tuning = self.tuning
        for word in (*tuning.keywords, *tuning.literals, *tuning.seeds):
            # needles are searched in an ASCII view of the text where every other character is "?"
            if not word.isascii() or "?" in word or not word:
                raise ValueError(f"{self.id}: needle {word!r} must be ASCII without '?'")
        if any(w != w.lower() for w in tuning.keywords) or (
            not tuning.seed_case and any(w != w.lower() for w in tuning.seeds)
        ):
            raise ValueError(f"{self.id}: keywords and lower-case seeds must be lower case")

    def applies(self, view: ScanText) -> bool:
        """Whether the rule can match ``view`` at all: one of its keywords and literals occurs."""
        tuning = self.tuning
        if tuning.keywords and not view.has_keyword(tuning.keywords):
            return False
        return not tuning.literals or view.has_literal(tuning.literals)

    def matches(self, view: ScanText) -> Iterator[re.Match[str]]:
        """Non-overlapping matches, leftmost first, exactly as ``finditer`` would give them.

        With ``seeds`` the pattern (or its ``anchor``) is tried only at the positions the seeds
        allow; with an ``anchor`` (a case-sensitive regex of lower-case literals run over the
        lower-cased text) the full pattern is matched only where the anchor matches.
        """
        starts = self._seed_starts(view) if self.tuning.seeds else None
        if starts is not None:
            yield from self._match_at(view, starts, seeded=True)
        elif self.tuning.anchor is not None:
            yield from self._match_at(view, self._anchor_starts(view), seeded=False)
        else:
            yield from self.pattern.finditer(view.text)

    def _seed_starts(self, view: ScanText) -> Iterator[int] | None:
        """Candidate starts, ascending and each once, or None when the seeds are too dense to be
        worth it (``ScanText.seed_starts``)."""
        return view.seed_starts(self.tuning.seeds, self.tuning.seed_case, self.tuning.near)

    def _anchor_starts(self, view: ScanText) -> Iterator[int]:
        assert self.tuning.anchor is not None
        for hit in self.tuning.anchor.bytes_compiled.finditer(view.low_ascii):
            yield hit.start()

    def _match_at(self, view: ScanText, starts: Iterable[int], *, seeded: bool) -> Iterator[re.Match[str]]:
        """Matches of the pattern at ``starts`` (ascending), skipping starts inside the previous
        match; ``seeded`` starts are candidates for the anchor, which is matched there first
        (skipping candidates inside the previous anchor match, as ``finditer`` does). The
        patterns compile at the first candidate that needs them: in a small text most seeded
        rules have none, and a hook's first scan then compiles nothing for them."""
        text = view.text
        compiled: re.Pattern[str] | None = None
        anchored = self.tuning.anchor if seeded else None
        anchor: re.Pattern[bytes] | None = None
        anchor_end = 0
        last_end = 0
        for start in starts:
            if anchored is not None:
                if start < anchor_end:
                    continue  # inside the previous anchor match, as finditer would skip it
                if anchor is None:
                    anchor = anchored.bytes_compiled
                hit = anchor.match(view.low_ascii, start)
                if hit is None:
                    continue
                anchor_end = hit.end()
            if start < last_end:
                continue
            if compiled is None:
                compiled = self.pattern.compiled
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


@dataclass(frozen=True, kw_only=True)
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
