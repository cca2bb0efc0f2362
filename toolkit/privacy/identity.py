"""Identifier, path and email detectors.

Provider-issued ids (Claude Code / Codex / provider session, thread, agent and run ids) are
private; the toolkit's and CM's own ``run_id``/``call_id``/``event_id`` are not, so a bare
``run_id`` label never fires: only a provider-qualified one does, or a value shaped like a
provider id (``thread_`` + 24 base62...).

Email policy: addresses at reserved documentation/test domains (``example.com``, ``*.example``,
``*.test``, ``*.invalid``, ``localhost``; RFC 2606 and RFC 6761) are nobody's mailbox and
are not reported. Role ``noreply@``/``no-reply@`` addresses of an organization are not a
person and are not reported either. GitHub noreply addresses
(``12345+login@users.noreply.github.com``) name an account and ARE reported.
"""

from __future__ import annotations

import re

from toolkit.privacy import filters as f
from toolkit.privacy.rules import Rule, lazy
from toolkit.privacy.types import Category, Context

IDENT, P, E = Category.IDENTIFIER, Category.PATH, Category.EMAIL

_PROVIDER = r"(?:claude(?:[ _-]?code)?|codex|anthropic|openai|provider|chatgpt|cursor|gemini)"
_ID_VALUE = r"[\"'`]?([A-Za-z0-9][A-Za-z0-9._:-]{5,127})"
_LABELLED = lazy(
    r"(?<![A-Za-z0-9])(?i:"
    r"(?:" + _PROVIDER + r"[ _-]?)?(?:session|thread|agent|conversation|chat)[ _-]?(?:id|uuid|handle)s?"
    r"|" + _PROVIDER + r"[ _-]?run[ _-]?id"
    r"|(?:platform|provider)[ _-]?handle"
    r")[\"'`]?[ \t]*(?:[:=#]|=>)[ \t]*" + _ID_VALUE
)
_PROSE_ID = lazy(
    r"(?<![A-Za-z0-9])(?i:" + _PROVIDER + r")[ _-]+(?i:session|thread|agent|run|conversation)[ _-]+"
    r"(?:(?i:id)[ \t:=#]+)?[\"'`]?([A-Za-z0-9][A-Za-z0-9._-]{7,127})"
)
_SHAPED = lazy(
    r"(?<![A-Za-z0-9_-])((?:thread|run|asst|msg|sess|resp|toolu|req|conv|batch)_[A-Za-z0-9]{20,80}"
    r"|chatcmpl-[A-Za-z0-9]{20,80}|agent-[0-9a-f]{8,32})(?![A-Za-z0-9_-])"
)
_ROLLOUT = lazy(
    r"(rollout-\d{4}-\d\d-\d\dT\d\d[-:]\d\d[-:]\d\d-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
)
_PSEUDONYM = ("anon-", "pseudo-", "pseud-", "pseudonym:", "hmac-", "hmac:", "sha256:", "pn-")


def _id_value_ok(value: str) -> bool:
    lower, upper, digit = f.char_classes(value)
    if not digit or not (lower or upper) or len(value) < 6:
        return False  # cheapest test first; a UUID has digits and letters too
    low = value.lower()
    if low.startswith(_PSEUDONYM) or f.is_literal_word(value) or f.is_placeholder(value):
        return False
    return True


def _labelled_check(match: re.Match[str]) -> bool:
    return _id_value_ok(match.group(1))


def _prose_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    if f.is_uuid(value):
        return True
    return _id_value_ok(value) and (f.shannon_entropy(value) >= 3.0) and f.digit_count(value) >= 2


def _shaped_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    body = value.split("_", 1)[-1] if "_" in value else value.split("-", 1)[-1]
    if f.is_placeholder(body):
        return False
    lower, upper, digit = f.char_classes(body)
    if value.startswith(("resp_", "agent-")) and f.is_hex(body):
        return digit and lower
    return digit and lower and upper and f.shannon_entropy(body) >= 3.5


