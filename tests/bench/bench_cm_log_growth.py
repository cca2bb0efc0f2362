"""Per-event cost of ``cm-log-event`` as one open run's log grows (1k, 10k, 100k, 1M rows).

Run on purpose (not collected by pytest):

    .venv/bin/python tests/bench/bench_cm_log_growth.py [--rows 1000,10000,100000,1000000] [--runs 3]
        [--tree DIR ...] [--peer CM_TREE]

For each size, a specs dir holds one open run: a ``run_start`` written by the writer (pointer and
global mirror included), then that many ``progress`` rows of the writer's shape appended to both the
project log and the global mirror. Then, each in fresh processes and without ``--run-id`` (the run
comes from the pointer and the log, as a skill calls it):

* ``first``: the first plain event on the grown log (with a checkpoint, the one that builds it);
* ``plain``: the median of ``--runs`` further plain events;
* ``task_done``: the median of ``--runs`` ``task_done`` events (guarded: the run's lifecycle).

``--tree DIR`` (repeatable) times the writer of another source tree too (a ``git archive`` of an
older commit, say), on a copy of the same log. ``--peer CM_TREE`` times the CM project's own writer
(``scripts/cm-log-event.py`` of a rebuilt CM tree, see the cm-peer README) the same way.
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

ROOT = Path(__file__).resolve().parents[2]
LOG_NAME = "运行日志.jsonl"
CODE = "import sys; from toolkit.cm.events import main; raise SystemExit(main(sys.argv[1:]))"


def writer(tree: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment additions of one writer."""
    if tree.startswith("peer:"):
        return [sys.executable, str(Path(tree[5:]) / "scripts" / "cm-log-event.py")], {}
    return [sys.executable, "-P", "-c", CODE], {"PYTHONPATH": tree}  # -P: not the working dir's tree


def event(cmd: list[str], extra: dict[str, str], specs: Path, home: Path, name: str, i: int) -> float:
    env = {**os.environ, **extra, "CM_WORKFLOW_LOG_HOME": str(home)}
    argv = ["--workflow", "cm-ai", "--event", name, "--runtime", "codex", "--detail", f"bench {name} {i}"]
    argv += ["--specs-dir", str(specs)]
    started = time.perf_counter()
    proc = subprocess.run([*cmd, *argv], env=env, capture_output=True, check=False)
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed ({cmd}): {proc.stderr.decode()[-500:]}")
    return took


def build(base: Path, rows: int) -> None:
    """One open run of ``rows`` rows, its pointer and global mirror, under ``base``."""
    specs, home = base / "specs", base / "home"
    specs.mkdir(parents=True)
    cmd, extra = writer(str(ROOT))
    event(cmd, extra, specs, home, "run_start", 0)
    log = specs / LOG_NAME
    first = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    mirror = next((home / "runs").glob(f"*/{first['run_id']}.jsonl"))
    with open(log, "a", encoding="utf-8") as project, open(mirror, "a", encoding="utf-8") as private:
        batch: list[str] = []
        for n in range(rows):
            row = {**first, "event": "progress", "phase": "execute", "detail": f"step {n} of the bench run"}
            row["step"] = n
            row["event_id"] = f"evt-bench-{n:08d}"
            batch.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            if len(batch) == 10_000:
                project.writelines(batch)
                private.writelines(batch)
                batch = []
        project.writelines(batch)
        private.writelines(batch)


def measure(base: Path, tree: str, runs: int) -> tuple[float, float, float]:
    cmd, extra = writer(tree)
    specs, home = base / "specs", base / "home"
    first = event(cmd, extra, specs, home, "progress", 0)
    plain = statistics.median(event(cmd, extra, specs, home, "progress", i) for i in range(1, runs + 1))
    done = statistics.median(event(cmd, extra, specs, home, "task_done", i) for i in range(runs))
    return first, plain, done


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="1000,10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], help="another source tree's writer")
    parser.add_argument("--peer", help="a rebuilt CM tree: time its own writer too")
    args = parser.parse_args()
    trees = [str(ROOT), *args.tree] + ([f"peer:{args.peer}"] if args.peer else [])
    print(f"{'rows':>9} {'MiB':>6}  {'writer':<28} {'first':>8} {'plain':>8} {'task_done':>9}  (seconds)")
    for rows in (int(part) for part in args.rows.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-cm-growth-") as tmp:
            master = Path(tmp) / "master"
            build(master, rows)
            size = (master / "specs" / LOG_NAME).stat().st_size / 1024 / 1024
            for n, tree in enumerate(trees):
                copy = Path(tmp) / f"w{n}"
                shutil.copytree(master, copy, symlinks=True)
                first, plain, done = measure(copy, tree, args.runs)
                label = "this tree" if tree == str(ROOT) else tree[-28:]
                print(
                    f"{rows:>9} {size:>6.1f}  {label:<28} {first:>8.3f} {plain:>8.3f} {done:>9.3f}",
                    flush=True,
                )
                shutil.rmtree(copy)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
