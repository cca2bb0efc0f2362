"""Look-alike filters: placeholders, environment reads, digests, identifiers, entropy.

These are what make the engine quieter than the reference on harmless text: a value that is
a placeholder (``sk-XXXX``, ``<your-key>``), a read from the environment (``os.environ[...]``,
``${TOKEN}``), a digest (git SHA, ``sha256:``, SRI hashes of lock files) or a UUID used as an
id is never a secret by itself.
"""

from __future__ import annotations

import json
import math
import zlib
from bisect import bisect_right
from collections import Counter

from toolkit.privacy.rules import lazy

_PLACEHOLDER_WORDS = (
    "xxxx",
    "****",
    "....",
    "…",
    "<",
    ">",
    "${",
    "{{",
    "}}",
    "your",
    "example",
    "placeholder",
    "redacted",
    "changeme",
    "change_me",
    "dummy",
    "sample",
    "insert",
    "replace",
    "todo",
    "secret_here",
    "key_here",
    "here>",
    "0000000",
    "1234567",
    "abcdefg",
    "masked",
    "hidden",
    "notreal",
    "not_real",
    "not-real",
)
_ENV_READ = lazy(
    r"""^(?:\$|%[A-Za-z_]|os\.environ|os\.getenv|getenv|environ\[|process\.env|env\(|env\[|ENV\[|"""
    r"""System\.getenv|Deno\.env|import\.meta\.env|secrets\.|vault:|!secret|op://|sm://|"""
    r"""arn:aws:secretsmanager|keyring\.|settings\.|config\.|self\.|args\.|opts\.|options\.)"""
)
_IDENTIFIER_CHAIN = lazy(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$")
_HEX = lazy(r"^[0-9a-fA-F]+$")
_UUID = lazy(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_SEQUENCES = ("abcdefghijklmnopqrstuvwxyz", "0123456789", "qwertyuiop", "asdfghjkl")
_LITERALS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "str",
        "string",
        "int",
        "bytes",
        "optional",
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "api_key",
        "required",
        "any",
    }
)


_KEEP_ALNUM: dict[int, None] = {
    ord(c): None for c in map(chr, range(128)) if not (c.isascii() and c.isalnum())
}


