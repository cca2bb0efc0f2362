"""The contract's closed vocabularies, defined once (standard library only).

Every runtime module imports them from here; the pydantic models spell them as ``Literal`` types
for static checking, and tests/models/test_vocabulary.py fails when a model drifts from these tuples.
"""

from __future__ import annotations

from toolkit.core.phases import PHASES as PHASES  # declared in core: capsules and lineages name them

# Dispatch modes, in the router's order of preference (seed: "Dispatch modes and precedence").
MODES: tuple[str, ...] = (
    "local",
    "resume",
    "inherit-full",
    "inherit-recent",
    "fresh-capsule",
    "coordinated-team",
)
# Reason codes in the reference's output order (results sort by this order).
REASON_CODES: tuple[str, ...] = (
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
)
PLATFORMS: tuple[str, ...] = ("claude", "codex", "other")
SENSITIVITIES: tuple[str, ...] = ("normal", "restricted", "isolated")
# Evaluation strata, with the reference's ids.
STRATA: tuple[str, ...] = (
    "small-tier2",
    "backend-refactor",
    "ui-integration",
    "security-compliance",
    "recovery-invalidation",
)
