"""Live mode (``telemetry: otlp``): the runtime decisions and efficiency events, projected and spooled.

Standard library only: it runs on the runtime path. The spool itself (where it is, whether live
mode is on, the append and the flusher hand-off) is ``toolkit.infra.livespool``; this module
projects what the runtime path observes: a decision keeps only its operation, mode, reason codes
and rollout stage; an efficiency event is the normalized event. (A CM model call is projected by
its writer, ``toolkit.cm.event_write``.) The flusher maps the spooled records with
``toolkit.otel.spans``, through the privacy engine, exactly as ``telemetry export`` does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from toolkit.infra import livespool

TYPE_CHECKING = False  # on every runtime decision: typing stays out of start-up
if TYPE_CHECKING:
    from toolkit.otel.shapes import EfficiencyEvent, SpooledDecision, SpooledEfficiency


def _stamp() -> str:
    moment = time.time()
    whole = int(moment)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((moment - whole) * 1e6):06d}Z"


def decision_record(op: str, result: Mapping[str, object], duration_ms: float) -> SpooledDecision | None:
    """The spooled form of a route or dispatch decision (vocabulary values only)."""
    routing = result.get("routing") if op == "dispatch" else result
    if not isinstance(routing, Mapping):
        return None
    record: SpooledDecision = {
        "kind": "decision",
        "id": os.urandom(16).hex(),
        "op": op,
        "mode": routing.get("mode"),
        "reason_codes": list(routing.get("reason_codes") or []),
        "at": _stamp(),
        "duration_ms": round(duration_ms, 3),
    }
    rollout = result.get("rollout") if op == "dispatch" else None
    if isinstance(rollout, Mapping) and isinstance(rollout.get("rollout"), str):
        record["rollout"] = rollout["rollout"]
    return record


def emit_decision(start: str, op: str, result: Mapping[str, object], duration_ms: float) -> None:
    """Spool a decision when the repository of ``start`` is in live mode (the hot path's hook)."""
    target = livespool.otel_target(start)
    if target is None:
        return
    record = decision_record(op, result, duration_ms)
    if record is not None:
        livespool.emit(target, record)


def efficiency_record(event: EfficiencyEvent, key: str) -> SpooledEfficiency:
    """The spooled form of a normalized efficiency event (a copy of it) and its span key."""
    return {"kind": "efficiency", "key": key, "event": event.copy()}


def emit_efficiency(start: str, event: EfficiencyEvent, key: str) -> None:
    """Spool a normalized efficiency event with the key ``telemetry export`` gives it too."""
    target = livespool.otel_target(start)
    if target is not None:
        livespool.emit(target, efficiency_record(event, key))