def is_placeholder(value: str) -> bool:
    """A value written to be replaced: ``sk-XXXX``, ``<your-key>``, ``****``, ``${VAR}``..."""
    low = value.lower()
    if any(word in low for word in _PLACEHOLDER_WORDS):
        return True
    core = low.translate(_KEEP_ALNUM)
    if not core.isascii():
        core = "".join(c for c in core if c.isascii())
    if not core:
        return True
    if max(core.count(c) for c in set(core)) > max(3, len(core) // 2):
        return True  # mostly one repeated character: "aaaaaaaa", "x0x0x0x0"
    if len(core) >= 6:
        head = core[:8]
        for seq in _SEQUENCES:
            if core in seq or head in seq:
                return True
    return False


def is_env_read(value: str) -> bool:
    """A reference to where the secret lives, not the secret: env vars, vault refs, attributes."""
    stripped = value.strip().strip("\"'`")
    return bool(_ENV_READ.match(stripped))


def is_code_reference(value: str) -> bool:
    """An identifier, attribute chain or call (``password = get_password()``)."""
    return bool(_IDENTIFIER_CHAIN.match(value)) or "(" in value


def is_literal_word(value: str) -> bool:
    """``None``, ``null``, ``str``, the label word itself..."""
    return value.strip().lower() in _LITERALS


def is_hex(value: str) -> bool:
    return bool(_HEX.match(value))


def is_uuid(value: str) -> bool:
    return bool(_UUID.match(value))


def shannon_entropy(value: str) -> float:
    """Bits per character of ``value`` (0.0 for the empty string)."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


_DROP_DIGITS = str.maketrans("", "", "0123456789")


def digit_count(value: str) -> int:
    """How many ASCII digits ``value`` holds."""
    return len(value) - len(value.translate(_DROP_DIGITS))


def char_classes(value: str) -> tuple[bool, bool, bool]:
    """(has lower, has upper, has digit); string methods, not a Python-level loop (hot path)."""
    return value.upper() != value, value.lower() != value, digit_count(value) > 0


def looks_random(value: str, *, min_len: int = 16, min_entropy: float = 3.3) -> bool:
    """Random-looking token: long enough, letters and digits mixed, high entropy, not a placeholder."""
    if len(value) < min_len or is_placeholder(value):
        return False
    lower, upper, digit = char_classes(value)
    if not digit or not (lower or upper):
        return False
    return shannon_entropy(value) >= min_entropy


def is_email_placeholder_domain(domain: str) -> bool:
    """Reserved documentation and test domains (RFC 2606 / RFC 6761): nobody's mailbox."""
    low = domain.lower().rstrip(".")
    if low in {"example.com", "example.net", "example.org", "localhost"}:
        return True
    return low.endswith(
        (".example", ".test", ".invalid", ".localhost", ".example.com", ".example.net", ".example.org")
    )


# Values that tutorials, docs and test suites use as stand-ins for a secret. A committed
# "SECRET_KEY = 'dev'" or "password: changeme" is an example, not a credential.
_EXAMPLE_VALUES = frozenset(
    {
        "dev",
        "development",
        "devkey",
        "dev-key",
        "dev_key",
        "secret",
        "secretkey",
        "secret-key",
        "secret_key",
        "mysecret",
        "my-secret",
        "my_secret",
        "mysecretkey",
        "my-secret-key",
        "my_secret_key",
        "supersecret",
        "super-secret",
        "super_secret",
        "supersecretkey",
        "super-secret-key",
        "super_secret_key",
        "topsecret",
        "s3cr3t",
        "s3cret",
        "secret123",
        "password",
        "password1",
        "password123",
        "passw0rd",
        "p@ssw0rd",
        "p@ssword",
        "mypassword",
        "mysecretpassword",
        "letmein",
        "hunter2",
        "qwerty",
        "admin",
        "admin123",
        "root",
        "toor",
        "test",
        "testing",
        "testpass",
        "testpassword",
        "test-password",
        "test_password",
        "foo",
        "foobar",
        "bar",
        "baz",
        "default",
        "pass",
        "pass123",
        "guest",
        "default-secret",
        "not-secret",
        "notsecret",
        "insecure",
        "unsafe",
        "circleoflife",
        "opensesame",
        "open-sesame",
        "swordfish",
        "tiger",
        "scott",
    }
)
_REFERENCE = lazy(r"^[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->|\?\.)[A-Za-z_$][A-Za-z0-9_$]*)*(?:\(|\[|\{|<|$)")


_CHECKSUM_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "npm_")


def b64decode(data: str, *, urlsafe: bool = False, validate: bool = False) -> bytes | None:
    """The bytes ``data`` encodes in base64 (URL-safe when ``urlsafe``; only the base64 alphabet
    when ``validate``), or None when it is not base64. The checks that look inside a value share
    it; ``base64`` is imported on the first decode, not with the engine: a check runs only on a
    candidate match, and a scan with none (the hooks' usual case) never decodes."""
    import base64  # only here: a scan that decodes nothing does not load it

    try:
        return base64.urlsafe_b64decode(data) if urlsafe else base64.b64decode(data, validate=validate)
    except ValueError:  # binascii.Error is one
        return None


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62_crc32(data: str) -> str:
    """CRC32 of ``data`` in base62 (digits, upper, lower), left-padded to six characters."""
    number = zlib.crc32(data.encode("ascii"))
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = _BASE62[digit] + out
    return out.rjust(6, "0")


def checksum_ok(token: str) -> bool:
    """A ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/``npm_`` token of 36 characters after its
    prefix ends in the base62 CRC32 of the 30 before it (the format GitHub introduced in 2021)."""
    body = token.split("_", 1)[1]
    if len(body) != 36 or not body.isascii():
        return False
    return base62_crc32(body[:30]) == body[30:]


