"""`workgroup privacy scan --history` beside trufflehog3 on the full history of real repositories.

Run on purpose, never as a timed unit test::

    python tests/bench/bench_privacy_history.py [--trufflehog3 PATH] [--list] REPO [REPO ...]

Each REPO (a local clone with full history) is cloned into a temporary folder, so both tools
read the same branch: its checked-out branch's whole history. Ours runs as
``workgroup privacy scan --history --format json``; trufflehog3 (PyPI, installed into a
virtualenv of its own, outside this project) as ``trufflehog3 --no-current -z -f JSON`` (history
only, as ours). Printed per repository and tool: commits, findings, distinct values, wall time
and CPU time (the tool and every process it waited for). ``--list`` prints each distinct finding
(rule, path, masked value, count) for judging false alarms by eye; values are masked here too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[bytes], float, float]:
    cpu, wall = _cpu(), time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)
    return done, time.perf_counter() - wall, _cpu() - cpu


def _mask(value: str) -> str:
    return value[:4] + "********"


def ours(clone: Path) -> tuple[int, Counter[tuple[str, str, str]], float, float]:
    cmd = [sys.executable, "-m", "toolkit", "privacy", "scan", "--history", "--format", "json"]
    done, wall, cpu = timed(cmd, clone)
    if done.returncode not in (0, 1):
        raise SystemExit(f"workgroup failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    doc = json.loads(done.stdout)
    seen: Counter[tuple[str, str, str]] = Counter(
        (f["code"], f["extra"]["file"], f["message"].split(": ", 1)[-1]) for f in doc["findings"]
    )
    return len(doc["findings"]), seen, wall, cpu


def trufflehog3(exe: str, clone: Path, out: Path) -> tuple[int, Counter[tuple[str, str, str]], float, float]:
    done, wall, cpu = timed([exe, "--no-current", "-z", "-f", "JSON", "-o", str(out), str(clone)], clone)
    if done.returncode != 0:
        raise SystemExit(f"trufflehog3 failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    rows = json.loads(out.read_text(encoding="utf-8") or "[]")
    seen: Counter[tuple[str, str, str]] = Counter(
        (r["rule"]["id"], r["path"], _mask(str(r.get("secret", "")))) for r in rows
    )
    return len(rows), seen, wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--trufflehog3", default=os.environ.get("TRUFFLEHOG3") or shutil.which("trufflehog3"))
    parser.add_argument("--list", action="store_true", help="print each distinct finding (masked)")
    args = parser.parse_args()
    print(
        f"{'repository':<12} {'commits':>7}  {'tool':<22} {'findings':>8} {'distinct':>8} {'wall s':>7} {'cpu s':>7}"
    )
    for repo in args.repos:
        with tempfile.TemporaryDirectory() as tmp:
            clone = Path(tmp) / repo.name
            subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
            count = subprocess.run(
                ["git", "rev-list", "--count", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
            ).stdout.strip()
            results = {"workgroup --history": ours(clone)}
            if args.trufflehog3:
                results["trufflehog3 " + _version(args.trufflehog3)] = trufflehog3(
                    args.trufflehog3, clone, Path(tmp) / "th3.json"
                )
            for tool, (n, seen, wall, cpu) in results.items():
                print(
                    f"{repo.name:<12} {count:>7}  {tool:<22} {n:>8} {len(seen):>8} {wall:>7.2f} {cpu:>7.2f}"
                )
            if args.list:
                for tool, (_, seen, _, _) in results.items():
                    print(f"\n{repo.name}: {tool}")
                    for (rule, path, masked), n in seen.most_common():
                        print(f"  {n:>4}  {rule:<28} {path}  {masked}")
                print()
    if not args.trufflehog3:
        print("trufflehog3 not found: pass --trufflehog3 PATH (pip install trufflehog3 into its own venv)")
    return 0


def _version(exe: str) -> str:
    done = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).strip().split()[-1] if done.returncode == 0 else "?"


if __name__ == "__main__":
    raise SystemExit(main())
