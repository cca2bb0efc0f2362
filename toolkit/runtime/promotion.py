"""Promotion: paired baseline/candidate results against every gate of the contract (stdlib only).

Eleven gates, as the reference: provenance, sample_size, strata, median_cost, p75_cost, p95_cost,
median_wall_time, quality, rework, security, reconciliation. Thresholds may only tighten. Quantiles
are linear at (n-1)p over the per-pair reductions ((baseline - candidate) / baseline); p95 over the
per-pair regressions. Pairs must be bounded and uniquely identified (a violation is an error, not a
failed gate). Provenance needs measured pairs plus a trusted ``knowzcode.measurement-envelope/v2``
(see ``toolkit.runtime.envelope``). Beyond the reference, the result carries each gate's value and
threshold, the reasons provenance failed, and a report-only section with seeded bootstrap confidence
intervals and a per-stratum table; the gates themselves stay exactly as the contract says.
"""

from __future__ import annotations

import math
from datetime import datetime

from toolkit.core.identifiers import MEASUREMENT_RUN_ID
from toolkit.core.timefmt import format_utc, parse_rfc3339
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.envelope import check_envelope, parse_trusted_keys
from toolkit.runtime.promotion_pairs import Pair, invalid_input, is_number, validate_pairs
from toolkit.runtime.promotion_report import (
    BOOTSTRAP_SAMPLES,
    BOOTSTRAP_SEED,
    bootstrap_interval,
    nonempty_quantile,
    strata_table,
)
from toolkit.runtime.vocabulary import STRATA

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import TypeVar

    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.promotion_types import (
        AnswerMetrics,
        BootstrapInterval,
        GateMetrics,
        GateRow,
        GateValue,
        PromotionDecision,
        PromotionReport,
        Thresholds,
    )

    _Number = TypeVar("_Number")  # a gate value or a metric: the same type back, or null

# The contract's numeric thresholds; its required strata are every stratum (STRATA).
DEFAULT_THRESHOLDS: dict[str, float] = {
    "minimum_sample_size": 40,
    "minimum_per_stratum": 8,
    "median_cost_reduction": 0.25,
    "p75_cost_reduction": 0.15,
    "max_p95_regression": 0.10,
    "median_wall_time_reduction": 0.15,
    "max_quality_drop_points": 2,
    "max_rework_relative_regression": 0.05,
    "provider_reconciliation_tolerance": 0.02,
}


def effective_thresholds(thresholds: object) -> Thresholds:
    """Merge caller thresholds over the contract's, keeping only the stricter side of each:
    floors (minimums, required reductions) may only rise, ceilings (maximums) may only fall."""
    if thresholds is None:
        thresholds = {}
    if not isinstance(thresholds, dict):
        raise invalid_input()
    given, extra = _checked_threshold_values(thresholds)
    return {
        "minimum_sample_size": _raised(given, "minimum_sample_size"),
        "minimum_per_stratum": _raised(given, "minimum_per_stratum"),
        "median_cost_reduction": _raised(given, "median_cost_reduction"),
        "p75_cost_reduction": _raised(given, "p75_cost_reduction"),
        "median_wall_time_reduction": _raised(given, "median_wall_time_reduction"),
        "max_p95_regression": _lowered(given, "max_p95_regression"),
        "max_quality_drop_points": _lowered(given, "max_quality_drop_points"),
        "max_rework_relative_regression": _lowered(given, "max_rework_relative_regression"),
        "provider_reconciliation_tolerance": _lowered(given, "provider_reconciliation_tolerance"),
        "required_strata": list(dict.fromkeys([*STRATA, *extra])),
    }


def _raised(given: Mapping[str, float], name: str) -> float:
    """A floor: the contract's, or the caller's when higher."""
    return max(DEFAULT_THRESHOLDS[name], given.get(name, DEFAULT_THRESHOLDS[name]))


def _lowered(given: Mapping[str, float], name: str) -> float:
    """A ceiling: the contract's, or the caller's when lower."""
    return min(DEFAULT_THRESHOLDS[name], given.get(name, DEFAULT_THRESHOLDS[name]))


