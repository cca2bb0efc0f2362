"""Benchmark the decision runtime's start-up and throughput (run on purpose, prints figures).

    .venv/bin/python tests/bench/bench_runtime.py [--reference PATH] [--calls N] [--batch-lines N]

* per-call wall time of ``workgroup runtime route`` as a subprocess (the console script in
  ``.venv/bin/workgroup``), side by side with ``node`` running the reference runtime on the same
  requests when a copy is given (``--reference`` or ``KNOWZCODE_RUNTIME``: the path of
  ``context_efficiency_runtime.mjs`` with its ``contracts/*.schema.json`` beside it);
* ``--batch`` throughput: route decisions per second in one process;
* ``python -X importtime``: the modules the runtime path imports (no typer, pydantic, pygit2).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
WORKGROUP = ROOT / ".venv" / "bin" / "workgroup"
HEAVY = ("typer", "click", "pydantic", "pygit2", "yaml", "rich")

REQUESTS: dict[str, dict[str, Any]] = {
    "trivial": {"input": {"trivial": True}},
    "reviewer": {"input": {"role": "reviewer", "independent_reviewer": True}},
    "writer-conflict": {"input": {"role": "builder", "owned_files": ["src/api.py"],
                                  "active_writers": [{"lineage_id": "other", "owned_files": ["src"]}]}},
    "inherit": {"input": {"role": "analyst", "coupling": "moderate",
                          "inheritance": {"affinity": "high", "safe": True, "within_budget": True,
                                          "full_supported": True}}},
    "team-fallback": {"input": {"team": {"coordination_required": True, "peers": 3, "provider_supported": False}}},
}


def _time_calls(command: list[str], payload: bytes, calls: int, cwd: Path) -> tuple[list[float], str]:
    samples = []
    output = ""
    for _ in range(calls):
        started = time.perf_counter()
        proc = subprocess.run(command, input=payload, capture_output=True, cwd=cwd, check=False)
        samples.append((time.perf_counter() - started) * 1000)
        output = proc.stdout.decode("utf-8").strip()
    return samples, output


def _summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[max(0, int(round(0.9 * len(ordered))) - 1)]
    return f"median {statistics.median(ordered):6.1f} ms  p90 {p90:6.1f} ms  min {ordered[0]:6.1f} ms"


def per_call(reference: Path | None, calls: int, cwd: Path) -> None:
    node = shutil.which("node")
    print(f"per-call wall time, {calls} calls per request (subprocess, stdin -> one JSON line)")
    for name, request in REQUESTS.items():
        payload = json.dumps(request).encode("utf-8")
        ours, our_line = _time_calls([str(WORKGROUP), "runtime", "route"], payload, calls, cwd)
        print(f"  {name:16s} workgroup: {_summary(ours)}")
        if reference is not None and node is not None:
            theirs, their_line = _time_calls([node, str(reference), "route"], payload, calls, cwd)
            same = json.loads(our_line) == json.loads(their_line)
            print(f"  {'':16s} reference: {_summary(theirs)}  same answer: {same}")
    if reference is None:
        print("  (no reference copy given: pass --reference or set KNOWZCODE_RUNTIME)")


def batch_throughput(lines: int, cwd: Path) -> None:
    requests = list(REQUESTS.values())
    body = "".join(json.dumps(requests[i % len(requests)]) + "\n" for i in range(lines)).encode("utf-8")
    started = time.perf_counter()
    proc = subprocess.run([str(WORKGROUP), "runtime", "--batch", "route"], input=body, capture_output=True,
                          cwd=cwd, check=False)
    elapsed = time.perf_counter() - started
    answered = proc.stdout.count(b"\n")
    print(f"--batch route: {answered} decisions in {elapsed:.2f} s = {answered / elapsed:,.0f} decisions/s "
          f"(exit {proc.returncode}, process start included)")


def import_check(cwd: Path) -> None:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "toolkit", "runtime", "route"],
                          input=json.dumps(REQUESTS["writer-conflict"]).encode(), capture_output=True, cwd=cwd,
                          check=False)
    modules = []
    total_us = 0
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("import time:") or "|" not in line or "cumulative" in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        modules.append(name.strip())
        if not name.startswith(" "):
            total_us += int(cumulative)
    heavy = sorted({m.split(".")[0] for m in modules} & set(HEAVY))
    toolkit_modules = sorted(m for m in modules if m.startswith("toolkit"))
    print(f"python -X importtime -m toolkit runtime route: {len(modules)} modules, "
          f"{total_us / 1000:.1f} ms of imports; heavy modules imported: {heavy or 'none'}")
    print(f"  toolkit modules on the path: {', '.join(toolkit_modules)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=os.environ.get("KNOWZCODE_RUNTIME"),
                        help="path of the reference context_efficiency_runtime.mjs (contracts/ beside it)")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--batch-lines", type=int, default=50_000)
    args = parser.parse_args(argv)
    reference = Path(args.reference) if args.reference else None
    if not WORKGROUP.exists():
        print(f"missing console script {WORKGROUP}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        per_call(reference, args.calls, cwd)
        batch_throughput(args.batch_lines, cwd)
        import_check(cwd)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
