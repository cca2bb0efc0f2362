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
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import toolkit
from toolkit.core.errors import EnvironmentFailure, InvalidInput
from toolkit.otel.spans import SCOPE_NAME, AttrValue, HistogramPoint, MetricRecord, SpanRecord

if TYPE_CHECKING:  # the optional extra: imported where it is used, never at start-up
    import requests
    from opentelemetry.sdk.metrics.export import Histogram, MetricsData, Sum
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from toolkit.otel.shapes import SignalReport

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


def _resource(attributes: Mapping[str, str]) -> Resource:
    from opentelemetry.sdk.resources import Resource

    return Resource(dict(attributes))


def _scope() -> InstrumentationScope:
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    return InstrumentationScope(SCOPE_NAME, toolkit.__version__)


def readable_spans(spans: Sequence[SpanRecord], resource_attrs: Mapping[str, str]) -> list[ReadableSpan]:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    resource, scope = _resource(resource_attrs), _scope()
    out = []
    for span in spans:
        context = SpanContext(span.trace_id, span.span_id, is_remote=False, trace_flags=TraceFlags(1))
        attrs: dict[str, AttrValue] = dict(span.attributes)
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
) -> MetricsData:
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
        data: Histogram | Sum
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
            sums = []
            for key, value in metric.points.items():
                assert not isinstance(value, HistogramPoint)  # a sum's points are its totals
                sums.append(
                    NumberDataPoint(
                        attributes=dict(key),
                        start_time_unix_nano=start_ns,
                        time_unix_nano=end_ns,
                        value=value,
                    )
                )
            data = Sum(data_points=sums, aggregation_temporality=cumulative, is_monotonic=True)
        built.append(Metric(name=metric.name, description=metric.description, unit=metric.unit, data=data))
    scope = ScopeMetrics(scope=_scope(), metrics=built, schema_url="")
    return MetricsData(
        resource_metrics=[
            ResourceMetrics(resource=_resource(resource_attrs), scope_metrics=[scope], schema_url="")
        ]
    )


# the variables that name a credential-provider session of their own (the exporter's; honoured as is)
_SESSION_VARIABLES = {
    "traces": "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER",
    "metrics": "OTEL_PYTHON_EXPORTER_OTLP_HTTP_METRICS_CREDENTIAL_PROVIDER",
}
_STANDARD_PATHS = ("/v1/traces", "/v1/metrics")


def shown_endpoint(url: str) -> str:
    """The signal URL as messages and ``status.json`` name it: scheme, host and port, plus the path
    when it is the standard ``/v1/traces`` or ``/v1/metrics`` (a query, a fragment or the segments of
    a custom path could carry a key; they are never shown)."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    for standard in _STANDARD_PATHS:
        if path == standard:
            return origin + standard
        if path.endswith(standard):
            return origin + "/..." + standard
    return origin + ("/..." if path else "")


@dataclass
class Delivery:
    """How one signal's send went: what ``status.json``, the summary and the error message say."""

    signal: str  # traces | metrics
    endpoint: str  # shown_endpoint of the signal URL
    ok: bool = True
    items: int = 0  # spans or metric points the collector accepted
    attempts: int = 0  # HTTP requests made (the exporter's retries included)
    http_status: int | None = None
    reason: str | None = None  # "HTTP 503 Service Unavailable", "connection refused", "timed out"

    def describe(self) -> str:
        """``metrics to http://host:4318/v1/metrics: HTTP 503 Service Unavailable after 3 attempts``."""
        if self.ok:
            unit = "spans" if self.signal == "traces" else "metric points"
            return f"{self.signal} delivered ({self.items} {unit})"
        tries = f" after {self.attempts} attempt{'' if self.attempts == 1 else 's'}" if self.attempts else ""
        return f"{self.signal} to {self.endpoint}: {self.reason or 'not accepted'}{tries}"

    def as_json(self) -> SignalReport:
        out: SignalReport = {
            "state": "ok" if self.ok else "failed",
            "endpoint": self.endpoint,
            "items": self.items,
            "attempts": self.attempts,
        }
        if not self.ok:
            out["http_status"] = self.http_status
            out["reason"] = self.reason or "not accepted"
        return out


# (phrase, exception classes, exception type names) of a failed request, in the order they are
# tried: the first row any exception of the chain matches names the failure
_NETWORK_REASONS: tuple[tuple[str, tuple[type[BaseException], ...], frozenset[str]], ...] = (
    ("connection refused", (ConnectionRefusedError,), frozenset()),
    (
        "timed out",
        (TimeoutError,),
        frozenset({"Timeout", "ConnectTimeout", "ReadTimeout", "ConnectTimeoutError", "ReadTimeoutError"}),
    ),
    ("TLS handshake failed", (), frozenset({"SSLError", "SSLCertVerificationError"})),
    ("host name not resolved", (), frozenset({"gaierror", "NameResolutionError"})),
    ("connection reset", (ConnectionResetError,), frozenset()),
)


