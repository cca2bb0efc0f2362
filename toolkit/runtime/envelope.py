"""``knowzcode.measurement-envelope/v2``: the flat signed provenance record of a measurement run.

The envelope has exactly twelve keys. It is signed with Ed25519 over the RFC 8785 canonical bytes of
the envelope without ``signature``; ``corpus_digest`` is the SHA-256 of the RFC 8785 bytes of the
pairs array, so the signature binds the exact measured pairs. ``check_envelope`` returns the list
of reasons the envelope is not trusted (empty = trusted) instead of a bare boolean, so a refusal
can say whether the data was tampered with, stale, replayed or signed by an unknown key.
Stdlib at import time; ``cryptography`` and ``rfc8785`` are imported only when an envelope is checked.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import datetime, timedelta

from toolkit.core.canonical import NotCanonical, sha256_digest, signing_bytes
from toolkit.core.identifiers import MEASUREMENT_RUN_ID
from toolkit.core.timefmt import parse_rfc3339

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.core.jsontypes import JsonObject

ENVELOPE_SCHEMA = "knowzcode.measurement-envelope/v2"
ENVELOPE_KEYS: tuple[str, ...] = (
    "accounting_source",
    "candidate_version",
    "corpus_digest",
    "corpus_version",
    "measured_at",
    "measurement_run_id",
    "pair_count",
    "promotion_authorized",
    "runtime_digest",
    "schema",
    "signature",
    "signer_key_id",
)
KEY_ID = re.compile(r"^measurement-key-[a-z0-9._-]{1,64}\Z")
SHA256 = re.compile(r"^sha256:[a-f0-9]{64}\Z")
VERSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}\Z")
SIGNATURE = re.compile(r"^[A-Za-z0-9+/]+={0,2}\Z")
PUBLIC_KEY_PEM = re.compile(
    r"^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\r?\n?\Z"
)
MAX_AGE = timedelta(days=30)
MAX_FUTURE_SKEW = timedelta(minutes=5)
MAX_KEYS_JSON = 65_536


def corpus_digest(pairs: object) -> str:
    """``sha256:`` over the RFC 8785 bytes of the pairs array, as measured."""
    return sha256_digest(signing_bytes(pairs))


def envelope_signing_bytes(envelope: Mapping[str, object]) -> bytes:
    """The exact bytes the signature covers: the envelope without ``signature``, RFC 8785."""
    return signing_bytes({k: v for k, v in envelope.items() if k != "signature"})


def parse_trusted_keys(value: object, *, from_json: bool = False) -> dict[str, str]:
    """{key id: SPKI PEM} with malformed entries left out (an unknown key is simply untrusted)."""
    if from_json:
        value = _keys_json(value)
    if not isinstance(value, dict):
        return {}
    return {key_id: pem for key_id, pem in value.items() if _trusted_entry(key_id, pem)}


def _keys_json(text: object) -> object:
    """The decoded JSON of a non-empty, bounded keys text; None for anything else."""
    if not isinstance(text, str) or not text or len(text) > MAX_KEYS_JSON:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _trusted_entry(key_id: object, pem: object) -> bool:
    """A well-formed key id naming a well-formed SPKI PEM public key."""
    return (
        isinstance(key_id, str)
        and KEY_ID.match(key_id) is not None
        and isinstance(pem, str)
        and PUBLIC_KEY_PEM.match(pem) is not None
    )


def verify_signature(pem: str, message: bytes, signature: bytes) -> bool:
    """Ed25519 verification; any malformed key or signature is simply not valid."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(pem.encode("ascii"))
    except (ValueError, TypeError):
        return False
    if not isinstance(key, Ed25519PublicKey):
        return False
    try:
        key.verify(signature, message)
    except InvalidSignature:
        return False
    return True


def _expectation_failures(consumed: object, candidate: object, corpus: object, runtime: object) -> list[str]:
    """Codes for the caller's own expectations that are malformed: the consumed run ids and the
    expected candidate version, corpus version and runtime digest, in that order."""
    failures = []
    if not isinstance(consumed, list) or not all(_matches(MEASUREMENT_RUN_ID, v) for v in consumed):
        failures.append("CONSUMED_RUN_IDS_INVALID")
    expectations = (
        (candidate, VERSION_ID, "EXPECTED_CANDIDATE_VERSION_INVALID"),
        (corpus, VERSION_ID, "EXPECTED_CORPUS_VERSION_INVALID"),
        (runtime, SHA256, "EXPECTED_RUNTIME_DIGEST_INVALID"),
    )
    failures += [code for value, pattern, code in expectations if not _matches(pattern, value)]
    return failures


def _matches(pattern: re.Pattern[str], value: object) -> bool:
    """A string that ``pattern`` matches at its start."""
    return isinstance(value, str) and pattern.match(value) is not None


