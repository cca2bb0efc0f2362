"""MCP health probe cache behind ``workgroup probe check|record``.

State: one JSON file in the local state directory (``probes.json``), replaced atomically under
a file lock: ``{"schema": "workgroup.probe-cache/v1", "probes": {NAME: {"status":
"healthy"|"failed", "phase", "recorded_at"}}}``.

Decisions (pure: the caller passes ``now`` and the TTL):

* ``reuse``: a healthy result younger than ``mcp_health_ttl_minutes`` is reused; the decision
  says how old it is (``age_seconds``), so agents do not repeat the same baseline query.
* ``probe`` (``NO_RESULT``, ``EXPIRED``, ``RETRY_AT_LATER_PHASE``): run the probe now, then
  ``record`` its outcome.
* ``wait`` (``FAILED_THIS_PHASE``): a failure is retried only at a later phase boundary
  (phase order 1A < 1B < 2A < 2B < 3); until then the server is treated as unavailable.

A result recorded "in the future" (clock skew beyond one minute) is not trusted: ``probe``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypedDict

from toolkit.core.errors import InvalidInput
from toolkit.core.timefmt import format_utc, parse_rfc3339
from toolkit.infra.boundedio import FileRefused, read_json_bounded
from toolkit.infra.store import Layout, file_lock, safe_segment, write_json_atomic
from toolkit.runtime.vocabulary import PHASES

if TYPE_CHECKING:
    from toolkit.infra.config_shapes import LoadedConfig

CACHE_SCHEMA = "workgroup.probe-cache/v1"
STATUSES: tuple[str, ...] = ("healthy", "failed")
DEFAULT_TTL_MINUTES = 15
MAX_CACHE_BYTES = 1_048_576
CLOCK_SKEW = timedelta(minutes=1)
PROBE_LOCK = "probes"


class ProbeEntry(TypedDict):
    """One probe's row in the cache file, as ``record`` writes it."""

    status: str  # healthy | failed
    phase: str
    recorded_at: str


class RecordedProbe(TypedDict):
    """What ``record`` returns (printed by ``probe record --json``): the probe's name and its new row."""

    name: str
    status: str
    phase: str
    recorded_at: str


class DecisionRow(TypedDict):
    """``ProbeDecision.as_dict``: what ``probe check --json`` prints."""

    name: str
    decision: str
    reason: str
    phase: str
    status: str | None
    recorded_phase: str | None
    age_seconds: int | None
    ttl_minutes: int


@dataclass(frozen=True)
class ProbeDecision:
    """What to do about one probe now; ``age_seconds`` is set whenever a result exists."""

    name: str
    decision: str  # reuse | probe | wait
    reason: str
    phase: str
    status: str | None
    recorded_phase: str | None
    age_seconds: int | None
    ttl_minutes: int

    def as_dict(self) -> DecisionRow:
        return {
            "name": self.name,
            "decision": self.decision,
            "reason": self.reason,
            "phase": self.phase,
            "status": self.status,
            "recorded_phase": self.recorded_phase,
            "age_seconds": self.age_seconds,
            "ttl_minutes": self.ttl_minutes,
        }


@dataclass(frozen=True, slots=True)
class ProbeRecord:
    """One cached probe result, parsed once when the cache is read: its status, the phase it was
    recorded at, when, and the entry as written (kept byte for byte when the cache is rewritten)."""

    status: str  # healthy | failed
    phase: str
    recorded_at: datetime
    row: Mapping[str, object]

    @classmethod
    def parse(cls, value: object) -> ProbeRecord | None:
        """The record a cache entry spells; None for a bad entry (which only loses itself)."""
        if not isinstance(value, dict):
            return None
        status, phase, at = value.get("status"), value.get("phase"), value.get("recorded_at")
        if status not in STATUSES or phase not in PHASES or not isinstance(at, str):
            return None
        recorded_at = parse_rfc3339(at)
        return None if recorded_at is None else cls(str(status), str(phase), recorded_at, value)


def check_phase(phase: str) -> str:
    if phase not in PHASES:
        raise InvalidInput("INVALID_PHASE", "phase must be one of 1A, 1B, 2A, 2B, 3")
    return phase


