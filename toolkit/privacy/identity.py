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
from collections.abc import Iterator

from toolkit.privacy import filters as f
from toolkit.privacy.rules import Rule, Tuning, lazy
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.strict import bearer_token_check
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
_ANY_BEARER = lazy(r"(?<![A-Za-z0-9])(?:Bearer|bearer|BEARER)[ \t]++([A-Za-z0-9._~+/-]++=*+)")
_DASHED_ID = lazy(r"(?<![A-Za-z0-9_-])((?i:thread|session|sess|run)[_-][A-Za-z0-9-]{8,}+)")


def _has_digit(match: re.Match[str]) -> bool:
    return f.digit_count(match.group(1)) > 0


def _bearer_check(match: re.Match[str]) -> bool:
    return bearer_token_check(match)


def _any_email_check(match: re.Match[str]) -> bool:
    domain = match.group(1).rpartition("@")[2]
    return "." in domain and domain.rsplit(".", 1)[1].isalpha() and len(domain.rsplit(".", 1)[1]) >= 2


# Telemetry leaves the machine (``workgroup telemetry export``): beyond the reference's set, any
# home-relative or absolute path, an IPv4 address, a host with a port, a phone number and a card
# number are withheld there. Each is a shape; the look-alikes that stay are in the checks.
_TILDE = lazy(r"(?<![A-Za-z0-9._~/-])(~[A-Za-z0-9._-]{0,32}+/[^\s\"'<>]*+)")
_ABSOLUTE = lazy(r"(?<![A-Za-z0-9._~/:-])(/[A-Za-z0-9._-]{1,64}+/[^\s\"'<>]*+)")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = lazy(rf"(?<![0-9.])({_OCTET}(?:\.{_OCTET}){{3}})(?![0-9]|\.[0-9])")
_PORT = lazy(r":([0-9]{2,5})(?![0-9A-Za-z])")
_HOST = lazy(
    r"(?:[A-Za-z0-9][A-Za-z0-9-]{0,62}\.){1,16}[A-Za-z]{2,24}|localhost|" + rf"{_OCTET}(?:\.{_OCTET}){{3}}"
)
_HOST_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")
# file:line references ("parser.py:120") are not hosts
_SOURCE_SUFFIXES = frozenset(
    "py pyi js mjs cjs ts tsx jsx go rs rb java kt c h cc cpp hpp cs php swift sh md rst txt json "
    "yml yaml toml ini cfg lock log html css scss sql proto".split()
)
_PHONE = lazy(r"(?<![0-9A-Za-z+.-])(?<![0-9][ ().-])(\+?\(?[0-9](?:[ ().-]{0,2}+[0-9]){9,14}+)(?![0-9])")
_PHONE_GROUPS = lazy(r"[0-9]+")
_DATE_START = lazy(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DIGITS = tuple("0123456789")  # keywords: a text without a digit skips the number rules
_CARD = lazy(r"(?<![0-9.-])(?<![0-9][ -])([2-6][0-9](?:[ -]?+[0-9]){11,17}+)(?![0-9])")


class _HostPortRule(Rule):
    """``host:port`` with a dotted host name, ``localhost`` or an IPv4 address before the port.

    Found from each ``:<digits>``: the host is read backwards over host characters only (at most
    253), so every character is read back at most once between two colons (linear time).
    """

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        host = _HOST.compiled
        for match in _PORT.finditer(text):
            colon = match.start()
            start = colon
            while start > 0 and colon - start < 253 and text[start - 1] in _HOST_CHARS:
                start -= 1
            if start > 0 and (text[start - 1] in ("@", ":", "/") and text[start - 2 : start] != "//"):
                continue  # part of something else (a URL's user info, a time of day)
            name = text[start:colon].lstrip(".-")
            if not name or not host.fullmatch(name):
                continue
            if name.rpartition(".")[2].lower() in _SOURCE_SUFFIXES:
                continue
            yield colon - len(name), match.end()


def _phone_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    if _DATE_START.compiled.match(value):
        return False  # a date, maybe with a time
    groups = _PHONE_GROUPS.compiled.findall(value)
    if len(groups) < 3 and not value.startswith("+"):
        return False  # a bare digit run is a counter or a timestamp, not a dialled number
    if all(len(group) == 1 for group in groups[1:]):
        return False  # 1.2.3.4.5... a version, not a number
    return set(value) & set(" ()-") != set() or value.startswith("+")


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card_check(match: re.Match[str]) -> bool:
    value = match.group(1)
    separators = {c for c in value if not c.isdigit()}
    if len(separators) > 1:
        return False
    digits = value.replace(" ", "").replace("-", "")
    return 13 <= len(digits) <= 19 and luhn_valid(digits)


_TELEMETRY = frozenset({Context.TELEMETRY})

IDENTITY_RULES: tuple[Rule, ...] = (
    Rule(
        id="provider-session-id",
        category=IDENT,
        pattern=_LABELLED,
        group=1,
        check=_labelled_check,
        priority=70,
        tuning=Tuning(
            keywords=("session", "thread", "agent", "conversation", "chat", "run", "handle"),
            anchor=lazy(
                "claude|codex|anthropic|openai|provider|chatgpt|cursor|gemini|session|thread|agent|"
                "conversation|chat|platform"
            ),
        ),
    ),
    Rule(
        id="provider-session-id",
        category=IDENT,
        pattern=_PROSE_ID,
        group=1,
        check=_prose_check,
        priority=65,
        tuning=Tuning(
            keywords=("claude", "codex", "anthropic", "openai", "provider", "chatgpt", "cursor", "gemini"),
            anchor=lazy("claude|codex|anthropic|openai|provider|chatgpt|cursor|gemini"),
        ),
    ),
    Rule(
        id="provider-id",
        category=IDENT,
        pattern=_SHAPED,
        group=1,
        check=_shaped_check,
        priority=60,
        tuning=Tuning(
            keywords=(
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
            )
        ),
    ),
    Rule(
        id="codex-rollout-id",
        category=IDENT,
        pattern=_ROLLOUT,
        group=1,
        priority=70,
        tuning=Tuning(keywords=("rollout-",)),
    ),
    Rule(
        id="home-path",
        category=P,
        pattern=_POSIX_HOME,
        group=1,
        check=_home_check,
        priority=40,
        tuning=Tuning(keywords=("/home/", "/users/", "/root/"), anchor=lazy("/home/|/users/|/root/")),
    ),
    Rule(
        id="home-path",
        category=P,
        pattern=_POSIX_HOME_COLON,
        group=1,
        check=_home_check,
        priority=39,
        tuning=Tuning(keywords=("/home/", "/users/"), anchor=lazy("/home/|/users/")),
    ),
    Rule(
        id="windows-user-path",
        category=P,
        pattern=_WIN_USER,
        group=1,
        check=_win_check,
        priority=40,
        tuning=Tuning(keywords=("users", "documents and settings"), anchor=lazy(r"[a-z]:[\\/]")),
    ),
    Rule(
        id="email-address",
        category=E,
        pattern=_EMAIL,
        group=1,
        check=_email_check,
        priority=40,
        tuning=Tuning(keywords=("@",)),
    ),
    Rule(
        id="telemetry-url",
        category=P,
        pattern=_URL,
        group=1,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=("http",)),
    ),
    Rule(
        id="telemetry-relative-path",
        category=P,
        pattern=_RELATIVE,
        group=1,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=("./",)),
    ),
    Rule(
        id="telemetry-repository-name",
        category=IDENT,
        pattern=_REPO_NAME,
        group=1,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=("repo", "project")),
    ),
    # the reference's telemetry set, shape alone: an efficiency event carries counters and enums
    Rule(
        id="telemetry-windows-path",
        category=P,
        pattern=_WIN_DRIVE,
        group=1,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=(":\\",)),
    ),
    Rule(
        id="telemetry-email",
        category=E,
        pattern=_ANY_EMAIL,
        group=1,
        check=_any_email_check,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=("@",)),
    ),
    Rule(
        id="telemetry-bearer",
        category=Category.SECRET,
        pattern=_ANY_BEARER,
        group=1,
        check=_bearer_check,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=("bearer",)),
    ),
    Rule(
        id="telemetry-id",
        category=IDENT,
        pattern=_DASHED_ID,
        group=1,
        check=_has_digit,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=("thread", "sess", "run")),
    ),
    Rule(
        id="telemetry-home-path",
        category=P,
        pattern=_TILDE,
        group=1,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=("~",)),
    ),
    Rule(
        id="telemetry-absolute-path",
        category=P,
        pattern=_ABSOLUTE,
        group=1,
        contexts=_TELEMETRY,
        priority=19,
        tuning=Tuning(keywords=("/",)),
    ),
    Rule(
        id="telemetry-ip-address",
        category=IDENT,
        pattern=_IPV4,
        group=1,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=(".",)),
    ),
    _HostPortRule(
        id="telemetry-host-port",
        category=IDENT,
        pattern=_PORT,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=(":",)),
    ),
    Rule(
        id="telemetry-phone",
        category=IDENT,
        pattern=_PHONE,
        group=1,
        check=_phone_check,
        contexts=_TELEMETRY,
        priority=20,
        tuning=Tuning(keywords=_DIGITS),
    ),
    Rule(
        id="telemetry-card-number",
        category=Category.SECRET,
        pattern=_CARD,
        group=1,
        check=_card_check,
        contexts=_TELEMETRY,
        priority=21,
        tuning=Tuning(keywords=_DIGITS),
    ),
)
