"""Benchmarks for the CM boundary/packet area. Run on purpose:

    .venv/bin/python tests/bench/bench_boundary.py

Prints: decision throughput, packet validation time for a ~1 MiB packet, prefix digest time,
the import cost of the stdlib-only packet module, and `workgroup boundary` wall time per process.
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

from toolkit.cm.boundary import Event, Facts, Workflow, decide
from toolkit.cm.packet import STABLE_PREFIX_KEYS, prefix_digest, validate_adapter_input


def per_call(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def main() -> None:
    facts = Facts(Workflow.CM_AI, Event.RUN_DONE, declined=True, must_shrink=True, next_command="/cm-ai run")
    print(f"decide(): {per_call(lambda: decide(facts), 20000) * 1e6:.2f} us per decision")

    packet: dict[str, Any] = {
        "stable_prefix": {key: key * 200 for key in STABLE_PREFIX_KEYS},
        "dynamic_packet": {
            "workflow": "cm-ai",
            "stage": "s",
            "role": "coder",
            "objective": "o",
            "identifiers": {"task": "T1"},
            "constraints": ["c"] * 100,
            "expected_output": "e",
            "context": {"task_diff": ["+ line of a diff " * 4] * 14000},
        },
    }
    size = len(json.dumps(packet).encode())
    t = per_call(lambda: validate_adapter_input(packet, workflow="cm-ai", stage="s", role="coder"), 20)
    print(f"validate_adapter_input(): {t * 1e3:.2f} ms for a {size / 1024:.0f} KiB packet")
    prefix = packet["stable_prefix"]
    print(f"prefix_digest(): {per_call(lambda: prefix_digest(prefix), 20000) * 1e6:.2f} us")

    code = "import time; t=time.perf_counter(); import toolkit.cm.packet; print(time.perf_counter()-t)"
    imports = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(5)
    ]
    print(f"import toolkit.cm.packet (fresh process): median {statistics.median(imports) * 1e3:.1f} ms")

    with tempfile.TemporaryDirectory() as tmp:
        specs = Path(tmp) / "specs"
        specs.mkdir()
        args = [
            sys.executable,
            "-m",
            "toolkit",
            "boundary",
            "cm-ai",
            "--at",
            "run_done",
            "--specs-dir",
            str(specs),
            "--next-command",
            "/cm-ai run --task T2",
        ]
        walls = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run(args, capture_output=True, check=True, cwd=tmp, env={**os.environ})
            walls.append(time.perf_counter() - start)
        median_ms = statistics.median(walls) * 1e3
        print(f"workgroup boundary (verdict + handoff, new process): median {median_ms:.0f} ms")


if __name__ == "__main__":
    main()
