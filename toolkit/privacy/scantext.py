"""The text as the rules read it: the original string plus one lower-cased byte view.

Memory: a scan holds the text and one byte per character more (``low_ascii``), plus a
constant. The case-sensitive ASCII view the needles, middles and token runs read is the text
itself when the text is ASCII (a compact string stores one byte per character, which ``str``
methods and ``re`` search as fast as bytes) and is made a chunk at a time where bytes are
needed; only a text with non-ASCII characters keeps a separate ASCII copy (its string holds
two or four bytes a character, which every search would otherwise read).
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from functools import partial

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hook's cold start
    from toolkit.privacy.rules import LazyPattern

# text prepared a chunk at a time: the lower-cased view of a long ASCII text is filled from
# chunks of it, and the literal prefilter reads chunks of it, so no whole extra copy is made
CHUNK = 64 * 1024


class ScanText:
    """One text as the rules read it, prepared once per scan.

    The *ASCII view* is the text with every non-ASCII character replaced by ``?``: one byte
    per character, so its offsets are character offsets. ``find``, ``contains``, ``hits`` and
    ``ascii_slice`` read it (case-sensitive needles, ASCII patterns, byte slices). For an
    ASCII text it is the text itself; otherwise a bytes copy (``_ascii``).

    ``low_ascii`` is its lower-cased copy in which the four non-ASCII letters that ``re``
    matches case-insensitively to an ASCII letter (``İ`` and ``ı`` to i, ``ſ`` to s, the
    Kelvin sign to k) are that letter, so a lower-case anchor or keyword is found wherever a
    case-insensitive label in a pattern could match, in every text alike. For an ASCII text
    longer than ``CHUNK`` it is a ``bytearray`` filled a chunk at a time (encoding and then
    lowering the whole text held two more copies of it at once).
    """

    __slots__ = ("text", "_ascii", "low_ascii", "_present", "_seeds", "_kept")

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii: bytes | None = None
        self.low_ascii: bytes | bytearray
        if text.isascii():
            if len(text) <= CHUNK:
                self.low_ascii = text.encode("ascii").lower()
            else:
                low = bytearray(len(text))
                for at in range(0, len(text), CHUNK):
                    low[at : at + CHUNK] = text[at : at + CHUNK].encode("ascii").lower()
                self.low_ascii = low
        else:
            self._ascii = data = text.encode("ascii", "replace")
            low_bytes = data.lower()
            folds = [(char, letter) for char, letter in _CASE_FOLDS if char in text]
            if folds:  # rare: patch those characters' places (encoding the text again costs more)
                patched = bytearray(low_bytes)
                for char, letter in folds:
                    at = text.find(char)
                    while at != -1:
                        patched[at] = ord(letter)
                        at = text.find(char, at + 1)
                low_bytes = bytes(patched)
            self.low_ascii = low_bytes
        self._present: frozenset[str] | None = None
        self._seeds: dict[tuple[str, bool], tuple[int, array[int] | None]] = {}
        self._kept = 0  # seed occurrences kept, at most _KEEP

    def find(self, needle: str, start: int = 0, end: int | None = None) -> int:
        """The first offset of the ASCII ``needle`` in the ASCII view (case-sensitive), or -1."""
        if self._ascii is None:
            return self.text.find(needle, start, end)
        return self._ascii.find(needle.encode("ascii"), start, end)

    def contains(self, needle: str) -> bool:
        """Whether the ASCII ``needle`` occurs in the ASCII view (case-sensitive)."""
        return self.find(needle) != -1

    def ascii_slice(self, start: int, end: int) -> bytes:
        """The ASCII view from ``start`` to ``end``, as bytes (a copy of that part only)."""
        if self._ascii is None:
            return self.text[start:end].encode("ascii")
        return self._ascii[start:end]

    def ascii_bytes(self) -> bytes:
        """The whole ASCII view as bytes: a copy of an ASCII text (tests and tools; a scan
        reads the view through the methods above)."""
        return self.text.encode("ascii") if self._ascii is None else self._ascii

    def hits(self, pattern: LazyPattern) -> Iterator[tuple[int, int]]:
        """(start, end) of each match of an ASCII ``pattern`` in the ASCII view, as
        ``pattern.bytes_compiled.finditer`` over the view's bytes gives them. Over an ASCII
        text the pattern runs on the text compiled with ``re.ASCII``, whose classes, escapes
        and case folding are then exactly those of the bytes pattern."""
        if self._ascii is not None:
            for found in pattern.bytes_compiled.finditer(self._ascii):
                yield found.span()
            return
        key = (pattern.source, pattern.flags)
        compiled = _ASCII_PATTERNS.get(key)
        if compiled is None:
            compiled = _ASCII_PATTERNS[key] = re.compile(pattern.source, pattern.flags | re.ASCII)
        for hit in compiled.finditer(self.text):
            yield hit.span()

    def has_keyword(self, words: tuple[str, ...]) -> bool:
        """Whether one of the lower-case ``words`` occurs in the lower-cased text."""
        return any(w in self.low_ascii for w in encoded(words))

    def has_literal(self, words: tuple[str, ...]) -> bool:
        """Whether one of the case-sensitive ``words`` occurs (every rule literal is found in one
        combined prefilter, the first time any rule asks)."""
        if self._present is None:
            self._present = self._literals()
        return not self._present.isdisjoint(words)

    def _literals(self) -> frozenset[str]:
        """Every rule literal that occurs in the ASCII view: found in the view's bytes, or, in a
        long ASCII text, in chunks of it that overlap by the longest literal less one (so each
        occurrence lies whole in one chunk)."""
        from toolkit.privacy.needles import longest_literal, present_literals

        if self._ascii is not None:
            return present_literals(self._ascii)
        text = self.text
        if len(text) <= CHUNK:
            return present_literals(text.encode("ascii"))
        overlap = longest_literal() - 1
        found: set[str] = set()
        for at in range(0, len(text), CHUNK):
            found |= present_literals(text[at : at + CHUNK + overlap].encode("ascii"))
            if at + CHUNK + overlap >= len(text):
                break
        return frozenset(found)

    def seed_starts(self, seeds: tuple[str, ...], case: bool, near: tuple[int, int]) -> Iterator[int] | None:
        """Every position ``near[0]`` to ``near[1]`` characters before an occurrence of one of
        ``seeds`` (in the ASCII view when ``case``, in the lower-cased view otherwise), ascending
        and once each; None when the seeds occur more than once per 16 characters (hostile
        input: the rule then makes one pass of its pattern, linear too).

        Made a region of the text at a time (``_near_kept``). A seed's occurrences are found
        once per text and kept while they fit in ``_KEEP`` (per text, not per seed); past that
        they are found again as the regions need them (``_near_found``): an array of every
        occurrence of ``password`` was a sixth of a line of ``password=`` pairs."""
        limit = len(self.text) // 16 + 64
        total = 0
        kept: list[array[int]] = []
        for seed in seeds:
            count, occurrences = self._occurrences(seed, case, limit)
            total += count
            if total > limit:
                return None
            if occurrences is not None:
                kept.append(occurrences)
        if len(kept) == len(seeds):
            return _near_kept(kept, *near)
        return _near_found([self._finder(seed, case) for seed in seeds], *near)

    def _finder(self, needle: str, case: bool) -> Callable[[int], int]:
        """``find(start)``: the next offset of ``needle`` in the view ``case`` names, or -1."""
        if case and self._ascii is None:
            return partial(self.text.find, needle)
        haystack = self._ascii if case and self._ascii is not None else self.low_ascii
        return partial(haystack.find, needle.encode("ascii"))

    def _occurrences(self, needle: str, case: bool, limit: int) -> tuple[int, array[int] | None]:
        """(how many times ``needle`` occurs, overlapping ones too, counted up to ``limit`` + 1;
        its offsets, or None when they did not fit in what is left of ``_KEEP``). Found once per
        text and shared by the rules that seed on it ("secret": the AWS secret key and the
        assignments)."""
        key = (needle, case)
        known = self._seeds.get(key)
        if known is not None:
            return known
        find = self._finder(needle, case)
        room = _KEEP - self._kept
        found = array("i" if len(self.text) < 1 << 31 else "q")
        count = 0
        at = find(0)
        while at != -1 and count <= limit:
            if count < room:
                found.append(at)
            count += 1
            at = find(at + 1)
        if count <= room:
            self._kept += count
            known = (count, found)
        else:
            known = (count, None)
        self._seeds[key] = known
        return known


# seed occurrences a text keeps (4 bytes each), shared by the rules seeding on them; a seed
# whose occurrences do not fit is found again, a region at a time, by each rule that needs it
_KEEP = 64 * 1024
_REGION = 8 * 1024  # text whose candidate starts are gathered (and sorted) at a time


def _near_kept(occurrences: list[array[int]], low: int, high: int) -> Iterator[int]:
    """Every position ``low`` to ``high`` characters before one of the ``occurrences`` (one
    ascending array per seed), ascending and once each. Gathered a region of the text at a time,
    from the first occurrence not yet used (each window cut where the last region's starts
    ended): a region's starts are few however long the text is, and each is made in C (a set
    updated with a range)."""
    used = [0] * len(occurrences)
    following = 0
    while True:
        pending = [hits[k] for hits, k in zip(occurrences, used, strict=True) if k < len(hits)]
        if not pending:
            return
        stop = min(pending) + _REGION
        found: set[int] = set()
        for index, hits in enumerate(occurrences):
            first = used[index]
            used[index] = last = bisect_left(hits, stop, first)
            for at in hits[first:last]:
                found.update(range(max(following, at - high, 0), at - low + 1))
        if found:
            starts = sorted(found)
            following = starts[-1] + 1
            yield from starts


def _near_found(finds: list[Callable[[int], int]], low: int, high: int) -> Iterator[int]:
    """What ``_near_kept`` gives, from seeds found as the regions need them (``find(start)``:
    the next occurrence from ``start``, or -1) instead of arrays of every occurrence."""
    following = 0
    upcoming = [find(0) for find in finds]
    while True:
        pending = [at for at in upcoming if at != -1]
        if not pending:
            return
        stop = min(pending) + _REGION
        found: set[int] = set()
        for index, find in enumerate(finds):
            at = upcoming[index]
            while at != -1 and at < stop:
                found.update(range(max(following, at - high, 0), at - low + 1))
                at = find(at + 1)
            upcoming[index] = at
        if found:
            starts = sorted(found)
            following = starts[-1] + 1
            yield from starts


# the non-ASCII characters re's IGNORECASE matches to an ASCII letter (and nothing else does)
_CASE_FOLDS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))


_ASCII_PATTERNS: dict[tuple[str, int], re.Pattern[str]] = {}

_ENCODED: dict[tuple[str, ...], tuple[bytes, ...]] = {}


def encoded(words: tuple[str, ...]) -> tuple[bytes, ...]:
    """``words`` as UTF-8 bytes, encoded once per tuple."""
    found = _ENCODED.get(words)
    if found is None:
        found = _ENCODED[words] = tuple(w.encode("utf-8") for w in words)
    return found
