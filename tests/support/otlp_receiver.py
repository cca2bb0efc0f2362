"""A real OTLP/HTTP receiver on loopback for the tests (standard ``http.server``).

It accepts ``POST /v1/traces`` and ``/v1/metrics`` with protobuf bodies (gzip or not), decodes
them with the ``opentelemetry-proto`` message classes, and keeps both the raw bytes (for canary
searches) and flattened spans and metric points. ``delay`` makes it slow (a collector that
answers late is what such a test is about; ``release_slow`` ends the wait), ``fail_next`` answers
that many requests with ``status`` (503 by default) before accepting, ``fail_paths`` does so for one
signal path (``/v1/traces`` or ``/v1/metrics``; -1: always) while the other is accepted. Tests wait on its
condition (``wait_for_spans``, ``wait_idle``), never for a fixed time.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(item) for item in any_value.array_value.values)
    if kind is None:
        return None
    return getattr(any_value, kind)


def attributes(items: Any) -> dict[str, Any]:
    return {item.key: _value(item.value) for item in items}


@dataclass
class Received:
    raw: list[bytes] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)
    points: list[dict[str, Any]] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)


class Receiver:
    """Start with ``with receiving() as rx``; ``rx.url`` is the OTLP base URL."""

    def __init__(self, port: int = 0) -> None:
        self.received = Received()
        self.delay = 0.0
        self.fail_next = 0
        self.status = 503
        # one signal failing: path -> requests still answered with ``status`` (-1: every one)
        self.fail_paths: dict[str, int] = {}
        self.refused: dict[str, int] = {}  # path -> requests answered with ``status``
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # notified when something is stored or a request ends
        self.active = 0  # requests being handled
        self.fast = threading.Event()  # set: a slow receiver stops waiting
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep the test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                with receiver.changed:
                    receiver.active += 1
                try:
                    receiver.handle(self)
                finally:
                    with receiver.changed:
                        receiver.active -= 1
                        receiver.changed.notify_all()

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length)
        if self.delay:
            self.fast.wait(self.delay)  # not a barrier: the slowness of the collector under test
        with self.lock:
            failing = self.fail_next > 0
            if failing:
                self.fail_next -= 1
            left = self.fail_paths.get(handler.path, 0)
            if not failing and left:
                failing = True
                self.fail_paths[handler.path] = left - 1 if left > 0 else left
            if failing:
                self.refused[handler.path] = self.refused.get(handler.path, 0) + 1
        if failing:
            handler.send_response(self.status)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        encoding = handler.headers.get("Content-Encoding", "")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        reply = self.decode(handler.path, body)
        if reply is None:
            handler.send_response(404)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "application/x-protobuf")
        handler.send_header("Content-Length", str(len(reply)))
        handler.end_headers()
        handler.wfile.write(reply)

    def decode(self, path: str, body: bytes) -> bytes | None:
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        if path == "/v1/traces":
            request = trace_service_pb2.ExportTraceServiceRequest()
            request.ParseFromString(body)
            spans = [
                {
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": span.kind,
                    "start": span.start_time_unix_nano,
                    "end": span.end_time_unix_nano,
                    "status": span.status.code,
                    "attributes": attributes(span.attributes),
                    "resource": attributes(rs.resource.attributes),
                    "scope": ss.scope.name,
                }
                for rs in request.resource_spans
                for ss in rs.scope_spans
                for span in ss.spans
            ]
            reply: bytes = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            with self.lock:
                self.received.raw.append(body)
                self.received.spans.extend(spans)
                self.received.requests["traces"] = self.received.requests.get("traces", 0) + 1
                self.changed.notify_all()
            return reply
        if path == "/v1/metrics":
            request = metrics_service_pb2.ExportMetricsServiceRequest()
            request.ParseFromString(body)
            points = []
            for rm in request.resource_metrics:
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        kind = metric.WhichOneof("data")
                        data = getattr(metric, kind)
                        for point in data.data_points:
                            row = {
                                "name": metric.name,
                                "unit": metric.unit,
                                "kind": kind,
                                "temporality": data.aggregation_temporality,
                                "start": point.start_time_unix_nano,
                                "time": point.time_unix_nano,
                                "attributes": attributes(point.attributes),
                                "resource": attributes(rm.resource.attributes),
                            }
                            if kind == "histogram":
                                row.update(
                                    count=point.count, sum=point.sum, buckets=list(point.bucket_counts)
                                )
                            else:
                                row["value"] = point.as_int if point.HasField("as_int") else point.as_double
                            points.append(row)
            reply = bytes(metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString())
            with self.lock:
                self.received.raw.append(body)
                self.received.points.extend(points)
                self.received.requests["metrics"] = self.received.requests.get("metrics", 0) + 1
                self.changed.notify_all()
            return reply
        return None

    def start(self) -> Receiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait_for_spans(self, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """The spans once at least ``count`` arrived (fewer when ``timeout`` passes first)."""
        with self.changed:
            self.changed.wait_for(lambda: len(self.received.spans) >= count, timeout)
            return list(self.received.spans)

    def release_slow(self) -> None:
        """From now on answer at once, and let the requests being delayed go on."""
        self.delay = 0.0
        self.fast.set()

    def wait_idle(self, timeout: float = 20.0) -> bool:
        """True once no request is being handled (what the slow ones decoded is stored by then)."""
        with self.changed:
            return self.changed.wait_for(lambda: self.active == 0, timeout)


@contextmanager
def receiving(port: int = 0) -> Iterator[Receiver]:
    receiver = Receiver(port).start()
    try:
        yield receiver
    finally:
        receiver.stop()


def free_port() -> int:
    """A loopback port with nothing listening (a collector that is down)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
