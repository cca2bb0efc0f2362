"""Promotion file formats: the signed measurement envelope, paired results, the promotion request.

The runtime checks these with the standard library (``toolkit.runtime.promotion`` and
``toolkit.runtime.envelope``); the models are the single definition exported to ``schemas/``.
Pair bounds follow the reference: ids anonymous and unique, cost in (0, 1e9] for the baseline,
wall time at most 31 days, quality 0..100, rework and escapes non-negative integers.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

PairId = Annotated[
    str,
    StringConstraints(
        pattern=r"^(?:anon-[a-f0-9]{16,64}|(?:small-tier2|backend-refactor|ui-integration|security-compliance"
        r"|recovery-invalidation)-[0-9]{2})$"
    ),
]
Stratum = Literal[
    "small-tier2", "backend-refactor", "ui-integration", "security-compliance", "recovery-invalidation"
]
RunId = Annotated[str, StringConstraints(pattern=r"^measurement-[a-f0-9]{16,64}$")]
KeyId = Annotated[str, StringConstraints(pattern=r"^measurement-key-[a-z0-9._-]{1,64}$")]
Digest = Annotated[str, StringConstraints(pattern=r"^sha256:[a-f0-9]{64}$")]
VersionId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")]
Count = Annotated[int, Field(ge=0, le=1_000_000)]
WallTime = Annotated[float, Field(ge=0, le=2_678_400_000, allow_inf_nan=False)]
Quality = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]


class MeasurementEnvelope(BaseModel):
    """``knowzcode.measurement-envelope/v2``: exactly these twelve keys, Ed25519-signed.

    ``signature`` is base64 of the Ed25519 signature over the RFC 8785 bytes of the envelope
    without ``signature``; ``corpus_digest`` is ``sha256:`` of the RFC 8785 bytes of the pairs.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["knowzcode.measurement-envelope/v2"] = Field(alias="schema")
    measurement_run_id: RunId
    corpus_digest: Digest
    pair_count: Annotated[int, Field(ge=1)]
    measured_at: str = Field(description="Strict RFC 3339; accepted from now-30 days to now+5 minutes.")
    accounting_source: Literal["authoritative"]
    promotion_authorized: bool
    signer_key_id: KeyId
    candidate_version: VersionId
    corpus_version: VersionId
    runtime_digest: Digest
    signature: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+/]+={0,2}$")]


class PairProvenance(BaseModel):
    """Only ``measured`` + ``empirical`` + ``promotion_authorized`` pairs can promote."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["measured", "synthetic", "fixture-only"]
    empirical: bool
    promotion_authorized: bool


class Baseline(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    billed_cost: Annotated[float, Field(gt=0, le=1_000_000_000, allow_inf_nan=False)]
    wall_time_ms: Annotated[float, Field(gt=0, le=2_678_400_000, allow_inf_nan=False)]
    quality_score: Quality
    rework_rounds: Count
    escaped_high_critical: Count


class Candidate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    billed_cost: Annotated[float, Field(ge=0, le=1_000_000_000, allow_inf_nan=False)]
    wall_time_ms: WallTime
    quality_score: Quality
    rework_rounds: Count
    escaped_high_critical: Count
    provider_reported_total: Annotated[int, Field(gt=0, le=2**53 - 1)] | None = Field(
        default=None,
        description="Provider's total; required (with the accounted total) to pass reconciliation.",
    )
    event_accounted_total: Annotated[int, Field(ge=0, le=2**53 - 1)] | None = None


class Pair(BaseModel):
    """One task measured with the baseline and with the candidate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: PairId
    stratum: Stratum
    provenance: PairProvenance
    baseline: Baseline
    candidate: Candidate


class PairedResults(BaseModel):
    """``knowzcode.paired-efficiency-results/v2``; ``synthetic: true`` data can never promote."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["knowzcode.paired-efficiency-results/v2"] = Field(alias="schema")
    synthetic: bool
    empirical: bool
    provenance: dict[str, str | bool] | None = None
    pairs: list[Pair] = Field(min_length=1)


class Thresholds(BaseModel):
    """Caller thresholds: each may only tighten the contract's value (looser values are ignored)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    minimum_sample_size: float | None = Field(default=None, description="At least 40.")
    minimum_per_stratum: float | None = Field(default=None, description="At least 8.")
    required_strata: list[str] | None = Field(default=None, description="Added to the five strata.")
    median_cost_reduction: float | None = Field(default=None, description="At least 0.25.")
    p75_cost_reduction: float | None = Field(default=None, description="At least 0.15.")
    max_p95_regression: float | None = Field(default=None, description="At most 0.10.")
    median_wall_time_reduction: float | None = Field(default=None, description="At least 0.15.")
    max_quality_drop_points: float | None = Field(default=None, description="At most 2.")
    max_rework_relative_regression: float | None = Field(default=None, description="At most 0.05.")
    provider_reconciliation_tolerance: float | None = Field(default=None, description="At most 0.02.")


class PromotionOptions(BaseModel):
    """The reference library's third argument, plus the trusted keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    measurement_envelope: MeasurementEnvelope | None = None
    now: str | None = Field(default=None, description="RFC 3339; default: the clock.")
    consumed_measurement_run_ids: list[RunId] | None = None
    expected_candidate_version: VersionId | None = None
    expected_corpus_version: VersionId | None = None
    expected_runtime_digest: Digest | None = None
    trusted_measurement_public_keys: dict[str, str] | None = Field(
        default=None, description="{signer key id: SPKI PEM}; default: KNOWZCODE_TRUSTED_MEASUREMENT_KEYS."
    )


class PromotionRequest(BaseModel):
    """``workgroup runtime promotion`` request: ``evaluatePromotion(pairs, thresholds, options)``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pairs: list[Pair] = Field(min_length=1)
    thresholds: Thresholds | None = None
    options: PromotionOptions | None = None
    synthetic: bool | None = Field(
        default=None, description="true: the pairs are synthetic and cannot promote."
    )
