"""Recall: HTTP authorization of every scheme (issue 27), with positives and look-alikes.

Credentials are synthetic (random bytes and characters from a fixed seed, framed the way each
scheme frames them). A positive must be reported by the named rule with exactly the planted
value as its span; a look-alike must produce no finding at all.
"""

from __future__ import annotations

import base64
import random
import string
from urllib.parse import quote

import pytest
from support.privacy_cases import BUDGET_S_PER_MB, found, repeated, scan_seconds

from toolkit.privacy.credentials import gss_credential

R = random.Random(2702)
B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def rnd(n: int, alphabet: str = B62) -> str:
    while True:
        value = "".join(R.choice(alphabet) for _ in range(n))
        if alphabet != B62 or (any(c.isdigit() for c in value) and any(c.isupper() for c in value)):
            return value


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


PW, TOK = rnd(14), rnd(40)
BASIC = b64(f"svc:{PW}".encode())
DIGEST = rnd(32, HEX)
NTLM_AUTH = b64(b"NTLMSSP\x00" + (3).to_bytes(4, "little") + R.randbytes(120))  # type 3: authenticate
NTLM_NEGOTIATE = b64(b"NTLMSSP\x00" + (1).to_bytes(4, "little") + bytes.fromhex("07820800") + bytes(16))
KERBEROS = b64(b"\x60\x82\x02\x10\x06\x06\x2b\x06\x01\x05\x05\x02" + R.randbytes(200))
SIGV4 = rnd(64, HEX)
AKID = "AKIA" + rnd(16, string.ascii_uppercase + "234567")
OAUTH_SIG = quote(b64(R.randbytes(20)), safe="")
PCT_PW = rnd(6) + "%40" + rnd(6) + "%2F" + rnd(3)  # percent-encoded "@" and "/"
# letters of both cases and encoded symbols, no digit: what makes someone percent-encode a password
PCT_SYMBOLS = "YLZcRK%25SiQWoO%21Lckx"

# (rule, text, secret)
POSITIVES: list[tuple[str, str, str]] = [
    ("authorization-header", f"Authorization: Basic {BASIC}", BASIC),
    ("authorization-header", f'headers = {{"Authorization": "Basic {BASIC}"}}', BASIC),
    ("bearer-token", f"Authorization: Bearer {TOK}", TOK),
    ("bearer-token", f"Proxy-Authorization: Bearer {TOK}", TOK),
    (
        "authorization-header",
        f'Authorization: Digest username="svc", realm="api", nonce="dcd98b7102dd2f0e", uri="/x", '
        f'qop=auth, nc=00000001, cnonce="0a4f113b", response="{DIGEST}", opaque="5ccc069c"',
        DIGEST,
    ),
    ("authorization-header", f"Authorization: NTLM {NTLM_AUTH}", NTLM_AUTH),
    ("authorization-header", f"Authorization: Negotiate {KERBEROS}", KERBEROS),
    ("authorization-header", f"Authorization: Negotiate {NTLM_AUTH}", NTLM_AUTH),  # NTLM inside SPNEGO
    (
        "authorization-header",
        f"Authorization: AWS4-HMAC-SHA256 Credential={AKID}/20240101/us-east-1/s3/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={SIGV4}",
        SIGV4,
    ),
    (
        "aws-sigv4-signature",
        f"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={AKID}%2F20240101"
        f"&X-Amz-Expires=3600&X-Amz-Signature={SIGV4}",
        SIGV4,
    ),
    (
        "oauth-signature",
        f'Authorization: OAuth oauth_consumer_key="ck", oauth_nonce="n0nce", oauth_signature="{OAUTH_SIG}", '
        f'oauth_signature_method="HMAC-SHA1", oauth_timestamp="1700000000", oauth_version="1.0"',
        OAUTH_SIG,
    ),
    (
        "password-assignment",
        f'Authorization: OAuth oauth_token="{TOK}", oauth_signature_method="PLAINTEXT"',
        TOK,
    ),
    ("password-assignment", f"X-Api-Key: {TOK}", TOK),
    ("password-assignment", f"Api-Key: {TOK}", TOK),
    ("password-assignment", f"X-Auth-Token: {TOK}", TOK),
    ("password-assignment", f"curl -H 'X-Auth-Key: {TOK}' https://api.internal", TOK),
    ("url-credentials", f"https://svc:{PCT_PW}@api.internal/v1", PCT_PW),
    (
        "url-credentials",
        f'mirror_url = "https://admin29:{PCT_SYMBOLS}@git.corp.internal/app.git"',
        PCT_SYMBOLS,
    ),
    ("password-assignment", f"https://api.internal/login?user=svc&password={PCT_PW}", PCT_PW),
]