def _checked_threshold_values(thresholds: Mapping[str, object]) -> tuple[dict[str, float], list[str]]:
    """The caller's numeric thresholds and the extra required strata it names, once every
    threshold but ``required_strata`` is a number and a ``required_strata`` list holds only
    strings (``PROMOTION_INPUT_INVALID`` otherwise)."""
    given: dict[str, float] = {}
    for name, value in thresholds.items():
        if name == "required_strata":
            continue
        if not is_number(value):
            raise invalid_input()
        given[name] = value
    requested = thresholds.get("required_strata")
    if not isinstance(requested, list):
        return given, []
    strata = [item for item in requested if isinstance(item, str)]
    if len(strata) != len(requested):
        raise invalid_input()
    return given, strata


def _rework_regression(pairs: list[Pair]) -> float:
    # a zero median is the integer 0, as the reference prints it
    base = nonempty_quantile([p.baseline_rework for p in pairs], 0.5) or 0
    cand = nonempty_quantile([p.candidate_rework for p in pairs], 0.5) or 0
    if base == 0:
        return 0.0 if cand == 0 else math.inf
    return (cand - base) / base


def compute_metrics(pairs: list[Pair]) -> GateMetrics:
    """The reference's metrics (without the provenance flags) of validated pairs (``validate_pairs``:
    never an empty list)."""
    counts: dict[str, int] = {}
    for pair in pairs:
        counts[pair.stratum] = counts.get(pair.stratum, 0) + 1
    return {
        "sample_size": len(pairs),
        "stratum_counts": dict(sorted(counts.items())),
        "median_cost_reduction": nonempty_quantile([p.cost_reduction for p in pairs], 0.5),
        "p75_cost_reduction": nonempty_quantile([p.cost_reduction for p in pairs], 0.75),
        "p95_cost_regression": nonempty_quantile([p.cost_regression for p in pairs], 0.95),
        "median_wall_time_reduction": nonempty_quantile([p.wall_time_reduction for p in pairs], 0.5),
        "quality_drop_points": _quality_drop(pairs),
        "rework_relative_regression": _rework_regression(pairs),
        "new_high_critical_escape": any(p.new_escape for p in pairs),
        "max_provider_reconciliation_error": _max_reconciliation_error(pairs),
    }


def _quality_drop(pairs: list[Pair]) -> float:
    """Median baseline quality minus median candidate quality (a zero median is the integer 0, as
    the reference prints it)."""
    base_quality = nonempty_quantile([p.baseline_quality for p in pairs], 0.5)
    cand_quality = nonempty_quantile([p.candidate_quality for p in pairs], 0.5)
    return (base_quality or 0) - (cand_quality or 0)


def _max_reconciliation_error(pairs: list[Pair]) -> float | None:
    """The largest provider reconciliation error among the pairs that report one, or None."""
    errors = [p.reconciliation_error for p in pairs if p.reconciliation_error is not None]
    return max(errors) if errors else None


# --- the gate table: one named rule per gate, in the contract's order -----------------------------
# Each rule reads the metrics ``m`` and the effective thresholds ``t`` and returns
# ``(passed, value, threshold, comparison)``; the table row adds its name. ``strata`` also needs
# whether every required stratum reached its minimum (``strata_ok``), computed once by the caller.

if TYPE_CHECKING:
    GateResult = tuple[bool, GateValue, GateValue, str]
    GateRule = Callable[[GateMetrics, Thresholds, bool], GateResult]


def _at_least(value: float, floor: float) -> GateResult:
    return value >= floor, value, floor, ">="


def _at_most(value: float, ceiling: float) -> GateResult:
    return value <= ceiling, value, ceiling, "<="


