"""Our records as neutral OTLP span and metric records (standard library only).

Three sources map to spans:

* efficiency events (``knowzcode.efficiency-event/v1``, the local telemetry log): re-normalized by
  the telemetry op's own ``normalize_event`` (its allowlist and the shared privacy engine), so
  exactly its fields can leave, and nothing else;
* CM model calls (``model_usage`` rows of the CM logs): the usage report's validity check, then
  the CM log's field allowlist minus the free-text ``detail`` and the ``project`` name; what is
  sent of them passes the telemetry context at the export (``toolkit.otel.withhold``);
* runtime decisions (routing evidence of ``route``/``dispatch --record`` and live ``runtime``
  decisions): only the operation, the mode, the reason codes and the rollout stage, all
  vocabulary values.

Ids are stable: a span id is derived from the record's event id (the CM writer's UUIDv5, the
digest of a normalized event plus its occurrence number, the id a live decision got when it was
spooled) and a trace id from what groups records (the CM run, the anonymous task). Exporting the
same records twice therefore sends the same ids, and a backend that keys spans by id keeps one.
Metrics are cumulative over the exported window (start and end are the window's own times), so a
re-export of a window repeats the same totals instead of adding to them.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, cast

from toolkit.cm.report import check_usage
from toolkit.core import cm_usage_format as usage_format
from toolkit.core.timefmt import parse_rfc3339
from toolkit.privacy import Context, scan_value
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.telemetry import normalize_event
from toolkit.runtime.vocabulary import MODES, REASON_CODES
from toolkit.usage.events import model_label

if TYPE_CHECKING:
    from toolkit.otel.shapes import BilledPart, DecisionProjection, EfficiencyEvent
    from toolkit.usage.model import Call

AttrValue = str | bool | int | float | tuple[str, ...]
PointKey = tuple[tuple[str, str], ...]  # a metric point's attributes, sorted

SCOPE_NAME = "workgroup-toolkit"
GEN_AI_OPERATION = "chat"
# provider labels of the efficiency event and of the CM log -> gen_ai.provider.name well-known values
_PROVIDER_NAMES = {"claude": "anthropic", "anthropic": "anthropic", "codex": "openai", "openai": "openai"}

TOKEN_BUCKETS: tuple[float, ...] = tuple(float(4**power) for power in range(14))
DURATION_BUCKETS: tuple[float, ...] = tuple(0.01 * 2**power for power in range(14))

SOURCE_EFFICIENCY = "efficiency"
SOURCE_CM = "cm"
SOURCE_DECISION = "decision"
SOURCE_AGENT = "agent"
DECISION_OPS = ("route", "dispatch")


@dataclass(frozen=True)
class SpanRecord:
    """One span, independent of the SDK."""

    trace_id: int
    span_id: int
    name: str
    client: bool  # SpanKind.CLIENT for model calls, INTERNAL otherwise
    start_ns: int
    end_ns: int
    attributes: dict[str, AttrValue]
    error: str | None = None  # error.type when the call failed
    source: str = SOURCE_EFFICIENCY


@dataclass
class HistogramPoint:
    bounds: tuple[float, ...]
    counts: list[int]
    count: int = 0
    total: float = 0.0
    low: float = float("inf")
    high: float = float("-inf")

    def add(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.count += 1
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)


@dataclass
class MetricRecord:
    """One metric: a monotonic cumulative sum or a cumulative explicit-bucket histogram."""

    name: str
    unit: str
    description: str
    histogram: bool
    # a histogram's points are HistogramPoints, a sum's the running totals
    points: dict[PointKey, HistogramPoint | float] = field(default_factory=dict)

    def add(self, attributes: Mapping[str, str], value: float, bounds: tuple[float, ...] = ()) -> None:
        key = tuple(sorted(attributes.items()))
        point = self.points.get(key)
        if self.histogram:
            if not isinstance(point, HistogramPoint):  # the first value under these attributes
                point = self.points[key] = HistogramPoint(bounds, [0] * (len(bounds) + 1))
            point.add(value)
        else:
            self.points[key] = (point if isinstance(point, (int, float)) else 0) + value


@dataclass
class Skipped:
    """Records left out, by reason (never their content)."""

    reasons: dict[str, int] = field(default_factory=dict)

    def add(self, reason: str) -> None:
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.reasons.values())


# ------------------------------------------------------------------ ids


def stable_id(kind: str, key: str, bits: int) -> int:
    """A non-zero id of ``bits`` bits derived from ``key`` (OTLP treats an all-zero id as invalid)."""
    digest = hashlib.sha256(f"workgroup-toolkit/otel/{kind}\0{key}".encode()).digest()
    return int.from_bytes(digest[: bits // 8], "big") or 1


def trace_id_for(key: str) -> int:
    return stable_id("trace", key, 128)


def span_id_for(key: str) -> int:
    return stable_id("span", key, 64)


def content_key(record: Mapping[str, object]) -> str:
    """The digest of a record's canonical JSON: its id when the record carries none."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class Occurrences:
    """Numbers equal records in log order, so identical lines get distinct, stable ids."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def key(self, digest: str) -> str:
        number = self._seen.get(digest, 0)
        self._seen[digest] = number + 1
        return f"{digest}#{number}"


def efficiency_key(log_bytes: bytes, event: Mapping[str, object]) -> str:
    """The key ``telemetry export`` will give ``event`` once appended after ``log_bytes``.

    Equal events get their occurrence number in log order; the local log writes each normalized
    event as one compact line, so counting equal lines counts equal events.
    """
    line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    earlier = log_bytes.split(b"\n").count(line) if line in log_bytes else 0
    return f"{content_key(event)}#{earlier}"


def to_ns(moment: datetime) -> int:
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def time_ns(value: object) -> int | None:
    parsed = parse_rfc3339(value)
    return None if parsed is None else to_ns(parsed)


# ------------------------------------------------------------------ privacy


_VERDICTS: dict[tuple[str, str], bool] = {}  # (context, string) -> flagged, per process
_MAX_VERDICTS = 200_000
_NAME_VERDICTS: dict[tuple[str, tuple[str, ...]], bool] = {}  # field-name sets: few per export


def _flagged(text: str, context: str) -> bool:

    key = (context, text)
    verdict = _VERDICTS.get(key)
    if verdict is None:
        verdict = bool(scan_value(text, Context(context)))
        if len(_VERDICTS) < _MAX_VERDICTS:
            _VERDICTS[key] = verdict
    return verdict


def private_free(values: Mapping[str, object], context: str) -> bool:
    """The shared privacy engine's verdict on a flat record that would leave (True: nothing found).

    Exactly ``scan_value`` over the record (field names with the context's field rules, every
    string value), but each distinct string is scanned once per process: an export repeats the
    same field names and labels (stage, role, model ...) on every row.
    """

    if any(isinstance(value, (dict, list, tuple)) for value in values.values()):
        return not scan_value(dict(values), Context(context))  # nested: the engine walks it
    names = tuple(sorted(values))
    named = _NAME_VERDICTS.get((context, names))
    if named is None:
        named = _NAME_VERDICTS[(context, names)] = bool(scan_value(dict.fromkeys(names), Context(context)))
    if named:
        return False
    return not any(isinstance(value, str) and _flagged(value, context) for value in values.values())


# ------------------------------------------------------------------ efficiency events


def _set(attrs: dict[str, AttrValue], key: str, value: AttrValue | None) -> None:
    if value is not None:
        attrs[key] = value


def efficiency_span(raw: object, key: str, skipped: Skipped) -> SpanRecord | None:
    """A span for one efficiency event of the local log, or None (counted in ``skipped``)."""

    event = _efficiency_event(raw, skipped)
    if event is None:
        return None
    end = time_ns(event["observed_at"])
    if end is None:  # pragma: no cover - normalize_event already checked the timestamp
        skipped.add("invalid event")
        return None
    elapsed = event["outcome"]["elapsed_ms"]
    start = end - elapsed * 1_000_000 if isinstance(elapsed, int) else end
    attrs = _efficiency_attrs(event)
    task = event["task_corpus_id"]
    return SpanRecord(
        trace_id=trace_id_for(f"task:{task}" if task else f"event:{key}"),
        span_id=span_id_for(f"efficiency:{key}"),
        name=f"workgroup.efficiency {event['event']}",
        client=False,
        start_ns=start,
        end_ns=end,
        attributes=attrs,
        source=SOURCE_EFFICIENCY,
    )


def _efficiency_event(raw: object, skipped: Skipped) -> EfficiencyEvent | None:
    """The normalized efficiency event of a log row, or None with the reason counted in ``skipped``
    (another schema, private content, or an invalid event)."""
    if isinstance(raw, dict) and raw.get("schema") != "knowzcode.efficiency-event/v1":
        skipped.add("not an efficiency event")
        return None
    try:
        event, _dropped = normalize_event(raw)
    except RuntimeOpError as exc:
        skipped.add("private content" if exc.code == "PRIVATE_TELEMETRY" else "invalid event")
        return None
    return cast("EfficiencyEvent", event)  # checked and projected: the schema's shape


def _efficiency_attrs(event: EfficiencyEvent) -> dict[str, AttrValue]:
    """The span attributes of a normalized efficiency event: its labels, the billed token counts in
    the GenAI conventions, the logical and outcome measures and the billed amount (None left out)."""
    attrs: dict[str, AttrValue] = {"workgroup.record": SOURCE_EFFICIENCY, "workgroup.event": event["event"]}
    provider = event["provider"]
    attrs["workgroup.provider"] = provider
    if provider in _PROVIDER_NAMES:
        attrs["gen_ai.provider.name"] = _PROVIDER_NAMES[provider]
    for name in ("runtime", "profile", "mode", "task_corpus_id"):
        _set(attrs, f"workgroup.{name}", event[name])
    _set(attrs, "gen_ai.request.model", event["model"])
    if event["reason_codes"]:
        attrs["workgroup.reason_codes"] = tuple(event["reason_codes"])
    billed = event["billed"]
    if billed["accounting_source"] != "unknown":
        attrs["workgroup.billed.accounting_source"] = billed["accounting_source"]
    _set_billed_tokens(attrs, billed)
    for space, measures in (("logical", event["logical"]), ("outcome", event["outcome"])):
        for name, value in measures.items():
            _set(attrs, f"workgroup.{space}.{name}", value)
    _set(attrs, "workgroup.billed.amount", billed["amount"])
    _set(attrs, "workgroup.billed.units", billed["units"])
    _set(attrs, "workgroup.billed.currency", billed["currency"])
    return attrs


def _set_billed_tokens(attrs: dict[str, AttrValue], billed: BilledPart) -> None:
    """The billed token counts as GenAI usage attributes: input includes both cache parts."""
    uncached, created, read = (
        billed["uncached_input_tokens"],
        billed["cache_creation_input_tokens"],
        billed["cache_read_input_tokens"],
    )
    if any(value is not None for value in (uncached, created, read)):
        # GenAI conventions: input_tokens includes cached input; the cache counts are parts of it
        attrs["gen_ai.usage.input_tokens"] = (uncached or 0) + (created or 0) + (read or 0)
    _set(attrs, "gen_ai.usage.output_tokens", billed["output_tokens"])
    _set(attrs, "gen_ai.usage.cache_read.input_tokens", read)
    _set(attrs, "gen_ai.usage.cache_creation.input_tokens", created)


# ------------------------------------------------------------------ decisions

DECISION_FIELDS = ("op", "mode", "reason_codes", "rollout", "at", "duration_ms", "id")


def decision_projection(raw: Mapping[str, object]) -> DecisionProjection | None:
    """Only the vocabulary values of a decision; None when any of them is not ours."""

    op, mode, reasons = raw.get("op", "route"), raw.get("mode"), raw.get("reason_codes")
    if op not in DECISION_OPS or mode not in MODES:
        return None
    if not isinstance(reasons, list) or not all(
        isinstance(code, str) and code in REASON_CODES for code in reasons
    ):
        return None
    rollout = raw.get("rollout")
    if rollout is not None and rollout not in ("off", "observe", "shadow", "canary", "on"):
        return None
    return {"op": op, "mode": mode, "reason_codes": list(reasons), "rollout": rollout}


def decision_span(raw: object, key: str, skipped: Skipped) -> SpanRecord | None:
    """A span for one decision: routing evidence of the local log, or a live runtime decision."""
    if not isinstance(raw, dict):
        skipped.add("invalid decision")
        return None
    at = time_ns(raw.get("at", raw.get("recorded_at")))
    projected = decision_projection(raw)
    if at is None or projected is None or not private_free(projected, "telemetry"):
        skipped.add("invalid decision")
        return None
    duration = raw.get("duration_ms")
    start = at - int(duration * 1_000_000) if isinstance(duration, (int, float)) and duration >= 0 else at
    attrs: dict[str, AttrValue] = {
        "workgroup.record": SOURCE_DECISION,
        "workgroup.decision.op": projected["op"],
        "workgroup.mode": projected["mode"],
        "workgroup.reason_codes": tuple(projected["reason_codes"]),
    }
    if projected["rollout"] is not None:
        attrs["workgroup.rollout"] = projected["rollout"]
    return SpanRecord(
        trace_id=trace_id_for(f"decision:{key}"),
        span_id=span_id_for(f"decision:{key}"),
        name=f"workgroup.decision {projected['op']}",
        client=False,
        start_ns=min(start, at),
        end_ns=at,
        attributes=attrs,
        source=SOURCE_DECISION,
    )


# ------------------------------------------------------------------ CM model calls

# the CM log's model_usage fields that leave, under their OTel names (identity, counts, labels;
# never detail or project): declared with the row's format, in toolkit.core.cm_usage_format
CM_ATTRIBUTES: dict[str, str] = dict(usage_format.OTEL_ATTRIBUTES)


def cm_span(row: object, skipped: Skipped) -> SpanRecord | None:
    """A CLIENT span for one completed CM model call (a ``model_usage`` row)."""

    if not isinstance(row, dict) or row.get("event") != "model_usage":
        return None
    verdict = check_usage(row)
    event_id, run_id, end = row.get("event_id"), row.get("run_id"), time_ns(row.get("at"))
    if (
        isinstance(verdict, str)
        or not isinstance(event_id, str)
        or not isinstance(run_id, str)
        or end is None
    ):
        skipped.add("invalid model call")
        return None
    attrs = _cm_attrs(row)
    duration = row.get("duration_ms")
    start = end - duration * 1_000_000 if isinstance(duration, int) else end
    outcome = row.get("outcome")
    model = row.get("requested_model")
    return SpanRecord(
        trace_id=trace_id_for(f"cm-run:{run_id}"),
        span_id=span_id_for(f"cm:{event_id}"),
        name=f"{GEN_AI_OPERATION} {model}",
        client=True,
        start_ns=start,
        end_ns=end,
        attributes=attrs,
        error=None if outcome == "success" else str(outcome),
        source=SOURCE_CM,
    )


def _cm_attrs(row: Mapping[str, object]) -> dict[str, AttrValue]:
    """The span attributes of a ``model_usage`` row: its allowlisted scalar fields under their
    OTel names, and the GenAI provider name when the provider is one we know."""
    # free text (task, feature, node, labels) is not judged here: every string of the span passes
    # the telemetry context when it is sent (toolkit.otel.withhold), and a failing one is withheld
    kept = {name: row[name] for name in CM_ATTRIBUTES if row.get(name) is not None}
    attrs: dict[str, AttrValue] = {"workgroup.record": SOURCE_CM, "gen_ai.operation.name": GEN_AI_OPERATION}
    for name, value in kept.items():
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            attrs[CM_ATTRIBUTES[name]] = value
    provider = row.get("provider")
    if isinstance(provider, str) and provider.lower() in _PROVIDER_NAMES:
        attrs["gen_ai.provider.name"] = _PROVIDER_NAMES[provider.lower()]
    return attrs


# ------------------------------------------------------------------ agent-log calls


def agent_span(call: Call, key: str, skipped: Skipped) -> SpanRecord | None:
    """A CLIENT span for one model call read from a Claude Code or Codex log (``toolkit.usage``).

    Only what ``workgroup usage --emit-events`` may put in an efficiency event leaves: the model
    as the event's label (a family name or an anonymous digest), the provider's token counts, the
    source and whether a subagent made the call; the session is the event's anonymous task id.
    """

    end = time_ns(call.ts)
    if end is None:
        skipped.add("invalid agent call")
        return None
    # the anonymous task id ``workgroup usage --emit-events`` gives the session's efficiency event
    digest = hashlib.sha256(f"{call.source}\x1f{call.session}".encode("utf-8", "surrogatepass"))
    task = "anon-" + digest.hexdigest()[:32]
    attrs: dict[str, AttrValue] = {
        "workgroup.record": SOURCE_AGENT,
        "gen_ai.operation.name": GEN_AI_OPERATION,
        "gen_ai.request.model": model_label(call.model),
        "gen_ai.usage.input_tokens": call.input + call.cache_write + call.cache_read,
        "gen_ai.usage.output_tokens": call.output,
        "gen_ai.usage.cache_read.input_tokens": call.cache_read,
        "gen_ai.usage.cache_creation.input_tokens": call.cache_write,
        "workgroup.agent.source": call.source,
        "workgroup.agent.subagent": bool(call.subagent),
        "workgroup.task_corpus_id": task,
    }
    if call.source in _PROVIDER_NAMES:
        attrs["gen_ai.provider.name"] = _PROVIDER_NAMES[call.source]
    if not private_free(attrs, "telemetry"):
        skipped.add("private content")
        return None
    return SpanRecord(
        trace_id=trace_id_for(f"task:{task}"),  # one trace with the session's efficiency event
        span_id=span_id_for(f"agent:{key}"),
        name=f"{GEN_AI_OPERATION} {attrs['gen_ai.request.model']}",
        client=True,
        start_ns=end,
        end_ns=end,
        attributes=attrs,
        source=SOURCE_AGENT,
    )


# ------------------------------------------------------------------ metrics


def _model_attrs(attrs: Mapping[str, AttrValue], source: str) -> dict[str, str]:
    out = {"gen_ai.operation.name": GEN_AI_OPERATION, "workgroup.record": source}
    for name in ("gen_ai.request.model", "gen_ai.provider.name"):
        value = attrs.get(name)
        if isinstance(value, str):
            out[name] = value
    return out


def metrics_for(spans: Iterable[SpanRecord]) -> list[MetricRecord]:
    """Cumulative metrics over ``spans``: GenAI token usage and duration, events and decisions."""
    tokens = MetricRecord(
        "gen_ai.client.token.usage", "{token}", "Number of input and output tokens used.", True
    )
    duration = MetricRecord("gen_ai.client.operation.duration", "s", "GenAI operation duration.", True)
    token_sum = MetricRecord(
        "workgroup.gen_ai.tokens", "{token}", "Tokens by type, including cache reads and writes.", False
    )
    events = MetricRecord(
        "workgroup.efficiency.events", "{event}", "Efficiency events by kind and mode.", False
    )
    decisions = MetricRecord(
        "workgroup.decisions", "{decision}", "Runtime decisions by operation and mode.", False
    )
    for span in spans:
        attrs = span.attributes
        if span.source == SOURCE_DECISION:
            decisions.add(
                {
                    "workgroup.decision.op": str(attrs["workgroup.decision.op"]),
                    "workgroup.mode": str(attrs["workgroup.mode"]),
                },
                1,
            )
            continue
        if span.source == SOURCE_EFFICIENCY:
            events.add(_event_labels(attrs), 1)
        base = _model_attrs(attrs, span.source)
        _add_token_points(tokens, token_sum, base, attrs)
        if span.source == SOURCE_CM:
            labelled = dict(base)
            if span.error:
                labelled["error.type"] = span.error
            duration.add(labelled, (span.end_ns - span.start_ns) / 1e9, DURATION_BUCKETS)
    return [metric for metric in (tokens, duration, token_sum, events, decisions) if metric.points]


_TOKEN_TYPES = (
    ("input", "gen_ai.usage.input_tokens"),
    ("output", "gen_ai.usage.output_tokens"),
    ("cache_read", "gen_ai.usage.cache_read.input_tokens"),
    ("cache_creation", "gen_ai.usage.cache_creation.input_tokens"),
)


def _event_labels(attrs: Mapping[str, AttrValue]) -> dict[str, str]:
    """The labels an efficiency event is counted under: its kind, and its mode when it has one."""
    labels = {"workgroup.event": str(attrs["workgroup.event"])}
    if isinstance(attrs.get("workgroup.mode"), str):
        labels["workgroup.mode"] = str(attrs["workgroup.mode"])
    return labels


def _add_token_points(
    tokens: MetricRecord, token_sum: MetricRecord, base: dict[str, str], attrs: Mapping[str, AttrValue]
) -> None:
    """A span's integer token counts: input and output into the GenAI histogram, every type
    (cache reads and writes too) into the workgroup sum."""
    for kind, name in _TOKEN_TYPES:
        value = attrs.get(name)
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if kind in ("input", "output"):
            tokens.add({**base, "gen_ai.token.type": kind}, value, TOKEN_BUCKETS)
        token_sum.add({**base, "workgroup.token.type": kind}, value)


def window(spans: Sequence[SpanRecord]) -> tuple[int, int]:
    """The exported window: from the earliest span start to the latest span end."""
    return min(span.start_ns for span in spans), max(span.end_ns for span in spans)
