"""Stricter shapes for workflow records (capsules, telemetry, handoffs, event logs).

A capsule or a telemetry event is a small structured record that should hold no credential at
all, real or made up, so these rules report what the reference runtime refuses there, shape
alone, with no placeholder or checksum leniency: a provider prefix with a body, any bearer or
authorization value, any ``user:password@`` in a URL, a provider-style id with a digit, and the
words that announce a pasted transcript or log when they stand together ("raw transcript",
"verbatim log", "full chat"). Unlike the reference, words apart are not enough: "Run the full
test suite and attach the log", "thread-safe-queue", "run-integration-tests" and "the Codex
agent handles retries" stay clean. Source and docs never run these rules.
"""

from __future__ import annotations

import re

from toolkit.privacy import filters as f
from toolkit.privacy.rules import Rule, Tuning, lazy, lead
from toolkit.privacy.types import Category, Context

_RECORDS = frozenset({Context.CAPSULE, Context.TELEMETRY, Context.HANDOFF, Context.EVENT_LOG})
_NOT_EVENTS = frozenset({Context.CAPSULE, Context.TELEMETRY, Context.HANDOFF})
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

_TOKEN_SHAPE = lazy(
    "(?:"
    + lead(("sk-", "rk-", "pk-"), "A-Za-z0-9_")
    + r"(?:live|test)?_?[A-Za-z0-9_-]{8,}+"
    + "|"
    + lead(("ghp_", "gho_", "ghu_", "ghs_", "ghr_"))
    + r"[A-Za-z0-9]{12,}+"
    + "|"
    + lead(("glpat-",))
    + r"[A-Za-z0-9_-]{12,}+"
    + "|"
    + lead(("xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"))
    + r"[A-Za-z0-9-]{10,}+"
    + "|"
    + lead(("npm_",))
    + r"[A-Za-z0-9]{20,}+"
    + "|"
    + lead(("AKIA",), "A-Za-z0-9")
    + r"[0-9A-Z]{16}(?![A-Za-z0-9])"
    + ")"
)
_BEARER_ANY = lazy(lead(("Bearer", "bearer", "BEARER"), "A-Za-z0-9") + r"[ \t]++([A-Za-z0-9._~+/-]++=*+)")
_AUTH_ANY = lazy(r"(?i:authorization)[ \t]*+:[ \t]*+(?i:basic|token|apikey)[ \t]++(\S++)")
_URL_USERINFO = lazy(r"://([^\s/:@]{1,64}+:[^\s/@]{1,128}+)@")
_PREFIXED_ID = lazy(
    lead(("sess_", "thread_", "agent_", "run_"), "A-Za-z0-9") + r"[A-Za-z0-9][A-Za-z0-9.:-]{7,}+"
)
# Pasted bulk content described in words (the reference's "raw|full|verbatim within 48 characters
# of transcript|chat|conversation|prompt|log|tool output", either order), as phrases, not as two
# words anywhere on a line: a raw word with at most two words before the noun it qualifies ("raw
# test log", "verbatim chat log"); "full" only with words that name whose content it is ("a full
# system prompt", "the full prior conversation"), so "the full test suite ... the log" and "full
# test log" stay prose; the noun first, then what was done to it within four words ("chat history
# kept verbatim", "tool output pasted verbatim", "the logs in full", "prompt copied raw").
_BULK_NOUN = (
    r"(?i:transcripts?|chats?|conversations?|prompts?|logs?|tool[ _-]?outputs?|ambient[ _-]?outputs?)"
)
_STOP = r"(?i:and|or|but|then|the|a|an|to|of|for|with|in|on|at|by|from|before|after|so|if|when|not|no)"
_WHOSE = (
    r"(?i:system|user|developer|session|agent|model|chat|claude|codex|assistant|tool|worker|provider"
    r"|ambient|terminal|console|shell|original|previous|prior|last|whole|entire|raw|verbatim|unredacted"
    r"|unedited)"
)
_GAP = r"[ \t]{1,8}+"
_BULK_FORWARD = lazy(
    r"(?i:raw|verbatim|unredacted|unedited)(?![A-Za-z0-9])"
    rf"(?:{_GAP}(?!{_STOP}(?![A-Za-z0-9]))[A-Za-z][A-Za-z-]{{0,24}}+){{0,2}}?{_GAP}{_BULK_NOUN}(?![A-Za-z0-9])"
)
_BULK_FULL = lazy(rf"(?i:full)(?:{_GAP}{_WHOSE}){{0,2}}{_GAP}{_BULK_NOUN}(?![A-Za-z0-9])")
_BULK_AFTER = lazy(
    rf"{_BULK_NOUN}(?![A-Za-z0-9])(?:[ \t,]{{1,8}}+[A-Za-z][A-Za-z'-]{{0,24}}+){{0,4}}?[ \t,]{{1,8}}+"
    r"(?:(?i:verbatim|unredacted|unedited|word[ \t]for[ \t]word)|(?i:in)[ \t]{1,8}+(?i:full)"
    r"|(?i:kept|keep|keeps|pasted|paste|pastes|copied|copy|copies|stored|store|dumped|dump|included"
    r"|include|left|as)[ \t]{1,8}+(?i:raw|full))(?![A-Za-z0-9])"
)

