"""Benchmark what live OTLP mode (``telemetry: otlp``) adds to the runtime path (prints figures).

    .venv/bin/python tests/bench/bench_otel_live.py [--calls N] [--processes N]

Two throwaway repositories, one with ``telemetry: local`` and one with ``telemetry: otlp``, and a
loopback OTLP/HTTP receiver (tests/support/otlp_receiver.py) for the flusher to send to:

* in-process: ``execute("route", ...)`` per call, with the live target looked up afresh on every
  call (as a single ``workgroup runtime`` process does) and cached (as ``--batch`` does);
* as processes: median wall time of ``workgroup runtime route`` in each repository;
* the spans the receiver got, so the figures are for calls that really were exported.

The target of issue 18: live mode adds less than 5 ms per call.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests/ folder
from support.otlp_receiver import receiving  # noqa: E402
from support.sync import wait_for_unlock  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REQUEST = {"input": {"role": "reviewer", "independent_reviewer": True}}


def make_repo(base: Path, name: str, mode: str) -> Path:
    import pygit2

    path = base / name
    (path / ".workgroup").mkdir(parents=True)
    (path / ".workgroup" / "config.yml").write_text(f"context_efficiency:\n  telemetry: {mode}\n")
    repo = pygit2.init_repository(str(path), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature("bench", "bench@example.invalid", 1_700_000_000, 0)
    repo.create_commit("HEAD", sig, sig, "init", repo.index.write_tree(), [])
    return path


def in_process(repo: Path, calls: int, fresh: bool) -> list[float]:
    from toolkit.entry import observe_decision
    from toolkit.infra import livespool
    from toolkit.runtime.protocol import RuntimeContext, execute

    ctx = RuntimeContext(cwd=str(repo), observer=observe_decision)  # as `workgroup runtime` sets it
    times = []
    for _ in range(calls):
        if fresh:
            livespool.forget_targets()
        started = time.perf_counter()
        frame = execute("route", dict(REQUEST), ctx)
        times.append((time.perf_counter() - started) * 1000)
        assert frame["ok"], frame
    return times


def processes(repos: list[Path], count: int, env: dict[str, str]) -> list[list[float]]:
    """Wall times per repository, the repositories alternating call by call (load drifts evenly)."""
    times: list[list[float]] = [[] for _ in repos]
    body = json.dumps(REQUEST).encode()
    for _ in range(count):
        for index, repo in enumerate(repos):
            started = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "toolkit", "runtime", "route"],
                input=body,
                cwd=repo,
                env=env,
                capture_output=True,
                check=True,
            )
            times[index].append((time.perf_counter() - started) * 1000)
            assert proc.stdout.startswith(b'{"ok":true')
    return times


def describe(label: str, times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return (
        f"{label:<52} median {statistics.median(times):8.3f}   mean {statistics.mean(times):8.3f}"
        f"   p95 {p95:8.3f}   max {ordered[-1]:8.3f} ms"
    )


def wait_idle(otel_dir: Path, timeout: float = 30.0) -> None:
    wait_for_unlock(otel_dir / "flusher.lock", timeout)  # the detached flusher is done


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--processes", type=int, default=40)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, receiving() as rx:
        base = Path(tmp)
        local, otlp = make_repo(base, "local", "local"), make_repo(base, "otlp", "otlp")
        os.environ.update(OTEL_EXPORTER_OTLP_ENDPOINT=rx.url, OTEL_BSP_SCHEDULE_DELAY="200")
        env = dict(os.environ)
        print(
            f"python {sys.version.split()[0]}, {ns.calls} in-process calls, {ns.processes} processes per mode"
        )
        rows = {}
        for fresh in (True, False):
            how = "target looked up per call" if fresh else "target cached (--batch)"
            in_process(local, 50, fresh)  # warm imports and caches
            rows[("local", fresh)] = in_process(local, ns.calls, fresh)
            rows[("otlp", fresh)] = in_process(otlp, ns.calls, fresh)
            print(describe(f"in-process, telemetry: local, {how}", rows[("local", fresh)]))
            print(describe(f"in-process, telemetry: otlp,  {how}", rows[("otlp", fresh)]))
            added = statistics.mean(rows[("otlp", fresh)]) - statistics.mean(rows[("local", fresh)])
            print(f"{'':<52} added by live mode: {added:.3f} ms per call (mean)")
        wait_idle(otlp / ".git" / "workgroup" / "otel")
        proc_local, proc_otlp = processes([local, otlp], ns.processes, env)
        print(describe("process, telemetry: local", proc_local))
        print(describe("process, telemetry: otlp", proc_otlp))
        added = statistics.median(proc_otlp) - statistics.median(proc_local)
        print(f"{'':<52} added by live mode: {added:.3f} ms per call (median)")
        wait_idle(otlp / ".git" / "workgroup" / "otel")
        expected = 2 * ns.calls + ns.processes
        spans = rx.wait_for_spans(expected, timeout=60)
        print(f"spans received by the loopback collector: {len(spans)} of {expected}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
