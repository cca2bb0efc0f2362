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
    whole text; ``priority`` decides which of two overlapping findings is kept.
    """

    id: str
    category: Category
    pattern: re.Pattern[str]
    group: int | str = 0
    check: Check | None = None
    keywords: tuple[str, ...] = ()
    contexts: frozenset[Context] = ALL_CONTEXTS
    priority: int = 50
    doc: str = field(default="", compare=False)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Absolute (start, end) offsets of every accepted match in ``text``."""
        for match in self.pattern.finditer(text):
            if self.check is not None and not self.check(match):
                continue
            start, end = match.span(self.group)
            if end > start:
                yield start, end


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
