"""Benchmark ``workgroup telemetry export --otlp`` over a large local log (prints figures).

    .venv/bin/python tests/bench/bench_otel_export.py [--events N] [--calls N]

Writes N normalized efficiency events to a throwaway repository's telemetry log and N completed
CM model calls to a throwaway CM log home, then runs the export in-process twice against a
loopback OTLP/HTTP receiver (tests/support/otlp_receiver.py): once mapping only (``--dry-run``), once
sending. Prints records per second, the peak memory, and what the receiver decoded.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests/ folder
from support.otlp_receiver import receiving  # noqa: E402


def write_records(root: Path, home: Path, events: int, calls: int) -> None:
    from toolkit.runtime.telemetry import normalize_event

    local = root / ".git" / "workgroup"
    local.mkdir(parents=True)
    start = datetime(2026, 7, 1, tzinfo=UTC)
    with open(local / "telemetry.jsonl", "w", encoding="utf-8") as log:
        for n in range(events):
            raw = {
                "event": "worker_usage",
                "observed_at": (start + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "provider": "claude",
                "model": "sonnet",
                "billed": {
                    "uncached_input_tokens": n % 977,
                    "output_tokens": n % 101,
                    "accounting_source": "authoritative",
                },
            }
            event, _ = normalize_event(raw)
            log.write(json.dumps(event, separators=(",", ":")) + "\n")
    run_id = "run-20260701-bench"
    (home / "runs" / "2026-07").mkdir(parents=True)
    with open(home / "runs" / "2026-07" / f"{run_id}.jsonl", "w", encoding="utf-8") as log:
        for n in range(calls):
            row = {
                "schema_version": 1,
                "run_id": run_id,
                "event_id": f"e-{n}",
                "workflow": "cm-ai",
                "event": "model_usage",
                "phase": "complete",
                "runtime": "codex",
                "at": (start + timedelta(seconds=n)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "call_id": f"c-{n}",
                "stage": "build",
                "role": "coder",
                "adapter": "manual",
                "requested_model": "gpt-5",
                "source": "api",
                "purpose": "cm-ai:build",
                "usage_state": "observed",
                "outcome": "success",
                "duration_ms": 100 + n % 900,
                "input_tokens": n % 5000,
                "output_tokens": n % 300,
            }
            log.write(json.dumps(row, separators=(",", ":")) + "\n")
    index = {
        "schema_version": 1,
        "run_id": run_id,
        "status": "running",
        "at": "2026-07-01T00:00:00Z",
        "project_path": str(root),
        "log_file": f"runs/2026-07/{run_id}.jsonl",
    }
    (home / "index.jsonl").write_text(json.dumps(index) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--calls", type=int, default=50_000)
    ns = parser.parse_args()
    from toolkit.otel.export import ExportRequest, export

    with tempfile.TemporaryDirectory() as tmp, receiving() as rx:
        root, home = Path(tmp) / "repo", Path(tmp) / "cm-home"
        root.mkdir()
        write_records(root, home, ns.events, ns.calls)
        total = ns.events + ns.calls
        print(f"python {sys.version.split()[0]}, {ns.events} efficiency events + {ns.calls} CM model calls")
        for dry in (True, False):
            request = ExportRequest(
                telemetry_log=root / ".git" / "workgroup" / "telemetry.jsonl",
                otel_dir=root / ".git" / "workgroup" / "otel",
                environ=os.environ,
                endpoint=rx.url,
                cm_home=home,
                workdir=root,
                dry_run=dry,
                timeout=60,
            )
            started, cpu = time.perf_counter(), time.process_time()
            summary = export(request, now=datetime.now(UTC), roots=lambda: ["0" * 40])
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
            label = "map only (--dry-run)" if dry else "map and send"
            print(
                f"{label:<22} {elapsed:7.2f} s wall, {cpu:6.2f} s CPU   {total / cpu:7.0f} records per CPU s"
                f"   spans {summary['spans']}"
                f"   metric points {summary['metric_points']}"
            )
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"peak RSS {peak:.0f} MiB; receiver decoded {len(rx.received.spans)} spans and"
            f" {len(rx.received.points)} metric points in {sum(rx.received.requests.values())} requests"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