def gate_provenance(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    """Measured pairs under a trusted measurement envelope."""
    trusted = m["measured_pair_provenance"] and m["trusted_measurement_envelope"]
    return trusted, trusted, True, "is"


def gate_sample_size(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    return _at_least(m["sample_size"], t["minimum_sample_size"])


def gate_strata(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    """Every required stratum has its minimum; the value is the smallest required stratum."""
    smallest = min((m["stratum_counts"].get(s, 0) for s in t["required_strata"]), default=0)
    return strata_ok, smallest, t["minimum_per_stratum"], ">="


def gate_median_cost(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    return _at_least(m["median_cost_reduction"], t["median_cost_reduction"])


def gate_p75_cost(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    return _at_least(m["p75_cost_reduction"], t["p75_cost_reduction"])


def gate_p95_cost(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    return _at_most(m["p95_cost_regression"], t["max_p95_regression"])


def gate_median_wall_time(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    return _at_least(m["median_wall_time_reduction"], t["median_wall_time_reduction"])


def gate_quality(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    return _at_most(m["quality_drop_points"], t["max_quality_drop_points"])


def gate_rework(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    return _at_most(m["rework_relative_regression"], t["max_rework_relative_regression"])


def gate_security(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    """No new high or critical escape."""
    return not m["new_high_critical_escape"], m["new_high_critical_escape"], False, "is"


def gate_reconciliation(m: GateMetrics, t: Thresholds, strata_ok: bool) -> GateResult:
    """Every pair's provider accounting present, and the largest error within the tolerance."""
    error = m["max_provider_reconciliation_error"]
    tolerance = t["provider_reconciliation_tolerance"]
    ok = m["provider_accounting_complete"] and error is not None and error <= tolerance
    return ok, error, tolerance, "<="


GATES: tuple[tuple[str, GateRule], ...] = (
    ("provenance", gate_provenance),
    ("sample_size", gate_sample_size),
    ("strata", gate_strata),
    ("median_cost", gate_median_cost),
    ("p75_cost", gate_p75_cost),
    ("p95_cost", gate_p95_cost),
    ("median_wall_time", gate_median_wall_time),
    ("quality", gate_quality),
    ("rework", gate_rework),
    ("security", gate_security),
    ("reconciliation", gate_reconciliation),
)


def _gate_table(metrics: GateMetrics, t: Thresholds, strata_ok: bool) -> list[GateRow]:
    rows: list[GateRow] = []
    for name, rule in GATES:
        passed, value, threshold, comparison = rule(metrics, t, strata_ok)
        rows.append(
            {
                "gate": name,
                "passed": bool(passed),
                "value": _json_number(value),
                "threshold": threshold,
                "comparison": comparison,
            }
        )
    return rows


def _json_number(value: _Number) -> _Number | None:
    # JSON has no Infinity; the reference's output prints it as null as well.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def evaluate_promotion(
    pairs: object,
    thresholds: object = None,
    *,
    envelope: object = None,
    now: datetime,
    consumed_run_ids: object = None,
    expected_candidate_version: object = None,
    expected_corpus_version: object = None,
    expected_runtime_digest: object = None,
    trusted_keys: dict[str, str] | None = None,
    synthetic: bool = False,
    bootstrap_seed: int = BOOTSTRAP_SEED,
    bootstrap_samples: int = BOOTSTRAP_SAMPLES,
) -> PromotionDecision:
    """Evaluate every gate; ``promote`` is true only when all pass. Raises ``PROMOTION_INPUT_INVALID``."""
    limits = effective_thresholds(thresholds)
    checked = validate_pairs(pairs)
    metrics = compute_metrics(checked)
    failures = check_envelope(
        pairs,
        envelope,
        now=now,
        consumed_run_ids=consumed_run_ids,
        expected_candidate_version=expected_candidate_version,
        expected_corpus_version=expected_corpus_version,
        expected_runtime_digest=expected_runtime_digest,
        trusted_keys=trusted_keys or {},
    )
    measured = all(p.measured for p in checked) and not synthetic
    _note_pair_provenance(failures, checked, synthetic)
    metrics["measured_pair_provenance"] = measured
    metrics["provider_accounting_complete"] = all(p.reconciliation_error is not None for p in checked)
    metrics["trusted_measurement_envelope"] = not [f for f in failures if f not in _PAIR_PROVENANCE]
    table = _gate_table(metrics, limits, _strata_ok(metrics, limits))
    gates = {row["gate"]: row["passed"] for row in table}
    # the same keys in the same order, the infinite rework regression printed as null
    answer_metrics: AnswerMetrics = {
        **metrics,
        "rework_relative_regression": _json_number(metrics["rework_relative_regression"]),
    }
    report: PromotionReport = {
        "bootstrap": _bootstrap_report(checked, bootstrap_seed, bootstrap_samples),
        "strata": strata_table(checked, limits["required_strata"]),
    }
    return {
        "promote": all(gates.values()),
        "metrics": answer_metrics,
        "gates": gates,
        "gate_details": table,
        "thresholds": limits,
        "provenance_failures": failures,
        "report": report,
        "evaluated_at": format_utc(now),
    }


_PAIR_PROVENANCE = ("SYNTHETIC_DATA", "PAIRS_NOT_MEASURED")


def _note_pair_provenance(failures: list[str], checked: list[Pair], synthetic: bool) -> None:
    """Put the pairs' own provenance failure first: synthetic data, else pairs not all measured."""
    if synthetic:
        failures.insert(0, "SYNTHETIC_DATA")
    elif not all(p.measured for p in checked):
        failures.insert(0, "PAIRS_NOT_MEASURED")


def _strata_ok(metrics: GateMetrics, limits: Thresholds) -> bool:
    """Every required stratum reached the minimum number of pairs."""
    return all(
        metrics["stratum_counts"].get(s, 0) >= limits["minimum_per_stratum"]
        for s in limits["required_strata"]
    )


def _bootstrap_report(checked: list[Pair], seed: int, samples: int) -> dict[str, BootstrapInterval]:
    """Seeded bootstrap confidence intervals of the median cost and wall-time reductions (report only)."""
    return {
        "median_cost_reduction": bootstrap_interval(
            [p.cost_reduction for p in checked], seed=seed, samples=samples
        ),
        "median_wall_time_reduction": bootstrap_interval(
            [p.wall_time_reduction for p in checked], seed=seed, samples=samples
        ),
    }


def consumed_ids(ledger_rows: list[object], record_names: list[str]) -> list[str]:
    """Run ids already decided: the ``measurement_run_id`` of each replay-ledger row plus each
    committed promotion record (``<run id>.json``); anything not shaped like a run id is ignored."""
    ids: set[str] = set()
    for row in ledger_rows:
        value = row.get("measurement_run_id") if isinstance(row, dict) else None
        if isinstance(value, str) and MEASUREMENT_RUN_ID.match(value):
            ids.add(value)
    ids.update(
        name[:-5] for name in record_names if name.endswith(".json") and MEASUREMENT_RUN_ID.match(name[:-5])
    )
    return sorted(ids)


def _options(request: Mapping[str, object]) -> Mapping[str, object]:
    options = request.get("options")
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    return options


def op_promotion(request: Mapping[str, object], ctx: RuntimeContext) -> PromotionDecision:
    """``workgroup runtime promotion``: ``{"pairs", "thresholds"?, "options"?}`` -> the decision.

    ``options`` are the reference library's: ``measurement_envelope``, ``now`` (default: the
    clock), ``consumed_measurement_run_ids``, ``expected_candidate_version``,
    ``expected_corpus_version``, ``expected_runtime_digest``; trusted keys come from
    ``trusted_measurement_public_keys`` ({key id: SPKI PEM}) or, as the reference,
    ``KNOWZCODE_TRUSTED_MEASUREMENT_KEYS`` in the environment.
    """
    options = _options(request)
    raw_now = options.get("now")
    if raw_now is None:
        now = ctx.now()
    else:
        parsed = parse_rfc3339(raw_now) if isinstance(raw_now, str) else None
        if parsed is None:
            raise RuntimeOpError("INVALID_DATE_TIME")
        now = parsed
    consumed = options.get("consumed_measurement_run_ids")
    if isinstance(consumed, list):
        # Beyond the reference: the repository's own ledger counts too, so a forgotten id is still a replay.
        consumed = [*consumed, *consumed_ids(*ctx.replay_state())]
    keys = options.get("trusted_measurement_public_keys")
    trusted = (
        parse_trusted_keys(keys)
        if keys is not None
        else parse_trusted_keys(ctx.env("KNOWZCODE_TRUSTED_MEASUREMENT_KEYS"), from_json=True)
    )
    return evaluate_promotion(
        request.get("pairs"),
        request.get("thresholds"),
        envelope=options.get("measurement_envelope"),
        now=now,
        consumed_run_ids=consumed,
        expected_candidate_version=options.get("expected_candidate_version"),
        expected_corpus_version=options.get("expected_corpus_version"),
        expected_runtime_digest=options.get("expected_runtime_digest"),
        trusted_keys=trusted,
        synthetic=request.get("synthetic") is True,
    )
