"""Lineage evaluation: may a prior worker be resumed, must it reconcile, or is it invalid?

Rules (reference runtime, section 5 and 12), applied in this order:

1. ``now`` must be a strict RFC 3339 date-time, else the request is refused with
   ``INVALID_DATE_TIME`` (this is an error, not a state).
2. A lineage that is missing, not an object, or fails the closed 26-field
   ``knowzcode.agent-lineage/v1`` schema (unknown keys included), or a ``current`` lacking any
   of its 16 keys, gives ``INVALID [UNKNOWN_PROVENANCE]``.
3. Reviewer contamination, the 15 field mismatches and ``NON_RESUMABLE`` are collected and
   returned together, in the fixed order, as ``INVALID``.
4. ``current.final_gate`` gives ``INVALID [FINAL_GATE]``.
5. A changed capsule hash or ``current.reconcile_required`` gives
   ``RECONCILE_REQUIRED [RECONCILIATION_REQUIRED]``.
6. A null or passed lease, or a completed scope without a likely continuation, gives
   ``COLD_VALID``; otherwise ``HOT``.

Standard library only: this runs on every delegation.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from toolkit.core.jscompat import js_strict_equal, js_truthy, utf16_len
from toolkit.core.timefmt import parse_rfc3339
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.vocabulary import MODES, PHASES, PLATFORMS, SENSITIVITIES

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import TypeGuard

    from toolkit.core.jsontypes import JsonObject
    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.op_types import LineageDecision

LINEAGE_SCHEMA = "knowzcode.agent-lineage/v1"


class LineageState(StrEnum):
    HOT = "HOT"
    COLD_VALID = "COLD_VALID"
    RECONCILE_REQUIRED = "RECONCILE_REQUIRED"
    INVALID = "INVALID"


class Invalidation(StrEnum):
    """Every invalidation code, in the order the reference reports them."""

    UNKNOWN_PROVENANCE = "UNKNOWN_PROVENANCE"
    REVIEW_LINEAGE_CONTAMINATION = "REVIEW_LINEAGE_CONTAMINATION"
    PLATFORM_MISMATCH = "PLATFORM_MISMATCH"
    WORKGROUP_MISMATCH = "WORKGROUP_MISMATCH"
    ROLE_MISMATCH = "ROLE_MISMATCH"
    PHASE_MISMATCH = "PHASE_MISMATCH"
    FIX_LOOP_MISMATCH = "FIX_LOOP_MISMATCH"
    SPEC_MISMATCH = "SPEC_MISMATCH"
    SCOPE_MISMATCH = "SCOPE_MISMATCH"
    CHECKPOINT_MISMATCH = "CHECKPOINT_MISMATCH"
    MODEL_MISMATCH = "MODEL_MISMATCH"
    EFFORT_MISMATCH = "EFFORT_MISMATCH"
    RUNTIME_PREFIX_MISMATCH = "RUNTIME_PREFIX_MISMATCH"
    BASELINE_MISMATCH = "BASELINE_MISMATCH"
    TOOLS_MISMATCH = "TOOLS_MISMATCH"
    PERMISSIONS_MISMATCH = "PERMISSIONS_MISMATCH"
    SENSITIVITY_MISMATCH = "SENSITIVITY_MISMATCH"
    FINAL_GATE = "FINAL_GATE"
    NON_RESUMABLE = "NON_RESUMABLE"
    RECONCILIATION_REQUIRED = "RECONCILIATION_REQUIRED"


# (field compared between lineage and current, code when they differ), in reporting order
MISMATCH_FIELDS: tuple[tuple[str, Invalidation], ...] = (
    ("platform", Invalidation.PLATFORM_MISMATCH),
    ("workgroup_id", Invalidation.WORKGROUP_MISMATCH),
    ("role", Invalidation.ROLE_MISMATCH),
    ("phase", Invalidation.PHASE_MISMATCH),
    ("fix_loop_id", Invalidation.FIX_LOOP_MISMATCH),
    ("spec_hash", Invalidation.SPEC_MISMATCH),
    ("scope_hash", Invalidation.SCOPE_MISMATCH),
    ("checkpoint_sha", Invalidation.CHECKPOINT_MISMATCH),
    ("model", Invalidation.MODEL_MISMATCH),
    ("effort", Invalidation.EFFORT_MISMATCH),
    ("runtime_prefix_hash", Invalidation.RUNTIME_PREFIX_MISMATCH),
    ("baseline_hash", Invalidation.BASELINE_MISMATCH),
    ("tools_hash", Invalidation.TOOLS_MISMATCH),
    ("permissions_hash", Invalidation.PERMISSIONS_MISMATCH),
    ("sensitivity", Invalidation.SENSITIVITY_MISMATCH),
)

# DESIGN.md, Decisions: ``current`` needs the 15 compared fields plus ``capsule_hash``.
CURRENT_KEYS: tuple[str, ...] = (*(name for name, _ in MISMATCH_FIELDS), "capsule_hash")


_SHA256 = re.compile(r"sha256:[a-f0-9]{64}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


# --- the closed lineage schema, checked by hand (no pydantic on the runtime path) ----------

if TYPE_CHECKING:
    Check = Callable[[object], bool]


def _string(min_len: int = 1, max_len: int | None = None) -> Check:
    def check(value: object) -> bool:
        if not isinstance(value, str):
            return False
        size = utf16_len(value)
        return size >= min_len and (max_len is None or size <= max_len)

    return check


def _nullable(inner: Check) -> Check:
    return lambda value: value is None or inner(value)


def _enum(*allowed: str) -> Check:
    return lambda value: isinstance(value, str) and value in allowed


def _sha256(value: object) -> bool:
    return isinstance(value, str) and _SHA256.fullmatch(value) is not None


def _date_time(value: object) -> bool:
    return parse_rfc3339(value) is not None


def _boolean(value: object) -> bool:
    return isinstance(value, bool)


LINEAGE_FIELDS: dict[str, Check] = {
    "schema": lambda value: isinstance(value, str) and value == LINEAGE_SCHEMA,
    "lineage_id": _string(),
    "workgroup_id": _string(1, 128),
    "platform": _enum(*PLATFORMS),
    "platform_handle": _nullable(_string()),
    "parent_lineage_id": _nullable(_string()),
    "role": _string(),
    "scope": _string(),
    "phase": _enum(*PHASES),
    "fix_loop_id": _nullable(_string(1, 128)),
    "mode": _enum(*MODES),
    "model": _nullable(_string()),
    "effort": _nullable(_string()),
    "runtime_prefix_hash": _sha256,
    "baseline_hash": _nullable(_sha256),
    "tools_hash": _string(),
    "permissions_hash": _string(),
    "spec_hash": _string(),
    "scope_hash": _string(),
    # DESIGN.md, Decisions: the lineage's checkpoint is never null (a full or abbreviated SHA)
    "checkpoint_sha": _string(7),
    "capsule_hash": _nullable(_sha256),
    "sensitivity": _enum(*SENSITIVITIES),
    "created_at": _date_time,
    "last_used_at": _date_time,
    "resumable": _boolean,
    "lease_expires_at": _nullable(_date_time),
}


def lineage_schema_errors(value: object) -> list[str]:
    """Names of the schema rules ``value`` breaks (field names only, never values)."""
    if not isinstance(value, dict):
        return ["$: not an object"]
    errors = [f"missing {name}" for name in LINEAGE_FIELDS if name not in value]
    errors += [
        f"invalid {name}"
        for name, check in LINEAGE_FIELDS.items()
        if name in value and not check(value[name])
    ]
    if any(key not in LINEAGE_FIELDS for key in value):
        errors.append("unexpected property")
    return errors


def is_valid_lineage(value: object) -> TypeGuard[Mapping[str, object]]:
    """True when ``value`` satisfies the closed lineage schema (the fast path of the errors above)."""
    if not isinstance(value, dict) or len(value) != len(LINEAGE_FIELDS):
        return False
    try:
        return all(check(value[name]) for name, check in LINEAGE_FIELDS.items())
    except KeyError:  # a missing field, replaced by an unknown one
        return False


# --- evaluation --------------------------------------------------------------------------


def _epoch_ms(moment: datetime) -> int:
    # The reference compares Date.parse() values: whole milliseconds since the epoch.
    return (moment - _EPOCH) // _MS


def _decision(state: LineageState, invalidations: list[Invalidation] | None = None) -> LineageDecision:
    return {"state": state.value, "invalidations": [code.value for code in invalidations or []]}


def evaluate_lineage(lineage: object, current: Mapping[str, object], now: object) -> LineageDecision:
    """Decide ``{state, invalidations}`` for resuming ``lineage`` under the ``current`` facts.

    ``now`` is the caller's clock as an RFC 3339 string; a malformed value raises
    ``RuntimeOpError("INVALID_DATE_TIME")``.
    """
    moment = parse_rfc3339(now)
    if moment is None:
        raise RuntimeOpError("INVALID_DATE_TIME")
    if not js_truthy(lineage) or not is_valid_lineage(lineage):
        return _decision(LineageState.INVALID, [Invalidation.UNKNOWN_PROVENANCE])
    if any(key not in current for key in CURRENT_KEYS):
        return _decision(LineageState.INVALID, [Invalidation.UNKNOWN_PROVENANCE])

    found = _incompatibilities(lineage, current)
    if found:
        return _decision(LineageState.INVALID, found)  # already in the fixed order

    if current.get("final_gate") is True:
        return _decision(LineageState.INVALID, [Invalidation.FINAL_GATE])
    # CEO-04: a changed capsule on an otherwise compatible lineage reconciles before reuse.
    if current.get("reconcile_required") is True or not js_strict_equal(
        current["capsule_hash"], lineage["capsule_hash"]
    ):
        return _decision(LineageState.RECONCILE_REQUIRED, [Invalidation.RECONCILIATION_REQUIRED])
    return _decision(_resume_temperature(lineage, current, moment))


def _incompatibilities(lineage: Mapping[str, object], current: Mapping[str, object]) -> list[Invalidation]:
    """Rule 3: reviewer contamination, the field mismatches and ``NON_RESUMABLE``, in the fixed order."""
    found: list[Invalidation] = []
    # CEO-05: an independent reviewer never reuses a builder's reasoning lineage.
    if js_truthy(current.get("independent_reviewer")) and lineage["role"] == "builder":
        found.append(Invalidation.REVIEW_LINEAGE_CONTAMINATION)
    for name, code in MISMATCH_FIELDS:
        if not js_strict_equal(current[name], lineage[name]):
            found.append(code)
    if lineage["resumable"] is not True:
        found.append(Invalidation.NON_RESUMABLE)
    return found


def _resume_temperature(
    lineage: Mapping[str, object], current: Mapping[str, object], moment: datetime
) -> LineageState:
    """Rule 6: ``COLD_VALID`` for a null or passed lease or a finished scope, else ``HOT``."""
    lease = lineage["lease_expires_at"]
    # A null lease keeps provenance for reconciliation but never authorizes a hot resume.
    if lease is None:
        return LineageState.COLD_VALID
    lease_moment = parse_rfc3339(lease)
    assert lease_moment is not None  # guaranteed by the schema check above
    if _epoch_ms(moment) >= _epoch_ms(lease_moment):
        return LineageState.COLD_VALID
    if current.get("scope_complete") is True and current.get("likely_continuation") is not True:
        return LineageState.COLD_VALID
    return LineageState.HOT


def reference_now(moment: datetime) -> str:
    """``new Date().toISOString()``: UTC with milliseconds, the reference's default ``now``."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def lineage_request_parts(
    request: Mapping[str, object], ctx: RuntimeContext
) -> tuple[object, JsonObject, object]:
    """``(lineage, current, now)`` of a ``{lineage, current, now?}`` request.

    ``current`` must be an object (``INVALID_REQUEST``); an absent ``now`` is the context's clock.
    """
    current = request.get("current")
    if not isinstance(current, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    if "now" in request:
        now = request["now"]
    else:
        now = reference_now(ctx.now())
    return request.get("lineage"), current, now


def op_lineage(request: Mapping[str, object], ctx: RuntimeContext) -> LineageDecision:
    """``workgroup runtime lineage``: ``{lineage, current, now?}`` -> ``{state, invalidations}``."""
    lineage, current, now = lineage_request_parts(request, ctx)
    return evaluate_lineage(lineage, current, now)
