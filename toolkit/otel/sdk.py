"""Neutral records to OpenTelemetry SDK objects, sent by the OTLP/HTTP exporters.

The only toolkit module that imports ``opentelemetry`` (the optional ``otel`` extra). Spans are
built as finished ``ReadableSpan`` objects with the ids of ``records`` (no tracer, no id
generator: the ids must be the stable ones), metrics as one cumulative ``MetricsData``.

Endpoints follow the OTLP exporter specification: a signal endpoint variable
(``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``..._METRICS_ENDPOINT``) is used as given; the base
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or the command's ENDPOINT) gets ``/v1/traces`` and
``/v1/metrics`` appended; the default is ``http://localhost:4318``. Headers, timeout,
compression and certificates come from the ``OTEL_EXPORTER_OTLP_*`` variables, read by the
exporters themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolkit.core.errors import EnvironmentFailure, InvalidInput
from toolkit.otel.records import SCOPE_NAME, HistogramPoint, MetricRecord, SpanRecord

DEFAULT_BASE = "http://localhost:4318"
SPAN_BATCH = 512
INSTALL_HINT = "the OpenTelemetry export needs the otel extra: pip install 'workgroup-toolkit[otel]'"


def require_sdk() -> None:
    """Raise ``OTEL_NOT_INSTALLED`` (exit 3) when the extra is not installed."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise EnvironmentFailure("OTEL_NOT_INSTALLED", INSTALL_HINT) from None
    # the exporters log transient failures with their URL; the command reports its own coded error
    logger = logging.getLogger("opentelemetry")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False


def check_endpoint(url: str) -> str:
    """An http(s) URL with a host and no user info; ``OTLP_ENDPOINT_INVALID`` (exit 2) otherwise."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a malformed port
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and "@" not in parts.netloc
    except ValueError:
        ok = False
    if not ok or any(ch.isspace() for ch in url):
        raise InvalidInput(
            "OTLP_ENDPOINT_INVALID", "the OTLP endpoint must be an http(s) URL with a host and no user info"
        )
    return url


@dataclass(frozen=True)
class Endpoints:
    traces: str
    metrics: str


def resolve_endpoints(base: str | None, environ: Mapping[str, str]) -> Endpoints:
    """The traces and metrics URLs: ENDPOINT argument, signal variables, base variable, default."""
    if base:
        root = check_endpoint(base).rstrip("/")
        return Endpoints(root + "/v1/traces", root + "/v1/metrics")
    root = (environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_BASE).strip().rstrip("/")
    traces = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip() or root + "/v1/traces"
    metrics = environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip() or root + "/v1/metrics"
    return Endpoints(check_endpoint(traces), check_endpoint(metrics))


def _resource(attributes: Mapping[str, str]) -> Any:
    from opentelemetry.sdk.resources import Resource

    return Resource(dict(attributes))


def _scope() -> Any:
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    import toolkit

    return InstrumentationScope(SCOPE_NAME, toolkit.__version__)


def readable_spans(spans: Sequence[SpanRecord], resource_attrs: Mapping[str, str]) -> list[Any]:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    resource, scope = _resource(resource_attrs), _scope()
    out = []
    for span in spans:
        context = SpanContext(span.trace_id, span.span_id, is_remote=False, trace_flags=TraceFlags(1))
        attrs: dict[str, Any] = dict(span.attributes)
        status = Status(StatusCode.UNSET)
        if span.error:
            attrs["error.type"] = span.error
            status = Status(StatusCode.ERROR)
        out.append(
            ReadableSpan(
                name=span.name,
                context=context,
                parent=None,
                resource=resource,
                attributes=attrs,
                kind=SpanKind.CLIENT if span.client else SpanKind.INTERNAL,
                status=status,
                start_time=span.start_ns,
                end_time=span.end_ns,
                instrumentation_scope=scope,
            )
        )
    return out


def metrics_data(
    metrics: Sequence[MetricRecord], resource_attrs: Mapping[str, str], start_ns: int, end_ns: int
) -> Any:
    from opentelemetry.sdk.metrics.export import (
        AggregationTemporality,
        Histogram,
        HistogramDataPoint,
        Metric,
        MetricsData,
        NumberDataPoint,
        ResourceMetrics,
        ScopeMetrics,
        Sum,
    )

    cumulative = AggregationTemporality.CUMULATIVE
    built = []
    for metric in metrics:
        data: Any
        if metric.histogram:
            points = []
            for key, point in metric.points.items():
                assert isinstance(point, HistogramPoint)
                points.append(
                    HistogramDataPoint(
                        attributes=dict(key),
                        start_time_unix_nano=start_ns,
                        time_unix_nano=end_ns,
                        count=point.count,
                        sum=point.total,
                        bucket_counts=list(point.counts),
                        explicit_bounds=list(point.bounds),
                        min=point.low,
                        max=point.high,
                    )
                )
            data = Histogram(data_points=points, aggregation_temporality=cumulative)
        else:
            sums = [
                NumberDataPoint(
                    attributes=dict(key), start_time_unix_nano=start_ns, time_unix_nano=end_ns, value=value
                )
                for key, value in metric.points.items()
            ]
            data = Sum(data_points=sums, aggregation_temporality=cumulative, is_monotonic=True)
        built.append(Metric(name=metric.name, description=metric.description, unit=metric.unit, data=data))
    scope = ScopeMetrics(scope=_scope(), metrics=built, schema_url="")
    return MetricsData(
        resource_metrics=[
            ResourceMetrics(resource=_resource(resource_attrs), scope_metrics=[scope], schema_url="")
        ]
    )


class Sender:
    """The two OTLP/HTTP exporters of one export (or of one flusher run)."""

    def __init__(self, endpoints: Endpoints, timeout: float | None) -> None:
        require_sdk()
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.spans: Any = OTLPSpanExporter(endpoint=endpoints.traces, timeout=timeout)
        self.metrics: Any = OTLPMetricExporter(endpoint=endpoints.metrics, timeout=timeout)
        self.timeout = timeout

    def send_spans(self, spans: Sequence[SpanRecord], resource_attrs: Mapping[str, str]) -> bool:
        from opentelemetry.sdk.trace.export import SpanExportResult

        for first in range(0, len(spans), SPAN_BATCH):
            batch = readable_spans(spans[first : first + SPAN_BATCH], resource_attrs)
            if self.spans.export(batch) is not SpanExportResult.SUCCESS:
                return False
        return True

    def send_metrics(
        self, metrics: Sequence[MetricRecord], resource_attrs: Mapping[str, str], start_ns: int, end_ns: int
    ) -> bool:
        from opentelemetry.sdk.metrics.export import MetricExportResult

        if not metrics:
            return True
        data = metrics_data(metrics, resource_attrs, start_ns, end_ns)
        millis = None if self.timeout is None else self.timeout * 1000
        return self.metrics.export(data, timeout_millis=millis) is MetricExportResult.SUCCESS

    def close(self) -> None:
        self.spans.shutdown()
        self.metrics.shutdown()
