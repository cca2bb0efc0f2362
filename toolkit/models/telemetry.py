"""``knowzcode.efficiency-event/v1``: the normalized efficiency event (the reference's closed schema).

The runtime normalizes with the standard library (``toolkit.runtime.telemetry``); this model is the
file format's single definition for ``schemas/`` and for readers of the local telemetry log.
Counters are nullable and non-negative; ``billed`` numbers require an authoritative or
provider-reported ``accounting_source`` (checked by the runtime before projection).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Counter = Annotated[int, Field(ge=0)] | None
Measure = Annotated[float, Field(ge=0, allow_inf_nan=False)] | None
Mode = Literal["local", "resume", "inherit-full", "inherit-recent", "fresh-capsule", "coordinated-team"]
ReasonCode = Literal[
    "LOCAL_CHEAPER",
    "BLOCKING",
    "RESUME_COMPATIBLE",
    "HIGH_CONTEXT_AFFINITY",
    "BOUNDED_RECENT_CONTEXT",
    "INDEPENDENT_CAPSULE",
    "SENSITIVITY_ISOLATION",
    "REVIEW_INDEPENDENCE",
    "TEAM_COORDINATION_REQUIRED",
    "WRITER_OWNERSHIP_CONFLICT",
    "NESTING_LIMIT",
    "CAPABILITY_FALLBACK",
]
TaskCorpusId = Annotated[
    str,
    StringConstraints(
        pattern=r"^(?:anon-[a-f0-9]{16,64}|(?:small-tier2|backend-refactor|ui-integration|security-compliance"
        r"|recovery-invalidation)-[0-9]{2})$"
    ),
]
AnonModel = Annotated[str, StringConstraints(pattern=r"^anon-model-[a-f0-9]{16,64}$")]


class Logical(BaseModel):
    """Logical consumption: what occupied the context, independent of billing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    estimated_context_occupancy: Measure
    compaction_count: Counter
    repeated_file_reads: Counter
    prompt_bytes: Counter
    tool_output_bytes: Counter
    capsule_bytes: Counter


class Billed(BaseModel):
    """Billed consumption as the provider reports it; ``null`` where it exposes nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    uncached_input_tokens: Counter
    cache_creation_input_tokens: Counter
    cache_read_input_tokens: Counter
    output_tokens: Counter
    amount: Measure
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")] | None
    units: Measure
    accounting_source: Literal["authoritative", "provider-reported", "estimated", "unknown"]


class Outcome(BaseModel):
    """Outcomes: acceptance, verification, audit, rework, escapes, elapsed time."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    accepted_workgroup: bool | None
    verify_passed: Counter
    verify_total: Counter
    audit_score: Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)] | None
    rework_rounds: Counter
    escaped_high_critical: Counter
    elapsed_ms: Counter


class EfficiencyEvent(BaseModel):
    """One normalized efficiency event."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["knowzcode.efficiency-event/v1"] = Field(alias="schema")
    event: Literal[
        "dispatch_decision",
        "worker_usage",
        "worker_completed",
        "verification_run",
        "vault_operation",
        "budget_transition",
        "gate_outcome",
        "lineage_invalidated",
    ]
    observed_at: str = Field(description="Strict RFC 3339 date-time with an offset.")
    task_corpus_id: TaskCorpusId | None
    provider: Literal["claude", "codex", "other"]
    runtime: Literal["cli", "mcp", "api", "desktop", "plugin", "unknown"] | None
    model: (
        Literal["unknown", "opus", "sonnet", "haiku", "fable", "gpt-5", "gpt-5.6-sol", "gpt-5.6-terra"]
        | AnonModel
        | None
    )
    profile: Literal["quality", "balanced", "economy", "latency"] | None
    mode: Mode | None
    reason_codes: list[ReasonCode]
    logical: Logical
    billed: Billed
    outcome: Outcome
