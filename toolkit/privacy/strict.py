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

from toolkit.privacy.rules import Rule, lazy, lead
from toolkit.privacy.types import Category, Context

_RECORDS = frozenset({Context.CAPSULE, Context.TELEMETRY, Context.HANDOFF, Context.EVENT_LOG})
_NOT_EVENTS = frozenset({Context.CAPSULE, Context.TELEMETRY, Context.HANDOFF})

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
_BEARER_ANY = lazy(lead(("Bearer", "bearer", "BEARER"), "A-Za-z0-9") + r"[ \t]++([A-Za-z0-9._~+/-]{8,}+=*+)")
_AUTH_ANY = lazy(r"(?i:authorization)[ \t]*+:[ \t]*+(?i:basic|token|apikey)[ \t]++(\S++)")
_URL_USERINFO = lazy(r"://([^\s/:@]{1,64}+:[^\s/@]{1,128}+)@")
_PREFIXED_ID = lazy(
    lead(("sess_", "thread_", "agent_", "run_"), "A-Za-z0-9") + r"[A-Za-z0-9][A-Za-z0-9.:-]{7,}+"
)
_BULK_WORDS = lazy(
    r"(?i:raw|full|verbatim|unredacted)[ \t]++"
    r"(?:(?i:chat|session|agent|model|tool|claude|codex)[ \t]++)?"
    r"(?i:transcripts?|chats?|chat[ \t]+logs?|conversations?|prompts?|logs?|tool[ _-]?outputs?)(?![A-Za-z0-9])"
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
    from toolkit.privacy import filters as f

    value = match.group(1)
    if f.is_literal_word(value) or f.is_env_read(value) or f.is_placeholder(value):
        return False
    return not value.isalpha()  # a bare word ("secret: rotate") is prose, a value mixes in more


def _bearer_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    return len(value) >= 16 or any(c.isdigit() for c in value)


def _has_digit(match: re.Match[str]) -> bool:
    return any(c.isdigit() for c in match.group())


def _id_check(match: re.Match[str]) -> bool:
    return any(c.isdigit() for c in match.group(1))


STRICT_RULES: tuple[Rule, ...] = (
    Rule("token-shape", Category.SECRET, _TOKEN_SHAPE, 0, None, (), _RECORDS, priority=30),
    Rule("bearer-token", Category.SECRET, _BEARER_ANY, 1, _bearer_check, ("bearer",), _RECORDS, priority=29),
    Rule(
        "authorization-header", Category.SECRET, _AUTH_ANY, 1, None, ("authorization",), _RECORDS, priority=29
    ),
    Rule("url-credentials", Category.SECRET, _URL_USERINFO, 1, None, ("://",), _RECORDS, priority=29),
    Rule("provider-id", Category.IDENTIFIER, _PREFIXED_ID, 0, _has_digit, (), _NOT_EVENTS, priority=30),
    Rule(
        "provider-session-id",
        Category.IDENTIFIER,
        _LABELLED_ID,
        1,
        _id_check,
        ("session", "thread", "agent", "run"),
        _NOT_EVENTS,
        priority=30,
        boundary=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
        anchor=lazy("session|thread|agent|run"),
    ),
    Rule("private-key", Category.SECRET, _PEM_HEADER, 0, None, ("private key",), _RECORDS, priority=29),
    Rule("jwt", Category.SECRET, _JWT_SHAPE, 0, None, ("eyj",), _RECORDS, priority=29),
    Rule(
        "password-assignment",
        Category.SECRET,
        _ASSIGN_ANY,
        1,
        _value_check,
        ("pass", "key", "token", "secret"),
        _RECORDS,
        priority=29,
        boundary=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
        anchor=lazy("password|passwd|api|access|refresh|secret"),
    ),
    Rule(
        "raw-transcript",
        Category.TRANSCRIPT,
        _BULK_WORDS,
        0,
        None,
        ("raw", "full", "verbatim", "unredacted"),
        _NOT_EVENTS,
        priority=30,
        boundary=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
    ),
)