def is_failed_checksum(value: str) -> bool:
    """A GitHub/npm-format token (prefix + 36 base62) whose checksum does not match: made up
    for a test or a doc, so no other rule reports it either."""
    token = value.strip().strip("\"'`")
    return (
        token.startswith(_CHECKSUM_PREFIXES)
        and len(token) == 40
        and token[4:].isalnum()
        and not checksum_ok(token)
    )


def is_example_value(value: str) -> bool:
    """A documented stand-in (``dev``, ``changeme``, ``hunter2``...) or an obvious test value
    (``test-secret``, ``fake_password``): the words tutorials and test suites put in its place."""
    low = value.strip().strip("\"'`").lower()
    if low in _EXAMPLE_VALUES or low.rstrip("0123456789") in _EXAMPLE_VALUES:
        return True  # "secret2", "password123" are the same stand-ins numbered
    return low.startswith(_EXAMPLE_PREFIXES)


_EXAMPLE_PREFIXES = ("test", "fake", "dummy", "mock", "sample", "demo", "example", "bogus")
# A stored password hash (argon2, bcrypt, scrypt, PBKDF2, crypt) is what a password becomes, not
# the password: documentation and fixtures show them on purpose.
_PASSWORD_HASH = lazy(r"\$(?:argon2(?:id|i|d)|2[abxy]?|scrypt|pbkdf2[-_a-z0-9]*|[156])\$")


def is_password_hash(text: str) -> bool:
    """Whether ``text`` (a value, or the text just before a token) holds a password-hash prefix."""
    return bool(_PASSWORD_HASH.search(text))


def is_reference(value: str) -> bool:
    """Code that names or fetches a secret rather than holding one: a variable or attribute
    chain, a call, a subscript (``request.form["password"]``), a generic type
    (``contextvars.Token[...]``), a template or block opener."""
    return bool(_REFERENCE.match(value))


def is_value(value: str, *, quoted: bool, text: str = "", end: int = 0) -> bool:
    """The value-not-reference filter for ``label = value`` findings.

    A quoted literal is a value unless it is empty of meaning (``None``, a placeholder, an
    environment reference, an example) or is itself the key of a lookup
    (``form["password"]`` ends in ``]``). An unquoted value must not be code that names or
    fetches the secret (``is_reference``), nor a type annotation.
    """
    if is_literal_word(value) or is_env_read(value) or is_placeholder(value) or is_example_value(value):
        return False
    if is_failed_checksum(value) or is_format_placeholder(value + _rest_of_token(text, end)):
        return False
    follow = text[end : end + 1] if text else ""
    if quoted:
        return follow not in {"]", ")"}  # form["password"], getenv("TOKEN")
    return _unquoted_value(value, follow)


def _unquoted_value(value: str, follow: str) -> bool:
    """Whether an unquoted ``label = value`` (``follow``: the character after it) holds a value
    rather than code: not a call, subscript or attribute chain, a pointer, collection or path,
    and not a bare word unless it looks random."""
    if follow in {"(", "[", "."}:
        return False
    reference = _REFERENCE.match(value)
    if reference:
        if reference.group().endswith(("(", "[", "{", "<")) or any(sep in value for sep in (".", "::", "->")):
            return False  # a call, subscript, generic type or attribute chain
        return looks_random(value, min_len=8, min_entropy=3.0)  # a random-looking word is a value
    if value.startswith(("*", "&", "[", "{", "(", "<", "@", "#", "!", "=", "/", "~", "?")):
        return False  # pointers, collections, decorators, comments, operators, paths
    lower, upper, digit = char_classes(value)
    return digit or not value.isalnum()  # a bare word is a name; a value mixes in digits or symbols


