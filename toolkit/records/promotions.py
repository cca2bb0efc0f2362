"""The shell side of promotion: files, keys, the clock and the replay ledger around the pure gates.

* ``runtime_digest()``: the digest of the installed runtime package, defined as
  ``sha256:`` over the lines ``<sha256 hex of file>  <file name>\\n`` of every
  ``toolkit/runtime/*.py``, sorted by name (a ``sha256sum`` manifest, so it is reproducible with
  standard tools and independent of the install location).
* Trusted keys: a directory of ``<signer_key_id>.pem`` files (SPKI PEM, Ed25519).
* Replay: a run id is consumed when a decision is recorded. Under one lock on the local replay
  ledger we read the consumed ids (local ledger + committed ``.workgroup/promotions/``), decide,
  and for a trusted envelope create ``.workgroup/promotions/<run_id>.json`` exclusively and append
  the id to the ledger. Two processes racing with one run id: exactly one records a decision.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
from datetime import datetime
from pathlib import Path
from typing import NotRequired, TypedDict, TypeGuard

import toolkit.runtime
from toolkit.core.canonical import sha256_digest
from toolkit.core.errors import InvalidInput, Refused
from toolkit.core.identifiers import MEASUREMENT_RUN_ID
from toolkit.core.jsontypes import JsonObject
from toolkit.core.timefmt import format_utc
from toolkit.infra import confinedwrite
from toolkit.infra.boundedio import NOT_FOUND, TOO_LARGE, FileRefused, read_regular
from toolkit.infra.ledger import read_replay_state
from toolkit.infra.store import Layout, append_jsonl, create_exclusive, file_lock, read_json_file
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.envelope import (
    ENVELOPE_SCHEMA,
    KEY_ID,
    SHA256,
    VERSION_ID,
    corpus_digest,
    parse_trusted_keys,
    sign_envelope,
)
from toolkit.runtime.promotion import consumed_ids, evaluate_promotion
from toolkit.runtime.promotion_pairs import validate_pairs
from toolkit.runtime.promotion_types import AnswerMetrics, PromotionDecision, Thresholds

DECISION_SCHEMA = "workgroup.promotion-decision/v1"


class TrustedEnvelope(TypedDict):
    """A measurement envelope the runtime trusted (``check_envelope`` found nothing at fault): an
    object with exactly ``ENVELOPE_KEYS``, each of the type its check admits."""

    schema: str
    measurement_run_id: str
    corpus_digest: str
    pair_count: float  # a number equal to the pair count, never a boolean
    measured_at: str
    accounting_source: str
    promotion_authorized: bool
    signer_key_id: str
    candidate_version: str
    corpus_version: str
    runtime_digest: str
    signature: str


class EnvelopeRecord(TypedDict):
    """The signed envelope as a decision record commits it (``record_envelope``)."""

    envelope: JsonObject
    envelope_signature_hex: str


class PromotionRecord(TypedDict):
    """The committed decision ``.workgroup/promotions/<run id>.json``, keys in the order written."""

    schema: str
    measurement_run_id: str
    decided_at: str
    promote: bool
    gates: dict[str, bool]
    metrics: AnswerMetrics
    thresholds: Thresholds
    envelope: JsonObject
    envelope_signature_hex: str
    checkpoint_sha: NotRequired[str]


class ReplayRow(TypedDict):
    """The local replay ledger's row for a consumed run id."""

    measurement_run_id: str
    consumed_at: str
    promote: bool


LEDGER_LOCK = "replay-ledger"
MAX_KEY_BYTES = 16_384
MAX_PAIRS_BYTES = 8 * 1_048_576


def runtime_digest(runtime_dir: Path | None = None) -> str:
    """``sha256:`` of the sorted ``sha256sum``-style manifest of ``toolkit/runtime/*.py``."""
    if runtime_dir is None:
        runtime_dir = Path(toolkit.runtime.__file__).resolve().parent
    manifest = "".join(
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n"
        for path in sorted(runtime_dir.glob("*.py"), key=lambda p: p.name)
    )
    return sha256_digest(manifest.encode("utf-8"))


def _read_small(path: Path, what: str, limit: int = MAX_KEY_BYTES) -> bytes:

    try:
        data = read_regular(path, limit=limit, what=what, allow_over=True) or b""
    except FileRefused as exc:
        code = exc.code if exc.code in (NOT_FOUND, TOO_LARGE) else "FILE_UNREADABLE"
        raise InvalidInput(code, exc.message) from None
    if len(data) > limit:
        raise InvalidInput("FILE_TOO_LARGE", f"{what} exceeds {limit} bytes")
    return data


