"""What every provider rule module shares: the token ends, the checks and the rule builder.

A provider rule is a literal prefix (kept apart from a preceding token character by ``lead``),
a body of bounded length read possessively, and an end that must not continue the token; its
prefixes are the rule's literals (the combined prefilter tells whether any occurs) and its seeds
(a match is tried only where one occurs).
"""

from __future__ import annotations

import os
import re

from toolkit.privacy import filters as f
from toolkit.privacy.rules import Check, Rule, Tuning, lazy, lead
from toolkit.privacy.types import Category

S = Category.SECRET
END = r"(?![A-Za-z0-9_])"
END_DASH = r"(?![A-Za-z0-9_-])"


def value_ok(group: int | str = 1, *, need_digit: bool = True, min_distinct: int = 8) -> Check:
    """A provider-shaped key whose body is not a placeholder and looks generated."""

    def check(match: re.Match[str]) -> bool:
        value = match.group(group)
        if f.is_placeholder(value):
            return False
        if need_digit and not any(c.isdigit() for c in value):
            return False
        return len(set(value)) >= min_distinct

    return check


def hex_mix(match: re.Match[str]) -> bool:
    """A hex body that is not a placeholder: some digits and eight distinct characters."""
    value = match.group(1)
    return not f.is_placeholder(value) and f.digit_count(value) >= 4 and len(set(value)) >= 8


def _shared_lead(prefixes: tuple[str, ...], before: str) -> str | None:
    """``lead`` for several prefixes that start alike: the shared start first, then one branch
    per prefix with its own look-behind. ``re`` then jumps to the shared literal in one pass,
    where one seed per prefix costs a pass each (ten for the AWS key ids)."""
    shared = os.path.commonprefix(list(prefixes))
    if len(prefixes) < 2 or not shared:
        return None
    branches = [
        f"{re.escape(prefix[len(shared) :])}(?<![{before}]{re.escape(prefix)})"
        for prefix in sorted(prefixes, key=len, reverse=True)
    ]
    return re.escape(shared) + "(?:" + "|".join(branches) + ")"


def provider_rule(
    rule_id: str,
    prefixes: tuple[str, ...],
    body: str,
    *,
    check: Check | None = None,
    end: str = END,
    before: str = "A-Za-z0-9_",
    priority: int = 90,
    flags: int = 0,
    gate: tuple[str, ...] = (),
) -> Rule:
    """A provider rule: ``lead(prefixes)`` + ``body`` (possessive) + ``end``, group 1 the token.

    ``gate``: words one of which the text must hold for the rule to run, in place of its
    prefixes (see ``providers_families``: a prefix no other literal shares a character with
    would cost the combined prefilter one more pass over every text)."""
    shared = _shared_lead(prefixes, before)
    pattern = lazy("(" + (shared or lead(prefixes, before)) + body + ")" + end, flags)
    # The prefixes are the rule's literals (the combined prefilter tells whether any occurs)
    # and, unless they share a start that re jumps to, its seeds: a match starts at an
    # occurrence of one, so the pattern is tried only there.
    return Rule(
        id=rule_id,
        category=S,
        pattern=pattern,
        group=1,
        check=check or value_ok(),
        priority=priority,
        tuning=Tuning(literals=gate or prefixes, seeds=() if shared else prefixes, seed_case=True),
    )
