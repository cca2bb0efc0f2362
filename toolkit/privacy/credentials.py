"""Credentials on the wire and in connection strings, beyond ``Basic``/``Bearer``/``Token``
(``secrets.py``):

* ``Authorization: NTLM`` / ``Negotiate``: base64 of an NTLM authenticate message (type 3,
  which carries the NTLM response; type 1 only names the client) or a SPNEGO/Kerberos token
  (GSS-API ``0x60`` or ``0xa1`` framing), decoded and checked;
* ``Authorization: Digest ... response="<hex>"``: the digest of the password a server accepts;
* ``Authorization: AWS4-HMAC-SHA256 ... Signature=<64 hex>`` and ``X-Amz-Signature=`` in a
  presigned URL (not when the credential is AWS's documented ``...EXAMPLE`` one);
* OAuth 1 ``oauth_signature=`` (percent-decoded; ``oauth_token``/``oauth_token_secret`` are
  key-suffix assignments);
* connection strings: Oracle ``jdbc:oracle:thin:user/password@host`` and ``sqlplus
  user/password@db`` (URL-shaped ones are ``url-credentials``, ``Password=...;`` and ``PWD=...;``
  are assignments).

Each pattern starts with a literal and reads bounded bodies; what follows a scheme is judged
in Python over a bounded part of the same line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from toolkit.privacy import filters as f
from toolkit.privacy.commandline import ValueRule, line_after, line_before, password_ok
from toolkit.privacy.rules import Rule, Tuning, lazy
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.types import Category

S = Category.SECRET
_REACH = 1000  # how far along the line a scheme's parameters are looked for

_SCHEME = lazy(
    r"(?i:authorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
    r"(?P<scheme>(?i:ntlm|negotiate|digest|aws4-hmac-sha256))[ \t]++"
)
_BLOB = lazy(r"[A-Za-z0-9+/]{16,8000}+={0,2}+")
_DIGEST_RESPONSE = lazy(r"response[ \t]*+=[ \t]*+\"?([0-9a-fA-F]{32,128}+)(?![0-9A-Za-z])")
_SIGV4 = lazy(r"Signature[ \t]*+=[ \t]*+([0-9a-f]{64}+)(?![0-9A-Za-z])")
_NTLMSSP = b"NTLMSSP\x00"


def _decoded(blob: str) -> bytes | None:
    return f.b64decode(blob + "=" * (-len(blob) % 4), validate=True)


def gss_credential(raw: bytes) -> bool:
    """An NTLM authenticate message (type 3) or a SPNEGO/Kerberos token: what a client sends to
    prove who it is. NTLM types 1 and 2 (negotiate, challenge) carry no credential."""
    if raw.startswith(_NTLMSSP):
        return len(raw) >= 12 and int.from_bytes(raw[8:12], "little") == 3
    return len(raw) >= 32 and raw[0] in (0x60, 0xA1)


def _hex_ok(value: str) -> bool:
    return not f.is_placeholder(value) and len(set(value.lower())) >= 8


def _scheme_span(text: str, at: int, scheme: str) -> tuple[int, int] | None:
    """The span of the credential after ``scheme`` (starting at ``at``), or None."""
    rest = line_after(text, at, _REACH)
    if scheme in ("ntlm", "negotiate"):
        blob = _BLOB.match(rest)
        raw = _decoded(blob.group()) if blob else None
        if blob is None or raw is None or not gss_credential(raw):
            return None
        return at, at + blob.end()
    if scheme == "digest":
        word, pattern = "response", _DIGEST_RESPONSE
    else:  # aws4-hmac-sha256
        if "EXAMPLE" in rest:
            return None  # AWS's documented example credential (AKIDEXAMPLE) and its signature
        word, pattern = "Signature", _SIGV4
    where = rest.find(word)  # a substring search first: the parameter is usually far along
    while where != -1:
        found = pattern.compiled.match(rest, where)
        if found is not None and (where == 0 or not rest[where - 1].isalnum()):
            if not _hex_ok(found.group(1)):
                return None
            return at + found.start(1), at + found.end(1)
        where = rest.find(word, where + 1)
    return None


class _SchemeRule(Rule):
    """``Authorization: <scheme> ...``: the credential the scheme carries, found in Python."""

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        for match in self.matches(view):
            span = _scheme_span(text, match.end(), match.group("scheme").lower())
            if span is not None:
                yield span


_AMZ_SIGNATURE = lazy(r"X-Amz-Signature=(?P<uv>[0-9a-f]{64}+)(?![0-9A-Za-z])")


def _amz_check(match: re.Match[str]) -> bool:
    text = match.string
    around = line_before(text, match.start(), 2000) + line_after(text, match.end(), 400)
    return "EXAMPLE" not in around and _hex_ok(match.group("uv"))


_OAUTH_SIGNATURE = lazy(r"oauth_signature[\"']?[ \t]*+[=:][ \t]*+[\"']?(?P<uv>[A-Za-z0-9%+/=._~-]{16,200}+)")


def _oauth_check(match: re.Match[str]) -> bool:
    value = unquote(match.group("uv"))
    return not f.is_env_read(value) and f.looks_random(value, min_len=16, min_entropy=3.3)


_ORACLE = lazy(
    r"(?:(?i:jdbc:oracle:thin:)|(?i:sqlplus)[ \t]++(?:-[A-Za-z]{1,2}[ \t]++){0,3})"
    r"(?P<user>[A-Za-z0-9_$#.]{1,64}+)/(?P<uv>[^\s@/\"'<>]{3,128}+)(?=@|[ \t\"']|$)"
)


def _oracle_check(match: re.Match[str]) -> bool:
    value = match.group("uv")
    return password_ok(value) and value.lower() != match.group("user").lower()


CREDENTIAL_RULES: tuple[Rule, ...] = (
    _SchemeRule(
        id="authorization-header",
        category=S,
        pattern=_SCHEME,
        priority=76,
        heuristic=True,
        tuning=Tuning(
            anchor=lazy(
                r"authorization[\"']?[ \t]*+[:=][ \t]*+[\"']?(?:ntlm|negotiate|digest|aws4-hmac-sha256)[ \t]"
            ),
            # the schemes as RFC 4559, RFC 7616 and AWS write them (the pattern reads any case)
            literals=("NTLM ", "Negotiate ", "Digest ", "AWS4-HMAC-SHA256 "),
        ),
    ),
    ValueRule(
        id="aws-sigv4-signature",
        category=S,
        pattern=_AMZ_SIGNATURE,
        check=_amz_check,
        priority=76,
        tuning=Tuning(literals=("X-Amz-Signature=",)),
    ),
    ValueRule(
        id="oauth-signature",
        category=S,
        pattern=_OAUTH_SIGNATURE,
        check=_oauth_check,
        priority=76,
        heuristic=True,
        tuning=Tuning(literals=("oauth_signature",)),
    ),
    ValueRule(
        id="connection-string",
        category=S,
        pattern=_ORACLE,
        check=_oracle_check,
        priority=75,
        heuristic=True,
        tuning=Tuning(anchor=lazy(r"jdbc:oracle:thin:|sqlplus[ \t]"), literals=("oracle:thin", "sqlplus")),
    ),
)
