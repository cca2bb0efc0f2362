"""Paired results: validation of one baseline/candidate pair (stdlib only).

Bounds follow the reference: ids anonymous (``anon-<hex16-64>`` or ``<stratum>-NN``) and unique,
stratum one of the five, baseline cost in (0, 1e9], candidate cost in [0, 1e9], wall time at most
31 days, quality 0..100, rework and escapes non-negative integers, provider totals positive safe
integers. Every value of a pair, read or not, must be one RFC 8785 represents exactly (no integer
beyond +-(2**53-1), no lone surrogate): the corpus digest the signer computed and the one checked
are RFC 8785, so no validly signed envelope can hold anything else. A violation is
``PROMOTION_INPUT_INVALID`` (an error), never a failed gate.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.rollout import ANONYMOUS_CORPUS_ID
from toolkit.runtime.vocabulary import STRATA

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypeGuard

MAX_COST = 1_000_000_000
MAX_WALL_TIME_MS = 2_678_400_000  # 31 days
MAX_COUNT = 1_000_000
MAX_SAFE_INTEGER = 2**53 - 1
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def invalid_input() -> RuntimeOpError:
    """The one error of malformed promotion input."""
    return RuntimeOpError("PROMOTION_INPUT_INVALID")


def is_number(value: object) -> TypeGuard[float]:
    """A finite JSON number (booleans are not numbers, as in the reference's Number.isFinite)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _metric(
    value: object, *, positive: bool = False, integer: bool = False, maximum: float = MAX_SAFE_INTEGER
) -> float:
    if not is_number(value) or (value <= 0 if positive else value < 0) or value > maximum:
        raise invalid_input()
    if integer and not float(value).is_integer():
        raise invalid_input()
    return value


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


def _side(pair: Mapping[str, object], name: str) -> Mapping[str, object]:
    side = pair.get(name)
    if not isinstance(side, dict):
        raise invalid_input()
    return side


def _stratum(value: object) -> str:
    """One of the five strata (a JSON value equal to one of them is that string)."""
    if not isinstance(value, str) or value not in STRATA:
        raise invalid_input()
    return value


def _pair(item: object, seen: set[str]) -> Pair:
    if not isinstance(item, dict):
        raise invalid_input()
    raw: Mapping[str, object] = item
    pair_id = _new_pair_id(raw.get("id"), seen)
    stratum = _stratum(raw.get("stratum"))
    measured = _measured(raw.get("provenance"))
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
    reconciliation = _reconciliation_error(cand)
    return Pair(
        id=pair_id,
        stratum=stratum,
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


def _new_pair_id(pair_id: object, seen: set[str]) -> str:
    """An anonymous corpus id not used by an earlier pair (noted in ``seen``)."""
    if not isinstance(pair_id, str) or not ANONYMOUS_CORPUS_ID.match(pair_id) or pair_id in seen:
        raise invalid_input()
    seen.add(pair_id)
    return pair_id


def _measured(provenance: object) -> bool:
    """Empirically measured provenance, authorized for promotion."""
    return isinstance(provenance, dict) and (
        provenance.get("kind") == "measured"
        and provenance.get("empirical") is True
        and provenance.get("promotion_authorized") is True
    )


def _reconciliation_error(cand: Mapping[str, object]) -> float | None:
    """The relative gap between the provider's reported total and the events' accounted total,
    or None unless the candidate reports both."""
    provider, accounted = cand.get("provider_reported_total"), cand.get("event_accounted_total")
    if provider is None or accounted is None:
        return None
    total = _metric(provider, positive=True, integer=True)
    return abs(_metric(accounted, integer=True) - total) / total


def _canonical_value(value: object) -> bool:
    """True when RFC 8785 represents ``value`` exactly at every depth: integers within
    +-(2**53-1), finite floats, strings and keys without lone surrogates (walked without recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item)  # the keys
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return False
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if abs(item) > MAX_SAFE_INTEGER:
                return False
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        else:
            return False
    return True


def validate_pairs(pairs: object) -> list[Pair]:
    """Every pair bounded, anonymous, unique, in a known stratum and representable in RFC 8785,
    else ``PROMOTION_INPUT_INVALID``."""
    if not isinstance(pairs, list) or not pairs:
        raise invalid_input()
    seen: set[str] = set()
    checked = [_pair(raw, seen) for raw in pairs]
    if not _canonical_value(pairs):
        raise invalid_input()
    return checked