# (near, text): the rule a look-alike is nearest to; nothing may be reported
LOOK_ALIKES: list[tuple[str, str]] = [
    ("authorization-header", "Authorization: Basic <base64>"),
    ("authorization-header", "Authorization: Basic ${BASIC_AUTH}"),
    ("authorization-header", 'client.get("/me", headers={"Authorization": "Basic notabase64token"})'),
    ("bearer-token", "Authorization: Bearer $TOKEN"),
    ("bearer-token", "Authorization: Bearer <token>"),
    ("authorization-header", 'Authorization: Digest username="svc", response="<response>"'),
    (
        "authorization-header",
        'Authorization: Digest username="svc", response="00000000000000000000000000000000"',
    ),
    (
        "authorization-header",
        f"Authorization: NTLM {NTLM_NEGOTIATE}",
    ),  # type 1 names the client, proves nothing
    ("authorization-header", "WWW-Authenticate: NTLM"),
    ("authorization-header", "Authorization: NTLM"),  # the scheme without a value
    ("authorization-header", "Authorization: Negotiate <token>"),
    ("authorization-header", "Authorization: Negotiate " + "A" * 40),
    (
        "authorization-header",  # AWS's documented example request and its signature
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date, "
        "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
    ),
    ("aws-sigv4-signature", f"X-Hub-Signature-256: sha256={SIGV4}"),  # a webhook body's hash
    ("aws-sigv4-signature", "?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524&X-Amz-Signature=" + SIGV4),
    ("oauth-signature", 'oauth_signature_method="HMAC-SHA1"'),
    ("oauth-signature", 'oauth_signature="{signature}"'),
    ("password-assignment", "X-Api-Key: ${API_KEY}"),
    ("password-assignment", "X-Api-Key: <your-api-key>"),
    ("password-assignment", "X-Auth-Token: *****"),
    ("url-credentials", "http://%25DOMAIN:foobar@host.internal/"),  # WHATWG URL-parser vectors
    ("url-credentials", "https://tom%40example.org:abc123%40%20%@host.internal/"),  # malformed escape
    ("url-credentials", "http://foo:%F0%9F%92%A9@host.internal/"),
    ("url-credentials", "http://user:p%40ss%21word@host.internal/"),  # letters of one case and symbols
    ("url-credentials", "http://user:Ab%21Cd@host.internal/"),  # short
]


@pytest.mark.parametrize(
    ("rule", "text", "secret"), POSITIVES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(POSITIVES)]
)
def test_an_authorization_credential_is_found(rule: str, text: str, secret: str) -> None:
    assert (rule, secret) in found(text), found(text)


@pytest.mark.parametrize(
    ("near", "text"), LOOK_ALIKES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(LOOK_ALIKES)]
)
def test_an_authorization_look_alike_is_clean(near: str, text: str) -> None:
    assert found(text) == []


def test_ntlm_messages_are_told_apart_by_their_type() -> None:
    assert gss_credential(base64.b64decode(NTLM_AUTH))
    assert not gss_credential(base64.b64decode(NTLM_NEGOTIATE))
    challenge = b"NTLMSSP\x00" + (2).to_bytes(4, "little") + bytes(40)
    assert not gss_credential(challenge)  # the server's challenge carries no client secret
    assert gss_credential(base64.b64decode(KERBEROS))


TRIGGERS = [
    "Authorization: NTLM ",
    "Authorization: Negotiate TlRMTVNTUAAD",
    "Authorization: Digest response response=",
    'Authorization: Digest response="',
    "Authorization: AWS4-HMAC-SHA256 Signature=",
    "X-Amz-Signature=",
    "oauth_signature=",
    "://a%4:",
]


@pytest.mark.parametrize("unit", TRIGGERS)
def test_a_megabyte_of_one_trigger_scans_in_linear_time(unit: str) -> None:
    assert scan_seconds(repeated(unit)) < 2 * BUDGET_S_PER_MB, unit
