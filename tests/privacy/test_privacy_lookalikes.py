"""Named look-alike filters (issue 27): public keys, a JWT header alone, base64 JSON config,
identifiers, format placeholders, digests and ETags in test assertions, cache busters. Each
filter has its false alarm (now quiet) and a look-alike of it that must still be caught.
Random values come from a fixed seed at import time; no real credential sits in this file.
"""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from toolkit.privacy import Context, scan_text
from toolkit.privacy import filters as f
from toolkit.privacy.filters import FILTERS

R = random.Random(2727)
B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"


def rnd(n: int, alphabet: str = B62) -> str:
    while True:
        value = "".join(R.choice(alphabet) for _ in range(n))
        if (
            sum(c.isdigit() for c in value) >= 2
            and any(c.isupper() for c in value)
            and any(c.islower() for c in value)
        ):
            return value


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def ssh_body(kind: str, size: int) -> str:
    blob = len(kind).to_bytes(4, "big") + kind.encode() + R.randbytes(size)
    return base64.b64encode(blob).decode()


def pem(label: str, lines: int) -> str:
    body = "\n".join(rnd(64, B64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"


AWS_SECRET = rnd(40, B64)
PASSWORD = rnd(16) + "!"
JWT = ".".join(
    (
        b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()),
        b64url(json.dumps({"sub": rnd(12), "iat": 1700000000}).encode()),
        rnd(43, B62 + "_-"),
    )
)


def found(text: str, context: Context = Context.SOURCE) -> list[str]:
    return [x.rule for x in scan_text(text, context)]


BOTH = (Context.SOURCE, Context.GENERIC)

# (filter, false alarm now quiet, look-alike still caught)
CASES: list[tuple[str, str, str]] = [
    (
        "ssh-public-key",
        f"ssh-ed25519 {ssh_body('ssh-ed25519', 32)} deploy@ci",
        # a private key beside the public one is still one private-key finding
        f"ssh-ed25519 {ssh_body('ssh-ed25519', 32)} deploy@ci\n" + pem("OPENSSH PRIVATE KEY", 6),
    ),
    (
        "ssh-public-key",
        f"authorized_keys: ssh-rsa {ssh_body('ssh-rsa', 270)} admin@host",
        # a random base64 run that starts like one but does not decode to a key type
        f"blob = AAAA{rnd(60, B64)}",
    ),
    (
        "ssh-public-key",
        # one key split over Python string literals (twisted's test_knownhosts.py)
        'key = (\n    b"'
        + ssh_body("ssh-rsa", 40)[:64]
        + '"\n    b"'
        + rnd(70, B64)
        + '"\n    b"'
        + rnd(70, B64)
        + '"\n)\n',
        # a separate secret two statements later is not part of the key
        'key = (\n    b"' + ssh_body("ssh-rsa", 40)[:64] + '"\n)\nsecret = ("' + rnd(40, B64) + '")\n',
    ),
    (
        "ssh-public-key",
        # an ECDSA key whose first line the entropy rule passes over, then continuation lines
        'k = (\n    b"'
        + ssh_body("ecdsa-sha2-nistp256", 0)
        + '"\n    b"'
        + rnd(70, B64)
        + '"\n)\n'
        # a DSA key in a triple-quoted string with backslash continuations
        + 'd = b"""\\\nssh-dss '
        + ssh_body("ssh-dss", 30)
        + "\\\n"
        + rnd(76, B64)
        + "\\\n"
        + rnd(76, B64)
        + '"""\n'
        # a hashed known_hosts line: |1|salt|hash
        + "line = b'|1|"
        + rnd(27, B64)
        + "=|"
        + rnd(27, B64)
        + "= ssh-rsa '\n",
        # a random run on the line after an ordinary statement is not a key line
        'x = 1\nsecret = (\n    b"' + rnd(70, B64) + '"\n)\n',
    ),
    (
        "public-block",
        # a PGP public key longer than 16 KB (a SECURITY.md)
        "Our key:\n\n" + pem("PGP PUBLIC KEY BLOCK", 400),
        pem("PGP PUBLIC KEY BLOCK", 400) + "\n" + pem("RSA PRIVATE KEY", 10),
    ),
    (
        "public-block",
        "-----BEGIN PUBLIC KEY-----\n" + rnd(64, B64) + "\n-----END PUBLIC KEY-----\n",
        "-----BEGIN PUBLIC KEY-----\n"
        + rnd(64, B64)
        + "\n-----END PUBLIC KEY-----\n"
        + f"token: {rnd(40)}\n",
    ),
    (
        "jwt-header-only",
        "header = " + b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "k1"}).encode()),
        f"token = {JWT}",  # a whole JWT is still a jwt finding
    ),
    (
        "base64-json-config",
        "SETTINGS: "
        + base64.b64encode(
            json.dumps({"region": "eu-west-1", "replicas": 3, "flags": ["a", "b"]}).encode()
        ).decode(),
        "SETTINGS: "
        + base64.b64encode(json.dumps({"region": "eu-west-1", "password": PASSWORD}).encode()).decode(),
    ),
    (
        "base64-json-config",
        "blob: "
        + base64.b64encode(json.dumps({"name": "build", "steps": ["lint", "test"]}).encode()).decode(),
        # no secret-named key, but a random value inside
        "blob: " + base64.b64encode(json.dumps({"name": "build", "value": rnd(32)}).encode()).decode(),
    ),
    (
        "code-identifier",
        "class _OpenSSL3ECCurve25519ClientContextFactory:\n    pass\n",
        f"class_key = '{rnd(28)}'\n",  # a random token of the same length
    ),
    (
        "code-identifier",
        "relativeLinkTestsForRFC3986 = []\nwin32GetLinkLocalIPv6Addresses()\n",
        f"value = {rnd(30)}\n",
    ),
    (
        "format-placeholder",
        'SECRET = "%(secret)s"\npassword = "{password}"\ntoken: "{{ .Values.apiToken }}"\npasswd = %(db_pass)s\n',
        f'SECRET = "{PASSWORD}"\n',  # a password with a real value is still caught
    ),
    (
        "format-placeholder",
        'password = "{0}"\nDB_PASSWORD = "${DB_PASSWORD}"\n',
        'password = "Zq8%sLm2k&Wx"\n',  # a real value that happens to hold %s
    ),
    (
        "digest-in-test-assertion",
        '    assert response.get_etag() == ("' + rnd(43, B62 + "_-") + '", False)\n',
        f'    assert creds.secret == "{AWS_SECRET}"\n',  # a real-format AWS secret in an assertion
    ),
    (
        "digest-in-test-assertion",
        "    assert etag == '\""
        + rnd(32)
        + '"\'\n    self.assertEqual(sha256_b64(data), "'
        + rnd(43, B64)
        + '=")\n',
        f"    assert client.get(url, headers={{'Authorization': 'Bearer {rnd(40)}'}}).ok\n",
    ),
    (
        "cache-buster",
        "    rv = client.get('/static/app.js?v="
        + rnd(32, B62 + "_-")
        + "')\n    url = '/x?_="
        + rnd(28)
        + "'\n",
        "    rv = client.get('/static/app.js?token=" + rnd(32, B62 + "_-") + "')\n",
    ),
]


