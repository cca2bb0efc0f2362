"""The privacy gate on real repositories, side by side with detect-secrets (run on purpose).

    .venv/bin/python tests/bench/bench_privacy_real.py [--detect-secrets EXE] [--list] REPO_DIR...

For each folder (a git clone of a public repository): the files ``workgroup privacy scan``
selects (tracked plus untracked-not-ignored), their lines and megabytes, our findings (total
and per 100k lines), our time in one process and with every core, MB/s, and detect-secrets'
findings and time from ``detect-secrets scan`` (its default plugins and filters, run in the
same folder on the files git tracks). MB/s is megabytes on disk per CPU second of the one-process
run (the figure that does not depend on what else the machine runs). ``--list`` prints our
findings (masked) per repository.
The repository's commit is printed so the figures can be reproduced.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from toolkit.privacy.selection import Target, scan_targets, select  # noqa: E402


def _ours(repo: Path, jobs: int) -> tuple[float, float, object, list[Target]]:
    """(wall seconds, CPU seconds of this process, report, targets) of one scan."""
    notices: list[str] = []
    targets = select(["."], repo, repo, all_files=False, notices=notices)
    start, cpu = time.perf_counter(), time.process_time()
    report = scan_targets(targets, repo, jobs=jobs)
    return time.perf_counter() - start, time.process_time() - cpu, report, targets


def _lines(repo: Path, targets: list[Target]) -> int:
    total = 0
    for target in targets:
        try:
            with open(repo / target.shown, "rb") as handle:
                total += handle.read().count(b"\n")
        except OSError:
            pass
    return total


def _detect_secrets(exe: str, repo: Path) -> tuple[int, float]:
    start = time.perf_counter()
    done = subprocess.run([exe, "scan"], cwd=repo, capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    results = json.loads(done.stdout)["results"]
    return sum(len(v) for v in results.values()), elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--detect-secrets", default="", help="detect-secrets executable (skipped if empty)")
    parser.add_argument("--list", action="store_true", help="print our findings, masked")
    parser.add_argument("--jobs", type=int, default=0, help="processes for the parallel run (0: every core)")
    args = parser.parse_args(argv)
    head = (
        f"{'repo':12} {'commit':12} {'files':>6} {'klines':>7} {'MB':>6} | {'ours':>5} {'/100k':>6} "
        f"{'1 proc s':>8} {'cpu s':>6} {'MB/s':>6} {'all s':>6} | {'d-s':>5} {'/100k':>6} {'d-s s':>7} {'speedup':>7}"
    )
    print(head)
    for repo in args.repos:
        repo = repo.resolve()
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        _ours(repo, jobs=1)  # warm-up: patterns compile on first use
        single, cpu, report, targets = _ours(repo, jobs=1)
        parallel, _, _, _ = _ours(repo, jobs=args.jobs)
        size = sum(t.size for t in targets) / 1e6
        lines = _lines(repo, targets)
        ours = len(report.findings)  # type: ignore[attr-defined]
        ds_count, ds_time = _detect_secrets(args.detect_secrets, repo) if args.detect_secrets else (-1, 0.0)
        per = 100_000 / max(lines, 1)
        print(
            f"{repo.name:12} {commit[:12]:12} {len(targets):>6} {lines / 1000:>7.1f} {size:>6.1f} | "
            f"{ours:>5} {ours * per:>6.1f} {single:>8.2f} {cpu:>6.2f} {size / cpu:>6.1f} {parallel:>6.2f} | "
            f"{ds_count:>5} {ds_count * per:>6.1f} {ds_time:>7.2f} {ds_time / min(single, parallel):>6.1f}x",
            flush=True,
        )
        if args.list:
            for item in sorted(report.findings, key=lambda i: (i.path, i.finding.line)):  # type: ignore[attr-defined]
                f = item.finding
                print(f"    {item.path}:{f.line}:{f.start + 1}: {f.rule} {f.masked}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