# Paths. A home path starts at a boundary (not inside a URL or another path).
_POSIX_HOME = lazy(
    r"(?:(?<=file://)|(?<![A-Za-z0-9._~/:%-]))(/(?:home|Users|root)/[A-Za-z0-9._-]+(?:/[^\s\"'`<>()\[\]{},;|]*)?)"
)
_POSIX_HOME_COLON = lazy(r"(?<=[=:])(/(?:home|Users)/[A-Za-z0-9._-]+(?:/[^\s\"'`<>()\[\]{},;|:]*)?)")
_WIN_USER = lazy(
    r"(?<![A-Za-z0-9])([A-Za-z]:(?:\\\\|\\|/)(?:Users|Documents and Settings)(?:\\\\|\\|/)"
    r"[^\\/\s\"'`<>|:*?]+(?:(?:\\\\|\\|/)[^\\/\s\"'`<>|:*?]+)*)"
)
_PATH_PLACEHOLDERS = ("<", "$", "%", "{", "…", "...")


def _home_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    parts = value.split("/")
    if value.startswith("/root"):
        under = parts[2] if len(parts) > 2 else ""
        return bool(under) and not any(p in under for p in _PATH_PLACEHOLDERS)
    user = parts[2] if len(parts) > 2 else ""
    return bool(user) and not any(p in user for p in _PATH_PLACEHOLDERS)


def _win_check(match: re.Match[str]) -> bool:
    user = re.split(r"\\\\|\\|/", match.group(1))[2] if match.group(1) else ""
    return bool(user) and not any(p in user for p in _PATH_PLACEHOLDERS) and user.lower() not in {"public"}


# Emails
_EMAIL = lazy(
    r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24})(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
)
_FILE_TLDS = frozenset(
    {
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "webp",
        "ico",
        "js",
        "mjs",
        "ts",
        "tsx",
        "jsx",
        "py",
        "md",
        "json",
        "css",
        "scss",
        "html",
        "txt",
        "yml",
        "yaml",
        "toml",
        "lock",
        "map",
        "woff",
        "woff2",
        "pdf",
        "zip",
        "gz",
        "tgz",
        "tar",
        "whl",
        "jar",
        "so",
        "dll",
        "exe",
    }
)
_ROLE_LOCAL = lazy(r"^(?:no-?reply|do-?not-?reply|donotreply|mailer-daemon|postmaster)$", re.I)


def _email_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    local, _, domain = value.rpartition("@")
    tld = domain.rsplit(".", 1)[-1].lower()
    if tld in _FILE_TLDS:
        return False  # "logo@2x.png", "pkg@1.0.0.tgz"
    if f.is_email_placeholder_domain(domain):
        return False
    if domain.lower().endswith("users.noreply.github.com"):
        return True  # names a GitHub account
    if _ROLE_LOCAL.match(local):
        return False
    before = match.string[max(0, match.start(1) - 80) : match.start(1)]
    if before.endswith("://"):
        return False  # "ssh://git@host/...": the user part of a URL, not a mailbox
    if before.endswith(":") and re.search(r"://[^\s/@]*:$", before):
        return False  # the password and host of "scheme://user:password@host": url-credentials
    after = match.string[match.end(1) : match.end(1) + 1]
    return after != ":" or local.lower() != "git"  # "git@github.com:org/repo" is an ssh remote


# Telemetry-only value rules (the reference's telemetry privacy set).
_URL = lazy(r"(?<![A-Za-z0-9])(https?://[^\s\"'<>]{3,})")
_RELATIVE = lazy(r"(?<![A-Za-z0-9._/-])(\.\.?/[A-Za-z0-9._-][^\s\"'<>]*)")
_REPO_NAME = lazy(r"(?<![A-Za-z0-9])((?i:repo|repository|project)[-_][A-Za-z0-9][A-Za-z0-9._-]{2,}+)")
_WIN_DRIVE = lazy(r"(?<![A-Za-z0-9])([A-Za-z]:\\[^\s\"'<>|]*+)")
_ANY_EMAIL = lazy(r"([A-Za-z0-9._%+-]{1,64}+@[A-Za-z0-9-]{1,63}+(?:\.[A-Za-z0-9-]{1,63}+)*+)")
_ANY_BEARER = lazy(r"(?<![A-Za-z0-9])(?:Bearer|bearer|BEARER)[ \t]++([A-Za-z0-9._~+/-]{4,}+=*+)")
_DASHED_ID = lazy(r"(?<![A-Za-z0-9_-])((?i:thread|session|sess|run)[_-][A-Za-z0-9-]{8,}+)")