def load_trusted_keys(directory: Path) -> dict[str, str]:
    """{signer key id: SPKI PEM} from ``DIR/<key id>.pem``; files with other names are ignored."""

    if not directory.is_dir():
        raise InvalidInput("TRUSTED_KEYS_DIR_INVALID", "the trusted keys directory does not exist")
    found: dict[str, str] = {}
    for path in sorted(directory.glob("*.pem")):
        if KEY_ID.match(path.stem) and path.is_file():
            found[path.stem] = _read_small(path, "a trusted key file").decode("ascii", errors="replace")
    return parse_trusted_keys(found)


def read_pairs_file(path: Path) -> tuple[list[object], bool]:
    """(pairs, synthetic) from a paired-results file (``{"pairs": [...]}``) or a bare array.

    A file marked ``"synthetic": true``, ``"empirical": false`` or with non-measured provenance
    is synthetic: it can be evaluated but never promote.
    """

    data = read_json_file(path, limit=MAX_PAIRS_BYTES, what="pairs file")
    if isinstance(data, list):
        return data, False
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise InvalidInput(
            "PAIRS_FILE_INVALID", "pairs file must be an array of pairs or an object with pairs"
        )
    provenance = data.get("provenance")
    synthetic = (
        data.get("synthetic") is True
        or data.get("empirical") is False
        or (isinstance(provenance, dict) and provenance.get("kind") != "measured")
    )
    return data["pairs"], bool(synthetic)


def consumed_run_ids(layout: Layout) -> list[str]:
    """Run ids already decided: the local ledger plus committed promotion records."""

    return consumed_ids(*read_replay_state(layout.replay_ledger, layout.workgroup / "promotions"))


def decide(
    layout: Layout,
    *,
    pairs: list[object],
    synthetic: bool,
    envelope: object,  # the envelope file as parsed: the runtime's check decides whether it is trusted
    trusted_keys: dict[str, str],
    now: datetime,
    expected_candidate_version: str,
    expected_corpus_version: str,
    expected_runtime_digest: str,
    extra_consumed: list[str] | None = None,
    thresholds: object = None,
    checkpoint_sha: str | None = None,
) -> PromotionDecision:
    """Evaluate and, for a trusted envelope, record the decision (consuming its run id)."""

    # Evaluate outside the lock (it is the slow part); under the lock, re-read the consumed ids
    # and either record the decision or turn it into a replay refusal.
    try:
        result = evaluate_promotion(
            pairs,
            thresholds,
            envelope=envelope,
            now=now,
            consumed_run_ids=sorted({*consumed_run_ids(layout), *(extra_consumed or [])}),
            expected_candidate_version=expected_candidate_version,
            expected_corpus_version=expected_corpus_version,
            expected_runtime_digest=expected_runtime_digest,
            trusted_keys=trusted_keys,
            synthetic=synthetic,
        )
    except RuntimeOpError as exc:
        raise InvalidInput(exc.code, exc.message) from None
    result["recorded"] = None
    if not _trusted(envelope, result):
        return result
    run_id = envelope["measurement_run_id"]
    sealed = record_envelope(envelope)
    record: PromotionRecord = {
        "schema": DECISION_SCHEMA,
        "measurement_run_id": run_id,
        "decided_at": format_utc(now),
        "promote": result["promote"],
        "gates": result["gates"],
        "metrics": result["metrics"],
        "thresholds": result["thresholds"],
        "envelope": sealed["envelope"],
        "envelope_signature_hex": sealed["envelope_signature_hex"],
    }
    if checkpoint_sha is not None:
        record["checkpoint_sha"] = (
            checkpoint_sha  # the commit the decision was made at; verify checks ancestry
        )
    path = layout.promotion_path(run_id)
    text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"

    with file_lock(layout.lock(LEDGER_LOCK)):
        # the record is committed under .workgroup/: a folder leading outside the work tree is refused
        claimed = run_id not in consumed_run_ids(layout) and confinedwrite.create_exclusive(
            layout.workdir, path, text, what="the promotion record"
        )
        if not claimed:
            _refuse_replay(result)
            return result
        consumed: ReplayRow = {
            "measurement_run_id": run_id,
            "consumed_at": format_utc(now),
            "promote": result["promote"],
        }
        append_jsonl(layout.replay_ledger, consumed)
    result["recorded"] = os.path.relpath(path, layout.workdir)
    return result


def _trusted(envelope: object, result: PromotionDecision) -> TypeGuard[TrustedEnvelope]:
    """Whether the decision trusted ``envelope``: only an envelope ``check_envelope`` found nothing
    at fault in is trusted, so a trusted one is a ``TrustedEnvelope`` (nothing is checked twice)."""
    return result["metrics"]["trusted_measurement_envelope"]