@pytest.mark.parametrize("name,quiet,caught", CASES, ids=[c[0] for c in CASES])
def test_false_alarm_is_quiet_and_lookalike_still_caught(name: str, quiet: str, caught: str) -> None:
    assert name in FILTERS
    for context in BOTH:
        assert found(quiet, context) == [], (name, context)
        assert found(caught, context), (name, context)


def test_the_private_key_is_the_finding_beside_a_public_key() -> None:
    text = CASES[0][2]
    assert found(text) == ["private-key"]


def test_a_whole_jwt_is_one_jwt_finding() -> None:
    assert found(f"token = {JWT}") == ["jwt"]
    assert f.is_jwt_header_only(JWT.split(".")[0])
    assert not f.is_jwt_header_only(JWT.split(".")[1])  # claims are not a header


def test_identifier_filter_rejects_random_tokens() -> None:
    # the identifier filter must not swallow random tokens: of 20,000 seeded tokens of 24-48
    # characters (letters, digits, underscores) at most 2 pass (one did when it was written)
    rng = random.Random(2727)
    alphabet = B62 + "_"
    tokens = ["".join(rng.choice(alphabet) for _ in range(rng.randint(24, 48))) for _ in range(20000)]
    assert sum(f.is_code_identifier(t) for t in tokens) <= 2
    names = [
        "_XyzClientContextFactory",
        "BaseSSHTransportCurve25519SHA256Tests",
        "test_fromPrivateBlobEd25519",
        "_configureOpenSSL101NoCurves",
        "relativeLinkBaseForRFC3986",
    ]
    assert all(f.is_code_identifier(n) for n in names)


@pytest.mark.parametrize(
    "value,expected",
    [
        ("%(secret)s", True),  # printf mapping key
        ("%s", True),
        ("%-10s", True),
        ("{password}", True),  # str.format field
        ("{0}", True),
        ("{}", True),
        ("{{ .Values.x }}", True),  # Helm / Go template
        ("${DB_PASSWORD}", True),
        ("<%= ENV['X'] %>", True),  # ERB
        ("prefix-{name}", False),  # six letters outside the field: a value with braces
        ("Zq8%sLm2k", False),
        ("plainvalue", False),
    ],
)
def test_format_placeholder_table(value: str, expected: bool) -> None:
    assert f.is_format_placeholder(value) is expected


def test_base64_json_with_a_secret_key_is_not_config() -> None:
    encoded = base64.b64encode(json.dumps({"auths": {"r": {"auth": "x"}}}).encode()).decode()
    assert not f.is_base64_json_config(encoded)
    plain = base64.b64encode(json.dumps({"a": 1, "b": [1, 2, 3]}).encode()).decode()
    assert f.is_base64_json_config(plain)


def test_cache_buster_names_only() -> None:
    text = "/a?v=X /a?ver=X /a&_=X /a?token=X /a?key=X"
    starts = [i + 1 for i, c in enumerate(text) if c == "="]
    assert [f.is_cache_buster(text, s) for s in starts] == [True, True, True, False, False]