def _has_digit(match: re.Match[str]) -> bool:
    return f.digit_count(match.group(1)) > 0


def _any_email_check(match: re.Match[str]) -> bool:
    domain = match.group(1).rpartition("@")[2]
    return "." in domain and domain.rsplit(".", 1)[1].isalpha() and len(domain.rsplit(".", 1)[1]) >= 2


_TELEMETRY = frozenset({Context.TELEMETRY})

IDENTITY_RULES: tuple[Rule, ...] = (
    Rule(
        "provider-session-id",
        IDENT,
        _LABELLED,
        1,
        _labelled_check,
        ("session", "thread", "agent", "conversation", "chat", "run", "handle"),
        priority=70,
        anchor=lazy(
            "claude|codex|anthropic|openai|provider|chatgpt|cursor|gemini|session|thread|agent|"
            "conversation|chat|platform"
        ),
    ),
    Rule(
        "provider-session-id",
        IDENT,
        _PROSE_ID,
        1,
        _prose_check,
        ("claude", "codex", "anthropic", "openai", "provider", "chatgpt", "cursor", "gemini"),
        priority=65,
        anchor=lazy("claude|codex|anthropic|openai|provider|chatgpt|cursor|gemini"),
    ),
    Rule(
        "provider-id",
        IDENT,
        _SHAPED,
        1,
        _shaped_check,
        (
            "thread_",
            "run_",
            "asst_",
            "msg_",
            "sess_",
            "resp_",
            "toolu_",
            "req_",
            "conv_",
            "batch_",
            "chatcmpl-",
            "agent-",
        ),
        priority=60,
    ),
    Rule("codex-rollout-id", IDENT, _ROLLOUT, 1, None, ("rollout-",), priority=70),
    Rule(
        "home-path",
        P,
        _POSIX_HOME,
        1,
        _home_check,
        ("/home/", "/users/", "/root/"),
        priority=40,
        anchor=lazy("/home/|/users/|/root/"),
    ),
    Rule(
        "home-path",
        P,
        _POSIX_HOME_COLON,
        1,
        _home_check,
        ("/home/", "/users/"),
        priority=39,
        anchor=lazy("/home/|/users/"),
    ),
    Rule(
        "windows-user-path",
        P,
        _WIN_USER,
        1,
        _win_check,
        ("users", "documents and settings"),
        priority=40,
        anchor=lazy(r"[a-z]:[\\/]"),
    ),
    Rule("email-address", E, _EMAIL, 1, _email_check, ("@",), priority=40),
    Rule("telemetry-url", P, _URL, 1, None, ("http",), _TELEMETRY, priority=20),
    Rule("telemetry-relative-path", P, _RELATIVE, 1, None, ("./",), _TELEMETRY, priority=20),
    Rule(
        "telemetry-repository-name", IDENT, _REPO_NAME, 1, None, ("repo", "project"), _TELEMETRY, priority=20
    ),
    # the reference's telemetry set, shape alone: an efficiency event carries counters and enums
    Rule("telemetry-windows-path", P, _WIN_DRIVE, 1, None, (":\\",), _TELEMETRY, priority=20),
    Rule("telemetry-email", E, _ANY_EMAIL, 1, _any_email_check, ("@",), _TELEMETRY, priority=20),
    Rule("telemetry-bearer", Category.SECRET, _ANY_BEARER, 1, None, ("bearer",), _TELEMETRY, priority=20),
    Rule(
        "telemetry-id", IDENT, _DASHED_ID, 1, _has_digit, ("thread", "sess", "run"), _TELEMETRY, priority=20
    ),
)
