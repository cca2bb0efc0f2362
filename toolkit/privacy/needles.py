"""The combined prefilter: which rule literals occur in a text, found in a few passes.

Most rules are provider formats with a literal prefix (``ghp_``, ``AKIA``, ``xoxb-``...) that
ordinary text does not contain. One substring search per literal reads the text some sixty
times; one regex alternation of every literal is slower still in ``re`` (it tries the
alternation at every position whose character could start one). Instead each literal is
assigned a *trigger*, one of its characters that is rare in source text, and one pass per
trigger finds that character and checks, with look-behind and look-ahead, which literals
around it are complete. A pass whose pattern starts with one literal character runs at
memory speed in ``re``; a handful of passes (``_``, ``-``, ``A``, ``.``...) cover every
literal. The triggers are chosen once (greedy set cover weighted by how common each
character is in source text) and the passes compile on first use.

The result is exact: a literal is reported present if and only if it occurs in the text.
"""

from __future__ import annotations

import re

from toolkit.privacy.engine import RULES

# Characters of printable ASCII from rarest to most common in source text, with their share in
# parts per million (measured over five public Python repositories: code, docs, tests, data).
_RARITY = "^~&!$?\\%@|;'<][>}{XY+KQ#JWZGVBHULjMN)(ODEzRSqFTCIx=P*wk_v`:A9by8g7-64,53f/h02\"m1ucpd.linrosate"
_PPM = (
    284, 318, 335, 343, 359, 364, 369, 426, 564, 583, 702, 1301, 1522, 1578, 1588, 1717, 2089, 2122,
    2546, 2641, 2676, 2696, 2713, 2750, 2773, 2830, 2840, 2841, 2889, 2992, 3008, 3154, 3187, 3189,
    3211, 3259, 3268, 3272, 3279, 3313, 3404, 3521, 3537, 3728, 3787, 3837, 3916, 4013, 4171, 4323,
    4332, 4532, 4587, 4867, 4928, 5214, 5512, 5624, 5923, 6405, 7138, 7286, 7344, 7758, 7808, 7892,
    8123, 8368, 8452, 8546, 8999, 9047, 9094, 10317, 10513, 10517, 10857, 11033, 11325, 12190,
    12763, 15330, 15790, 15865, 16683, 16933, 22784, 23333, 23383, 24528, 26317, 28277, 31088, 40691,
)  # fmt: skip
_FREQUENCY = dict(zip(_RARITY, _PPM, strict=True))
_COMMON = 100_000  # space, newline and anything not listed
_PASS_COST = 15000  # the fixed cost of one more pass, in the same unit (ppm of hits)


def choose_triggers(needles: list[str]) -> dict[str, list[str]]:
    """Trigger character -> the needles its pass checks (greedy weighted set cover)."""
    uncovered = set(needles)
    groups: dict[str, list[str]] = {}
    while uncovered:
        counts: dict[str, int] = {}
        for needle in uncovered:
            # not the last character (unless it is the only one): the rest of the needle then
            # follows the trigger, and re rejects an alternative on its first literal at once
            for char in set(needle[:-1] or needle):
                counts[char] = counts.get(char, 0) + 1
        best = min(
            counts,
            key=lambda c: (
                (_PASS_COST + _FREQUENCY.get(c, _COMMON)) / counts[c],
                _FREQUENCY.get(c, _COMMON),
                c,
            ),
        )
        members = sorted(n for n in uncovered if best in (n[:-1] or n))
        groups[best] = members
        uncovered.difference_update(members)
    return groups


def _pass_pattern(trigger: str, members: list[str]) -> re.Pattern[bytes]:
    """``T(?=after(?<=needle)()|...)``: the trigger, then, without consuming them, the rest of
    each needle and (when the trigger is not its first character) the whole needle behind; the
    empty group at the end of an alternative names the needle that matched (``lastindex``).
    The alternatives are a trie (``T(?=a(?:t...|u...)|...)``): a hit compares a few characters,
    not one per needle (the ``p`` pass holds some fifty). ``members`` must be in ``_trie_order``,
    the order the groups are numbered in."""
    leaves = []
    for needle in members:
        index = _trigger_index(needle, trigger)
        tail = (f"(?<={re.escape(needle)})" if index else "") + "()"
        leaves.append((needle[index + 1 :], tail))
    return re.compile(f"{re.escape(trigger)}(?={_trie(leaves)})".encode("ascii"))


def _trie(leaves: list[tuple[str, str]]) -> str:
    """The alternation of ``(rest, tail)`` leaves, factored on their first characters: children
    in character order, then the leaves that end here (a longer needle is tried first)."""
    branches: dict[str, list[tuple[str, str]]] = {}
    ends = []
    for rest, tail in leaves:
        if rest:
            branches.setdefault(rest[0], []).append((rest[1:], tail))
        else:
            ends.append(tail)
    parts = [re.escape(char) + _trie(branches[char]) for char in sorted(branches)] + ends
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


