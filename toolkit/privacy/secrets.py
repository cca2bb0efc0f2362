"""Secret detectors without a fixed provider format: PEM keys, JWTs, authorization headers,
credentials in URLs, command lines, SQL and ``password = ...`` assignments, and high-entropy
strings with look-alike filters. Provider formats live in ``providers.py``.

Every pattern is linear: possessive bodies, bounded windows, boundaries checked after a
literal. The high-entropy rule finds maximal token runs in one pass (``[...]{24,}+`` cannot
backtrack) and judges each run in Python.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

from toolkit.privacy import filters as f
from toolkit.privacy.providers import PROVIDER_RULES
from toolkit.privacy.rules import ALNUM, WORD, Rule, ScanText, lazy, lead
from toolkit.privacy.types import ARTIFACT_CONTEXTS, Category, Context

S = Category.SECRET
SOURCE_ONLY = frozenset({Context.SOURCE})

_AWS_SECRET = lazy(
    r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key|SecretAccessKey)[\"']?[ \t]*+(?::=|=>|[:=])[ \t]*+"
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
_URL_CREDS = lazy(r"://([^\s:/@\"'<>]{1,64}+):([^\s@/\"'<>]{1,128}+)@([A-Za-z0-9.-]{1,253}+)")
_SCHEME = lazy(r"[a-z][a-z0-9+.-]{1,20}$")
_CURL_USER = lazy(r"(?<![^ \t\n])(?:-u|--user)[ \t]++[\"']?([^\s:\"']{1,64}+):([^\s@\"']{3,128}+)")
_LABEL = (
    r"(?:password|passwd|pwd|passphrase|secret|secret[_.-]?key|client[_.-]?secret|api[_.-]?key|apikey|"
    r"access[_.-]?token|auth[_.-]?token|refresh[_.-]?token|private[_.-]?key|token|db[_.-]?pass)"
)
_ASSIGN = lazy(
    r"(?i:" + _LABEL + r")[\"']?[ \t]*+(?::=|=>|[:=])[ \t]*+"
    # an unquoted value may hold "&" (password: Qm7x&Lp2vR9zK4w); a part after "&" that is
    # followed by "=" is the next field of a query string (?password=x&next=1), not the value
    r"(?:(?P<q>[\"'`])(?P<qv>[^\"'`\n]{1,200}+)(?P=q)|"
    # (a lookahead, not a possessive group: Python before 3.11.5 ends a possessive group's repeat
    # wrongly and took "&next=" into the value)
    r"(?P<uv>[^\s\"',;&)}\]<>`]{1,200}+(?:&(?![^\s\"',;&)}\]<>`=]{0,200}=)[^\s\"',;&)}\]<>`=]{1,200}+)*))"
)
_CLI_FLAG = lazy(
    r"--(?i:password|passwd|token|api-key|secret|client-secret)(?:=|[ \t]++)"
    r"[\"']?(?P<uv>[^\s\"'`]{6,200}+)"
)
# SQL: MySQL/MariaDB "IDENTIFIED BY 'x'", PostgreSQL "CREATE/ALTER USER|ROLE ... PASSWORD 'x'"
_SQL_IDENTIFIED = lazy(
    r"(?i:identified)[ \t]++(?i:by)[ \t]++(?:(?i:password)[ \t]++)?(['\"])([^'\"\n]{1,200}+)\1"
)
_SQL_PASSWORD = lazy(r"(?i:password)[ \t]++(['\"])([^'\"\n]{1,200}+)\1")
_SQL_USER = lazy(r"(?i:\b(?:create|alter)[ \t]++(?:user|role)\b)")
# command lines: mysql -pSECRET (glued), sshpass -p SECRET
_MYSQL_P = lazy(r"(?<![^ \t])-p([^\s'\"`]{3,128}+)")
_MYSQL_CMD = lazy(r"(?i:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlsh)\b)")
_SSHPASS = lazy(r"(?i:sshpass)[ \t]++-p[ \t]*+([\"']?)([^\s'\"`]{3,128}+)\1")
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
    if value.isalpha() and (value.islower() or value.isupper()):
        return False  # a word ("authorization"), not a token or base64 credentials
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


def _source_auth_check(match: re.Match[str]) -> bool:
    """In source and docs, the basic-not-credentials filter too: a ``Basic`` value carries
    base64 of ``user:password`` (RFC 7617), so one that does not decode to it is a test of a
    malformed header, not a credential. Workflow artifacts keep refusing any such value."""
    import base64
    import binascii

    if not _auth_check(match):
        return False
    if not match.string[match.start() : match.start(1)].rstrip().endswith("Basic"):
        return True
    value = match.group(1)
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


_PW_PLACEHOLDERS = frozenset(
    {"password", "passwd", "pass", "pwd", "secret", "token", "user", "username", "x"}
)


def _url_check(match: re.Match[str]) -> bool:
    text, start = match.string, match.start()
    scheme = _SCHEME.compiled.search(text, max(0, start - 21), start) if start else None
    if scheme is None or scheme.end() != start:
        return False
    if scheme.start() > 0 and text[scheme.start() - 1] in ALNUM | {"+", ".", "-"}:
        return False
    user, password, host = match.group(1), match.group(2), match.group(3).lower()
    if password.lower() in _PW_PLACEHOLDERS or password == user or f.is_placeholder(password):
        return False
    if password.startswith(("$", "%")) or f.is_example_value(password) or len(password) < 4:
        return False
    if any(c in password for c in "{}<>") or "%" in user + password:
        return False  # a template ({PASSWORD}) or percent-encoded URL-parsing test data
    if any(c in _NOT_USERINFO for c in user + password):
        return False  # the invalid-userinfo filter: no URL parser accepts these there unescaped
    return not f.is_email_placeholder_domain(host)


# RFC 3986 userinfo is unreserved characters, sub-delims, ":" and percent-escapes. Square
# brackets there make URL parsers fail ("Invalid IPv6 URL"), and quotes, backquotes and control
# characters end or break a URL: a URL holding them unescaped is URL-parser test data
_NOT_USERINFO = frozenset('[]"`') | frozenset(chr(c) for c in range(32)) | {"\x7f"}


def _curl_check(match: re.Match[str]) -> bool:
    password = match.group(2)
    return (
        password.lower() not in _PW_PLACEHOLDERS
        and not f.is_placeholder(password)
        and not f.is_env_read(password)
        and not f.is_example_value(password)
    )


_LABEL_BEFORE = lazy(r"[A-Za-z0-9_.-]{0,64}$")
_LABEL_AFTER = lazy(r"[A-Za-z0-9_.-]{0,64}")


def _full_label(match: re.Match[str]) -> str | None:
    """The whole key around the keyword (``db_password``), or None when the keyword is glued
    to a word (``mytoken``) rather than separated from it. Bounded windows, no per-character
    loop."""
    text, start = match.string, match.start()
    if start > 0 and text[start - 1] in ALNUM:
        return None
    before = _LABEL_BEFORE.compiled.search(text, max(0, start - 64), start)
    after = _LABEL_AFTER.compiled.match(text, start, min(len(text), start + 64))
    begin = before.start() if before else start
    end = after.end() if after else start
    return text[begin:end].lower()


def _assign_check(match: re.Match[str]) -> bool:
    quoted = match.group("qv")
    value = quoted if quoted is not None else match.group("uv")
    if value is None or len(value) < 6 or any(c.isspace() for c in value):
        return False  # cheapest rejections first: hostile input repeats these by the thousand
    label = _full_label(match)
    if label is None or value.lower() == label:
        return False
    if "hash" in label or "digest" in label or f.is_password_hash(value):
        return False  # hashed_password, password_hash: a digest of the secret, not the secret
    if not f.is_value(value, quoted=quoted is not None, text=match.string, end=match.end()):
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
    if tokenish and _WORD_SLUG.match(value):
        return False  # "demo-key-not-a-secret": generated keys are not words joined by dashes
    if tokenish and len(value) < 12:
        return False
    if tokenish:
        return f.shannon_entropy(value) >= 3.0 and not f.is_uuid(value)
    return len(set(value)) >= 4


def _assign_span_group(match: re.Match[str]) -> str:
    if "qv" in match.re.groupindex and match.group("qv") is not None:
        return "qv"
    return "uv"


class _AssignRule(Rule):
    """``password = "..."``: the reported span is the value, quoted or not."""

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        for match in self.matches(view):
            if not self.starts_token(text, match.start()):
                continue
            if self.check is not None and not self.check(match):
                continue
            yield match.span(_assign_span_group(match))


def _cli_check(match: re.Match[str]) -> bool:
    value = match.group("uv")
    return not (
        value.startswith("-")
        or f.is_env_read(value)
        or f.is_placeholder(value)
        or f.is_literal_word(value)
        or f.is_example_value(value)
        or (value.isalpha() and value.islower())
    )


def _password_ok(value: str) -> bool:
    """A literal password: not a placeholder, an example, a variable or a template."""
    return not (
        f.is_placeholder(value)
        or f.is_env_read(value)
        or f.is_example_value(value)
        or value.lower() in _PW_PLACEHOLDERS
        or value.startswith(("$", "%", ":", "@", "?"))
    )


def _line_of(text: str, offset: int, reach: int = 160) -> str:
    """The start of the line before ``offset``, at most ``reach`` characters (bounded work)."""
    begin = text.rfind("\n", max(0, offset - reach), offset) + 1
    return text[max(begin, offset - reach) : offset]


def _sql_identified_check(match: re.Match[str]) -> bool:
    return _password_ok(match.group(2))


def _sql_password_check(match: re.Match[str]) -> bool:
    return bool(_SQL_USER.search(_line_of(match.string, match.start()))) and _password_ok(match.group(2))


# The client names of the last text a ``-p`` was judged in: (text, name ends, name starts), swapped
# in as one tuple. One pass per text instead of one search per ``-p`` keeps a line of ``mysql -p``
# repeated at a small constant per MB.
_clients: tuple[str | None, list[int], list[int]] = (None, [], [])


def _client_before(text: str, offset: int, reach: int = 160) -> bool:
    """Whether a MySQL/MariaDB client name lies wholly on the line before ``offset``, at most
    ``reach`` characters back (the window ``_line_of`` gives)."""
    global _clients
    seen, ends, starts = _clients
    if seen is not text:
        found = [(m.end(), m.start()) for m in _MYSQL_CMD.finditer(text)]
        ends, starts = [e for e, _ in found], [b for _, b in found]
        _clients = (text, ends, starts)
    last = bisect_right(ends, offset) - 1  # names never overlap: the last to end starts last
    if last < 0:
        return False
    floor = max(text.rfind("\n", max(0, offset - reach), offset) + 1, offset - reach)
    return starts[last] >= floor


def _mysql_check(match: re.Match[str]) -> bool:
    return _client_before(match.string, match.start()) and _password_ok(match.group(1))


def _sshpass_check(match: re.Match[str]) -> bool:
    return _password_ok(match.group(2))


def _pair_check(match: re.Match[str]) -> bool:
    """A documented pair ("login: admin / password: bluebird"): a bare word counts here, but
    not code (``password=auth[1]``, ``password: str``) nor an example value."""
    value = match.group(1)
    follow = match.string[match.end() : match.end() + 1]
    if follow in {"(", "[", "."} or any(c in value for c in "()[]{}.") or len(value) < 4:
        return False
    return not f.is_literal_word(value) and _password_ok(value)


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
    if f.is_hex(value.replace("-", "")) or f.is_placeholder(value) or f.is_failed_checksum(value):
        return False  # git SHAs, sha256 digests, UUIDs: ids and digests, not secrets
    segments = re.split(r"[/_-]", value)
    if "/" in value and all(len(s) < 16 for s in segments):
        return False  # a path
    return not (len(segments) > 2 and sum(1 for s in segments if s.isalpha()) > len(segments) // 2)


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
    data = view.ascii
    text = view.text
    size = len(data)
    reach = _MIN_ENTROPY_RUN - 1
    base, marks = 0, data[: _MARK_CHUNK + reach].translate(_RUN_MARKS)
    at = marks.find(_RUN_SEED)
    while True:
        while at == -1:  # no run starts in this chunk: the next one
            base += _MARK_CHUNK
            if base >= size:
                return
            marks = data[base : base + _MARK_CHUNK + reach].translate(_RUN_MARKS)
            at = marks.find(_RUN_SEED)
        start = base + at
        end = marks.find(b" ", at + _MIN_ENTROPY_RUN)
        while end == -1 and base + len(marks) < size:  # the run goes on past this chunk
            base += len(marks)
            marks = data[base : base + _MARK_CHUNK + reach].translate(_RUN_MARKS)
            end = marks.find(b" ")
        end = size if end == -1 else base + end
        for _ in range(2):  # ={0,2}+
            if text.startswith("=", end):
                end += 1
        yield start, end
        if end >= base + _MARK_CHUNK:  # the next run starts in a later chunk
            base = end
            marks = data[base : base + _MARK_CHUNK + reach].translate(_RUN_MARKS)
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
            if not mixed_run(view.ascii[start:end]) or not entropy_candidate(text[start:end]):
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
            yield start, end


SECRET_RULES: tuple[Rule, ...] = PROVIDER_RULES + (
    Rule(
        "aws-secret-access-key",
        S,
        _AWS_SECRET,
        1,
        lambda m: not m.group(1).endswith("EXAMPLEKEY") and f.looks_random(m.group(1), min_entropy=3.5),
        ("secret",),
        priority=90,
        anchor=lazy(
            r"(?:aws_?secret_?(?:access_?)?key|secret_?access_?key|secretaccesskey)[\"']?[ \t]*+(?::=|=>|[:=])"
        ),
        seeds=("secret",),
        near=(0, 4),  # aws_secret: "secret" 3-4 characters into the anchor
    ),
    Rule(
        "azure-connection-string",
        S,
        _AZURE,
        1,
        lambda m: f.looks_random(m.group(1), min_entropy=3.5),
        priority=90,
        literals=("AccountKey", "SharedAccessKey", "SharedSecretValue", "PrimaryKey", "SecondaryKey"),
    ),
    Rule("private-key", S, _PEM, 1, _pem_check, priority=95, literals=("PRIVATE KEY",)),
    Rule("jwt", S, _JWT, 1, _jwt_check, priority=80, literals=("eyJ",)),
    *(
        Rule(
            "authorization-header",
            S,
            _AUTH_HEADER,
            1,
            check,
            ("authorization",),
            contexts,
            priority=75,
            anchor=_AUTH_ANCHOR,
            heuristic=True,
        )
        for check, contexts in ((_source_auth_check, SOURCE_ONLY), (_auth_check, ARTIFACT_CONTEXTS))
    ),
    Rule(
        "bearer-token",
        S,
        _BEARER,
        1,
        _bearer_check,
        ("bearer",),
        priority=70,
        heuristic=True,
        seeds=("bearer",),
    ),
    Rule("url-credentials", S, _URL_CREDS, 2, _url_check, ("://",), priority=75),
    Rule(
        "basic-auth-credentials",
        S,
        _CURL_USER,
        2,
        _curl_check,
        ("-u", "--user"),
        priority=70,
        anchor=lazy("-u|--user"),
        heuristic=True,
        seeds=("-u",),
        near=(0, 1),
    ),
    Rule(
        "sql-password",
        S,
        _SQL_IDENTIFIED,
        2,
        _sql_identified_check,
        ("identified",),
        priority=72,
        anchor=lazy("identified"),
        heuristic=True,
    ),
    Rule(
        "sql-password",
        S,
        _SQL_PASSWORD,
        2,
        _sql_password_check,
        ("password",),
        priority=72,
        anchor=lazy("password"),
        boundary=WORD,
        heuristic=True,
    ),
    Rule(
        "command-line-password",
        S,
        _MYSQL_P,
        1,
        _mysql_check,
        ("mysql", "mariadb"),
        priority=72,
        anchor=lazy("-p"),
        heuristic=True,
    ),
    Rule("command-line-password", S, _SSHPASS, 2, _sshpass_check, ("sshpass",), priority=72, heuristic=True),
    Rule(
        "credential-pair",
        S,
        _PAIR,
        1,
        _pair_check,
        ("pass", "pwd"),
        priority=65,
        anchor=lazy(r"(?:login|user(?:name)?|account)[ \t]*+[:=]"),
        boundary=WORD,
        heuristic=True,
        seeds=("login", "user", "account"),
    ),
    _AssignRule(
        "password-assignment",
        S,
        _ASSIGN,
        0,
        _assign_check,
        ("pass", "pwd", "secret", "key", "token"),
        priority=60,
        # the label and its separator, over the lower-cased text: hits only where a value follows
        anchor=lazy(_LABEL + r"[\"']?[ \t]*+(?::=|=>|[:=])"),
        heuristic=True,
        # every label holds one of these at most 8 characters in (private_key, refresh-token)
        seeds=("pass", "pwd", "secret", "key", "token"),
        near=(0, 8),
    ),
    _AssignRule(
        "password-assignment",
        S,
        _CLI_FLAG,
        0,
        _cli_check,
        ("--",),
        priority=60,
        boundary=ALNUM | {"-"},
        heuristic=True,
    ),
    _EntropyRule("high-entropy-string", S, _ENTROPY_RUN, 0, None, (), priority=10, heuristic=True),
)
