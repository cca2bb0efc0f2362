"""Single-process scanning rate of the privacy gate on real source (run on purpose).

    .venv/bin/python tests/bench/bench_privacy_rate.py [--repeat 3] REPO_DIR...

For each folder (a git clone of a public repository), the files ``workgroup privacy scan``
selects (tracked plus untracked-not-ignored) are scanned in this one process, twice over:

* ``scan``: ``privacy scan``'s path, ``scan_targets(jobs=1)`` (reads, batches small files, scans);
* ``hook``: the all-files hook's path, ``run_gate`` over the same files (what
  ``workgroup-privacy-all-hook FILE...`` does with the names pre-commit passes).

Each figure is megabytes on disk per CPU second of this process (``time.process_time``), the
best of ``--repeat`` runs after one warm-up run (patterns compile on first use): CPU time, not
wall time, so other work on a shared machine does not change it much. The target is 20 MB per
CPU second on ordinary source. The findings of both paths are counted (they must agree).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from toolkit.privacy.gate import run_gate  # noqa: E402
from toolkit.privacy.selection import scan_targets, select  # noqa: E402


def _best(repeat: int, run: object) -> tuple[float, int]:
    """(best CPU seconds, findings) of ``run()`` over ``repeat`` runs, after a warm-up run."""
    assert callable(run)
    count = run()
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        count = run()
        best = min(best, time.process_time() - start)
    return best, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(
        f"python {sys.version.split()[0]} | cores: {os.cpu_count()} | load average: {os.getloadavg()[0]:.2f} | "
        f"best of {args.repeat} | MB/cpu-s = MB on disk per CPU second of one process"
    )
    print(
        f"{'repo':12} {'commit':12} {'files':>6} {'MB':>6} | {'scan cpu s':>10} {'MB/cpu-s':>8} {'found':>5} | "
        f"{'hook cpu s':>10} {'MB/cpu-s':>8} {'found':>5}"
    )
    total_mb = total_scan = total_hook = 0.0
    for repo in args.repos:
        repo = repo.resolve()
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        targets = select(["."], repo, repo, all_files=False, notices=[])
        paths = [repo / t.shown for t in targets]
        size = sum(t.size for t in targets) / 1e6
        scan_s, scan_n = _best(
            args.repeat, lambda t=targets, r=repo: len(scan_targets(t, r, jobs=1).findings)
        )
        hook_s, hook_n = _best(args.repeat, lambda p=paths, r=repo: len(run_gate(p, r).findings))
        total_mb, total_scan, total_hook = total_mb + size, total_scan + scan_s, total_hook + hook_s
        print(
            f"{repo.name:12} {commit[:12]:12} {len(targets):>6} {size:>6.1f} | {scan_s:>10.3f} "
            f"{size / scan_s:>8.1f} {scan_n:>5} | {hook_s:>10.3f} {size / hook_s:>8.1f} {hook_n:>5}",
            flush=True,
        )
    print(
        f"{'all':12} {'':12} {'':>6} {total_mb:>6.1f} | {total_scan:>10.3f} {total_mb / total_scan:>8.1f} "
        f"{'':>5} | {total_hook:>10.3f} {total_mb / total_hook:>8.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
