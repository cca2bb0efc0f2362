"""Look-alike filters: placeholders, environment reads, digests, identifiers, entropy.

These are what make the engine quieter than the reference on harmless text: a value that is
a placeholder (``sk-XXXX``, ``<your-key>``), a read from the environment (``os.environ[...]``,
``${TOKEN}``), a digest (git SHA, ``sha256:``, SRI hashes of lock files) or a UUID used as an
id is never a secret by itself.
"""

from __future__ import annotations

import math
import re
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


def is_placeholder(value: str) -> bool:
    """A value written to be replaced: ``sk-XXXX``, ``<your-key>``, ``****``, ``${VAR}``..."""
    low = value.lower()
    if any(word in low for word in _PLACEHOLDER_WORDS):
        return True
    core = re.sub(r"[^a-z0-9]", "", low)
    if not core:
        return True
    if max(Counter(core).values()) > max(3, len(core) // 2):
        return True  # mostly one repeated character: "aaaaaaaa", "x0x0x0x0"
    for seq in _SEQUENCES:
        if len(core) >= 6 and (core in seq or core[:8] in seq):
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
