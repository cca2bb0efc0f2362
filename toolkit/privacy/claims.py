"""VERIFY CEO-14: documentation makes no blanket claim that cached input removes (logical)
context tokens; cache reads are described as billing / context-reuse behaviour.

A sentence is refused when it ties caching (prompt cache, cached input, cache hits/reads) to
removing, eliminating or not counting *context* tokens (context window, context tokens,
tokens in the context...). It is accepted when it talks about billing (billed, price, cost,
rate, discount, charged) or reuse instead, or when it negates the claim ("does not remove",
"never", "MUST NOT claim").
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.privacy.rules import lazy

RULE = "docs-cache-token-claim"
_SENTENCE = lazy(r"[^.!?\n]+(?:[.!?]|$)")
_CACHE = lazy(r"(?i)\b(?:cach(?:e|ed|es|ing)|cache[- ]hits?|cache[- ]reads?|prompt[- ]cach\w*)\b")
_REMOVE = lazy(
    r"(?i)\b(?:remov\w*|eliminat\w*|delet\w*|drop\w*|strip\w*|eras\w*|zero(?:es|s)?|free[sd]?\s+up|"
    r"shrink\w*|cut\w*|reduc\w*|sav(?:e|es|ed|ing)|lower\w*|excludes?|excluded|frees?|"
    r"(?:no\s+longer|don'?t|doesn'?t|do\s+not|does\s+not|won'?t|never)\s+(?:counts?|consumes?|occup(?:y|ies)|uses?\s+up|takes?\s+up))\b"
)
_CONTEXT_TOKENS = lazy(
    r"(?i)\b(?:(?:logical\s+)?context(?:[- ]window)?(?:\s+(?:tokens?|size|length|usage|occupancy|space))?|"
    r"tokens?\s+(?:from|out\s+of|in|of)\s+(?:the\s+)?(?:context|prompt|window)|context\s+tokens?)\b"
)
_BILLING = lazy(
    r"(?i)\b(?:bill\w*|pric\w*|cost\w*|rate|rates|discount\w*|charg\w*|cheaper|invoice\w*|spend\w*|"
    r"reuse[sd]?|re-use[sd]?|reusing|context\s+reuse|latency)\b"
)
_NEGATION = lazy(
    r"(?i)\b(?:not|never|no|n't|cannot|must\s+not|does\s+not|do\s+not|doesn'?t|don'?t|isn'?t|aren'?t|without|"
    r"myth|wrong|incorrect|false)\b"
)
_SOFT_BREAK = lazy(r"(?<!\n)\n(?![ \t]*\n)")
_ALLOW = lazy(r"workgroup:[ \t]*allow[ \t]+[^\n]*\b(?:docs-cache-token-claim|docs-claims)\b")


@dataclass(frozen=True)
class Claim:
    """A refused sentence: 1-based line, 0-based code-point columns of the sentence."""

    line: int
    start: int
    end: int
    rule: str = RULE


def _refused(sentence: str) -> bool:
    cache = _CACHE.search(sentence)
    if cache is None:
        return False
    remove = _REMOVE.search(sentence)
    context = _CONTEXT_TOKENS.search(sentence)
    if remove is None or context is None:
        return False
    if _BILLING.search(sentence):
        return False  # billing or reuse framing: "cache reads are billed at a lower rate"
    head = sentence[: remove.start()]
    return _NEGATION.search(head) is None


def find_claims(text: str) -> list[Claim]:
    """Every sentence of ``text`` making the blanket token-removal claim.

    Wrapped lines are joined (a single newline becomes a space, so offsets do not move);
    a blank line ends a sentence. The position is that of the sentence's start.
    """
    if not _CACHE.search(text):
        return []
    joined = _SOFT_BREAK.sub(" ", text)
    lines = text.split("\n")
    claims: list[Claim] = []
    for match in _SENTENCE.finditer(joined):
        sentence = match.group(0)
        if not _refused(sentence):
            continue
        lead = len(sentence) - len(sentence.lstrip())
        offset = match.start() + lead
        line = text.count("\n", 0, offset)
        column = offset - (text.rfind("\n", 0, offset) + 1)
        if _ALLOW.search(lines[line]) or (line > 0 and _ALLOW.search(lines[line - 1])):
            continue
        end = min(match.end(), offset - column + len(lines[line]))
        claims.append(Claim(line + 1, column, column + (end - offset)))
    return claims
