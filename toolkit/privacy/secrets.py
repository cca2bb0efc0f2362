"""Secret detectors: provider key families, PEM keys, JWTs, authorization headers, URL and
assignment credentials, and high-entropy strings with look-alike filters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolkit.privacy import filters as f
from toolkit.privacy.rules import ALNUM, WORD, Check, Rule, lazy
from toolkit.privacy.types import Category

S = Category.SECRET
_E = r"(?![A-Za-z0-9_])"


def _value_ok(group: int | str = 0, *, need_digit: bool = True, min_distinct: int = 8) -> Check:
    """A provider-shaped key whose body is not a placeholder and looks generated."""

    def check(match: re.Match[str]) -> bool:
        value = match.group(group)
        if f.is_placeholder(value):
            return False
        if need_digit and not any(c.isdigit() for c in value):
            return False
        return len(set(value)) >= min_distinct

    return check


_OPENAI = lazy(r"(sk-(?:proj-|svcacct-|admin-|None-)?(?!ant-)[A-Za-z0-9_-]{20,200})" + _E)
_ANTHROPIC = lazy(r"(sk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_-]{20,200})" + _E)
_STRIPE = lazy(r"((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,120}|whsec_[A-Za-z0-9]{24,80})" + _E)
_GOOGLE = lazy(r"(AIza[0-9A-Za-z_-]{35})" + r"(?![A-Za-z0-9_-])")
_AWS_ID = lazy(r"((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[0-9A-Z]{16})(?![A-Z0-9])")
_AWS_SECRET = lazy(
    r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key|SecretAccessKey)[\"']?[ \t]*(?::=|=>|[:=])[ \t]*"
    r"[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)
_GITHUB = lazy(
    r"((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{40,80})" + _E
)
_GITLAB = lazy(r"((?:glpat|gldt|glptt|glrt|glsoat)-[A-Za-z0-9_-]{20,64})" + r"(?![A-Za-z0-9_-])")
_SLACK = lazy(r"(xox[abposre]-(?:\d+-)?[A-Za-z0-9-]{10,250})" + r"(?![A-Za-z0-9-])")
_SLACK_HOOK = lazy(r"(hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,200})")
_NPM = lazy(r"(npm_[A-Za-z0-9]{36})" + _E)
_PYPI = lazy(r"(pypi-AgE[A-Za-z0-9_-]{50,})" + r"(?![A-Za-z0-9_-])")
_HF = lazy(r"((?:hf_|api_org_)[A-Za-z0-9]{30,40})" + _E)
_AZURE = lazy(
    r"(?:AccountKey|SharedAccessKey|SharedSecretValue|PrimaryKey|SecondaryKey)[ \t]*=[ \t]*"
    r"([A-Za-z0-9+/]{30,}={0,2})"
)
_PEM = lazy(
    r"(-----BEGIN[ A-Z0-9]{0,20}PRIVATE KEY(?: BLOCK)?-----)"
    r"(?:\\r|\\n|\r|\n|[ \t\"',])*(?:[A-Za-z-]+:[^\n\\]*(?:\\n|\n)(?:\\n|\n)?)*"
    r"[ \t]*([A-Za-z0-9+/=]{32,})"
)
_JWT = lazy(r"(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})" + r"(?![A-Za-z0-9_.-])")
_BEARER = lazy(r"[Bb]earer[ \t]+([A-Za-z0-9._~+/=-]{16,})")
_AUTH_HEADER = lazy(
    r"(?i:authorization|proxy-authorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:Basic|Token|ApiKey|Api-Key|Digest|SSWS|token)[ \t]+([A-Za-z0-9._~+/=-]{8,})"
)
_URL_CREDS = lazy(
    r"([a-z][a-z0-9+.-]{1,20})://([^\s:/@\"'<>]{1,64}):([^\s@/\"'<>]{1,128})@([A-Za-z0-9.-]{1,253})"
)
_CURL_USER = lazy(r"(?<![^ \t\n])(?:-u|--user)[ \t]+[\"']?([^\s:\"']{1,64}):([^\s@\"']{3,128})")
_LABEL = (
    r"(?:password|passwd|pwd|passphrase|secret|secret[_.-]?key|client[_.-]?secret|api[_.-]?key|apikey|"
    r"access[_.-]?token|auth[_.-]?token|refresh[_.-]?token|private[_.-]?key|token|db[_.-]?pass)"
)
_ASSIGN = lazy(
    r"(?i:" + _LABEL + r")[\"']?[ \t]*(?::=|=>|[:=])[ \t]*"
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,200})(?P=q)|(?P<uv>[^\s\"',;&)}\]<>`]{1,200}))"
)
_CLI_FLAG = lazy(
    r"--(?i:password|passwd|token|api-key|secret|client-secret)(?:=|[ \t]+)"
    r"[\"']?(?P<uv>[^\s\"'`]{6,200})"
)
_ENTROPY_TOKEN = lazy(r"([A-Za-z0-9+/_-]{24,400}={0,2})(?![A-Za-z0-9+/=_-])")
_CONSTANT_NAME = lazy(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_WORD_SLUG = lazy(r"^[A-Za-z]+(?:[-_][A-Za-z]+){2,}$")
_DIGEST_LABEL = lazy(
    r"(?i:sha1|sha256|sha384|sha512|md5|integrity|checksum|digest|hash|etag|commit|revision|rev|"
    r"fingerprint|nonce|uuid|base64,|blake2b?|oid|tree|object)[\"']?[ \t]*[:=-]?[ \t]*[\"']?$"
)


def _pem_check(match: re.Match[str]) -> bool:
    return not f.is_placeholder(match.group(2)) and len(set(match.group(2))) >= 12


def _jwt_check(match: re.Match[str]) -> bool:
    import base64
    import binascii
    import json

    head = match.group(1).split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        header = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return isinstance(header, dict) and ("alg" in header or "typ" in header)


def _token_ok(value: str) -> bool:
    if f.is_placeholder(value) or f.is_env_read(value):
        return False
    if value.count(".") == 2 and value.startswith("eyJ"):
        return True  # a JWT after "Bearer"
    lower, upper, digit = f.char_classes(value)
    return digit and (lower or upper) and f.shannon_entropy(value) >= 3.0


def _bearer_check(match: re.Match[str]) -> bool:
    return _token_ok(match.group(1))


def _auth_check(match: re.Match[str]) -> bool:
    import base64
    import binascii

    value = match.group(1)
    if f.is_placeholder(value) or f.is_env_read(value):
        return False
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
        if ":" in decoded and decoded.isprintable():
            user, _, password = decoded.partition(":")
            return (
                bool(password)
                and not f.is_placeholder(password)
                and password.lower() not in {"password", "pass"}
            )
    except (binascii.Error, ValueError, UnicodeDecodeError):
        pass
    return _token_ok(value)


_PW_PLACEHOLDERS = frozenset(
    {"password", "passwd", "pass", "pwd", "secret", "token", "user", "username", "x"}
)


def _url_check(match: re.Match[str]) -> bool:
    user, password, host = match.group(2), match.group(3), match.group(4).lower()
    if password.lower() in _PW_PLACEHOLDERS or password == user or f.is_placeholder(password):
        return False
    if password.startswith("$") or password.startswith("%"):
        return False
    return not f.is_email_placeholder_domain(host)


def _curl_check(match: re.Match[str]) -> bool:
    password = match.group(2)
    return (
        password.lower() not in _PW_PLACEHOLDERS
        and not f.is_placeholder(password)
        and not f.is_env_read(password)
    )


def _full_label(match: re.Match[str]) -> str | None:
    """The whole key before the keyword (``db_password``), or None when the keyword is glued
    to a word (``mytoken``) rather than separated from it."""
    text, start = match.string, match.start()
    if start > 0 and text[start - 1] in ALNUM:
        return None
    begin = start
    while begin > 0 and (text[begin - 1] in WORD or text[begin - 1] in ".-"):
        begin -= 1
    keyword_end = start
    while keyword_end < len(text) and text[keyword_end] in WORD | {".", "-"}:
        keyword_end += 1
    return text[begin:keyword_end].lower()


def _assign_check(match: re.Match[str]) -> bool:
    label = _full_label(match)
    if label is None:
        return False
    quoted = match.group("qv")
    value = quoted if quoted is not None else match.group("uv")
    if value is None or f.is_literal_word(value) or f.is_env_read(value) or f.is_placeholder(value):
        return False
    if any(c.isspace() for c in value) or value.lower() == label:
        return False
    if _CONSTANT_NAME.match(value):
        return False  # ENV_KEY = "OPENAI_API_KEY": the name of where the secret lives
    tokenish = "token" in label or "key" in label
    if (
        tokenish
        and label.endswith("token")
        and not ("_" in label or "-" in label or "." in label)
        and quoted is None
    ):
        return False  # bare "token = next_token" in code
    if quoted is None and _unquoted_is_code(value):
        return False
    if tokenish and _WORD_SLUG.match(value):
        return False  # "demo-key-not-a-secret": generated keys are not words joined by dashes
    min_len = 12 if tokenish else 6
    if len(value) < min_len:
        return False
    if tokenish:
        return f.shannon_entropy(value) >= 3.0 and not f.is_uuid(value)
    return len(set(value)) >= 4


def _unquoted_is_code(value: str) -> bool:
    """``password = user_input``, ``pw = cfg.db.password``, ``key = load()``: code, not a value."""
    if "(" in value or "." in value and f.is_code_reference(value):
        return True
    if not any(c.isdigit() or not c.isalnum() for c in value):
        return True  # a bare word
    if f.is_code_reference(value):
        return not f.looks_random(value, min_len=8, min_entropy=3.0)
    return False


def _assign_span_group(match: re.Match[str]) -> str:
    if "qv" in match.re.groupindex and match.group("qv") is not None:
        return "qv"
    return "uv"


class _AssignRule(Rule):
    """``password = "..."``: the reported span is the value, quoted or not."""

    def spans(self, text: str, low: str | None = None) -> Iterator[tuple[int, int]]:
        for match in self.matches(text, low):
            if not self.starts_token(text, match.start()):
                continue
            if self.check is not None and not self.check(match):
                continue
            yield match.span(_assign_span_group(match))


def _cli_check(match: re.Match[str]) -> bool:
    value = match.group("uv")
    return not (
        f.is_env_read(value)
        or f.is_placeholder(value)
        or f.is_literal_word(value)
        or (value.isalpha() and value.islower())
    )


def _inside_public_pem(text: str, offset: int) -> bool:
    floor = max(0, offset - 8192)
    begin = text.rfind("-----BEGIN ", floor, offset)
    if begin == -1 or text.rfind("-----END ", floor, offset) > begin:
        return False
    return "PRIVATE" not in text[begin : begin + 60]


def _entropy_check_factory() -> Check:
    def check(match: re.Match[str]) -> bool:
        value = match.group(1).rstrip("=")
        # cheapest filters first: most candidates are identifiers, paths and digests
        lower, upper, digit = f.char_classes(value)
        if not (lower and upper and digit) or f.digit_count(value) < 2:
            return False  # camelCase and snake_case identifiers, words; hex digests are one case
        threshold = 4.2 if len(value) < 40 else 4.5
        if f.shannon_entropy(value) < threshold:
            return False
        if f.is_hex(value.replace("-", "")) or f.is_placeholder(value):
            return False  # git SHAs, sha256 digests, UUIDs: ids and digests, not secrets
        segments = re.split(r"[/_-]", value)
        if "/" in value and all(len(s) < 16 for s in segments):
            return False  # a path
        if len(segments) > 2 and sum(1 for s in segments if s.isalpha()) > len(segments) // 2:
            return False  # words joined by separators
        text = match.string
        before = text[max(0, match.start(1) - 40) : match.start(1)]
        if _DIGEST_LABEL.search(before) or before.endswith(("sha256-", "sha512-", "sha384-", "sha1-")):
            return False  # SRI hashes in lock files, labelled digests
        if before.rstrip().endswith("base64,"):
            return False  # a data: URI
        return not _inside_public_pem(text, match.start(1))  # certificate and public key bodies are public

    return check


SECRET_RULES: tuple[Rule, ...] = (
    Rule("anthropic-api-key", S, _ANTHROPIC, 1, _value_ok(1), ("sk-ant-",), priority=90, boundary=WORD),
    Rule("openai-api-key", S, _OPENAI, 1, _value_ok(1), ("sk-",), priority=85, boundary=WORD),
    Rule(
        "stripe-secret-key",
        S,
        _STRIPE,
        1,
        _value_ok(1),
        ("_live_", "_test_", "whsec_"),
        priority=90,
        boundary=WORD,
    ),
    Rule(
        "google-api-key", S, _GOOGLE, 1, _value_ok(1, need_digit=False), ("aiza",), priority=90, boundary=WORD
    ),
    Rule(
        "aws-access-key-id",
        S,
        _AWS_ID,
        1,
        lambda m: not m.group(1).endswith("EXAMPLE") and not f.is_placeholder(m.group(1)[4:]),
        ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "apka"),
        priority=90,
        boundary=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
    ),
    Rule(
        "aws-secret-access-key",
        S,
        _AWS_SECRET,
        1,
        lambda m: not m.group(1).endswith("EXAMPLEKEY") and f.looks_random(m.group(1), min_entropy=3.5),
        ("secret",),
        priority=90,
        anchor=lazy("aws|secret"),
    ),
    Rule(
        "github-token",
        S,
        _GITHUB,
        1,
        _value_ok(1),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        priority=90,
        boundary=WORD,
    ),
    Rule(
        "gitlab-token",
        S,
        _GITLAB,
        1,
        _value_ok(1),
        ("glpat-", "gldt-", "glptt-", "glrt-", "glsoat-"),
        priority=90,
        boundary=WORD,
    ),
    Rule("slack-token", S, _SLACK, 1, _value_ok(1), ("xox",), priority=90, boundary=WORD),
    Rule("slack-webhook", S, _SLACK_HOOK, 1, _value_ok(1), ("hooks.slack.com",), priority=90),
    Rule("npm-token", S, _NPM, 1, _value_ok(1), ("npm_",), priority=90, boundary=WORD),
    Rule("pypi-token", S, _PYPI, 1, _value_ok(1), ("pypi-age",), priority=90, boundary=WORD),
    Rule(
        "huggingface-token",
        S,
        _HF,
        1,
        _value_ok(1, need_digit=False, min_distinct=12),
        ("hf_", "api_org_"),
        priority=90,
        boundary=WORD,
    ),
    Rule(
        "azure-connection-string",
        S,
        _AZURE,
        1,
        lambda m: f.looks_random(m.group(1), min_entropy=3.5),
        ("accountkey", "sharedaccesskey", "sharedsecretvalue", "primarykey", "secondarykey"),
        priority=90,
    ),
    Rule("private-key", S, _PEM, 1, _pem_check, ("private key",), priority=95),
    Rule("jwt", S, _JWT, 1, _jwt_check, ("eyj",), priority=80, boundary=WORD),
    Rule(
        "authorization-header",
        S,
        _AUTH_HEADER,
        1,
        _auth_check,
        ("authorization",),
        priority=75,
        anchor=lazy("authorization|proxy-authorization"),
    ),
    Rule("bearer-token", S, _BEARER, 1, _bearer_check, ("bearer",), priority=70, boundary=ALNUM),
    Rule(
        "url-credentials",
        S,
        _URL_CREDS,
        3,
        _url_check,
        ("://",),
        priority=75,
        boundary=ALNUM | {"+", ".", "-"},
    ),
    Rule(
        "basic-auth-credentials",
        S,
        _CURL_USER,
        2,
        _curl_check,
        ("-u", "--user"),
        priority=70,
        anchor=lazy("-u|--user"),
    ),
    _AssignRule(
        "password-assignment",
        S,
        _ASSIGN,
        0,
        _assign_check,
        ("pass", "pwd", "secret", "key", "token"),
        priority=60,
        anchor=lazy("pass|pwd|secret|client|api|access|auth|refresh|private|token|db"),
    ),
    _AssignRule(
        "password-assignment", S, _CLI_FLAG, 0, _cli_check, ("--",), priority=60, boundary=ALNUM | {"-"}
    ),
    Rule(
        "high-entropy-string",
        S,
        _ENTROPY_TOKEN,
        1,
        _entropy_check_factory(),
        (),
        priority=10,
        boundary=WORD | {"+", "/", ".", "-"},
    ),
)
