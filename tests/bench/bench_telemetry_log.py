"""Benchmark ``workgroup telemetry export --otlp --dry-run`` over local telemetry logs of growing size
(prints figures).

    .venv/bin/python tests/bench/bench_telemetry_log.py [--mib 10 50 100] [--segment-mib 16] [--send]

For each size, writes that many MiB of normalized efficiency events to a throwaway repository's
telemetry log, split into numbered segments of ``--segment-mib`` as ``telemetry record`` rotates
them (0: one file), and runs the real command in a child process: ``--dry-run``, or with
``--send`` a real export to a loopback OTLP/HTTP receiver in this process (tests/support/otlp_receiver.py).
Prints the wall time and the child's own peak resident memory (``os.wait4``), which should stay
flat as the log grows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

MIB = 1_048_576


def write_log(local: Path, size: int, segment: int) -> int:
    """Events up to ``size`` bytes, rotated every ``segment`` bytes (0: never); returns the count."""
    from toolkit.runtime.telemetry import normalize_event

    local.mkdir(parents=True, exist_ok=True)
    start = datetime(2026, 7, 1, tzinfo=UTC)
    written, count, number = 0, 0, 0
    current = 0
    out = open(local / "telemetry.jsonl", "wb")  # noqa: SIM115 - rotated below
    try:
        while written < size:
            raw = {
                "event": "worker_usage",
                "observed_at": (start + timedelta(seconds=count)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "provider": "claude",
                "model": "sonnet",
                "billed": {
                    "uncached_input_tokens": count % 977,
                    "output_tokens": count % 101,
                    "accounting_source": "authoritative",
                },
            }
            event, _ = normalize_event(raw)
            line = (json.dumps(event, separators=(",", ":")) + "\n").encode()
            if segment and current and current + len(line) > segment:
                out.close()
                number += 1
                os.rename(local / "telemetry.jsonl", local / f"telemetry.{number}.jsonl")
                out = open(local / "telemetry.jsonl", "wb")  # noqa: SIM115
                current = 0
            out.write(line)
            written += len(line)
            current += len(line)
            count += 1
    finally:
        out.close()
    return count


_CHILD = """
import json, os, resource, subprocess, sys, time
command = json.loads(sys.argv[1])
started = time.perf_counter()
proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out = proc.stdout.read()
err = proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps({"seconds": time.perf_counter() - started, "peak_kib": usage.ru_maxrss,
                  "status": os.waitstatus_to_exitcode(status), "out": out.decode(), "err": err.decode()}))
"""


def run(repo: Path, env: dict[str, str], endpoint: str | None) -> dict[str, object]:
    target = ["--dry-run"] if endpoint is None else [endpoint]
    command = [sys.executable, "-m", "toolkit", "telemetry", "export", "--otlp", "--json", *target]
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(command)],
        cwd=repo,
        env=env,
        capture_output=True,
        check=True,
    )
    figures: dict[str, object] = json.loads(result.stdout)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, nargs="+", default=[10, 50, 100])
    parser.add_argument("--segment-mib", type=int, default=16)
    parser.add_argument("--send", action="store_true", help="export to a loopback receiver")
    ns = parser.parse_args()
    mode = "sending to a loopback receiver" if ns.send else "--dry-run"
    print(f"python {sys.version.split()[0]}, {mode}, segments of {ns.segment_mib} MiB (0: one file)")
    with contextlib.ExitStack() as stack:
        endpoint = None
        if ns.send:
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests/ folder
            from support.otlp_receiver import receiving

            endpoint = stack.enter_context(receiving()).url
        for size in ns.mib:
            measure(size, ns.segment_mib, endpoint)
    return 0


def measure(size: int, segment_mib: int, endpoint: str | None) -> None:
    """One log of ``size`` MiB in a throwaway repository, exported by a child process."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        count = write_log(repo / ".git" / "workgroup", size * MIB, segment_mib * MIB)
        files = len(list((repo / ".git" / "workgroup").glob("telemetry*.jsonl")))
        env = {**os.environ, "CM_WORKFLOW_LOG_HOME": str(Path(tmp) / "cm-home")}
        figures = run(repo, env, endpoint)
        if figures["status"] == 0:
            summary = json.loads(str(figures["out"]))
            outcome = f"spans {summary['spans']}"
        else:
            outcome = f"exit {figures['status']}: {str(figures['err']).splitlines()[-1]}"
        print(
            f"{size:>5} MiB ({count} events, {files} files)   {float(str(figures['seconds'])):7.2f} s wall"
            f"   peak RSS {int(str(figures['peak_kib'])) / 1024:6.0f} MiB   {outcome}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
