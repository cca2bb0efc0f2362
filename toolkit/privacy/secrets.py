"""Secret detectors without a fixed provider format: PEM keys, JWTs, authorization headers,
credentials in URLs, SQL, ``password = ...`` and key-suffix assignments (``db_credential =``,
``slackToken:``), and high-entropy strings with look-alike filters. Provider formats live in
``providers.py``, command lines in ``commandline.py``, the other authorization schemes and
connection strings in ``credentials.py``.

Every pattern is linear: possessive bodies, bounded windows, boundaries checked after a
literal. The high-entropy rule finds maximal token runs in one pass (``[...]{24,}+`` cannot
backtrack) and judges each run in Python.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import unquote

from toolkit.privacy import filters as f
from toolkit.privacy.commandline import (
    COMMAND_LINE_RULES,
    LONG_FLAG_RULE,
    PW_PLACEHOLDERS,
    ValueRule,
    line_before,
    password_ok,
)
from toolkit.privacy.credentials import CREDENTIAL_RULES
from toolkit.privacy.providers import PROVIDER_RULES
from toolkit.privacy.rules import ALNUM, WORD, Rule, Tuning, lazy, lead
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.types import ARTIFACT_CONTEXTS, Category, Context

S = Category.SECRET
SOURCE_ONLY = frozenset({Context.SOURCE})

_AWS_SECRET = lazy(
    # "aws configure set aws_secret_access_key X" separates by a space alone
    r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key|SecretAccessKey)[\"']?(?:[ \t]*+(?::=|=>|[:=])|(?=[ \t]))[ \t]*+"
    r"[\"']?([A-Za-z0-9/+]{40}+)(?![A-Za-z0-9/+=])"
)
_AZURE = lazy(
    r"(?:AccountKey|SharedAccessKey|SharedSecretValue|PrimaryKey|SecondaryKey)[ \t]*+=[ \t]*+"
    r"([A-Za-z0-9+/]{30,}+={0,2}+)"
)
_PEM = lazy(
    r"(-----BEGIN[ A-Z0-9]{0,20}PRIVATE KEY(?: BLOCK)?-----)"
    r"(?:\\r|\\n|\r|\n|[ \t\"',])*+(?:[A-Za-z-]++:[^\n\\]*+(?:\\n|\n)(?:\\n|\n)?)*+"
    r"[ \t]*+([A-Za-z0-9+/=]{32,}+)"
)
_JWT = lazy(
    "(" + lead(("eyJ",), "A-Za-z0-9_.-") + r"[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+)"
    r"(?![A-Za-z0-9_.-])"
)
_BEARER = lazy(lead(("Bearer", "bearer"), "A-Za-z0-9") + r"[ \t]++([A-Za-z0-9._~+/=-]{16,}+)")
_AUTH_HEADER = lazy(
    r"(?i:authorization|proxy-authorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
    r"(?:Basic|Token|ApiKey|Api-Key|Digest|SSWS|token)[ \t]++([A-Za-z0-9._~+/=-]{8,}+)"
)
# starts at "://" (re jumps to the literal); the scheme before it is checked in Python
# starts with its literal, so re jumps to it; "proxy-authorization" ends in it too
_AUTH_ANCHOR = lazy(
    r"authorization[\"']?[ \t]*+[:=][ \t]*+[\"']?(?:basic|token|apikey|api-key|digest|ssws)[ \t]"
)
_URL_CREDS = lazy(r"://([^\s:/@\"'<>]{0,64}+):([^\s@/\"'<>]{1,128}+)@([A-Za-z0-9.-]{1,253}+)")
_SCHEME = lazy(r"[a-z][a-z0-9+.-]{1,20}$")
_LABEL = (
    r"(?:password|passwd|pwd|passphrase|secret|secret[_.-]?key|client[_.-]?secret|api[_.-]?key|apikey|"
    r"access[_.-]?token|auth[_.-]?token|refresh[_.-]?token|private[_.-]?key|token|db[_.-]?pass|"
    # key-suffix names: only as the last part of a longer name, after a separator or a camelCase
    # capital (x-auth-key, authKey, smtp_pass, gi_reo_gi_api), or alone (service_credential),
    # judged by _suffix_check; a look-behind keeps "key=key=..." from matching at every repeat
    r"(?<=[_.-])key|(?<=[a-z])(?-i:K)ey|(?<=[_.-])pass|sshpass|credentials|credential|creds|_api)"
)
# the same over the lower-cased text the anchor reads (where a capital is lower case too)
_LABEL_LOW = _LABEL.replace("(?<=[a-z])(?-i:K)ey", "(?<=[a-z])key")
_VALUE = (
    # an unquoted value may hold "&" (password: Qm7x&Lp2vR9zK4w); a part after "&" that is
    # followed by "=" is the next field of a query string (?password=x&next=1), not the value
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,200}+)(?P=q)|"
    # (a lookahead, not a possessive group: Python before 3.11.5 ends a possessive group's repeat
    # wrongly and took "&next=" into the value)
    r"(?P<uv>[^\s\"',;&)}\]<>`]{1,200}+(?:&(?![^\s\"',;&)}\]<>`=]{0,200}=)[^\s\"',;&)}\]<>`=]{1,200}+)*))"
)
_ASSIGN = lazy(r"(?i:(?P<label>" + _LABEL + r"))[\"']?[ \t]*+(?::=|=>|[:=])[ \t]*+" + _VALUE)

# SQL: MySQL/MariaDB "IDENTIFIED BY 'x'", PostgreSQL "CREATE/ALTER USER|ROLE ... PASSWORD 'x'"
_SQL_IDENTIFIED = lazy(
    r"(?i:identified)[ \t]++(?i:by)[ \t]++(?:(?i:password)[ \t]++)?(['\"])([^'\"\n]{1,200}+)\1"
)
_SQL_PASSWORD = lazy(r"(?i:password)[ \t]++(['\"])([^'\"\n]{1,200}+)\1")
_SQL_USER = lazy(r"(?i:\b(?:create|alter)[ \t]++(?:user|role)\b)")
# documentation pairs: "login: admin / password: hunter2", "user=bob, pass=letmein"
_PAIR = lazy(
    r"(?i:login|user(?:name)?|account)[ \t]*+[:=][ \t]*+[^\s/,;|]{1,64}+[ \t]*+(?:/|,|;|\||(?i:and))[ \t]*+"
    r"(?i:password|passwd|pass|pwd)[ \t]*+[:=][ \t]*+[\"'`]?([^\s\"'`,;|]{3,128}+)"
)
_RUN_CLASS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_MIN_ENTROPY_RUN = 24
# what the high-entropy rule reads (its runs are found by ``token_runs``, same result)
_ENTROPY_RUN = lazy(r"[A-Za-z0-9+/_-]{24,}+={0,2}+")
_CONSTANT_NAME = lazy(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_WORD_SLUG = lazy(r"^[A-Za-z]+(?:[-_][A-Za-z]+){2,}$")
_DIGEST_LABEL = lazy(
    r"(?i:sha1|sha256|sha384|sha512|md5|integrity|checksum|digest|hash|etag|commit|revision|rev|"
    r"fingerprint|nonce|uuid|base64,|blake2b?|oid|tree|object|h1|go\.sum)[\"']?[ \t]*+[:=-]?[ \t]*+[\"']?$"
)
_MAX_ENTROPY_RUN = 400
BATCH_SEPARATOR = "\n\x00\n"  # between files scanned as one text (files.scan_batch); no rule spans it


def _pem_check(match: re.Match[str]) -> bool:
    return not f.is_placeholder(match.group(2)) and len(set(match.group(2))) >= 12


def _jwt_check(match: re.Match[str]) -> bool:
    head = match.group(1).split(".", 1)[0]
    raw = f.b64decode(head + "=" * (-len(head) % 4), urlsafe=True)
    if raw is None:
        return False
    try:
        header = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
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
    value = match.group(1)
    if value.isalpha() and (value.islower() or value.isupper()):
        return False  # a word ("authorization"), not a token or base64 credentials
    if f.is_placeholder(value) or f.is_env_read(value):
        return False
    decoded = _basic_text(value)
    if decoded is not None and ":" in decoded and decoded.isprintable():
        user, _, password = decoded.partition(":")
        return (
            bool(password) and not f.is_placeholder(password) and password.lower() not in {"password", "pass"}
        )
    return _token_ok(value)


def _basic_text(value: str) -> str | None:
    """``value`` (padding optional) decoded from base64 to UTF-8 text, or None."""
    raw = f.b64decode(value + "=" * (-len(value) % 4), validate=True)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _source_auth_check(match: re.Match[str]) -> bool:
    """In source and docs, the basic-not-credentials filter too: a ``Basic`` value carries
    base64 of ``user:password`` (RFC 7617), so one that does not decode to it is a test of a
    malformed header, not a credential. Workflow artifacts keep refusing any such value."""
    if not _auth_check(match):
        return False
    if not match.string[match.start() : match.start(1)].rstrip().endswith("Basic"):
        return True
    decoded = _basic_text(match.group(1))
    return decoded is not None and ":" in decoded and decoded.isprintable()


def _url_check(match: re.Match[str]) -> bool:
    text, start = match.string, match.start()
    scheme = _SCHEME.compiled.search(text, max(0, start - 21), start) if start else None
    if scheme is None or scheme.end() != start:
        return False
    if scheme.start() > 0 and text[scheme.start() - 1] in ALNUM | {"+", ".", "-"}:
        return False
    user, password, host = match.group(1), match.group(2), match.group(3).lower()
    if any(c in _NOT_USERINFO for c in user + password):
        return False  # the invalid-userinfo filter: no URL parser accepts these there unescaped
    if any(c in password for c in "{}<>"):
        return False  # a template ({PASSWORD}, <password>)
    return _url_password_ok(user, password, host)


def _url_password_ok(user: str, password: str, host: str) -> bool:
    """Whether the password of a URL's userinfo (percent-decoded when escaped) is a real one:
    not a placeholder, an example, a variable or too short, and not at an example host."""
    if "%" in user + password:
        # percent-encoded userinfo (RFC 3986): judged decoded, and only when every escape is
        # well formed and the password decodes to something random-looking; URL-parser test
        # vectors encode odd characters into short or malformed values
        if _BAD_ESCAPE.search(user + password):
            return False
        password = unquote(password)
        if not (f.looks_random(password, min_len=8, min_entropy=3.0) or _symbol_password(password)):
            return False
    if password.lower() in PW_PLACEHOLDERS or password == user or f.is_placeholder(password):
        return False
    if password.startswith(("$", "%")) or f.is_example_value(password) or len(password) < 4:
        return False
    if not user and len(password) < 6:
        return False  # redis://:pw@host: a password alone must stand on its own
    return not f.is_email_placeholder_domain(host)


_BAD_ESCAPE = lazy(r"%(?![0-9A-Fa-f]{2})")


def _symbol_password(value: str) -> bool:
    """A decoded password of letters of both cases and symbols without a digit (``Kx%Qm!Lz...``):
    the symbols are what made someone percent-encode it. Long and varied enough that a URL
    parser's test vector (short, one odd character) is not one."""
    lower, upper, _digit = f.char_classes(value)
    symbols = sum(1 for c in value if not c.isalnum())
    return len(value) >= 10 and lower and upper and symbols >= 1 and f.shannon_entropy(value) >= 3.0