_LABELLED_ID = lazy(
    r"(?i:session|thread|agent|run)(?:[-_ \t]*+(?i:id))?[ \t]*+[:=#][ \t]*+"
    r"([A-Za-z0-9][A-Za-z0-9._:-]{5,}+)"
)
_PEM_HEADER = lazy(r"-----BEGIN[ A-Z0-9]{0,20}PRIVATE KEY-----")  # bounded: at most 20 steps back
_JWT_SHAPE = lazy(
    lead(("eyJ",), "A-Za-z0-9_.-") + r"[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+"
)
_ASSIGN_ANY = lazy(
    r"(?i:password|passwd|api[_-]?key|access[_-]?token|refresh[_-]?token|secret)[ \t]*+[:=][ \t]*+([^\s\"',;&]{4,}+)"
)


def _value_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    if f.is_literal_word(value) or f.is_env_read(value) or f.is_placeholder(value):
        return False
    return not value.isalpha()  # a bare word ("secret: rotate") is prose, a value mixes in more


_SCHEME_WORDS = frozenset({"authentication", "authorization", "credentials", "credential"})


def bearer_token_check(match: re.Match[str]) -> bool:
    """A token after ``Bearer``, not a word of prose ("the bearer of", "Bearer authentication"):
    anything but a short lower-case or capitalized word of letters, or a word naming the scheme."""
    value = match.group(1).rstrip("=")
    if not (value.isalpha() and (value.islower() or value.istitle())):
        return True
    return len(value) >= 8 and value.lower() not in _SCHEME_WORDS


def _has_digit(match: re.Match[str]) -> bool:
    return any(c.isdigit() for c in match.group())


def _id_check(match: re.Match[str]) -> bool:
    return any(c.isdigit() for c in match.group(1))


STRICT_RULES: tuple[Rule, ...] = (
    Rule(
        id="token-shape",
        category=Category.SECRET,
        pattern=_TOKEN_SHAPE,
        contexts=_RECORDS,
        priority=30,
    ),
    Rule(
        id="bearer-token",
        category=Category.SECRET,
        pattern=_BEARER_ANY,
        group=1,
        check=bearer_token_check,
        contexts=_RECORDS,
        priority=29,
        tuning=Tuning(keywords=("bearer",)),
    ),
    Rule(
        id="authorization-header",
        category=Category.SECRET,
        pattern=_AUTH_ANY,
        group=1,
        contexts=_RECORDS,
        priority=29,
        tuning=Tuning(keywords=("authorization",)),
    ),
    Rule(
        id="url-credentials",
        category=Category.SECRET,
        pattern=_URL_USERINFO,
        group=1,
        contexts=_RECORDS,
        priority=29,
        tuning=Tuning(keywords=("://",)),
    ),
    Rule(
        id="provider-id",
        category=Category.IDENTIFIER,
        pattern=_PREFIXED_ID,
        check=_has_digit,
        contexts=_NOT_EVENTS,
        priority=30,
    ),
    Rule(
        id="provider-session-id",
        category=Category.IDENTIFIER,
        pattern=_LABELLED_ID,
        group=1,
        check=_id_check,
        contexts=_NOT_EVENTS,
        priority=30,
        boundary=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
        tuning=Tuning(
            keywords=("session", "thread", "agent", "run"), anchor=lazy("session|thread|agent|run")
        ),
    ),
    Rule(
        id="private-key",
        category=Category.SECRET,
        pattern=_PEM_HEADER,
        contexts=_RECORDS,
        priority=29,
        tuning=Tuning(keywords=("private key",)),
    ),
    Rule(
        id="jwt",
        category=Category.SECRET,
        pattern=_JWT_SHAPE,
        contexts=_RECORDS,
        priority=29,
        tuning=Tuning(keywords=("eyj",)),
    ),
    Rule(
        id="password-assignment",
        category=Category.SECRET,
        pattern=_ASSIGN_ANY,
        group=1,
        check=_value_check,
        contexts=_RECORDS,
        priority=29,
        boundary=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
        tuning=Tuning(
            keywords=("pass", "key", "token", "secret"),
            anchor=lazy("password|passwd|api|access|refresh|secret"),
        ),
    ),
    Rule(
        id="raw-transcript",
        category=Category.TRANSCRIPT,
        pattern=_BULK_FORWARD,
        contexts=_NOT_EVENTS,
        priority=30,
        boundary=_ALNUM,
        tuning=Tuning(
            keywords=("raw", "verbatim", "unredacted", "unedited"),
            anchor=lazy("raw|verbatim|unredacted|unedited"),
        ),
    ),
    Rule(
        id="raw-transcript",
        category=Category.TRANSCRIPT,
        pattern=_BULK_FULL,
        contexts=_NOT_EVENTS,
        priority=30,
        boundary=_ALNUM,
        tuning=Tuning(keywords=("full",), anchor=lazy("full")),
    ),
    Rule(
        id="raw-transcript",
        category=Category.TRANSCRIPT,
        pattern=_BULK_AFTER,
        contexts=_NOT_EVENTS,
        priority=30,
        boundary=_ALNUM,
        tuning=Tuning(
            keywords=("verbatim", "unredacted", "unedited", "word for word", "full", "raw"),
            anchor=lazy("transcript|chat|conversation|prompt|log|tool|ambient"),
        ),
    ),
)