FILTERS: dict[str, str] = {
    "value-not-reference": "names, lookups, calls, subscripts, type annotations, environment and form "
    "reads are where a secret comes from, not the secret (is_value, is_reference, is_env_read)",
    "placeholder": "values written to be replaced: <your-key>, XXXX, ****, ${VAR}, sequences (is_placeholder)",
    "example-value": "documented stand-ins such as dev, changeme, hunter2, test-* values (is_example_value)",
    "reserved-domain": "example.com, *.test, localhost and other RFC 2606/6761 names (is_email_placeholder_domain)",
    "digest": "git SHAs, sha256/SRI hashes, go.sum h1: checksums, UUIDs, labelled checksums and stored "
    "password hashes (argon2, bcrypt, hashed_password fields) are ids or digests, not secrets",
    "data-uri": "the base64 body of a data: URI is an embedded file (engine.data_uri_spans)",
    "data-file": "SVG/Illustrator/EPS path data, lock files, minified bundles, source maps and checksum "
    "files get only the fixed-format provider rules (files.file_kind)",
    "failed-checksum": "a ghp_/npm_ token whose built-in CRC32 does not match is made up (is_failed_checksum)",
    "public-pem": "certificate and public-key bodies are public (secrets._inside_public_pem)",
    "basic-not-credentials": "an Authorization: Basic value that is not base64 of user:password is not "
    "a Basic credential (a test of a malformed header); other schemes keep the token checks",
    "invalid-userinfo": "a URL whose user or password holds [ ] quotes, backquotes or control "
    "characters unescaped is URL-parser test data: no client accepts it (secrets._url_check)",
    "format-placeholder": "%(secret)s, %s, {password}, {{ .Values.x }}, ${VAR}: a template the code "
    "fills in, not a value (is_format_placeholder)",
    "code-identifier": "CamelCase and snake_case names made of words are not high-entropy strings "
    "(is_code_identifier)",
    "ssh-public-key": "an OpenSSH public key body (ssh-ed25519/ssh-rsa/ecdsa-sha2-... AAAA...), also "
    "split over string literals or backslash continuations, an lsh public key, a hashed known_hosts "
    "name, is public (is_ssh_public_key_run)",
    "public-block": "the body of a PUBLIC KEY, CERTIFICATE or PGP PUBLIC KEY BLOCK / SIGNATURE of "
    "any length is public (is_public_block_body)",
    "jwt-header-only": "a JWT header alone (alg/typ/kid) signs nothing (is_jwt_header_only)",
    "base64-json-config": "base64 of JSON with no secret-named key and no random value is "
    "configuration (is_base64_json_config)",
    "digest-in-test-assertion": "an ETag or content hash that a test asserts is a digest "
    "(is_digest_in_test_assertion)",
    "cache-buster": "the value of ?v= / ?_= / ?ver= in a URL is a version or hash (is_cache_buster)",
}


# --- Look-alikes of the high-entropy rule and of assignments (issue 27) ------------------------
# Each is named for what it filters, and tests/privacy/test_privacy_lookalikes.py holds, for each,
# a look-alike that must still be caught.

_FORMAT_FIELD = lazy(
    r"%\([A-Za-z0-9_.-]{0,64}\)[-#0 +]*[0-9]*(?:\.[0-9]+)?[a-zA-Z]"  # %(secret)s
    r"|%[-#0 +]*[0-9]*(?:\.[0-9]+)?[sdifrxXeEgGcob]"  # %s, %d, %-10s
    r"|\{\{[^{}\n]{0,200}\}\}|\{%[^{}\n]{0,200}%\}|<%=?[^%\n]{0,200}%>"  # Jinja, Helm, Go, ERB
    r"|\$\{[^{}\n]{0,200}\}|\$\([^()\n]{0,200}\)"  # shell and Make substitutions
    r"|\{[A-Za-z0-9_.!:\[\] -]{0,64}\}"  # str.format / f-string fields: {password}, {0}, {}
)


def _rest_of_token(text: str, end: int) -> str:
    """What follows an unquoted value up to the next space (``%(name`` stops before ``)s``)."""
    if not text:
        return ""
    tail = text[end : end + 64]
    cut = len(tail)
    for sep in (" ", "\t", "\n", "\r"):
        at = tail.find(sep)
        if at != -1:
            cut = min(cut, at)
    return tail[:cut]