# RFC 3986 userinfo is unreserved characters, sub-delims, ":" and percent-escapes. Square
# brackets there make URL parsers fail ("Invalid IPv6 URL"), and quotes, backquotes and control
# characters end or break a URL: a URL holding them unescaped is URL-parser test data
_NOT_USERINFO = frozenset('[]"`') | frozenset(chr(c) for c in range(32)) | {"\x7f"}


_LABEL_BEFORE = lazy(r"[A-Za-z0-9_.-]{0,64}$")
_LABEL_AFTER = lazy(r"[A-Za-z0-9_.-]{0,64}")


# glued upper-case names that are a client's password variable (PGPASSWORD=x psql, SSHPASS=x)
_GLUED_NAMES = frozenset({"pgpassword", "pgpass", "sshpass"})
_SUFFIX_WORDS = frozenset({"credentials", "credential", "creds", "api", "key", "pass"})
# "<word>_key" names whose value is a secret key (detect-secrets' and gitleaks' key words)
_KEY_PREFIXES = frozenset(
    {
        "api", "auth", "service", "account", "db", "database", "priv", "private", "client", "secret",
        "master", "encryption", "signing", "app", "subscription", "storage", "shared", "license",
    }
)  # fmt: skip
# "<word>_token" names that are not credentials: paging cursors, sync markers, model limits
_NOT_SECRET_TOKENS = frozenset(
    {"next", "page", "continuation", "sync", "cursor", "pagination", "prev", "previous", "resume", "max"}
)
_NOT_SECRET_TOKEN_NAMES = frozenset((word, "token") for word in _NOT_SECRET_TOKENS)
_CAMEL = lazy(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _full_label(match: re.Match[str]) -> tuple[str, bool] | None:
    """The whole key around the keyword (``db_password``) and whether the keyword is glued to
    the word before it as a camelCase part (``slackToken``) or a known upper-case name
    (``PGPASSWORD``); None when it is glued inside a word (``mytoken``, ``compass``). Bounded
    windows, no per-character loop."""
    text, start = match.string, match.start()
    glued = start > 0 and text[start - 1] in ALNUM and text[start] != "_"  # "_api" brings its separator
    if glued and not (text[start].isupper() and (text[start - 1].islower() or text[start - 1].isdigit())):
        glued_name = True  # upper case glued: only the known client variables
    else:
        glued_name = False
    before = _LABEL_BEFORE.compiled.search(text, max(0, start - 64), start)
    after = _LABEL_AFTER.compiled.match(text, start, min(len(text), start + 64))
    begin = before.start() if before else start
    end = after.end() if after else start
    label = text[begin:end]
    if glued_name and label.lower() not in _GLUED_NAMES and not any(c in match.group("label") for c in "_.-"):
        return None  # (a keyword with a separator ends in a word of its own: oauth_token)
    return label, glued


def _label_parts(label: str) -> list[str]:
    """The words of a key, lower case: ``x-auth-key`` and ``xAuthKey`` -> x, auth, key."""
    return [w.lower() for part in re.split(r"[_.\-]", label) for w in _CAMEL.compiled.findall(part)]


def _generated(value: str) -> bool:
    """A value shaped like a generated key or token rather than a name, a URL or a path: long,
    one unbroken random-looking run, letters mixed with digits (or both cases when long)."""
    if len(value) < 12 or "://" in value or value.startswith(("/", "~", ".")):
        return False
    lower, upper, digit = f.char_classes(value)
    if not (digit and (lower or upper)) and not (lower and upper and len(value) >= 20):
        return False
    if max(len(run) for run in re.split(r"[-_.:/]", value)) < 8:
        return False  # short parts joined: a slug, a version, a host name
    return f.shannon_entropy(value) >= 3.0 and not f.is_uuid(value) and not f.is_placeholder(value)


def _suffix_check(keyword: str, parts: list[str], value: str) -> bool:
    """The key-suffix names: the last part of a longer name (``gi_reo_gi_api``,
    ``service_credential``, ``x-auth-key``, ``smtp_pass``)."""
    if keyword in ("api", "key", "pass") and len(parts) < 2:
        return False  # "api", "key", "pass" alone name too many things
    if keyword == "key" and parts[-2] not in _KEY_PREFIXES:
        return False  # sort_key, cache_key, public_key, primary_key
    if keyword == "pass":
        return not value.isalpha() and len(set(value)) >= 4  # a password, not a word
    return _generated(value)


def _assign_check(match: re.Match[str]) -> bool:
    """A ``password = value`` assignment: the cheap value and label rejections, then the
    verdict on the value for the kind of name it is assigned to (`_assign_verdict`)."""
    quoted = match.group("qv")
    value = quoted if quoted is not None else match.group("uv")
    if value is None or len(value) < 6 or any(c.isspace() for c in value):
        return False  # cheapest rejections first: hostile input repeats these by the thousand
    found = _full_label(match)
    if found is None:
        return False
    original, glued = found
    label = original.lower()
    if value.lower() == label:
        return False
    keyword = match.group("label").lower().lstrip("_")
    parts = _label_parts(original) if keyword in _SUFFIX_WORDS or glued or "token" in keyword else []
    if keyword in ("key", "api") and (
        len(parts) < 2 or (keyword == "key" and parts[-2] not in _KEY_PREFIXES)
    ):
        return False  # early: "key": and "api": fields are everywhere in JSON and YAML
    return _assign_verdict(match, value, quoted is not None, label, keyword, parts, glued)


def _assign_verdict(
    match: re.Match[str], value: str, quoted: bool, label: str, keyword: str, parts: list[str], glued: bool
) -> bool:
    """Whether the value assigned to a credential name is a secret: not a digest, a code
    expression or a constant's name, and shaped like a secret for that kind of name (a key
    suffix, a token or key name, or a password)."""
    if "hash" in label or "digest" in label or f.is_password_hash(value):
        return False  # hashed_password, password_hash: a digest of the secret, not the secret
    if not f.is_value(value, quoted=quoted, text=match.string, end=match.end()):
        return False
    if _CONSTANT_NAME.match(value):
        return False  # ENV_KEY = "OPENAI_API_KEY": the name of where the secret lives
    if keyword in _SUFFIX_WORDS and label not in _GLUED_NAMES:
        return _suffix_check(keyword, parts, value)
    if tuple(parts[-2:]) in _NOT_SECRET_TOKEN_NAMES:
        return False  # next_token, pageToken, max_tokens: cursors and limits
    if "token" not in label and "key" not in label:
        return len(set(value)) >= 4
    if label.endswith("token") and not glued and not quoted and _NAME_SEPARATORS.isdisjoint(label):
        return False  # bare "token = next_token" in code
    if _WORD_SLUG.match(value) or len(value) < 12:
        return False  # "demo-key-not-a-secret": generated keys are not words joined by dashes
    return f.shannon_entropy(value) >= 3.0 and not f.is_uuid(value)


_NAME_SEPARATORS = frozenset("_-.")


def _sql_identified_check(match: re.Match[str]) -> bool:
    return password_ok(match.group(2))


def _sql_password_check(match: re.Match[str]) -> bool:
    return bool(_SQL_USER.search(line_before(match.string, match.start()))) and password_ok(match.group(2))


def _pair_check(match: re.Match[str]) -> bool:
    """A documented pair ("login: admin / password: bluebird"): a bare word counts here, but
    not code (``password=auth[1]``, ``password: str``) nor an example value."""
    value = match.group(1)
    follow = match.string[match.end() : match.end() + 1]
    if follow in {"(", "[", "."} or any(c in value for c in "()[]{}.") or len(value) < 4:
        return False
    return not f.is_literal_word(value) and password_ok(value)


def _inside_pem(text: str, offset: int) -> bool:
    """Inside a PEM block: a certificate or public key body is public, and a private key's
    body is already one ``private-key`` finding (its header), not one per line."""
    floor = max(0, offset - 16384, text.rfind(BATCH_SEPARATOR, max(0, offset - 16384), offset))
    begin = text.rfind("-----BEGIN ", floor, offset)
    return begin != -1 and text.rfind("-----END ", begin, offset) == -1


_RUN_BOUNDARY = frozenset(".")


def entropy_candidate(value: str) -> bool:
    """Whether one token run is a random-looking secret (cheapest filters first: most runs are
    identifiers, paths and digests)."""
    value = value.rstrip("=")
    if len(value) < 24 or len(value) > _MAX_ENTROPY_RUN:
        return False
    lower, upper, digit = f.char_classes(value)
    if not (lower and upper and digit) or f.digit_count(value) < 2:
        return False  # camelCase and snake_case identifiers, words; hex digests are one case
    threshold = 4.2 if len(value) < 40 else 4.5
    if f.shannon_entropy(value) < threshold:
        return False
    return not _digest_path_or_words(value)


def _digest_path_or_words(value: str) -> bool:
    """Whether a random-looking run is something else: a digest or id (git SHA, sha256, UUID),
    a placeholder, a path of short parts, or mostly words joined by separators."""
    if f.is_hex(value.replace("-", "")) or f.is_placeholder(value) or f.is_failed_checksum(value):
        return True  # git SHAs, sha256 digests, UUIDs: ids and digests, not secrets
    segments = re.split(r"[/_-]", value)
    if "/" in value and all(len(s) < 16 for s in segments):
        return True  # a path
    return len(segments) > 2 and sum(1 for s in segments if s.isalpha()) > len(segments) // 2


# token characters (the high-entropy rule's run class) -> "a", everything else -> " "
_RUN_MARKS = bytes(97 if chr(i) in _RUN_CLASS else 32 for i in range(256))
_RUN_SEED = b"a" * _MIN_ENTROPY_RUN


_MARK_CHUNK = 256 * 1024


def token_runs(view: ScanText) -> Iterator[tuple[int, int]]:
    """(start, end) of every maximal run of at least 24 token characters plus up to two ``=``:
    the matches of ``_ENTROPY_RUN``, found without a regex. The ASCII view is translated to
    one mark per character (a table lookup in C), then a 24-mark needle is searched with the
    substring search, which skips ahead through ordinary words instead of trying a run at
    each of their letters. The marks are made a chunk at a time (each chunk reaching 23
    characters into the next, so a run starting in it is seen whole enough to be found): a
    marked copy of the whole text was one more copy of a long line held during the scan."""
    data = view.ascii_slice
    text = view.text
    size = len(text)
    reach = _MIN_ENTROPY_RUN - 1
    base, marks = 0, data(0, _MARK_CHUNK + reach).translate(_RUN_MARKS)
    at = marks.find(_RUN_SEED)
    while True:
        while at == -1:  # no run starts in this chunk: the next one
            base += _MARK_CHUNK
            if base >= size:
                return
            marks = data(base, base + _MARK_CHUNK + reach).translate(_RUN_MARKS)
            at = marks.find(_RUN_SEED)
        start = base + at
        end = marks.find(b" ", at + _MIN_ENTROPY_RUN)
        while end == -1 and base + len(marks) < size:  # the run goes on past this chunk
            base += len(marks)
            marks = data(base, base + _MARK_CHUNK + reach).translate(_RUN_MARKS)
            end = marks.find(b" ")
        end = size if end == -1 else base + end
        for _ in range(2):  # ={0,2}+
            if text.startswith("=", end):
                end += 1
        yield start, end
        if end >= base + _MARK_CHUNK:  # the next run starts in a later chunk
            base = end
            marks = data(base, base + _MARK_CHUNK + reach).translate(_RUN_MARKS)
            at = marks.find(_RUN_SEED)
        else:
            at = marks.find(_RUN_SEED, end - base)


_NOT_DIGITS = bytes(c for c in range(256) if not 48 <= c <= 57)


def mixed_run(run: bytes) -> bool:
    """Lower case, upper case and at least two digits: what ``entropy_candidate`` asks first,
    answered with byte methods in C (most long runs are identifiers that fail it)."""
    return run.upper() != run and run.lower() != run and len(run.translate(None, _NOT_DIGITS)) >= 2


class _EntropyRule(Rule):
    """High-entropy strings: maximal token runs found in one linear pass, judged in Python."""

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        for start, end in token_runs(view):
            if end - start > _MAX_ENTROPY_RUN + 2:
                continue  # a blob (embedded image, bundle), not a credential
            if start and text[start - 1] in _RUN_BOUNDARY:
                continue  # the tail of a dotted name or a JWT part
            if not mixed_run(view.ascii_slice(start, end)) or not entropy_candidate(text[start:end]):
                continue
            before = text[max(0, start - 40) : start]
            if _DIGEST_LABEL.search(before) or before.endswith(("sha256-", "sha512-", "sha384-", "sha1-")):
                continue  # SRI hashes in lock files, labelled digests
            if before.rstrip().endswith("base64,"):
                continue  # a data: URI
            if f.is_password_hash(text[max(0, start - 80) : start]):
                continue  # a segment of a stored password hash ($argon2id$..., $2b$12$...)
            if _inside_pem(text, start):
                continue
            if f.entropy_lookalike(text, start, end):
                continue  # the named look-alike filters (identifiers, public keys, digests in tests...)
            yield start, end


SECRET_RULES: tuple[Rule, ...] = PROVIDER_RULES + (
    Rule(
        id="aws-secret-access-key",
        category=S,
        pattern=_AWS_SECRET,
        group=1,
        check=lambda m: not m.group(1).endswith("EXAMPLEKEY") and f.looks_random(m.group(1), min_entropy=3.5),
        priority=90,
        tuning=Tuning(
            keywords=("secret",),
            anchor=lazy(
                r"(?:aws_?secret_?(?:access_?)?key|secret_?access_?key|secretaccesskey)[\"']?(?:[ \t]*+(?::=|=>|[:=])|[ \t])"
            ),
            seeds=("secret",),
            near=(0, 4),  # aws_secret: "secret" 3-4 characters into the anchor
        ),
    ),
    Rule(
        id="azure-connection-string",
        category=S,
        pattern=_AZURE,
        group=1,
        check=lambda m: f.looks_random(m.group(1), min_entropy=3.5),
        priority=90,
        tuning=Tuning(
            literals=("AccountKey", "SharedAccessKey", "SharedSecretValue", "PrimaryKey", "SecondaryKey")
        ),
    ),
    Rule(
        id="private-key",
        category=S,
        pattern=_PEM,
        group=1,
        check=_pem_check,
        priority=95,
        tuning=Tuning(literals=("PRIVATE KEY",)),
    ),
    Rule(
        id="jwt",
        category=S,
        pattern=_JWT,
        group=1,
        check=_jwt_check,
        priority=80,
        tuning=Tuning(literals=("eyJ",)),
    ),
    *(
        Rule(
            id="authorization-header",
            category=S,
            pattern=_AUTH_HEADER,
            group=1,
            check=check,
            contexts=contexts,
            priority=75,
            heuristic=True,
            tuning=Tuning(keywords=("authorization",), anchor=_AUTH_ANCHOR),
        )
        for check, contexts in ((_source_auth_check, SOURCE_ONLY), (_auth_check, ARTIFACT_CONTEXTS))
    ),
    Rule(
        id="bearer-token",
        category=S,
        pattern=_BEARER,
        group=1,
        check=_bearer_check,
        priority=70,
        heuristic=True,
        tuning=Tuning(keywords=("bearer",), seeds=("bearer",)),
    ),
    Rule(
        id="url-credentials",
        category=S,
        pattern=_URL_CREDS,
        group=2,
        check=_url_check,
        priority=75,
        tuning=Tuning(keywords=("://",)),
    ),
    Rule(
        id="sql-password",
        category=S,
        pattern=_SQL_IDENTIFIED,
        group=2,
        check=_sql_identified_check,
        priority=72,
        heuristic=True,
        tuning=Tuning(keywords=("identified",), anchor=lazy("identified")),
    ),
    Rule(
        id="sql-password",
        category=S,
        pattern=_SQL_PASSWORD,
        group=2,
        check=_sql_password_check,
        priority=72,
        boundary=WORD,
        heuristic=True,
        tuning=Tuning(keywords=("password",), anchor=lazy("password")),
    ),
    *COMMAND_LINE_RULES,
    *CREDENTIAL_RULES,
    Rule(
        id="credential-pair",
        category=S,
        pattern=_PAIR,
        group=1,
        check=_pair_check,
        priority=65,
        boundary=WORD,
        heuristic=True,
        tuning=Tuning(
            keywords=("pass", "pwd"),
            anchor=lazy(r"(?:login|user(?:name)?|account)[ \t]*+[:=]"),
            seeds=("login", "user", "account"),
        ),
    ),
    ValueRule(
        id="password-assignment",
        category=S,
        pattern=_ASSIGN,
        check=_assign_check,
        priority=60,
        heuristic=True,
        tuning=Tuning(
            keywords=("pass", "pwd", "secret", "key", "token", "cred", "_api"),
            # the label and its separator, over the lower-cased text: hits only where a value follows
            anchor=lazy(_LABEL_LOW + r"[\"']?[ \t]*+(?::=|=>|[:=])"),
            # every label holds one of these at most 8 characters in (private_key, refresh-token);
            # ("_api" is a label with its separator: only a name's last part)
            seeds=("pass", "pwd", "secret", "key", "token", "cred", "_api"),
            near=(0, 8),
        ),
    ),
    LONG_FLAG_RULE,
    _EntropyRule(
        id="high-entropy-string",
        category=S,
        pattern=_ENTROPY_RUN,
        priority=10,
        heuristic=True,
    ),
)
