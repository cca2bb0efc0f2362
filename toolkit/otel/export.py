"""``workgroup telemetry export --otlp``: the records of a repository as OTLP spans and metrics.

The shell (``toolkit.commands.telemetry_export``) resolves the repository and the options and
calls ``export``; this module collects the spans, derives the metrics of the window and sends
both. Every string that leaves (span names and attributes, metric
attributes, resource attributes) passes the privacy engine's telemetry context first
(``toolkit.otel.withhold``); the summary's ``withheld`` counts the values replaced by a pseudonym.
Nothing local changes (but the pseudonym key, once), so a failed export is simply run again: the ids are stable and the
metrics cumulative over the same window, so a retry never double counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.core.errors import EnvironmentFailure, InvalidInput
from toolkit.core.timefmt import parse_rfc3339
from toolkit.otel.resource import repository_id, resource_attributes
from toolkit.otel.sdk import Sender, resolve_endpoints, undelivered_message
from toolkit.otel.sources import agent_spans, cm_log_files, cm_spans, telemetry_log_spans
from toolkit.otel.spans import Skipped, SpanRecord, metrics_for, to_ns
from toolkit.otel.withhold import Withholder, load_key

if TYPE_CHECKING:
    from toolkit.otel.shapes import ExportSummary

_RELATIVE = re.compile(r"^(\d{1,6})([mhd])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


def parse_since(value: str | None, now: datetime) -> int | None:
    """``--since``: an RFC 3339 time or a duration back from now (``30m``, ``24h``, ``7d``)."""
    if value is None:
        return None
    match = _RELATIVE.fullmatch(value.strip())
    if match:
        return to_ns(now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))}))
    parsed = parse_rfc3339(value)
    if parsed is None:
        raise InvalidInput(
            "SINCE_INVALID", "--since must be an RFC 3339 time or a duration like 30m, 24h, 7d"
        )
    return to_ns(parsed)


@dataclass
class Collected:
    spans: list[SpanRecord] = field(default_factory=list)
    skipped: Skipped = field(default_factory=Skipped)
    older: int = 0

    def by_source(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for span in self.spans:
            counts[span.source] = counts.get(span.source, 0) + 1
        return counts


def stream_spans(
    out: Collected,
    telemetry_log: Path,
    *,
    cm_home: Path | None,
    specs_dir: Path | None,
    since_ns: int | None,
    workdir: Path | None = None,
    agent_logs: bool = False,
    agent_workdir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Iterator[SpanRecord]:
    """Every exportable record as one span, filtered to the window after ``since_ns``, one at a time and
    none kept (``out`` counts the skipped and older ones). ``workdir`` limits the CM runs of the shared
    global log home to this work tree's."""
    streams = [
        telemetry_log_spans(telemetry_log, out.skipped),
        cm_spans(cm_log_files(cm_home, specs_dir, workdir), out.skipped),
    ]
    if agent_logs:
        streams.append(agent_spans(environ or {}, agent_workdir, out.skipped))
    for stream in streams:
        for span in stream:
            if since_ns is not None and span.end_ns < since_ns:
                out.older += 1
            else:
                yield span


@dataclass(frozen=True)
class ExportRequest:
    telemetry_log: Path
    otel_dir: Path
    environ: Mapping[str, str]
    endpoint: str | None = None
    since: str | None = None
    cm_home: Path | None = None
    specs_dir: Path | None = None
    workgroup: str | None = None
    run: str | None = None
    timeout: float | None = None
    dry_run: bool = False
    workdir: Path | None = None  # None: every CM run of the log home, not only this work tree's
    agent_logs: bool = False  # also the Claude Code and Codex logs (toolkit.usage)
    agent_workdir: Path | None = None  # None: the agent calls of every project


def export(request: ExportRequest, *, now: datetime, roots: Callable[[], list[str]]) -> ExportSummary:
    """Collect, map and (unless ``dry_run``) send; returns the summary the command prints."""
    since_ns = parse_since(request.since, now)

    endpoints = resolve_endpoints(request.endpoint, request.environ)
    # everything that leaves passes the telemetry context; a value that fails is pseudonymized
    withholder = Withholder(None if request.dry_run else load_key(request.otel_dir))
    attrs = withholder.resource(
        resource_attributes(
            request.environ,
            repository=repository_id(request.otel_dir, roots),
            workgroup=request.workgroup,
            run=request.run,
        )
    )

    def read(out: Collected) -> Iterator[SpanRecord]:
        return stream_spans(
            out,
            request.telemetry_log,
            cm_home=request.cm_home,
            specs_dir=request.specs_dir,
            since_ns=since_ns,
            workdir=request.workdir,
            agent_logs=request.agent_logs,
            agent_workdir=request.agent_workdir,
            environ=request.environ,
        )

    found = Collected()
    by_source: dict[str, int] = {}
    bounds: list[int] = []  # earliest start, latest end

    def checked() -> Iterator[SpanRecord]:
        for span in read(found):
            by_source[span.source] = by_source.get(span.source, 0) + 1
            if bounds:
                bounds[0], bounds[1] = min(bounds[0], span.start_ns), max(bounds[1], span.end_ns)
            else:
                bounds.extend((span.start_ns, span.end_ns))
            yield withholder.span(span)

    # map and count in one pass, no span kept: memory does not grow with the logs
    metrics = withholder.metrics(metrics_for(checked()))
    summary: ExportSummary = {
        "spans": sum(by_source.values()),
        "by_source": by_source,
        "metric_points": sum(len(metric.points) for metric in metrics),
        "older_than_since": found.older,
        "skipped": dict(sorted(found.skipped.reasons.items())),
        "withheld": withholder.count,
        "exported": False,
    }
    if request.dry_run or not by_source:
        return summary

    def again() -> Iterator[SpanRecord]:
        """The counted spans read a second time and sent in batches as they come, none kept; a
        record appended since the first pass waits for the next export (as many per source)."""
        taken: dict[str, int] = {}
        for span in read(Collected()):
            if taken.get(span.source, 0) < by_source.get(span.source, 0):
                taken[span.source] = taken.get(span.source, 0) + 1
                yield withholder.span(span)

    sender = Sender(endpoints, request.timeout)
    try:
        start, end = bounds
        if since_ns is not None:
            start = since_ns
        # each signal is sent and judged on its own: a collector that takes spans but refuses metrics
        # (or the other way round) is reported as exactly that
        deliveries = [sender.send_spans(again(), attrs), sender.send_metrics(metrics, attrs, start, end)]
    finally:
        sender.close()
    summary["signals"] = {delivery.signal: delivery.as_json() for delivery in deliveries}
    if not all(delivery.ok for delivery in deliveries):
        # exit 3 whenever a signal was not delivered: the export is not complete until both are, and
        # a re-run is safe (stable span ids; the metrics are cumulative over the same window)
        raise EnvironmentFailure(
            "COLLECTOR_UNAVAILABLE",
            undelivered_message(deliveries) + "; nothing local changed: run the export again "
            "(span ids are stable and the metrics cumulative over the window, so a retry never double counts)",
        )
    summary["exported"] = True
    return summary
