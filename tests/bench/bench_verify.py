"""Benchmark `workgroup verify`. Run on purpose:

    .venv/bin/python tests/bench/bench_verify.py

Builds a repository with 5,000 commits (pygit2 ``create_commit`` in a loop over one tiny tree)
and 1,000 sealed capsules bound to commits spread over that history, then times ``verify`` in
process and as the ``workgroup verify`` command. Smaller shapes show how the cost scales: with
one shared walk it grows with history + records, not history x records. Target: under 2 s.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pygit2

from toolkit.infra.git import discover
from toolkit.records.verify import verify
from toolkit.runtime.capsule import prepare_capsule

SIG = pygit2.Signature("bench", "bench@example.invalid", 1_700_000_000, 0)


def build(root: Path, commits: int, capsules: int) -> Path:
    raw = pygit2.init_repository(str(root), bare=False, initial_head="main")
    blob = raw.create_blob(b"bench\n")
    builder = raw.TreeBuilder()
    builder.insert("README.md", blob, pygit2.GIT_FILEMODE_BLOB)
    tree = builder.write()
    parents: list[Any] = []
    shas: list[str] = []
    for i in range(commits):
        oid = raw.create_commit(None, SIG, SIG, f"commit {i}", tree, parents)
        parents = [oid]
        shas.append(str(oid))
    raw.create_reference("refs/heads/main", parents[0], force=True)
    raw.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)  # type: ignore[no-untyped-call]
    for i in range(capsules):
        wg = f"wg-{i % 20:02d}"
        capsule = {
            "schema": "knowzcode.context-capsule/v1",
            "task_id": f"task-{i:04d}",
            "workgroup_id": wg,
            "phase": "2A",
            "objective": f"Implement step {i} of the feature without widening the API.",
            "node_ids": ["Feature"],
            "owned_files": [f"src/mod{i % 50}.py"],
            "read_files": ["README.md"],
            "specs": [{"path": "knowzcode/specs/Feature.md", "verify_ids": ["FEAT-01"]}],
            "approved_decisions": ["Keep the public API."],
            "checkpoint_sha": shas[(i * 4999) // max(capsules - 1, 1) % commits],
            "failures": [],
            "risks": ["Regressions in callers."],
            "constraints": ["TDD."],
            "next_action": "Write the failing test.",
            "evidence": [],
            "artifact_refs": [],
        }
        sealed = prepare_capsule(capsule).capsule
        path = root / ".workgroup" / "workgroups" / wg / "capsules" / f"task-{i:04d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(sealed, indent=2))
    return root


def time_in_process(root: Path, repeat: int = 3) -> tuple[float, float, bool]:
    """Median wall and CPU seconds of ``verify()`` (CPU time is what a busy machine cannot inflate)."""
    walls, cpus = [], []
    ok = False
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        report = verify(discover(root))
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        ok = report.ok
    return statistics.median(walls), statistics.median(cpus), ok


def time_command(root: Path, repeat: int = 3) -> tuple[float, float, int]:
    """Median wall and CPU (user + system of the child) seconds of ``workgroup verify --json``."""
    walls, cpus = [], []
    code = -1
    for _ in range(repeat):
        before = os.times()
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "toolkit", "verify", "--json"],
            cwd=root,
            capture_output=True,
            check=False,
            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
        )
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append(
            (after.children_user - before.children_user) + (after.children_system - before.children_system)
        )
        code = proc.returncode
    return statistics.median(walls), statistics.median(cpus), code


def main() -> int:
    print(
        f"workgroup verify benchmark (median of 3 runs; load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs)"
    )
    print(
        f"{'commits':>8} {'capsules':>9} {'core wall':>10} {'core cpu':>9} "
        f"{'cmd wall':>9} {'cmd cpu':>8}  result"
    )
    failed = False
    for commits, capsules in ((5000, 100), (500, 1000), (5000, 1000)):
        with tempfile.TemporaryDirectory() as tmp:
            root = build(Path(tmp) / "repo", commits, capsules)
            core, core_cpu, ok = time_in_process(root)
            cmd, cmd_cpu, code = time_command(root)
            status = "ok" if ok and code == 0 else "FAILED"
            print(
                f"{commits:>8} {capsules:>9} {core:>9.3f}s {core_cpu:>8.3f}s "
                f"{cmd:>8.3f}s {cmd_cpu:>7.3f}s  {status}"
            )
            failed |= not ok or code != 0
            if (commits, capsules) == (5000, 1000):
                verdict = "meets" if cmd < 2.0 else "misses"
                print(
                    f"target: `workgroup verify` on 5,000 commits + 1,000 capsules < 2 s wall -> {verdict} "
                    f"({cmd:.3f} s wall, {cmd_cpu:.3f} s CPU)"
                )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