def network_reason(exc: BaseException) -> str:
    """A short, fixed phrase for a request that got no HTTP answer (never the exception's text,
    which names the URL with its query)."""
    seen = _exception_chain(exc)
    names = {type(item).__name__ for item in seen}
    for phrase, classes, type_names in _NETWORK_REASONS:
        if names & type_names or any(isinstance(item, classes) for item in seen):
            return phrase
    return f"connection failed ({type(exc).__name__})"


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions behind it (causes, contexts, ``reason`` attributes and
    arguments), breadth first, each once, at most 32."""
    seen: list[BaseException] = []
    todo: list[object] = [exc]
    while todo and len(seen) < 32:
        item = todo.pop(0)
        if not isinstance(item, BaseException) or any(item is known for known in seen):
            continue
        seen.append(item)
        todo.extend((item.__cause__, item.__context__, getattr(item, "reason", None), *item.args))
    return seen


@dataclass
class _Probe:
    """What the signal's HTTP session saw on its last request (filled by the recording session)."""

    attempts: int = 0
    status: int | None = None
    reason: str | None = None


def _recording_session(probe: _Probe) -> requests.Session:
    """A ``requests`` session (the exporter's public ``session`` option) that notes each request's
    HTTP status or network failure, so a failed send can say why."""
    import requests

    class RecordingSession(requests.Session):
        # the exporter's arguments pass through as it gave them
        def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
            # the exporter passes what is left of its deadline; at 0 no request is made (the HTTP
            # library refuses the value), so the last real answer stays the reason
            spent = kwargs.get("timeout") == 0 and probe.attempts > 0
            probe.attempts += 0 if spent else 1
            try:
                response = super().request(method, url, *args, **kwargs)
            except Exception as exc:
                if not spent:
                    probe.status, probe.reason = None, network_reason(exc)
                raise
            code = int(response.status_code)
            try:
                phrase = HTTPStatus(code).phrase  # the standard phrase, not the collector's text
            except ValueError:
                phrase = ""
            probe.status, probe.reason = code, f"HTTP {code} {phrase}".rstrip()
            return response

    return RecordingSession()


class Sender:
    """The two OTLP/HTTP exporters of one export (or of one flusher run)."""

    def __init__(self, endpoints: Endpoints, timeout: float | None) -> None:
        require_sdk()
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.endpoints = endpoints
        self.probes = {"traces": _Probe(), "metrics": _Probe()}
        sessions = {
            signal: None if os.environ.get(variable) else _recording_session(self.probes[signal])
            for signal, variable in _SESSION_VARIABLES.items()
        }
        self.spans: SpanExporter = OTLPSpanExporter(
            endpoint=endpoints.traces, timeout=timeout, session=sessions["traces"]
        )
        self.metrics = OTLPMetricExporter(
            endpoint=endpoints.metrics, timeout=timeout, session=sessions["metrics"]
        )
        self.timeout = timeout

    def _delivery(self, signal: str, url: str) -> tuple[Delivery, _Probe]:
        probe = self.probes[signal]
        probe.attempts, probe.status, probe.reason = 0, None, None
        return Delivery(signal, shown_endpoint(url)), probe

    @staticmethod
    def _failed(delivery: Delivery, probe: _Probe) -> Delivery:
        delivery.ok = False
        delivery.attempts, delivery.http_status = probe.attempts, probe.status
        delivery.reason = probe.reason if probe.attempts else "not sent (the exporter refused the payload)"
        return delivery

    def send_spans(self, spans: Iterable[SpanRecord], resource_attrs: Mapping[str, str]) -> Delivery:
        from opentelemetry.sdk.trace.export import SpanExportResult

        delivery, probe = self._delivery("traces", self.endpoints.traces)
        items = iter(spans)  # any iterable: sent a batch at a time, never held whole
        while chunk := list(islice(items, SPAN_BATCH)):
            batch = readable_spans(chunk, resource_attrs)
            if self.spans.export(batch) is not SpanExportResult.SUCCESS:
                return self._failed(delivery, probe)
            delivery.items += len(batch)
        delivery.attempts = probe.attempts
        return delivery

    def send_metrics(
        self, metrics: Sequence[MetricRecord], resource_attrs: Mapping[str, str], start_ns: int, end_ns: int
    ) -> Delivery:
        from opentelemetry.sdk.metrics.export import MetricExportResult

        delivery, probe = self._delivery("metrics", self.endpoints.metrics)
        if not metrics:
            return delivery
        data = metrics_data(metrics, resource_attrs, start_ns, end_ns)
        millis = None if self.timeout is None else self.timeout * 1000
        if self.metrics.export(data, timeout_millis=millis) is not MetricExportResult.SUCCESS:
            return self._failed(delivery, probe)
        delivery.items, delivery.attempts = sum(len(metric.points) for metric in metrics), probe.attempts
        return delivery

    def close(self) -> None:
        self.spans.shutdown()
        self.metrics.shutdown()


def undelivered_message(deliveries: Sequence[Delivery]) -> str:
    """The failed signals first (where, why, after how many attempts), then what was delivered."""
    failed = [d.describe() for d in deliveries if not d.ok]
    done = [d.describe() for d in deliveries if d.ok]
    return "; ".join(failed + done)
