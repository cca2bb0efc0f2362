"""The text as the rules read it: the original string plus the byte views every needle,
anchor and ASCII pattern searches."""

from __future__ import annotations

from array import array


class ScanText:
    """One text as the rules read it, prepared once per scan.

    ``ascii`` is the text with every non-ASCII character replaced by ``?``: one byte per
    character, so byte offsets are character offsets, and every needle, anchor and ASCII
    pattern searches bytes (at memory speed) even in a text Python stores at 2-4 bytes a
    character. ``low_ascii`` is its lower-cased copy in which the four non-ASCII letters that
    ``re`` matches case-insensitively to an ASCII letter (``İ`` and ``ı`` to i, ``ſ`` to s, the
    Kelvin sign to k) are that letter, so a lower-case anchor or keyword is found wherever a
    case-insensitive label in a pattern could match, in every text alike.
    """

    __slots__ = ("text", "ascii", "low_ascii", "_present", "seeds")

    def __init__(self, text: str) -> None:
        self.text = text
        if text.isascii():
            self.ascii = text.encode("ascii")
            self.low_ascii = self.ascii.lower()
        else:
            self.ascii = text.encode("ascii", "replace")
            low = self.ascii.lower()
            folds = [(char, letter) for char, letter in _CASE_FOLDS if char in text]
            if folds:  # rare: patch those characters' places (encoding the text again costs more)
                patched = bytearray(low)
                for char, letter in folds:
                    at = text.find(char)
                    while at != -1:
                        patched[at] = ord(letter)
                        at = text.find(char, at + 1)
                low = bytes(patched)
            self.low_ascii = low
        self._present: frozenset[str] | None = None
        self.seeds: dict[tuple[bytes, bool], array[int] | None] = {}  # Rule._seed_starts

    def has_keyword(self, words: tuple[str, ...]) -> bool:
        """Whether one of the lower-case ``words`` occurs in the lower-cased text."""
        return any(w in self.low_ascii for w in encoded(words))

    def has_literal(self, words: tuple[str, ...]) -> bool:
        """Whether one of the case-sensitive ``words`` occurs (every rule literal is found in one
        combined prefilter, the first time any rule asks)."""
        if self._present is None:
            from toolkit.privacy.needles import present_literals

            self._present = present_literals(self.ascii)
        return not self._present.isdisjoint(words)


# the non-ASCII characters re's IGNORECASE matches to an ASCII letter (and nothing else does)
_CASE_FOLDS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))


_ENCODED: dict[tuple[str, ...], tuple[bytes, ...]] = {}


def encoded(words: tuple[str, ...]) -> tuple[bytes, ...]:
    """``words`` as UTF-8 bytes, encoded once per tuple."""
    found = _ENCODED.get(words)
    if found is None:
        found = _ENCODED[words] = tuple(w.encode("utf-8") for w in words)
    return found