def _field_failures(envelope: Mapping[str, object]) -> list[str]:
    checks = (
        ("schema", lambda v: v == ENVELOPE_SCHEMA, "SCHEMA_INVALID"),
        (
            "measurement_run_id",
            lambda v: isinstance(v, str) and MEASUREMENT_RUN_ID.match(v),
            "RUN_ID_INVALID",
        ),
        ("signer_key_id", lambda v: isinstance(v, str) and KEY_ID.match(v), "KEY_ID_INVALID"),
        (
            "candidate_version",
            lambda v: isinstance(v, str) and VERSION_ID.match(v),
            "CANDIDATE_VERSION_INVALID",
        ),
        ("corpus_version", lambda v: isinstance(v, str) and VERSION_ID.match(v), "CORPUS_VERSION_INVALID"),
        ("runtime_digest", lambda v: isinstance(v, str) and SHA256.match(v), "RUNTIME_DIGEST_INVALID"),
        ("corpus_digest", lambda v: isinstance(v, str) and SHA256.match(v), "CORPUS_DIGEST_INVALID"),
        ("accounting_source", lambda v: v == "authoritative", "ACCOUNTING_NOT_AUTHORITATIVE"),
        ("promotion_authorized", lambda v: v is True, "PROMOTION_NOT_AUTHORIZED"),
        ("signature", lambda v: isinstance(v, str) and SIGNATURE.match(v), "SIGNATURE_MALFORMED"),
    )
    return [code for key, ok, code in checks if not ok(envelope.get(key))]


_MISMATCH_CODES = {
    "candidate_version": "CANDIDATE_VERSION_MISMATCH",
    "corpus_version": "CORPUS_VERSION_MISMATCH",
    "runtime_digest": "RUNTIME_DIGEST_MISMATCH",
}


def _pair_count_ok(count: object, pairs: object) -> bool:
    """The envelope's pair count is a number equal to the number of pairs given (never a boolean)."""
    return not isinstance(count, bool) and isinstance(pairs, list) and count == len(pairs)


def _measured_at_failure(measured_at: object, now: datetime) -> str | None:
    """Why the measurement time cannot be accepted (not an RFC 3339 time, too far in the
    future, too old), or None."""
    parsed = parse_rfc3339(measured_at) if isinstance(measured_at, str) else None
    if parsed is None:
        return "MEASURED_AT_INVALID"
    if parsed > now + MAX_FUTURE_SKEW:
        return "MEASUREMENT_FROM_FUTURE"
    if now - parsed > MAX_AGE:
        return "MEASUREMENT_STALE"
    return None


def _binding_failures(
    pairs: object,
    envelope: Mapping[str, object],
    now: datetime,
    consumed: object,
    expected: tuple[object, object, object],
) -> list[str]:
    """Codes for what does not bind the envelope to this request: the expected versions and
    digest, the pair count, the measurement time, a replayed run id and the corpus digest."""
    bound = zip(("candidate_version", "corpus_version", "runtime_digest"), expected, strict=True)
    failures = [_MISMATCH_CODES[key] for key, want in bound if envelope.get(key) != want]
    if not _pair_count_ok(envelope.get("pair_count"), pairs):
        failures.append("PAIR_COUNT_MISMATCH")
    timing = _measured_at_failure(envelope.get("measured_at"), now)
    if timing is not None:
        failures.append(timing)
    if isinstance(consumed, list) and envelope.get("measurement_run_id") in consumed:
        failures.append("RUN_ID_REPLAYED")
    if isinstance(envelope.get("corpus_digest"), str) and envelope["corpus_digest"] != _digest_or_none(pairs):
        failures.append("CORPUS_DIGEST_MISMATCH")
    return failures


def _digest_or_none(pairs: object) -> str | None:
    """The corpus digest of ``pairs``; None when RFC 8785 cannot represent them, which no signer
    can have digested, so no envelope binds them."""
    try:
        return corpus_digest(pairs)
    except NotCanonical:
        return None


def check_envelope(
    pairs: object,
    envelope: object,
    *,
    now: datetime,
    consumed_run_ids: object,
    expected_candidate_version: object,
    expected_corpus_version: object,
    expected_runtime_digest: object,
    trusted_keys: dict[str, str],
) -> list[str]:
    """Reasons the envelope does not establish provenance for ``pairs``; empty when it does."""
    if envelope is None:
        return ["ENVELOPE_MISSING"]
    if not isinstance(envelope, dict):
        return ["ENVELOPE_INVALID"]
    if sorted(envelope) != list(ENVELOPE_KEYS):
        return ["ENVELOPE_FIELDS_INVALID"]
    failures = _expectation_failures(
        consumed_run_ids, expected_candidate_version, expected_corpus_version, expected_runtime_digest
    )
    failures += _field_failures(envelope)
    failures += _binding_failures(
        pairs,
        envelope,
        now,
        consumed_run_ids,
        (expected_candidate_version, expected_corpus_version, expected_runtime_digest),
    )
    if "SIGNATURE_MALFORMED" in failures:
        return failures
    pem = trusted_keys.get(envelope["signer_key_id"]) if isinstance(envelope["signer_key_id"], str) else None
    if pem is None:
        return [*failures, "UNTRUSTED_SIGNER_KEY"]
    try:
        signature = base64.b64decode(envelope["signature"], validate=True)
        message = envelope_signing_bytes(envelope)
    except (binascii.Error, ValueError, TypeError, NotCanonical):
        return [*failures, "SIGNATURE_INVALID"]
    if not verify_signature(pem, message, signature):
        failures.append("SIGNATURE_INVALID")
    return failures


def sign_envelope(fields: Mapping[str, object], private_key_pem: bytes) -> JsonObject:
    """Return ``fields`` plus an Ed25519 ``signature`` (the shell reads the key from a file)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(private_key_pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("not an Ed25519 private key")
    unsigned = {k: v for k, v in fields.items() if k != "signature"}
    signature = key.sign(envelope_signing_bytes(unsigned))
    return {**unsigned, "signature": base64.b64encode(signature).decode("ascii")}
