"""The detached flusher of live mode: ``python -m toolkit.otel.flusher OTEL_DIR``.

Started by ``toolkit.otel.live`` when a record is spooled and no flusher holds ``flusher.lock``.
It waits ``OTEL_BSP_SCHEDULE_DELAY`` milliseconds (default 1000) to gather a batch, renames the
spool to ``batch-<ns>.jsonl``, maps it to spans (``toolkit.otel.spans``, through the privacy
engine) and sends them with the OTLP/HTTP exporter (endpoint and options from the
``OTEL_EXPORTER_OTLP_*`` variables it inherited). A batch file is deleted only after the collector
accepted it; on failure it stays and is retried with a growing pause. After ``IDLE_SECONDS``
without work, or after failing for ``OTEL_BSP_EXPORT_TIMEOUT`` milliseconds (default 30000), it
exits; the next spooled record starts a new flusher, which sends the batches left behind first.
``status.json`` is written after every delivery attempt: ``ok`` (true once every pending batch was
delivered), ``pending``, ``withheld`` (values this flusher replaced by a pseudonym: every string sent
passes the telemetry context first; ``toolkit.otel.withhold``), per signal the state, endpoint, last
success and last error (code, reason such as ``HTTP 503 Service Unavailable`` or ``connection
refused``, attempts), and on failure ``error`` and a ``message`` naming the signal and why.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.core.errors import ToolkitError
from toolkit.core.timefmt import format_utc
from toolkit.infra.boundedio import FileRefused, loads_bounded, open_regular
from toolkit.infra.clock import now_utc
from toolkit.infra.git import discover, root_commit_ids
from toolkit.infra.livespool import FLUSHER_LOCK, SPOOL
from toolkit.infra.store import atomic_write
from toolkit.otel.resource import repository_id, resource_attributes
from toolkit.otel.sdk import Delivery, Sender, resolve_endpoints
from toolkit.otel.spans import Skipped, SpanRecord, cm_span, decision_span, efficiency_span
from toolkit.otel.withhold import Withholder, load_key

if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.otel.shapes import FlusherStatus, LastError, NotSentSignal, TracesStatus

IDLE_SECONDS = 2.0
GIVE_UP_SECONDS = 30.0  # the default of OTEL_BSP_EXPORT_TIMEOUT (milliseconds there)
MAX_PAUSE = 10.0
HOLD_ON_ERROR = 30.0  # seconds a flusher that cannot send at all keeps its lock before it exits
STATUS = "status.json"


def _env_seconds(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ[name]) / 1000.0)
    except (KeyError, ValueError):
        return default


def rotate(otel_dir: Path) -> Path | None:
    """Move the spool aside as a batch (after in-flight appends finished); None when empty."""
    spool = otel_dir / SPOOL
    try:
        if spool.stat().st_size == 0:
            return None
    except FileNotFoundError:
        return None
    batch = otel_dir / f"batch-{time.time_ns():020d}.jsonl"
    os.rename(spool, batch)
    fd = os.open(batch, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits for writers that still hold the old name
    finally:
        os.close(fd)
    return batch


def spans_of(batch: Path) -> list[SpanRecord]:
    """The spans of one batch file; unreadable or refused lines are dropped (never sent)."""

    skipped = Skipped()
    spans = []
    with open(batch, "rb") as handle:
        for raw in handle:
            try:
                record: object = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            kind = record.get("kind")
            span = None
            if kind == "decision" and isinstance(record.get("id"), str):
                span = decision_span(record, f"live:{record['id']}", skipped)
            elif kind == "cm":
                span = cm_span(record.get("row"), skipped)
            elif kind == "efficiency" and isinstance(record.get("key"), str):
                span = efficiency_span(record.get("event"), record["key"], skipped)
            if span is not None:
                spans.append(span)
    return spans


def _stamp() -> str:
    """The time of a delivery attempt in status.json (RFC 3339, UTC, whole seconds)."""

    return format_utc(now_utc())


def _status(otel_dir: Path, values: FlusherStatus) -> None:

    try:
        atomic_write(otel_dir / STATUS, (json.dumps(values, sort_keys=True) + "\n").encode())
    except OSError:
        pass


def _previous_traces(otel_dir: Path) -> TracesStatus:
    """A new flusher's traces entry, with the last success and last error an earlier flusher left
    in ``signals.traces`` (none when there is no readable entry)."""

    try:
        handle = open_regular(otel_dir / STATUS, what="otel status", missing_ok=True)
    except (FileRefused, OSError):
        return _carried_traces({})
    if handle is None:
        return _carried_traces({})
    try:
        with handle:
            status: object = loads_bounded(handle.read(65_536), what="otel status")
    except (FileRefused, OSError, ValueError):
        return _carried_traces({})
    signals = status.get("signals") if isinstance(status, dict) else None
    traces = signals.get("traces") if isinstance(signals, dict) else None
    if not isinstance(traces, dict):
        return _carried_traces({})
    return _carried_traces(traces)


def _carried_traces(traces: Mapping[str, object]) -> TracesStatus:
    """A new flusher's traces entry: no state yet; of an earlier entry, the last success time and
    the last error's string and integer fields."""
    success, error = traces.get("last_success"), traces.get("last_error")
    return {
        "state": None,
        "last_success": success if isinstance(success, str) else None,
        "last_error": {k: v for k, v in error.items() if isinstance(v, (str, int))}
        if isinstance(error, dict)
        else None,
    }


