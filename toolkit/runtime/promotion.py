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
import random
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.envelope import check_envelope, parse_trusted_keys
from toolkit.runtime.rollout import ANONYMOUS_CORPUS_ID, STRATA
from toolkit.timefmt import format_utc, parse_rfc3339

if TYPE_CHECKING:
    from toolkit.runtime.protocol import RuntimeContext

DEFAULT_THRESHOLDS: dict[str, Any] = {
    "minimum_sample_size": 40,
    "minimum_per_stratum": 8,
    "required_strata": list(STRATA),
    "median_cost_reduction": 0.25,
    "p75_cost_reduction": 0.15,
    "max_p95_regression": 0.10,
    "median_wall_time_reduction": 0.15,
    "max_quality_drop_points": 2,
    "max_rework_relative_regression": 0.05,
    "provider_reconciliation_tolerance": 0.02,
}
# Floors may only rise, ceilings may only fall.
_RAISE_ONLY = (
    "minimum_sample_size",
    "minimum_per_stratum",
    "median_cost_reduction",
    "p75_cost_reduction",
    "median_wall_time_reduction",
)
_LOWER_ONLY = (
    "max_p95_regression",
    "max_quality_drop_points",
    "max_rework_relative_regression",
    "provider_reconciliation_tolerance",
)
MAX_COST = 1_000_000_000
MAX_WALL_TIME_MS = 2_678_400_000  # 31 days
MAX_COUNT = 1_000_000
MAX_SAFE_INTEGER = 2**53 - 1
BOOTSTRAP_SEED = 20260731
BOOTSTRAP_SAMPLES = 2000


def _invalid() -> RuntimeOpError:
    return RuntimeOpError("PROMOTION_INPUT_INVALID")


def quantile(values: list[float], p: float) -> float | None:
    """Linear interpolation at position (n-1)p of the sorted values (the reference's definition)."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * p
    lower, upper = math.floor(position), math.ceil(position)
    if lower == upper:
        return ordered[lower]
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def effective_thresholds(thresholds: Any) -> dict[str, Any]:
    """Merge caller thresholds over the contract's, keeping only the stricter side of each."""
    if thresholds is None:
        thresholds = {}
    if not isinstance(thresholds, dict):
        raise _invalid()
    for name, value in thresholds.items():
        if name != "required_strata" and not _number(value):
            raise _invalid()
    requested = thresholds.get("required_strata")
    extra: list[str] = []
    if isinstance(requested, list):
        if not all(isinstance(item, str) for item in requested):
            raise _invalid()
        extra = requested
    effective: dict[str, Any] = {}
    for name in _RAISE_ONLY:
        effective[name] = max(DEFAULT_THRESHOLDS[name], thresholds.get(name, DEFAULT_THRESHOLDS[name]))
    for name in _LOWER_ONLY:
        effective[name] = min(DEFAULT_THRESHOLDS[name], thresholds.get(name, DEFAULT_THRESHOLDS[name]))
    effective["required_strata"] = list(dict.fromkeys([*STRATA, *extra]))
    return effective


def _metric(
    value: Any, *, positive: bool = False, integer: bool = False, maximum: float = MAX_SAFE_INTEGER
) -> float:
    if not _number(value) or (value <= 0 if positive else value < 0) or value > maximum:
        raise _invalid()
    if integer and not float(value).is_integer():
        raise _invalid()
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Pair:
    """One validated baseline/candidate pair."""

    id: str
    stratum: str
    measured: bool
    cost_reduction: float
    cost_regression: float
    wall_time_reduction: float
    baseline_quality: float
    candidate_quality: float
    baseline_rework: float
    candidate_rework: float
    new_escape: bool
    reconciliation_error: float | None


def _side(pair: dict[str, Any], name: str) -> dict[str, Any]:
    side = pair.get(name)
    if not isinstance(side, dict):
        raise _invalid()
    return side


