"""Benchmarks for rollout, telemetry, promotion and the corpus runner (run on purpose; prints figures).

.venv/bin/python tests/bench/bench_promotion.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.promotion_data import EXPECT, KEY_ID, NOW, KeyPair, pairs, signed  # noqa: E402

from toolkit.infra.resources import data_dir  # noqa: E402
from toolkit.runtime.promotion import evaluate_promotion  # noqa: E402
from toolkit.runtime.protocol import RuntimeContext, execute  # noqa: E402
from toolkit.workflow.evaluate import evaluate_corpus, load_scenarios  # noqa: E402


def per_call(label: str, fn: Callable[[], object], n: int) -> None:
    fn()  # warm imports
    start = time.perf_counter()
    for _ in range(n):
        fn()
    elapsed = (time.perf_counter() - start) / n
    print(f"{label:<52} {elapsed * 1e6:>10.1f} us/call  (n={n})")


def main() -> None:
    ctx = RuntimeContext(environ={})
    rollout = {
        "input": {
            "rollout": "canary",
            "canary_percent": 25,
            "task_corpus_id": "anon-0123456789abcdef",
            "actual_mode": "local",
            "recommended_mode": "fresh-capsule",
        }
    }
    per_call("runtime rollout op (in-process)", lambda: execute("rollout", rollout, ctx), 20000)
    event = {
        "event": {
            "event": "worker_usage",
            "observed_at": "2026-07-30T12:00:00Z",
            "provider": "claude",
            "mode": "fresh-capsule",
            "reason_codes": ["INDEPENDENT_CAPSULE"],
            "logical": {"capsule_bytes": 2048},
            "billed": {"output_tokens": 512, "accounting_source": "provider-reported"},
        }
    }
    per_call(
        "runtime telemetry op (in-process, privacy engine incl.)",
        lambda: execute("telemetry", event, ctx),
        2000,
    )
    items = pairs()
    key = KeyPair()
    envelope = signed(items, key)
    trusted = {KEY_ID: key.public_pem}

    def promote() -> object:
        return evaluate_promotion(
            items, envelope=envelope, now=NOW, consumed_run_ids=[], trusted_keys=trusted, **EXPECT
        )

    per_call("promotion, 40 signed pairs, 2x2000 bootstrap resamples", promote, 50)
    scenarios = load_scenarios(data_dir("corpus"))
    per_call(f"corpus eval, {len(scenarios)} scenarios (in-process)", lambda: evaluate_corpus(scenarios), 5)

    walls = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "toolkit", "runtime", "rollout"],
            input=json.dumps(rollout).encode(),
            capture_output=True,
            check=True,
        )
        walls.append(time.perf_counter() - start)
    print(
        f"{'workgroup runtime rollout (subprocess, median of 5)':<52} "
        f"{statistics.median(walls) * 1e3:>10.1f} ms"
    )


if __name__ == "__main__":
    main()
