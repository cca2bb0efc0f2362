"""Benchmark the decision runtime's start-up and throughput (run on purpose, prints figures).

    .venv/bin/python tests/bench/bench_runtime.py [--workgroup PATH] [--reference PATH]
        [--calls N] [--batch-lines N]

* per-call wall and CPU time of ``workgroup runtime route`` as a subprocess (the console script
  given by ``--workgroup``, default ``.venv/bin/workgroup``; time a regular, non-editable install
  for the figure users see), side by side with ``node`` running the reference runtime on the same
  requests when a copy is given (``--reference`` or ``KNOWZCODE_RUNTIME``: the path of
  ``context_efficiency_runtime.mjs`` with its ``contracts/*.schema.json`` beside it). The two
  alternate call by call; the last line is the ratio of the medians (ours / reference);
* ``--batch`` throughput: route decisions per second in one process;
* ``python -X importtime`` of the console script itself: the modules the runtime path imports.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests/ folder
from support.lineage_fixtures import HOT_NOW, hot_current, hot_lineage  # noqa: E402  (one lineage fixture)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_WORKGROUP = ROOT / ".venv" / "bin" / "workgroup"
HEAVY = ("typer", "click", "pydantic", "pygit2", "yaml", "rich")
# standard-library modules the lean runtime path keeps out (tests/cli/test_startup.py checks them too)
AVOIDED = ("pathlib", "dataclasses", "inspect", "typing", "urllib", "datetime")

REQUESTS: dict[str, dict[str, Any]] = {
    "trivial": {"input": {"trivial": True}},
    "reviewer": {"input": {"role": "reviewer", "independent_reviewer": True}},
    "writer-conflict": {
        "input": {
            "role": "builder",
            "owned_files": ["src/api.py"],
            "active_writers": [{"lineage_id": "other", "owned_files": ["src"]}],
        }
    },
    "inherit": {
        "input": {
            "role": "analyst",
            "coupling": "moderate",
            "inheritance": {"affinity": "high", "safe": True, "within_budget": True, "full_supported": True},
        }
    },
    "team-fallback": {
        "input": {"team": {"coordination_required": True, "peers": 3, "provider_supported": False}}
    },
}

LINEAGE_REQUEST: dict[str, Any] = {"lineage": hot_lineage(), "current": hot_current(), "now": HOT_NOW}


def _run(command: list[str], payload: bytes, cwd: Path) -> tuple[float, float, str]:
    """(wall ms, child CPU ms, stdout) of one call. CPU time is far less sensitive to a busy machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, input=payload, capture_output=True, cwd=cwd, check=False)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    return wall, cpu, proc.stdout.decode("utf-8").strip()


def _answer(line: str) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return line


def _summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[max(0, int(round(0.9 * len(ordered))) - 1)]
    return f"median {statistics.median(ordered):6.1f}  p90 {p90:6.1f}  min {ordered[0]:6.1f}"


def per_call(workgroup: Path, reference: Path | None, calls: int, cwd: Path) -> None:
    node = shutil.which("node")
    compare = reference is not None and node is not None
    print(
        f"per-call time in ms, {calls} calls per request (subprocess, stdin -> one JSON line)"
        + ("; ours and the reference alternate call by call" if compare else "")
    )
    ours_all: dict[str, list[float]] = {"wall": [], "cpu": []}
    theirs_all: dict[str, list[float]] = {"wall": [], "cpu": []}
    for name, request in REQUESTS.items():
        payload = json.dumps(request).encode("utf-8")
        ours: dict[str, list[float]] = {"wall": [], "cpu": []}
        theirs: dict[str, list[float]] = {"wall": [], "cpu": []}
        differing: list[tuple[str, str]] = []
        for _ in range(calls):
            wall, cpu, our_line = _run([str(workgroup), "runtime", "route"], payload, cwd)
            ours["wall"].append(wall)
            ours["cpu"].append(cpu)
            if compare:
                wall, cpu, their_line = _run([str(node), str(reference), "route"], payload, cwd)
                theirs["wall"].append(wall)
                theirs["cpu"].append(cpu)
                if _answer(our_line) != _answer(their_line):
                    differing.append((our_line, their_line))
        print(f"  {name:16s} workgroup  wall {_summary(ours['wall'])} | cpu {_summary(ours['cpu'])}")
        for kind in ("wall", "cpu"):
            ours_all[kind] += ours[kind]
            theirs_all[kind] += theirs[kind]
        if compare:
            print(
                f"  {'':16s} reference  wall {_summary(theirs['wall'])} | cpu {_summary(theirs['cpu'])}"
                f"  different answers: {len(differing)}/{calls}"
            )
            for our_line, their_line in differing[:1]:
                print(f"    e.g. workgroup {our_line[:100]!r} / reference {their_line[:100]!r}")
    if compare:
        medians = {
            kind: (statistics.median(ours_all[kind]), statistics.median(theirs_all[kind]))
            for kind in ("wall", "cpu")
        }
        for kind, (mine, ref) in medians.items():
            print(f"  all requests: median {kind} per call workgroup {mine:.1f} ms, reference {ref:.1f} ms")
        wall_ratio = medians["wall"][0] / medians["wall"][1]
        cpu_ratio = medians["cpu"][0] / medians["cpu"][1]
        print(
            f"ratio (workgroup / reference, median per call): wall {wall_ratio:.2f}, cpu {cpu_ratio:.2f}"
            f"  ({len(ours_all['wall'])} calls each)"
        )
    else:
        print("  (no reference copy given: pass --reference or set KNOWZCODE_RUNTIME)")