# live mode sends spans only (the collector derives rate and latency metrics from them)
METRICS_LIVE: NotSentSignal = {
    "state": "not_sent",
    "reason": "live mode sends spans only; telemetry export --otlp sends the metrics",
}


class Flusher:
    def __init__(self, otel_dir: Path) -> None:
        self.dir = otel_dir
        self.sender: Sender | None = None
        self.resource: dict[str, str] | None = None
        self.withholder: Withholder | None = None  # on the first batch
        # status.json's traces entry, carried over from the flusher before (last success, last error)
        self.traces = _previous_traces(otel_dir)
        # the retry state of one run(): since when the collector refuses, and the current pause
        self.failing_since: float | None = None
        self.pause = 0.5

    def _connect(self) -> None:

        if self.sender is None:
            self.sender = Sender(resolve_endpoints(None, os.environ), None)
        if self.resource is None:
            attrs = resource_attributes(os.environ, repository=repository_id(self.dir, self._roots))
            self.resource = self._withholder().resource(attrs)

    def _withholder(self) -> Withholder:

        if self.withholder is None:
            self.withholder = Withholder(load_key(self.dir))
        return self.withholder

    def _roots(self) -> list[str]:

        try:  # the otel dir is <common dir>/workgroup/otel: discovery from the common dir works
            return root_commit_ids(discover(self.dir.parent.parent))
        except ToolkitError:  # no repository any more: export without the id
            return []

    def send(self, batch: Path) -> Delivery | None:
        """Send one batch; the ``sdk.Delivery`` of its spans, or None when it held none to send."""
        spans = spans_of(batch)
        delivery = None
        if spans:
            self._connect()
            assert self.sender is not None and self.resource is not None
            spans = self._withholder().spans(spans)  # every string passes the telemetry context
            delivery = self.sender.send_spans(spans, self.resource)
            if not delivery.ok:
                return delivery
        batch.unlink()
        return delivery

    def report(
        self, code: str | None = None, reason: str | None = None, delivery: Delivery | None = None
    ) -> None:
        """Write status.json after a delivery attempt: ``ok`` once nothing is left to deliver and the
        last attempt succeeded; otherwise the code and a message that names the signal and why."""
        pending = len(self.pending())
        traces = self.traces
        if delivery is not None:
            traces["endpoint"] = delivery.endpoint
        if code is None:
            traces["state"] = "ok"
            traces["last_success"] = _stamp()
        else:
            traces["state"] = "failed"
            error: LastError = {"code": code, "reason": reason or "not accepted", "at": _stamp()}
            if delivery is not None:
                error["attempts"], error["http_status"] = delivery.attempts, delivery.http_status
            traces["last_error"] = error
        traces["pending_batches"] = pending
        values: FlusherStatus = {
            "ok": code is None and pending == 0,
            "pending": pending,
            "withheld": self._withheld(),
            "signals": {"traces": traces.copy(), "metrics": METRICS_LIVE},
            "at": _stamp(),
        }
        if code is not None:
            where = delivery.describe() if delivery is not None else f"traces: {reason or code}"
            values["error"] = code
            kept = f"{pending} batch{'' if pending == 1 else 'es'} kept for retry"
            values["message"] = f"{code}: {where}; {kept}"
        _status(self.dir, values)

    def _withheld(self) -> int:
        """Values this flusher replaced by a pseudonym so far (status.json ``withheld``)."""
        return 0 if self.withholder is None else self.withholder.count

    def pending(self) -> list[Path]:
        return sorted(self.dir.glob("batch-*.jsonl"))

    def run(self) -> int:
        delay = _env_seconds("OTEL_BSP_SCHEDULE_DELAY", 1.0)
        give_up = _env_seconds("OTEL_BSP_EXPORT_TIMEOUT", GIVE_UP_SECONDS)
        idle_since = time.monotonic()
        self.failing_since, self.pause = None, 0.5
        while True:
            time.sleep(delay if self.failing_since is None else self.pause)
            rotate(self.dir)
            batches = self.pending()
            if not batches:
                if time.monotonic() - idle_since > IDLE_SECONDS:
                    return 0
                continue
            idle_since = time.monotonic()
            code = self._send_pending(batches, give_up)
            if code is not None:
                return code

    def _send_pending(self, batches: list[Path], give_up: float) -> int | None:
        """Send the spooled batches in order. An exit code when the flusher stops (a batch that
        cannot be sent, a collector refusing for longer than ``give_up``); None to go on: all
        sent (the retry state cleared) or a refused delivery (retried after a doubled pause)."""
        for batch in batches:
            try:
                delivery = self.send(batch)
            except (ToolkitError, ImportError, OSError, ValueError) as exc:
                return self._hold_after_error(exc, give_up)
            if delivery is not None and not delivery.ok:
                self.failing_since = self.failing_since or time.monotonic()
                self.report("COLLECTOR_UNAVAILABLE", delivery.reason, delivery)
                if time.monotonic() - self.failing_since > give_up:
                    return 1  # the spool stays; the next spooled record starts a new flusher
                self.pause = min(self.pause * 2, MAX_PAUSE)
                return None
            if delivery is not None or self.failing_since is not None:
                self.report(delivery=delivery)  # after every delivery: a recovery clears the error
        self.failing_since, self.pause = None, 0.5
        return None

    def _hold_after_error(self, exc: Exception, give_up: float) -> int:
        """A batch that cannot be sent (a missing extra, a bad endpoint or resource variable):
        report it, keep the spool, and keep the lock a while so the calls meanwhile do not start
        a flusher each; exit code 1."""
        if isinstance(exc, ToolkitError):
            code, reason = exc.code, exc.message
        else:
            code, reason = type(exc).__name__, "the batch could not be read or mapped"
        self.report(code, reason)
        time.sleep(min(give_up, HOLD_ON_ERROR))
        return 1


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        return 2
    otel_dir = Path(args[0])
    fd = os.open(otel_dir / FLUSHER_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return 0  # another flusher runs
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # who holds the lock (tests wait for it)
    flusher = Flusher(otel_dir)
    while True:
        code = flusher.run()
        fcntl.flock(fd, fcntl.LOCK_UN)
        # a record spooled while we were leaving saw the lock held and started nobody: look again
        spool = otel_dir / SPOOL
        if code != 0 or not spool.exists() or spool.stat().st_size == 0:
            break
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            break  # a new flusher took over
    if flusher.sender is not None:
        flusher.sender.close()
    os.close(fd)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