def _pair(raw: Any, seen: set[str]) -> Pair:
    if not isinstance(raw, dict):
        raise _invalid()
    pair_id = raw.get("id")
    if not isinstance(pair_id, str) or not ANONYMOUS_CORPUS_ID.match(pair_id) or pair_id in seen:
        raise _invalid()
    seen.add(pair_id)
    if raw.get("stratum") not in STRATA:
        raise _invalid()
    provenance = raw.get("provenance")
    measured = isinstance(provenance, dict) and (
        provenance.get("kind") == "measured"
        and provenance.get("empirical") is True
        and provenance.get("promotion_authorized") is True
    )
    base, cand = _side(raw, "baseline"), _side(raw, "candidate")
    base_cost = _metric(base.get("billed_cost"), positive=True, maximum=MAX_COST)
    next_cost = _metric(cand.get("billed_cost"), maximum=MAX_COST)
    base_time = _metric(base.get("wall_time_ms"), positive=True, maximum=MAX_WALL_TIME_MS)
    next_time = _metric(cand.get("wall_time_ms"), maximum=MAX_WALL_TIME_MS)
    counts = {
        f"{side}.{key}": _metric(data.get(key), integer=True, maximum=MAX_COUNT)
        for side, data in (("baseline", base), ("candidate", cand))
        for key in ("rework_rounds", "escaped_high_critical")
    }
    reconciliation: float | None = None
    provider, accounted = cand.get("provider_reported_total"), cand.get("event_accounted_total")
    if provider is not None and accounted is not None:
        total = _metric(provider, positive=True, integer=True)
        reconciliation = abs(_metric(accounted, integer=True) - total) / total
    return Pair(
        id=pair_id,
        stratum=raw["stratum"],
        measured=measured,
        cost_reduction=(base_cost - next_cost) / base_cost,
        cost_regression=(next_cost - base_cost) / base_cost,
        wall_time_reduction=(base_time - next_time) / base_time,
        baseline_quality=_metric(base.get("quality_score"), maximum=100),
        candidate_quality=_metric(cand.get("quality_score"), maximum=100),
        baseline_rework=counts["baseline.rework_rounds"],
        candidate_rework=counts["candidate.rework_rounds"],
        new_escape=counts["candidate.escaped_high_critical"] > counts["baseline.escaped_high_critical"],
        reconciliation_error=reconciliation,
    )


def validate_pairs(pairs: Any) -> list[Pair]:
    """Every pair bounded, anonymous, unique and in a known stratum, else ``PROMOTION_INPUT_INVALID``."""
    if not isinstance(pairs, list) or not pairs:
        raise _invalid()
    seen: set[str] = set()
    return [_pair(raw, seen) for raw in pairs]


def _rework_regression(pairs: list[Pair]) -> float:
    base = quantile([p.baseline_rework for p in pairs], 0.5) or 0
    cand = quantile([p.candidate_rework for p in pairs], 0.5) or 0
    if base == 0:
        return 0.0 if cand == 0 else math.inf
    return (cand - base) / base


def compute_metrics(pairs: list[Pair]) -> dict[str, Any]:
    """The reference's metrics (without the provenance flags)."""
    counts: dict[str, int] = {}
    for pair in pairs:
        counts[pair.stratum] = counts.get(pair.stratum, 0) + 1
    errors = [p.reconciliation_error for p in pairs if p.reconciliation_error is not None]
    base_quality = quantile([p.baseline_quality for p in pairs], 0.5)
    cand_quality = quantile([p.candidate_quality for p in pairs], 0.5)
    return {
        "sample_size": len(pairs),
        "stratum_counts": dict(sorted(counts.items())),
        "median_cost_reduction": quantile([p.cost_reduction for p in pairs], 0.5),
        "p75_cost_reduction": quantile([p.cost_reduction for p in pairs], 0.75),
        "p95_cost_regression": quantile([p.cost_regression for p in pairs], 0.95),
        "median_wall_time_reduction": quantile([p.wall_time_reduction for p in pairs], 0.5),
        "quality_drop_points": (base_quality or 0) - (cand_quality or 0),
        "rework_relative_regression": _rework_regression(pairs),
        "new_high_critical_escape": any(p.new_escape for p in pairs),
        "max_provider_reconciliation_error": max(errors) if errors else None,
    }


