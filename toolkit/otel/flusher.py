"""The detached flusher of live mode: ``python -m toolkit.otel.flusher OTEL_DIR``.

Started by ``toolkit.otel.live`` when a record is spooled and no flusher holds ``flusher.lock``.
It waits ``OTEL_BSP_SCHEDULE_DELAY`` milliseconds (default 1000) to gather a batch, renames the
spool to ``batch-<ns>.jsonl``, maps it to spans (``toolkit.otel.records``, through the privacy
engine) and sends them with the OTLP/HTTP exporter (endpoint and options from the
``OTEL_EXPORTER_OTLP_*`` variables it inherited). A batch file is deleted only after the collector
accepted it; on failure it stays and is retried with a growing pause. After ``IDLE_SECONDS``
without work, or after failing for ``OTEL_BSP_EXPORT_TIMEOUT`` milliseconds (default 30000), it
exits; the next spooled record starts a new flusher, which sends the batches left behind first.
``status.json`` says how the last attempt went and how many values this flusher withheld (every
string sent passes the telemetry context first; ``toolkit.otel.withhold``).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from toolkit.core.errors import ToolkitError
from toolkit.otel.live import FLUSHER_LOCK, SPOOL

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


def spans_of(batch: Path) -> list[Any]:
    """The spans of one batch file; unreadable or refused lines are dropped (never sent)."""
    from toolkit.otel.records import Skipped, cm_span, decision_span, efficiency_span

    skipped = Skipped()
    spans = []
    with open(batch, "rb") as handle:
        for raw in handle:
            try:
                record = json.loads(raw)
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


def _status(otel_dir: Path, **values: Any) -> None:
    from toolkit.infra.store import atomic_write

    values["at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        atomic_write(otel_dir / STATUS, (json.dumps(values, sort_keys=True) + "\n").encode())
    except OSError:
        pass


class Flusher:
    def __init__(self, otel_dir: Path) -> None:
        self.dir = otel_dir
        self.sender: Any = None
        self.resource: dict[str, str] | None = None
        self.withholder: Any = None  # toolkit.otel.withhold.Withholder, on the first batch

    def _connect(self) -> None:
        from toolkit.otel.resource import repository_id, resource_attributes
        from toolkit.otel.sdk import Sender, resolve_endpoints

        if self.sender is None:
            self.sender = Sender(resolve_endpoints(None, os.environ), None)
        if self.resource is None:
            attrs = resource_attributes(os.environ, repository=repository_id(self.dir, self._roots))
            self.resource = self._withholder().resource(attrs)

    def _withholder(self) -> Any:
        from toolkit.otel.withhold import Withholder, load_key

        if self.withholder is None:
            self.withholder = Withholder(load_key(self.dir))
        return self.withholder

    def _roots(self) -> list[str]:
        from toolkit.infra.git import discover, root_commit_ids

        try:  # the otel dir is <common dir>/workgroup/otel: discovery from the common dir works
            return root_commit_ids(discover(self.dir.parent.parent))
        except ToolkitError:  # no repository any more: export without the id
            return []

    def send(self, batch: Path) -> bool:
        spans = spans_of(batch)
        if spans:
            self._connect()
            assert self.resource is not None
            spans = self._withholder().spans(spans)  # every string passes the telemetry context
            if not self.sender.send_spans(spans, self.resource):
                return False
        batch.unlink()
        return True

    def _withheld(self) -> int:
        """Values this flusher replaced by a pseudonym so far (status.json ``withheld``)."""
        return 0 if self.withholder is None else int(self.withholder.count)

    def pending(self) -> list[Path]:
        return sorted(self.dir.glob("batch-*.jsonl"))

    def run(self) -> int:
        delay = _env_seconds("OTEL_BSP_SCHEDULE_DELAY", 1.0)
        give_up = _env_seconds("OTEL_BSP_EXPORT_TIMEOUT", GIVE_UP_SECONDS)
        idle_since = time.monotonic()
        failing_since: float | None = None
        pause = 0.5
        while True:
            time.sleep(delay if failing_since is None else pause)
            rotate(self.dir)
            batches = self.pending()
            if not batches:
                if time.monotonic() - idle_since > IDLE_SECONDS:
                    return 0
                continue
            idle_since = time.monotonic()
            for batch in batches:
                try:
                    ok = self.send(batch)
                except (ToolkitError, ImportError, OSError, ValueError) as exc:
                    # a missing extra, a bad endpoint or resource variable: keep the spool, and keep
                    # the lock a while, so the calls meanwhile do not start a flusher each
                    code = exc.code if isinstance(exc, ToolkitError) else type(exc).__name__
                    _status(self.dir, ok=False, error=code, pending=len(self.pending()))
                    time.sleep(min(give_up, HOLD_ON_ERROR))
                    return 1
                if not ok:
                    failing_since = failing_since or time.monotonic()
                    _status(
                        self.dir,
                        ok=False,
                        error="COLLECTOR_UNAVAILABLE",
                        pending=len(self.pending()),
                        withheld=self._withheld(),
                    )
                    if time.monotonic() - failing_since > give_up:
                        return 1  # the spool stays; the next spooled record starts a new flusher
                    pause = min(pause * 2, MAX_PAUSE)
                    break
            else:
                if failing_since is not None or not (self.dir / STATUS).exists() or self._withheld():
                    _status(self.dir, ok=True, pending=0, withheld=self._withheld())
                failing_since, pause = None, 0.5


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