def decide(
    name: str, record: ProbeRecord | None, *, phase: str, now: datetime, ttl_minutes: int
) -> ProbeDecision:
    """The probe decision for ``name`` at ``phase`` and ``now`` (pure)."""
    check_phase(phase)
    if record is None:
        return ProbeDecision(name, "probe", "NO_RESULT", phase, None, None, None, ttl_minutes)
    age = now - record.recorded_at
    decision, reason = _verdict(record, phase, age, ttl_minutes)
    return ProbeDecision(
        name,
        decision,
        reason,
        phase,
        record.status,
        record.phase,
        max(0, int(age.total_seconds())),
        ttl_minutes,
    )


def _verdict(record: ProbeRecord, phase: str, age: timedelta, ttl_minutes: int) -> tuple[str, str]:
    if age < -CLOCK_SKEW:
        return "probe", "RECORDED_IN_FUTURE"
    if record.status == "healthy":
        if age < timedelta(minutes=ttl_minutes):
            return "reuse", "HEALTHY_WITHIN_TTL"
        return "probe", "EXPIRED"
    if PHASES.index(phase) > PHASES.index(record.phase):
        return "probe", "RETRY_AT_LATER_PHASE"
    return "wait", "FAILED_THIS_PHASE"


def read_cache(layout: Layout) -> dict[str, ProbeRecord]:
    """The cached records; a missing, oversized or corrupt cache reads as empty (probe again)."""

    try:
        data = read_json_bounded(
            layout.probe_cache,
            limit=MAX_CACHE_BYTES,
            what="the probe cache",
            follow_symlinks=False,
            missing_ok=True,
            strict=False,
            default={},
        )
    except FileRefused:
        # a cache is only a shortcut: when it cannot be read, the probe runs again. A FIFO or a
        # symlink in its place is never read (it cannot block or redirect us) and the next
        # atomic write replaces it.
        return {}
    probes = data.get("probes") if isinstance(data, dict) and data.get("schema") == CACHE_SCHEMA else None
    if not isinstance(probes, dict):
        return {}
    # a bad entry only loses itself: the probe simply runs again
    parsed = {k: ProbeRecord.parse(v) for k, v in probes.items() if isinstance(k, str)}
    return {k: v for k, v in parsed.items() if v is not None}


def check(layout: Layout, name: str, *, phase: str, now: datetime, ttl_minutes: int) -> ProbeDecision:
    """Read the cache (no lock needed: it is replaced atomically) and decide."""
    safe_segment(name, "probe name")
    check_phase(phase)
    return decide(name, read_cache(layout).get(name), phase=phase, now=now, ttl_minutes=ttl_minutes)


def record(layout: Layout, name: str, *, healthy: bool, phase: str, now: datetime) -> RecordedProbe:
    """Store the outcome of a probe that just ran (replacing the previous one)."""
    safe_segment(name, "probe name")
    check_phase(phase)
    entry: ProbeEntry = {
        "status": "healthy" if healthy else "failed",
        "phase": phase,
        "recorded_at": format_utc(now),
    }
    with file_lock(layout.lock(PROBE_LOCK)):
        probes: dict[str, Mapping[str, object]] = {k: v.row for k, v in read_cache(layout).items()}
        probes[name] = entry
        write_json_atomic(
            layout.probe_cache, {"schema": CACHE_SCHEMA, "probes": dict(sorted(probes.items()))}
        )
    return {"name": name, **entry}


def ttl_from_config(config: LoadedConfig | Mapping[str, Mapping[str, object]] | None) -> int:
    """``context_efficiency.mcp_health_ttl_minutes`` (default 15) of a loaded config (each of its
    blocks is a mapping: ``load_config`` checked it)."""
    block = (config or {}).get("context_efficiency") or {}
    value = block.get("mcp_health_ttl_minutes", DEFAULT_TTL_MINUTES)
    return value if isinstance(value, int) and not isinstance(value, bool) else DEFAULT_TTL_MINUTES


def describe_age(seconds: int) -> str:
    """``"4 min 12 s"``-style text for a reuse message."""
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"