def _gate_table(metrics: dict[str, Any], t: dict[str, Any], strata_ok: bool) -> list[dict[str, Any]]:
    m = metrics
    reconciliation_ok = (
        m["provider_accounting_complete"]
        and m["max_provider_reconciliation_error"] is not None
        and m["max_provider_reconciliation_error"] <= t["provider_reconciliation_tolerance"]
    )
    rows = [
        (
            "provenance",
            m["measured_pair_provenance"] and m["trusted_measurement_envelope"],
            m["measured_pair_provenance"] and m["trusted_measurement_envelope"],
            True,
            "is",
        ),
        (
            "sample_size",
            m["sample_size"] >= t["minimum_sample_size"],
            m["sample_size"],
            t["minimum_sample_size"],
            ">=",
        ),
        (
            "strata",
            strata_ok,
            min((m["stratum_counts"].get(s, 0) for s in t["required_strata"]), default=0),
            t["minimum_per_stratum"],
            ">=",
        ),
        (
            "median_cost",
            m["median_cost_reduction"] >= t["median_cost_reduction"],
            m["median_cost_reduction"],
            t["median_cost_reduction"],
            ">=",
        ),
        (
            "p75_cost",
            m["p75_cost_reduction"] >= t["p75_cost_reduction"],
            m["p75_cost_reduction"],
            t["p75_cost_reduction"],
            ">=",
        ),
        (
            "p95_cost",
            m["p95_cost_regression"] <= t["max_p95_regression"],
            m["p95_cost_regression"],
            t["max_p95_regression"],
            "<=",
        ),
        (
            "median_wall_time",
            m["median_wall_time_reduction"] >= t["median_wall_time_reduction"],
            m["median_wall_time_reduction"],
            t["median_wall_time_reduction"],
            ">=",
        ),
        (
            "quality",
            m["quality_drop_points"] <= t["max_quality_drop_points"],
            m["quality_drop_points"],
            t["max_quality_drop_points"],
            "<=",
        ),
        (
            "rework",
            m["rework_relative_regression"] <= t["max_rework_relative_regression"],
            m["rework_relative_regression"],
            t["max_rework_relative_regression"],
            "<=",
        ),
        ("security", not m["new_high_critical_escape"], m["new_high_critical_escape"], False, "is"),
        (
            "reconciliation",
            bool(reconciliation_ok),
            m["max_provider_reconciliation_error"],
            t["provider_reconciliation_tolerance"],
            "<=",
        ),
    ]
    return [
        {
            "gate": name,
            "passed": bool(passed),
            "value": _json_number(value),
            "threshold": threshold,
            "comparison": comparison,
        }
        for name, passed, value, threshold, comparison in rows
    ]


def _json_number(value: Any) -> Any:
    # JSON has no Infinity; the reference's output prints it as null as well.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _sorted_quantile(ordered: list[float], p: float) -> float:
    position = (len(ordered) - 1) * p
    lower = math.floor(position)
    upper = math.ceil(position)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def bootstrap_interval(values: list[float], *, seed: int, samples: int, p: float = 0.5) -> dict[str, Any]:
    """Seeded percentile bootstrap (95 %) for the p-quantile of ``values``; deterministic per seed."""
    rng = random.Random(seed)
    n = len(values)
    estimates = sorted(_sorted_quantile(sorted(rng.choices(values, k=n)), p) for _ in range(samples))
    return {
        "estimate": quantile(values, p),
        "low": quantile(estimates, 0.025),
        "high": quantile(estimates, 0.975),
        "confidence": 0.95,
        "samples": samples,
        "seed": seed,
    }


def _strata_table(pairs: list[Pair], required: list[str]) -> list[dict[str, Any]]:
    table = []
    for stratum in required:
        members = [p for p in pairs if p.stratum == stratum]
        if not members:
            table.append({"stratum": stratum, "n": 0})
            continue
        table.append(
            {
                "stratum": stratum,
                "n": len(members),
                "median_cost_reduction": quantile([p.cost_reduction for p in members], 0.5),
                "median_wall_time_reduction": quantile([p.wall_time_reduction for p in members], 0.5),
                "quality_drop_points": (quantile([p.baseline_quality for p in members], 0.5) or 0)
                - (quantile([p.candidate_quality for p in members], 0.5) or 0),
                "new_high_critical_escapes": sum(p.new_escape for p in members),
            }
        )
    return table