def _batch_rate(workgroup: Path, op: str, requests: list[dict[str, Any]], lines: int, cwd: Path) -> str:
    body = "".join(json.dumps(requests[i % len(requests)]) + "\n" for i in range(lines)).encode("utf-8")
    wall, cpu, out = _run([str(workgroup), "runtime", "--batch", op], body, cwd)
    answered = out.count("\n") + 1 if out else 0
    per_wall, per_cpu = answered / (wall / 1000), answered / (cpu / 1000)
    return f"{per_wall:10,.0f} decisions/s wall, {per_cpu:10,.0f} decisions/s of CPU"


def batch_throughput(workgroup: Path, lines: int, cwd: Path) -> None:
    print(f"--batch, {lines} requests per run (one process, start-up included)")
    print(f"  route {'mixed':16s}{_batch_rate(workgroup, 'route', list(REQUESTS.values()), lines, cwd)}")
    for name, request in REQUESTS.items():
        print(f"  route {name:16s}{_batch_rate(workgroup, 'route', [request], lines, cwd)}")
    # the protocol alone (parse, dispatch to the op, one answer line) and the lineage evaluation
    question = {"question": "Which spec covers the token refresh?"}
    print(f"  {'should-deep-query':22s}{_batch_rate(workgroup, 'should-deep-query', [question], lines, cwd)}")
    print(f"  {'lineage':22s}{_batch_rate(workgroup, 'lineage', [LINEAGE_REQUEST], lines, cwd)}")


def _interpreter(script: Path) -> str:
    """The Python a console script runs under (its ``#!`` line), else this one."""
    first = script.read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace")
    return first[2:].strip() if first.startswith("#!") and "python" in first else sys.executable


def import_check(workgroup: Path, cwd: Path) -> None:
    proc = subprocess.run(
        [_interpreter(workgroup), "-X", "importtime", str(workgroup), "runtime", "route"],
        input=json.dumps(REQUESTS["writer-conflict"]).encode(),
        capture_output=True,
        cwd=cwd,
        check=False,
    )
    modules = []
    total_us = 0
    for line in proc.stderr.decode("utf-8", "replace").splitlines():
        if not line.startswith("import time:") or "|" not in line or "cumulative" in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:") :].split("|"))
        modules.append(name.strip())
        if not name.startswith(" "):
            total_us += int(cumulative)
    tops = {m.split(".")[0] for m in modules}
    heavy = sorted(tops & set(HEAVY))
    avoided = sorted(tops & set(AVOIDED))
    toolkit_modules = sorted(m for m in modules if m.startswith("toolkit"))
    print(
        f"python -X importtime {workgroup.name} runtime route: {len(modules)} modules, "
        f"{total_us / 1000:.1f} ms of imports; heavy modules imported: {heavy or 'none'}; "
        f"avoidable standard modules imported: {avoided or 'none'}"
    )
    print(f"  toolkit modules on the path: {', '.join(toolkit_modules)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reference",
        default=os.environ.get("KNOWZCODE_RUNTIME"),
        help="path of the reference context_efficiency_runtime.mjs (contracts/ beside it)",
    )
    parser.add_argument(
        "--workgroup",
        type=Path,
        default=DEFAULT_WORKGROUP,
        help="the workgroup console script to time (default: .venv/bin/workgroup)",
    )
    parser.add_argument("--calls", type=int, default=20, help="calls per request and runtime")
    parser.add_argument("--batch-lines", type=int, default=20_000)
    args = parser.parse_args(argv)
    reference = Path(args.reference) if args.reference else None
    workgroup: Path = args.workgroup
    if not workgroup.exists():
        print(f"missing console script {workgroup}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        per_call(workgroup, reference, args.calls, cwd)
        if args.batch_lines:
            batch_throughput(workgroup, args.batch_lines, cwd)
        import_check(workgroup, cwd)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