def is_format_placeholder(value: str) -> bool:
    """A template the code fills in, not a value: ``%(secret)s``, ``%s``, ``{password}``,
    ``{{ .Values.x }}``, ``${VAR}`` -- at least one format field and, once the fields are
    removed, fewer than three letters or digits left (``"Zq8%sLm2k"`` keeps its seven)."""
    if not any(c in value for c in "%{$<"):
        return False
    rest, count = _FORMAT_FIELD.compiled.subn("", value)
    return count > 0 and len(rest.translate(_KEEP_ALNUM)) < 3


_WORD_PART = lazy(r"[A-Z]{2,}(?=[A-Z][a-z]|[0-9]|\s|$)|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


_CONSONANT_RUN = lazy(r"[bcdfghjklmnpqrstvwxz]{4}")
# short words that names are made of (a random run of three letters is too common to count)
_SHORT_WORDS = frozenset(
    "get set for to of on in is no ed ec win add new old key id by and or use run raw api dns url log "
    "tmp dir max min ssl tls ssh rsa dsa dh ip io os at as end fix not one two all any foo bar baz app "
    "web my put has can bad low err msg str int obj arg cls".split()
)


def _pronounceable(word: str) -> bool:
    """Vowels in at least a fifth of it and no four consonants in a row: how words are spelled
    (``transport``, ``factory``), and what runs of random letters (``vphjieb``) are not."""
    vowels = sum(word.count(v) for v in "aeiou")
    return vowels * 5 >= len(word) and not _CONSONANT_RUN.compiled.search(word)


def is_code_identifier(value: str) -> bool:
    """A CamelCase or snake_case name (``_XyzClientContextFactory``, ``test_fromBlobEd25519``,
    ``relativeLinkTestsForRFC3986``): made of words, not of random characters. At least half of
    its letters and digits are in pronounceable words of four or more letters (or common short
    ones: ``get``, ``for``), at least 70% with the acronyms (``SSL``, ``SHA``) and numbers of up to
    six digits, and at most two one-character parts. Random tokens fail it (one in 20,000 of
    24-48 characters passes, measured in tests/privacy/test_privacy_lookalikes.py)."""
    if not value.replace("_", "").isalnum() or not value.isascii():
        return False
    total = words = named = ones = 0
    for part in _WORD_PART.compiled.findall(value.replace("_", " ")):
        size = len(part)
        total += size
        ones += size == 1
        if part.isdigit():
            named += size if size <= 6 else 0
        elif part[1:].islower() and (
            (size >= 4 and _pronounceable(part.lower())) or (size >= 2 and part.lower() in _SHORT_WORDS)
        ):
            words += size
        elif part.isupper() and 2 <= size <= 5:
            named += size
    return total > 0 and ones <= 2 and words * 2 >= total and (words + named) * 10 >= total * 7


_SSH_KEY_TYPES = (b"ssh-", b"ecdsa-sha2-", b"sk-ssh-", b"sk-ecdsa-", b"x509v3-", b"rsa-sha2-")
# The verdict on the last run judged (text, end, is a key line): the lines of one key split over
# string literals (b"AAAA..." b"..." b"...") inherit it, so a long key is walked back once.
_ssh_chain: tuple[str | None, int, bool] = (None, 0, False)
_KEY_GAP = frozenset(" \t\r\n\"'\\b+({")
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_KEY_LINES = 16  # lines a split key is followed back (a 4096-bit RSA key is about 11)


def is_ssh_public_key(value: str) -> bool:
    """The base64 body of an OpenSSH public key (``ssh-ed25519 AAAAC3Nz...``): it starts with the
    length-prefixed name of its key type, which is what ``AAAA`` decodes to. An SPKI/lsh public
    key (``{KDEwOnB1YmxpYy1rZXk...``, ``(10:public-key``) is one too."""
    if len(value) < 16 or not value.startswith(("AAAA", "KDEwOnB1YmxpYy1rZXk")):
        return False
    head = b64decode(value[:32], validate=True)
    if head is None:
        return False
    if head.startswith(b"(10:public-key"):
        return True
    size = int.from_bytes(head[:4], "big")
    return 7 <= size <= 64 and head[4:].startswith(_SSH_KEY_TYPES)


def _previous_run(text: str, start: int) -> tuple[int, int] | None:
    """The base64 run on the line before ``start``, when only quotes, spaces, a ``b`` prefix or
    a backslash continuation (and one line end) lie between them."""
    at, low = start, max(0, start - 40)
    while at > low and text[at - 1] in _KEY_GAP:
        at -= 1
    if at == start or "\n" not in text[at:start]:
        return None
    begin, low = at, max(0, at - 200)
    while begin > low and text[begin - 1] in _B64_CHARS:
        begin -= 1
    return (begin, at) if at - begin >= 16 else None


def _key_line(text: str, start: int, end: int, depth: int) -> bool:
    if is_ssh_public_key(text[start:end]):
        return True
    before = text[max(0, start - 48) : start]
    if before.endswith("|") and "|1|" in before:
        return True  # a hashed known_hosts host name: |1|salt|hash
    previous = _previous_run(text, start) if depth else None
    if previous is None:
        return False
    seen, last, verdict = _ssh_chain
    if seen is text and last == previous[1]:
        return verdict
    return _key_line(text, previous[0], previous[1], depth - 1)


def is_ssh_public_key_run(text: str, start: int, end: int) -> bool:
    """``is_ssh_public_key``, a hashed known_hosts name, or a later line of one key split over
    string literals or backslash continuations (followed back at most 16 lines)."""
    global _ssh_chain
    verdict = _key_line(text, start, end, _KEY_LINES)
    _ssh_chain = (text, end, verdict)
    return verdict


_PUBLIC_BLOCKS = (
    "PUBLIC KEY",
    "RSA PUBLIC KEY",
    "CERTIFICATE",
    "TRUSTED CERTIFICATE",
    "CERTIFICATE REQUEST",
    "NEW CERTIFICATE REQUEST",
    "X509 CRL",
    "PGP PUBLIC KEY BLOCK",
    "PGP SIGNATURE",
    "SIGNATURE",
    "DH PARAMETERS",
    "EC PARAMETERS",
    "SSH2 PUBLIC KEY",
)


class _Marks:
    """Offsets of the PEM/PGP armour lines and batch separators of the last text asked about,
    found once per text so each question is a bisect (a long public block has many runs)."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.begins: list[int] = []
        self.ends: list[int] = []
        self.seps: list[int] = []

    def load(self, text: str) -> None:
        if self.text is not text:
            self.begins = _offsets(text, "-----BEGIN ")
            self.ends = _offsets(text, "-----END ")
            self.seps = _offsets(text, "\n\x00\n")
            self.text = text


def _offsets(text: str, needle: str) -> list[int]:
    found: list[int] = []
    at = text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


_marks = _Marks()


def forget_text() -> None:
    """Let go of the last text asked about (a long window is not held while the next is read)."""
    _marks.load("")


def is_public_block_body(text: str, offset: int) -> bool:
    """Inside a public key, certificate or PGP public key block or signature however long (the
    high-entropy rule's own PEM check looks back 16 KB; a PGP key in a SECURITY.md is longer)."""
    _marks.load(text)
    index = bisect_right(_marks.begins, offset) - 1
    if index < 0:
        return False
    begin = _marks.begins[index]
    for bound in (_marks.ends, _marks.seps):
        later = bisect_right(bound, begin)
        if later < len(bound) and bound[later] < offset:
            return False  # the block ended, or the file did, before this offset
    header = text[begin + 11 : begin + 40]
    return any(header.startswith(name + "-----") for name in _PUBLIC_BLOCKS)


_JWT_HEADER_KEYS = frozenset(
    {"alg", "typ", "kid", "cty", "enc", "zip", "crit", "b64", "x5t", "x5t#S256", "jku", "x5u"}
)


def _b64_json(value: str) -> object:
    """``value`` decoded from (URL-safe or standard) base64 as JSON, or None."""
    core = value.rstrip("=")
    if len(core) % 4 == 1:
        return None
    raw = b64decode(core + "=" * (-len(core) % 4), urlsafe="-" in core or "_" in core)
    if raw is None:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def is_jwt_header_only(value: str) -> bool:
    """A JWT's header alone (``eyJhbGciOi...``: ``{"alg": ..., "typ": ...}``): it names an
    algorithm, it signs nothing and holds no claim. A whole JWT is still one ``jwt`` finding."""
    if not value.startswith("eyJ"):
        return False
    header = _b64_json(value)
    return isinstance(header, dict) and bool(header) and set(header) <= _JWT_HEADER_KEYS


_SECRET_KEY_WORD = lazy(
    r"(?i)pass|pwd|secret|token|key|auth|credential|cookie|session|signature|private|cert"
)


def is_base64_json_config(value: str) -> bool:
    """Base64 of a JSON object or array with no secret-named key and no random-looking string
    in it (a workflow's encoded settings): ``{"region": "eu-west-1", "replicas": 3}``. Base64
    JSON holding ``"password": ...`` or a token-like value is still a finding."""
    if not value.startswith(("ey", "W")):
        return False
    decoded = _b64_json(value)
    if not isinstance(decoded, (dict, list)):
        return False
    stack: list[object] = [decoded]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > 500:
            return False
        if isinstance(node, dict):
            for key, item in node.items():
                if _SECRET_KEY_WORD.compiled.search(str(key)):
                    return False
                stack.append(item)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and looks_random(node, min_len=16, min_entropy=3.5):
            return False
    return True


_ASSERTION_MARKS = ("assert", "expect(", "should", "==", ".tobe(", ".toequal(")
_DIGEST_WORDS = (
    "etag",
    "if-none-match",
    "if-match",
    "hash",
    "digest",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha-",
    "md5",
    "checksum",
    "fingerprint",
    "integrity",
    "crc32",
    "blake",
)


def is_digest_in_test_assertion(text: str, start: int, end: int) -> bool:
    """An ETag or a content hash a test compares (``assert response.get_etag() == ("4Wf2...",
    False)``, ``assert etag == '"a1b2..."'``, ``self.assertEqual(sha256(data), "...")``): the line
    asserts and names a digest, or the value is a quoted ETag (``'"..."'``, ``W/"..."``)."""
    head = max(text.rfind("\n", max(0, start - 200), start) + 1, start - 200)
    tail = text.find("\n", end, end + 200)
    line = text[head : end + 200 if tail == -1 else tail].lower()
    if not any(mark in line for mark in _ASSERTION_MARKS):
        return False
    before, after = text[max(0, start - 3) : start], text[end : end + 2]
    quoted_etag = (before.endswith(("'\"", 'W/"')) and after.startswith("\"'")) or before.endswith('\\"')
    return quoted_etag or any(word in line for word in _DIGEST_WORDS)


_CACHE_BUSTERS = ("v", "_", "ver", "version", "cb", "t", "ts", "rev", "hash", "h", "cache", "bust")


def is_cache_buster(text: str, start: int) -> bool:
    """The value of a URL's cache-busting parameter (``/static/app.js?v=...``, ``?_=...``): a
    version or content hash that makes the URL new, not a credential. ``?token=`` is not one."""
    before = text[max(0, start - 9) : start]
    if not before.endswith("="):
        return False
    for name in _CACHE_BUSTERS:
        if before.endswith(("?" + name + "=", "&" + name + "=")):
            return True
    return False


def entropy_lookalike(text: str, start: int, end: int) -> bool:
    """The named look-alike filters of the high-entropy rule, cheapest first: an identifier, a
    cache buster, an SSH public key, a public PEM/PGP block, a JWT header alone, base64 JSON
    config, a digest in a test assertion."""
    value = text[start:end].rstrip("=")
    return (
        is_code_identifier(value)
        or is_cache_buster(text, start)
        or is_ssh_public_key_run(text, start, end)
        or is_jwt_header_only(value)
        or is_base64_json_config(value)
        or is_public_block_body(text, start)
        or is_digest_in_test_assertion(text, start, end)
    )
