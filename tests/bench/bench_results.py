"""Benchmarks for results, the vault journal, probes, budgets and verification tiers. Run on purpose:

    .venv/bin/python tests/bench/bench_results.py

Prints: in-process decision cost of the result-policy, vault-delta (against 0 and 500 prior
deltas), budget and verification-plan ops; `workgroup runtime result-policy` wall time per
process; `vault add` cost against a journal of 0 / 1,000 entries; a 64 MiB raw-output artifact
store; `probe check` cost in process.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolkit.infra.clock import now_utc
from toolkit.infra.store import Layout
from toolkit.records.probes import check, record
from toolkit.records.results import StoreRequest, decision_from_policy, store_result
from toolkit.records.vault import add_delta
from toolkit.runtime.protocol import RuntimeContext, execute


def per_call(fn: Callable[[], Any], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} us"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def delta(i: int) -> dict[str, Any]:
    return {
        "category": "pattern",
        "title": f"Note {i}",
        "content": f"Fact number {i} about retries.",
        "semantic_key": f"note-{i}",
        "KnowledgeId": f"K-{i}",
    }


def bench_ops() -> None:
    ctx = RuntimeContext()
    prior = [delta(i) for i in range(500)]
    cases: dict[str, tuple[str, dict[str, Any]]] = {
        "result-policy": ("result-policy", {"input": {"material": True, "large_raw_output": True}}),
        "vault-delta (0 prior)": ("vault-delta", {"input": {"delta": delta(10_000)}}),
        "vault-delta (500 prior)": (
            "vault-delta",
            {"input": {"delta": delta(10_000), "previous_deltas": prior}},
        ),
        "budget": ("budget", {"used": 91, "limit": 100}),
        "verification-plan": (
            "verification-plan",
            {"tier": "audit-fix", "production_changed_after_full_green": True},
        ),
    }
    for label, (op, request) in cases.items():
        assert execute(op, request, ctx)["ok"]
        n = 200 if "500" in label else 20_000
        cost = per_call(lambda op=op, request=request: execute(op, request, ctx), n)  # type: ignore[misc]
        print(f"  {label:<28} {us(cost)} per decision")


def bench_process() -> None:
    runs = []
    for _ in range(10):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "toolkit", "runtime", "result-policy"],
            input=b'{"input":{"material":true}}',
            capture_output=True,
            check=True,
        )
        runs.append(time.perf_counter() - start)
    print(f"  workgroup runtime result-policy: median {ms(statistics.median(runs))} per process (10 runs)")


def bench_journal(root: Path) -> None:
    lay = Layout(root, root / ".git")
    now = now_utc()
    first = per_call(lambda: add_delta(lay, {"delta": delta(-1)}, now=now), 1)
    print(f"  vault add, empty journal:       {ms(first)}")
    for i in range(1000):
        add_delta(lay, {"delta": delta(i)}, now=now)
    counter = iter(range(20_000, 30_000))
    cost = per_call(lambda: add_delta(lay, {"delta": delta(next(counter))}, now=now), 10)
    print(f"  vault add, 1,000-entry journal: {ms(cost)} per add (read, decide, locked append)")


def bench_store(root: Path) -> None:
    lay = Layout(root, root / ".git")
    raw = root.parent / "raw.log"
    raw.write_bytes(os.urandom(64 * 1024 * 1024))
    request = StoreRequest(
        decision=decision_from_policy(
            {
                "mode": "artifact",
                "write_prohibited": False,
                "writes": {
                    "handoff": True,
                    "artifact": True,
                    "vault": False,
                    "settings": False,
                    "workgroup": False,
                },
            }
        ),
        summary="3 failed\n",
        workgroup_id="wg",
        task_id="t",
        raw_path=raw,
    )
    start = time.perf_counter()
    store_result(lay, request)
    took = time.perf_counter() - start
    print(f"  result store, 64 MiB raw output: {ms(took)} ({64 / took:,.0f} MiB/s, hashed while copied)")


def bench_probe(root: Path) -> None:
    lay = Layout(root, root / ".git")
    now = now_utc()
    for i in range(50):
        record(lay, f"server-{i}", healthy=True, phase="1A", now=now)
    cost = per_call(lambda: check(lay, "server-7", phase="2A", now=now, ttl_minutes=15), 2000)
    print(f"  probe check (50 cached probes): {us(cost)} per check")


def main() -> None:
    print("decisions (in process):")
    bench_ops()
    print("start-up:")
    bench_process()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        (root / ".git").mkdir(parents=True)
        print("local state:")
        bench_journal(root)
        bench_probe(root)
        bench_store(root)


if __name__ == "__main__":
    main()