def record_envelope(envelope: TrustedEnvelope) -> EnvelopeRecord:
    """The envelope as committed: every field, with the signature as hex.

    A base64 Ed25519 signature looks like a high-entropy secret to privacy scanners although it is
    public; hex is recognised as a digest-like value. ``envelope_from_record`` restores the exact
    envelope, so the committed record can be re-verified.
    """
    fields = {k: v for k, v in envelope.items() if k != "signature"}
    return {"envelope": fields, "envelope_signature_hex": base64.b64decode(envelope["signature"]).hex()}


def envelope_from_record(record: EnvelopeRecord) -> JsonObject:
    """The signed envelope of a committed decision record (inverse of ``record_envelope``)."""
    signature = base64.b64encode(bytes.fromhex(record["envelope_signature_hex"])).decode("ascii")
    return {**record["envelope"], "signature": signature}


def _refuse_replay(result: PromotionDecision) -> None:
    """Another process or clone consumed the run between evaluation and recording."""
    result["promote"] = False
    result["gates"]["provenance"] = False
    result["metrics"]["trusted_measurement_envelope"] = False
    result["provenance_failures"].append("RUN_ID_REPLAYED")
    for row in result["gate_details"]:
        if row["gate"] == "provenance":
            row["passed"] = False
            row["value"] = False


def new_run_id() -> str:
    return "measurement-" + secrets.token_hex(8)


def sign_pairs(
    *,
    pairs: list[object],
    synthetic: bool,
    private_key_pem: bytes,
    signer_key_id: str,
    run_id: str,
    candidate_version: str,
    corpus_version: str,
    runtime_digest_value: str,
    measured_at: datetime,
) -> JsonObject:
    """A signed envelope for ``pairs``. Synthetic or non-measured pairs are signed with
    ``promotion_authorized: false``, so the signature is honest and the data still cannot promote."""

    checks = (
        (signer_key_id, KEY_ID, "key id"),
        (run_id, MEASUREMENT_RUN_ID, "run id"),
        (candidate_version, VERSION_ID, "candidate version"),
        (corpus_version, VERSION_ID, "corpus version"),
        (runtime_digest_value, SHA256, "runtime digest"),
    )
    for value, pattern, what in checks:
        if not pattern.match(value):
            raise InvalidInput("MEASUREMENT_FIELD_INVALID", f"the {what} is malformed")
    try:
        checked = validate_pairs(pairs)
    except RuntimeOpError as exc:
        raise InvalidInput(exc.code, exc.message) from None
    authorized = not synthetic and all(p.measured for p in checked)
    fields = {
        "schema": ENVELOPE_SCHEMA,
        "measurement_run_id": run_id,
        "corpus_digest": corpus_digest(pairs),
        "pair_count": len(pairs),
        "measured_at": format_utc(measured_at),
        "accounting_source": "authoritative",
        "promotion_authorized": authorized,
        "signer_key_id": signer_key_id,
        "candidate_version": candidate_version,
        "corpus_version": corpus_version,
        "runtime_digest": runtime_digest_value,
    }
    try:
        return sign_envelope(fields, private_key_pem)
    except (ValueError, TypeError):
        raise InvalidInput(
            "SIGNING_KEY_INVALID", "the key file is not an unencrypted Ed25519 private key"
        ) from None


def generate_keypair(directory: Path, key_id: str) -> tuple[Path, Path]:
    """Write ``<key id>.key`` (PKCS8, mode 0600) and ``<key id>.pem`` (SPKI); never overwrite."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if not KEY_ID.match(key_id):
        raise InvalidInput(
            "MEASUREMENT_FIELD_INVALID", "the key id must match measurement-key-[a-z0-9._-]{1,64}"
        )
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    directory.mkdir(parents=True, exist_ok=True)
    private_path, public_path = directory / f"{key_id}.key", directory / f"{key_id}.pem"
    if private_path.exists() or public_path.exists():
        raise Refused("KEY_EXISTS", "a key with this id already exists in the directory")
    # create_exclusive writes through a 0600 temp file, so the private key is never world-readable
    if not create_exclusive(private_path, private):
        raise Refused("KEY_EXISTS", "a key with this id already exists in the directory")
    if not create_exclusive(public_path, public):
        raise Refused("KEY_EXISTS", "a key with this id already exists in the directory")
    os.chmod(public_path, 0o644)
    return private_path, public_path


def read_private_key(path: Path) -> tuple[bytes, bool]:
    """The key file's bytes, and whether other users can read it (worth a warning, as ssh does)."""
    data = _read_small(path, "the key file")
    try:
        exposed = bool(path.stat().st_mode & 0o077)
    except OSError:
        exposed = False
    return data, exposed
