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

Then a cold start, what an agent's pre-write hook pays before its first answer (``--cold-runs``
fresh processes of ``--cold-python``, default this interpreter; ``--cold-only`` skips the
rates): each imports the engine as the hook does and scans ``--cold-kb`` kB of the first
repository's tracked ``.py`` files joined into one source file. Reported as min, p50 and p95
CPU milliseconds of the import, of the first scan and of the whole process (interpreter start
included; CPU time, which a loaded machine changes less than wall time, is what the hook's
latency is made of when the machine is idle), and the process's wall time. Bytecode is cached as in a regular install (in a temporary prefix, not the tree);
``--cold-python`` of a venv with a regular ``pip install`` times what users run (an editable
install's finder adds some milliseconds to every start).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
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


_COLD = """
import sys, time
start = time.process_time()
from toolkit.privacy.engine import scan_text_with_values
from toolkit.privacy.files import context_of, file_kind
imported = time.process_time()
text = open(sys.argv[1], encoding="utf-8").read()
name = sys.argv[2]
found = scan_text_with_values(text, context_of(name, text), file_kind(name, text))
scanned = time.process_time()
print((imported - start) * 1000, (scanned - imported) * 1000, len(found))
"""


def _cold_sample(repo: Path, kb: int) -> str:
    """About ``kb`` kB of the repository's tracked Python source, whole files joined."""
    names = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split()
    parts: list[str] = []
    size = 0
    for name in sorted(names):
        if size >= kb * 1000:
            break
        text = (repo / name).read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        size += len(text.encode())
    return "\n".join(parts)[: kb * 1000]


def _cold(repo: Path, python: str, runs: int, kb: int) -> None:
    """p50 / p95 milliseconds of the import, the first scan and the process, over ``runs``."""
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample.py"
        sample.write_text(_cold_sample(repo, kb), encoding="utf-8")
        size_kb = sample.stat().st_size / 1000
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        command = [python, "-c", _COLD, str(sample), "src/sample.py"]
        subprocess.run(command, cwd=tmp, env=env, check=True, capture_output=True)  # bytecode written
        rows: list[tuple[float, float, float, float]] = []
        found = ""
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            out = subprocess.run(command, cwd=tmp, env=env, check=True, capture_output=True, text=True)
            wall = (time.perf_counter() - start) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
            imported, scanned, found = out.stdout.split()
            rows.append((float(imported), float(scanned), cpu, wall))
    print(
        f"cold first scan of {size_kb:.0f} kB of "
        f"{repo.name} source ({python}, {runs} fresh processes, findings {found}): min / p50 / p95 ms"
    )
    for index, what in enumerate(("import", "first scan", "process", "wall")):
        values = sorted(row[index] for row in rows)
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        print(f"  {what:10} {values[0]:7.1f} / {statistics.median(values):7.1f} / {p95:7.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold-runs", type=int, default=20)
    parser.add_argument("--cold-kb", type=int, default=100)
    parser.add_argument("--cold-python", default=sys.executable)
    parser.add_argument("--cold-only", action="store_true")
    args = parser.parse_args(argv)
    if args.cold_only:
        _cold(args.repos[0].resolve(), args.cold_python, args.cold_runs, args.cold_kb)
        return 0
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
    _cold(args.repos[0].resolve(), args.cold_python, args.cold_runs, args.cold_kb)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
