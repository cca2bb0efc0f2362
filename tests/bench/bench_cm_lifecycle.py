"""Cost of the run-lifecycle checks of ``cm-log-event`` on a large authoritative log.

Run on purpose (not collected by pytest):

    .venv/bin/python tests/bench/bench_cm_lifecycle.py [--rows 100000] [--runs 5]

Writes a project log of ``--rows`` rows spread over 100 runs (resource acquire/release pairs, QA
invocations with cases, progress rows), then times, each over ``--runs`` fresh processes:

* ``run_done`` (a guarded event: the run's resources and QA invocations are replayed);
* ``progress`` (not guarded: only the dedup scan), the baseline for the same log;
* ``lifecycle.replay`` alone, in-process, for the run with the most rows.

Prints the median wall time of each and the size of the log.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolkit.cm import lifecycle

RUNS = 100


def build_log(path: Path, rows: int) -> str:
    """Rows for RUNS runs; every run ends closed, so a completion is allowed for each."""
    lines: list[str] = []
    per_run = max(8, rows // RUNS)
    for r in range(RUNS):
        run = f"bench-run-{r:04d}"
        n = 0
        while n < per_run:
            rid = f"res-{n}"
            base = {
                "schema_version": 1,
                "run_id": run,
                "workflow": "cm-ai",
                "runtime": "codex",
                "detail": "d",
            }
            lines.append(json.dumps({**base, "event": "resource", "phase": "acquired", "resource_id": rid,
                                     "resource_kind": "process", "cleanup_required": True}))  # fmt: skip
            lines.append(json.dumps({**base, "event": "test_run", "phase": "start"}))
            lines.append(json.dumps({**base, "event": "test_run", "phase": "case_start", "case_id": "TC-1"}))
            lines.append(json.dumps({**base, "event": "test_run", "phase": "case_complete", "case_id": "TC-1",
                                     "result": "PASS"}))  # fmt: skip
            lines.append(json.dumps({**base, "event": "test_run", "phase": "complete", "result": "PASS"}))
            lines.append(json.dumps({**base, "event": "progress", "phase": "execute", "step": n}))
            lines.append(json.dumps({**base, "event": "progress", "phase": "execute", "step": n + 1}))
            lines.append(json.dumps({**base, "event": "resource", "phase": "released", "resource_id": rid,
                                     "resource_kind": "process"}))  # fmt: skip
            n += 8
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"bench-run-{RUNS - 1:04d}"


def time_event(specs: Path, run_id: str, event: str, runs: int, home: Path) -> float:
    env = {**os.environ, "CM_WORKFLOW_LOG_HOME": str(home)}
    code = "import sys; from toolkit.cm.events import main; raise SystemExit(main(sys.argv[1:]))"
    times = []
    for i in range(runs):
        argv = ["--workflow", "cm-ai", "--event", event, "--runtime", "codex", "--detail", f"bench {i}"]
        argv += ["--specs-dir", str(specs), "--run-id", run_id]
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        if proc.returncode != 0:
            raise SystemExit(f"{event} failed: {proc.stderr.decode()}")
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-cm-lifecycle-") as tmp:
        specs = Path(tmp) / "specs"
        specs.mkdir()
        log = specs / "运行日志.jsonl"
        run_id = build_log(log, args.rows)
        size = log.stat().st_size
        with open(log, "rb") as handle:
            raw = handle.readlines()
        started = time.perf_counter()
        state = lifecycle.replay(raw, run_id, "no-such-event")
        replay_s = time.perf_counter() - started
        assert not state.resources.unclosed() and not state.invocations.blockers()
        # each timed write appends one row; distinct details keep them distinct events
        progress = time_event(specs, run_id, "progress", args.runs, Path(tmp) / "logs")
        guarded = time_event(specs, run_id, "task_done", args.runs, Path(tmp) / "logs")
    print(f"log: {len(raw)} rows over {RUNS} runs, {size / 1024 / 1024:.1f} MiB")
    print(f"lifecycle.replay, one run, in-process: {replay_s * 1000:.1f} ms")
    print(f"cm-log-event progress (dedup scan only), median of {args.runs}: {progress * 1000:.0f} ms")
    print(f"cm-log-event task_done (dedup scan + replay), median of {args.runs}: {guarded * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
