"""Look-alike filters: placeholders, environment reads, digests, identifiers, entropy.

These are what make the engine quieter than the reference on harmless text: a value that is
a placeholder (``sk-XXXX``, ``<your-key>``), a read from the environment (``os.environ[...]``,
``${TOKEN}``), a digest (git SHA, ``sha256:``, SRI hashes of lock files) or a UUID used as an
id is never a secret by itself.
"""

from __future__ import annotations

import math
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


def is_failed_checksum(value: str) -> bool:
    """A GitHub/npm-format token (prefix + 36 base62) whose checksum does not match: made up
    for a test or a doc, so no other rule reports it either."""
    from toolkit.privacy.providers import checksum_ok

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
    if is_failed_checksum(value):
        return False
    follow = text[end : end + 1] if text else ""
    if quoted:
        return follow not in {"]", ")"}  # form["password"], getenv("TOKEN")
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
}
