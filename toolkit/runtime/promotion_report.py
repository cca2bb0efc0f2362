"""Report-only additions to a promotion decision: seeded bootstrap intervals, a per-stratum table.

Nothing here changes a gate; it helps a reader judge how stable the measured reductions are.
Stdlib only; deterministic for a given seed (``random.Random(seed).choices``).
"""

from __future__ import annotations

import math
import random

from toolkit.runtime.promotion_pairs import Pair

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from toolkit.runtime.promotion_types import BootstrapInterval, StratumRow

BOOTSTRAP_SEED = 20260731
BOOTSTRAP_SAMPLES = 2000


def quantile(values: list[float], p: float) -> float | None:
    """Linear interpolation at position (n-1)p of the sorted values (the reference's definition)."""
    if not values:
        return None
    return nonempty_quantile(values, p)


def nonempty_quantile(values: list[float], p: float) -> float:
    """``quantile`` of values known to be non-empty (a validated pair list never is empty)."""
    return _sorted_quantile(sorted(values), p)


def _sorted_quantile(ordered: list[float], p: float) -> float:
    position = (len(ordered) - 1) * p
    lower = math.floor(position)
    upper = math.ceil(position)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def bootstrap_interval(values: list[float], *, seed: int, samples: int, p: float = 0.5) -> BootstrapInterval:
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


def strata_table(pairs: list[Pair], required: list[str]) -> list[StratumRow]:
    table: list[StratumRow] = []
    for stratum in required:
        members = [p for p in pairs if p.stratum == stratum]
        if not members:
            table.append({"stratum": stratum, "n": 0})
            continue
        table.append(_stratum_row(stratum, members))
    return table


def _stratum_row(stratum: str, members: list[Pair]) -> StratumRow:
    """One stratum's report row: its size, median cost and wall-time reductions, quality drop
    (an absent median counts as 0) and new high or critical escapes."""
    return {
        "stratum": stratum,
        "n": len(members),
        "median_cost_reduction": quantile([p.cost_reduction for p in members], 0.5),
        "median_wall_time_reduction": quantile([p.wall_time_reduction for p in members], 0.5),
        "quality_drop_points": (quantile([p.baseline_quality for p in members], 0.5) or 0)
        - (quantile([p.candidate_quality for p in members], 0.5) or 0),
        "new_high_critical_escapes": sum(p.new_escape for p in members),
    }
