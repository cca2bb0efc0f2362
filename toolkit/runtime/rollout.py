"""Rollout selection: whether a routing recommendation is recorded and/or executed (stdlib only).

Stages are ``off`` -> ``observe`` -> ``shadow`` -> ``canary`` -> ``on``. ``on`` always executes the
recommendation; ``canary`` executes it for a deterministic share of anonymous task corpus ids.
The canary bucket is computed exactly as the reference computes it (first 8 hex digits of the
SHA-256 of the id, as an unsigned 32-bit integer, scaled to 0..100), so a given id lands in the same
bucket here and there. An optional experiment salt (off by default) re-draws the buckets for a new
experiment without changing the id vocabulary.
"""

from __future__ import annotations

import hashlib
import math
import re

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.vocabulary import MODES, STRATA

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.op_types import RolloutDecision

ROLLOUT_STATES: tuple[str, ...] = ("off", "observe", "shadow", "canary", "on")
ANONYMOUS_CORPUS_ID = re.compile(r"^(?:anon-[a-f0-9]{16,64}|(?:" + "|".join(STRATA) + r")-[0-9]{2})\Z")
DEFAULT_CANARY_PERCENT = 10
EXECUTING_STAGES = frozenset({"canary", "on"})
RECORDING_STAGES = frozenset({"shadow", "canary", "on"})
# A salt is a bounded, non-identifying experiment label (it is echoed nowhere).
_SALT = re.compile(r"^[A-Za-z0-9._-]{1,64}\Z")


def canary_bucket(task_corpus_id: str, salt: str | None = None) -> float:
    """Deterministic percentage in [0, 100) for an anonymous id (reference-compatible without salt)."""
    material = task_corpus_id if salt is None else f"{salt}:{task_corpus_id}"
    prefix = hashlib.sha256(material.encode("utf-8")).hexdigest()[:8]
    return int(prefix, 16) / 0x1_0000_0000 * 100


def _optional_mode(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in MODES:
        raise RuntimeOpError("INVALID_REQUEST")
    return value


def _canary_percent(value: object) -> float:
    if value is None:
        return DEFAULT_CANARY_PERCENT
    # JSON booleans are not numbers here (the reference's Number.isFinite rejects them too)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuntimeOpError("INVALID_REQUEST")
    if not math.isfinite(value) or value < 0 or value > 100:
        raise RuntimeOpError("INVALID_REQUEST")
    return value


def _salt(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _SALT.match(value):
        raise RuntimeOpError("INVALID_REQUEST")
    return value


def _recommended(data: Mapping[str, object]) -> object:
    if data.get("recommended_mode") is not None:
        return data["recommended_mode"]
    recommendation = data.get("recommendation")
    if isinstance(recommendation, dict):
        return recommendation.get("mode")
    if recommendation is not None:
        raise RuntimeOpError("INVALID_REQUEST")
    return None


def _stage(value: object) -> str:
    """The rollout stage, ``off`` when absent; anything but a known stage is ``INVALID_REQUEST``."""
    if value is None:
        return "off"
    if not isinstance(value, str) or value not in ROLLOUT_STATES:
        raise RuntimeOpError("INVALID_REQUEST")
    return value


def _canary_draw(facts: Mapping[str, object]) -> tuple[float, bool]:
    """(bucket, execute) of a canary: the task's salted bucket, executed below the percent; a
    bad percent, task id or salt is refused (checked in that order)."""
    percent = _canary_percent(facts.get("canary_percent"))
    task_id = facts.get("task_corpus_id")
    if not isinstance(task_id, str) or not ANONYMOUS_CORPUS_ID.match(task_id):
        raise RuntimeOpError("INVALID_REQUEST")
    bucket = canary_bucket(task_id, _salt(facts.get("experiment_salt")))
    return bucket, bucket < percent


def select_rollout(input: Mapping[str, object]) -> RolloutDecision:  # noqa: A002 - the reference's argument name
    """Resolve a rollout stage into what to record and what to execute.

    ``input`` holds ``rollout`` (default ``off``), ``actual_mode``, ``recommended_mode`` (or
    ``recommendation.mode``), and for canaries ``task_corpus_id``, ``canary_percent`` (default 10)
    and the optional ``experiment_salt``. Unknown keys are ignored. Raises ``RuntimeOpError``.
    """
    if not isinstance(input, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    rollout = _stage(input.get("rollout"))
    actual = _optional_mode(input.get("actual_mode"))
    recommended = _optional_mode(_recommended(input))
    if rollout in EXECUTING_STAGES and recommended is None:
        raise RuntimeOpError("ROLLOUT_RECOMMENDATION_REQUIRED")

    execute = rollout == "on"
    bucket: float | None = None
    if rollout == "canary":
        bucket, execute = _canary_draw(input)

    return {
        "rollout": rollout,
        "execute_recommendation": execute,
        "record_actual": rollout != "off",
        "record_recommendation": rollout in RECORDING_STAGES,
        "selected_mode": recommended if execute else actual,
        "canary_bucket": bucket,
    }


def op_rollout(request: Mapping[str, object], ctx: RuntimeContext) -> RolloutDecision:
    """``workgroup runtime rollout``: ``{"input": {...}}`` -> the rollout selection."""
    data = request.get("input")
    if not isinstance(data, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    return select_rollout(data)
