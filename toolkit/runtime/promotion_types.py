"""The shapes of the promotion, budget, verification-plan and should-deep-query answers (#25).

Every class here is a ``TypedDict``: a plain dict at run time, so an answer built against one is
byte for byte the JSON it was before. The runtime operations import this module only under
``if TYPE_CHECKING:`` (``workgroup runtime OP`` does not import ``typing`` at run time); nothing on
that path imports it at run time. Keys are declared in the order the answers write them.
"""

from __future__ import annotations

from typing import Generic, NotRequired, TypedDict, TypeVar

# --- promotion ---------------------------------------------------------------------------

GateValue = float | bool | None
"""A gate's value or threshold: a number, a flag, or null (no value, or an infinite one)."""


class Thresholds(TypedDict):
    """The effective thresholds: the contract's, tightened by the caller's (floors, then ceilings)."""

    minimum_sample_size: float
    minimum_per_stratum: float
    median_cost_reduction: float
    p75_cost_reduction: float
    median_wall_time_reduction: float
    max_p95_regression: float
    max_quality_drop_points: float
    max_rework_relative_regression: float
    provider_reconciliation_tolerance: float
    required_strata: list[str]


_Rework = TypeVar("_Rework")


class PromotionMetrics(TypedDict, Generic[_Rework]):
    """The reference's metrics of a validated (non-empty) pair list; ``evaluate_promotion`` adds
    the three provenance flags after them. The gates read ``GateMetrics`` (the rework regression
    may be infinite); the answer carries ``AnswerMetrics`` (an infinite one is null, as JSON has no
    Infinity)."""

    sample_size: int
    stratum_counts: dict[str, int]
    median_cost_reduction: float
    p75_cost_reduction: float
    p95_cost_regression: float
    median_wall_time_reduction: float
    quality_drop_points: float
    rework_relative_regression: _Rework
    new_high_critical_escape: bool
    max_provider_reconciliation_error: float | None
    measured_pair_provenance: NotRequired[bool]
    provider_accounting_complete: NotRequired[bool]
    trusted_measurement_envelope: NotRequired[bool]


GateMetrics = PromotionMetrics[float]
AnswerMetrics = PromotionMetrics[float | None]


class GateRow(TypedDict):
    """One row of ``gate_details``: the gate, whether it passed, its value against its threshold."""

    gate: str
    passed: bool
    value: GateValue
    threshold: GateValue
    comparison: str


class BootstrapInterval(TypedDict):
    """A seeded percentile bootstrap interval (report only)."""

    estimate: float | None
    low: float | None
    high: float | None
    confidence: float
    samples: int
    seed: int


class StratumRow(TypedDict):
    """One stratum's report row; a required stratum without pairs has ``stratum`` and ``n`` only."""

    stratum: str
    n: int
    median_cost_reduction: NotRequired[float | None]
    median_wall_time_reduction: NotRequired[float | None]
    quality_drop_points: NotRequired[float]
    new_high_critical_escapes: NotRequired[int]


class PromotionReport(TypedDict):
    """The report-only section: bootstrap intervals by metric name, and the per-stratum table."""

    bootstrap: dict[str, BootstrapInterval]
    strata: list[StratumRow]


class PromotionDecision(TypedDict):
    """``evaluate_promotion``: the decision, every gate, and the report-only section.

    ``recorded`` is added by ``workgroup promote`` (``toolkit.records.promotions.decide``): the
    committed record's path, or null when nothing was recorded; the runtime operation never sets it.
    """

    promote: bool
    metrics: AnswerMetrics
    gates: dict[str, bool]
    gate_details: list[GateRow]
    thresholds: Thresholds
    provenance_failures: list[str]
    report: PromotionReport
    evaluated_at: str
    recorded: NotRequired[str | None]


# --- budget ------------------------------------------------------------------------------


class BudgetAnswer(TypedDict):
    """``evaluate_budget``: the reference's four keys, plus ``kind`` and ``pause`` when a kind is given."""

    state: str
    ratio: float | None
    actions: list[str]
    mandatory_gates_preserved: bool
    kind: NotRequired[str]
    pause: NotRequired[bool]


# --- verification plan -------------------------------------------------------------------


class VerificationPlan(TypedDict):
    """``verification_plan``: the checks to run, whether the consolidated set is required, logs."""

    checks: list[str]
    consolidated_required: bool
    artifact_logs: bool


# --- should-deep-query -------------------------------------------------------------------


class DeepQueryAnswer(TypedDict):
    """``op_should_deep_query``: the decision and the code of the rule that settled it."""

    should_deep_query: bool
    reason: str
