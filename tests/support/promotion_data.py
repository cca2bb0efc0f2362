"""Builders for promotion tests: balanced measured pairs, keys and signed envelopes."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from toolkit.runtime.envelope import corpus_digest, sign_envelope
from toolkit.runtime.rollout import STRATA

NOW = datetime(2026, 7, 31, 12, 0, tzinfo=UTC)
MEASURED_AT = "2026-07-30T12:00:00Z"
RUN_ID = "measurement-0123456789abcdef"
KEY_ID = "measurement-key-test"
RUNTIME_DIGEST = "sha256:" + "1" * 64
EXPECT: dict[str, Any] = {
    "expected_candidate_version": "candidate-v1",
    "expected_corpus_version": "corpus-v1",
    "expected_runtime_digest": RUNTIME_DIGEST,
}


def pairs(n_per_stratum: int = 8, **candidate: Any) -> list[dict[str, Any]]:
    """Balanced measured pairs that pass every gate (cost cut 0.4, time cut 0.3)."""
    result = []
    for stratum in STRATA:
        for index in range(1, n_per_stratum + 1):
            result.append(
                {
                    "id": f"{stratum}-{index:02d}",
                    "stratum": stratum,
                    "provenance": {"kind": "measured", "empirical": True, "promotion_authorized": True},
                    "baseline": {
                        "billed_cost": 100,
                        "wall_time_ms": 1000,
                        "quality_score": 95,
                        "rework_rounds": 1,
                        "escaped_high_critical": 0,
                    },
                    "candidate": {
                        "billed_cost": 60,
                        "wall_time_ms": 700,
                        "quality_score": 95,
                        "rework_rounds": 1,
                        "escaped_high_critical": 0,
                        "provider_reported_total": 1000,
                        "event_accounted_total": 1000,
                        **candidate,
                    },
                }
            )
    return result


def set_all(items: list[dict[str, Any]], side: str, **values: Any) -> list[dict[str, Any]]:
    out = copy.deepcopy(items)
    for pair in out:
        pair[side].update(values)
    return out


class KeyPair:
    def __init__(self) -> None:
        key = Ed25519PrivateKey.generate()
        self.private_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        self.public_pem = (
            key.public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            .decode("ascii")
        )


def envelope_fields(items: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    fields = {
        "schema": "knowzcode.measurement-envelope/v2",
        "measurement_run_id": RUN_ID,
        "corpus_digest": corpus_digest(items),
        "pair_count": len(items),
        "measured_at": MEASURED_AT,
        "accounting_source": "authoritative",
        "promotion_authorized": True,
        "signer_key_id": KEY_ID,
        "candidate_version": "candidate-v1",
        "corpus_version": "corpus-v1",
        "runtime_digest": RUNTIME_DIGEST,
    }
    fields.update(overrides)
    return fields


def signed(
    items: list[dict[str, Any]], key: KeyPair, omit: tuple[str, ...] = (), **overrides: Any
) -> dict[str, Any]:
    fields = envelope_fields(items, **overrides)
    for name in omit:
        fields.pop(name)
    return sign_envelope(fields, key.private_pem)