def _trie_order(trigger: str, members: list[str]) -> list[str]:
    """``members`` in the order ``_trie`` emits their groups."""
    return sorted(members, key=lambda n: (n[_trigger_index(n, trigger) + 1 :] + "\x7f", n))


def _trigger_index(needle: str, trigger: str) -> int:
    """Where a needle's trigger is: its first occurrence before the last character."""
    return (needle[:-1] or needle).index(trigger)


def _compatible(a: str, b: str, trigger: str) -> bool:
    """Whether ``a`` and ``b`` can both occur around one occurrence of ``trigger`` (aligned at
    their triggers, their overlapping characters agree): ``sk-`` and ``sk-ant-`` can."""
    shift = _trigger_index(a, trigger) - _trigger_index(b, trigger)
    return all(a[k + shift] == char for k, char in enumerate(b) if 0 <= k + shift < len(a))


class _Pass:
    """One trigger's pass: its pattern, its needles and, for each, the others that the same hit
    may hold too (the alternation reports one needle per hit; its companions are checked). A
    needle's companions are worked out the first time it is hit: most never are, and working
    them all out up front was half of what building the passes cost a hook's first scan."""

    __slots__ = ("pattern", "trigger", "names", "members", "offsets", "companions")

    def __init__(self, trigger: str, members: list[str]) -> None:
        members = _trie_order(trigger, members)
        self.pattern = _pass_pattern(trigger, members)
        self.trigger = trigger
        self.names = members
        self.members = [m.encode("ascii") for m in members]
        self.offsets = [_trigger_index(m, trigger) for m in members]
        self.companions: list[list[int] | None] = [None] * len(members)

    def _companions(self, index: int) -> list[int]:
        found = self.companions[index]
        if found is None:
            member, trigger = self.names[index], self.trigger
            found = self.companions[index] = [
                j for j, other in enumerate(self.names) if j != index and _compatible(member, other, trigger)
            ]
        return found

    def scan(self, data: bytes, found: set[str]) -> None:
        seen: set[int] = set()
        total = len(self.members)
        dense = 256 + len(data) // 256  # hits past this are hostile input (a run of one needle)
        for count, hit in enumerate(self.pattern.finditer(data)):
            if count > dense:  # bounded work: one substring search per needle not seen yet
                seen.update(i for i, member in enumerate(self.members) if i not in seen and member in data)
                break
            index = (hit.lastindex or 1) - 1
            seen.add(index)
            at = hit.start()
            for other in self._companions(index):
                if other not in seen and data.startswith(self.members[other], at - self.offsets[other]):
                    seen.add(other)
            if len(seen) == total:
                break
        found.update(self.members[i].decode("ascii") for i in seen)


class NeedleFinder:
    """Finds which of a fixed set of ASCII needles occur in a byte string."""

    def __init__(self, needles: list[str] | tuple[str, ...]) -> None:
        self.needles = tuple(sorted(set(needles)))
        self.encoded = tuple(n.encode("ascii") for n in self.needles)
        self._passes: list[_Pass] | None = None

    def passes(self) -> list[_Pass]:
        if self._passes is None:
            groups = choose_triggers(list(self.needles))
            self._passes = [_Pass(t, m) for t, m in sorted(groups.items())]
        return self._passes

    def present(self, data: bytes) -> frozenset[str]:
        """The needles that occur in ``data`` (a pass stops once all of its needles are seen)."""
        found: set[str] = set()
        for one in self.passes():
            one.scan(data, found)
        return frozenset(found)


_FINDER: list[NeedleFinder] = []
# Below this size, and until a larger text has paid for compiling the passes, one substring
# search per literal is cheaper: a hook or a scan of one small file starts faster.
SMALL_TEXT = 64 * 1024


def present_literals(data: bytes) -> frozenset[str]:
    """Which literals of the engine's rules occur in ``data`` (the ASCII view of a text)."""
    if not _FINDER:
        _FINDER.append(NeedleFinder([w for rule in RULES for w in rule.tuning.literals]))
    finder = _FINDER[0]
    if finder._passes is None and len(data) < SMALL_TEXT:
        return frozenset(w for w, b in zip(finder.needles, finder.encoded, strict=True) if b in data)
    return finder.present(data)


def longest_literal() -> int:
    """The length of the longest literal ``present_literals`` looks for (a text read in
    chunks overlaps them by this less one, so every occurrence is whole in one chunk)."""
    present_literals(b"")  # the finder of the engine's literals, made once
    return max(map(len, _FINDER[0].needles), default=1)