def evaluate_promotion(
    pairs: Any,
    thresholds: Any = None,
    *,
    envelope: Any = None,
    now: datetime,
    consumed_run_ids: Any = None,
    expected_candidate_version: Any = None,
    expected_corpus_version: Any = None,
    expected_runtime_digest: Any = None,
    trusted_keys: dict[str, str] | None = None,
    synthetic: bool = False,
    bootstrap_seed: int = BOOTSTRAP_SEED,
    bootstrap_samples: int = BOOTSTRAP_SAMPLES,
) -> dict[str, Any]:
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
    if synthetic:
        failures.insert(0, "SYNTHETIC_DATA")
    elif not all(p.measured for p in checked):
        failures.insert(0, "PAIRS_NOT_MEASURED")
    metrics["measured_pair_provenance"] = measured
    metrics["provider_accounting_complete"] = all(p.reconciliation_error is not None for p in checked)
    metrics["trusted_measurement_envelope"] = not [
        f for f in failures if f not in ("SYNTHETIC_DATA", "PAIRS_NOT_MEASURED")
    ]
    strata_ok = all(
        metrics["stratum_counts"].get(s, 0) >= limits["minimum_per_stratum"]
        for s in limits["required_strata"]
    )
    table = _gate_table(metrics, limits, strata_ok)
    gates = {row["gate"]: row["passed"] for row in table}
    metrics["rework_relative_regression"] = _json_number(metrics["rework_relative_regression"])
    report = {
        "bootstrap": {
            "median_cost_reduction": bootstrap_interval(
                [p.cost_reduction for p in checked], seed=bootstrap_seed, samples=bootstrap_samples
            ),
            "median_wall_time_reduction": bootstrap_interval(
                [p.wall_time_reduction for p in checked], seed=bootstrap_seed, samples=bootstrap_samples
            ),
        },
        "strata": _strata_table(checked, limits["required_strata"]),
    }
    return {
        "promote": all(gates.values()),
        "metrics": metrics,
        "gates": gates,
        "gate_details": table,
        "thresholds": limits,
        "provenance_failures": failures,
        "report": report,
        "evaluated_at": format_utc(now),
    }


def repository_consumed_ids(cwd: str) -> list[str]:
    """Run ids consumed in the repository containing ``cwd`` (local ledger + committed records); read only."""
    import json
    import os

    from toolkit.localstate import find_git
    from toolkit.runtime.envelope import RUN_ID

    location = find_git(cwd)
    if location is None:
        return []
    ids: set[str] = set()
    try:
        with open(os.path.join(location.local_state, "replay-ledger.jsonl"), "rb") as handle:
            lines = handle.read(16 * 1_048_576).split(b"\n")
    except OSError:
        lines = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a torn or foreign line is skipped, never fatal
        value = row.get("measurement_run_id") if isinstance(row, dict) else None
        if isinstance(value, str) and RUN_ID.match(value):
            ids.add(value)
    try:
        names = os.listdir(os.path.join(location.workdir, ".workgroup", "promotions"))
    except OSError:
        names = []
    ids.update(name[:-5] for name in names if name.endswith(".json") and RUN_ID.match(name[:-5]))
    return sorted(ids)


def _options(request: dict[str, Any]) -> dict[str, Any]:
    options = request.get("options")
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    return options


def op_promotion(request: dict[str, Any], ctx: RuntimeContext) -> dict[str, Any]:
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
        from toolkit.timefmt import now_utc  # the op is the shell of this decision: it reads the clock

        now = now_utc()
    else:
        parsed = parse_rfc3339(raw_now) if isinstance(raw_now, str) else None
        if parsed is None:
            raise RuntimeOpError("INVALID_DATE_TIME")
        now = parsed
    consumed = options.get("consumed_measurement_run_ids")
    if isinstance(consumed, list):
        # Beyond the reference: the repository's own ledger counts too, so a forgotten id is still a replay.
        consumed = [*consumed, *repository_consumed_ids(ctx.cwd)]
    keys = options.get("trusted_measurement_public_keys")
    trusted = (
        parse_trusted_keys(keys)
        if keys is not None
        else parse_trusted_keys(ctx.environ.get("KNOWZCODE_TRUSTED_MEASUREMENT_KEYS"), from_json=True)
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
