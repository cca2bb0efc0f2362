"""Per-event cost of ``cm-log-event`` as one open run's log grows (1k, 10k, 100k, 1M rows).

Run on purpose (not collected by pytest); the figures are CPU seconds of the writer's processes
(``--wall``: clock seconds):

    .venv/bin/python tests/bench/bench_cm_log_growth.py [--rows 1000,10000,100000,1000000] [--runs 3]
        [--tree DIR ...] [--peer CM_TREE] [--wall]

For each size, a specs dir holds one open run: a ``run_start`` written by the writer (pointer and
global mirror included), then that many ``progress`` rows of the writer's shape (each with its own
``event_id``) appended to both the project log and the global mirror. Then, each in fresh
processes and without ``--run-id`` (the run comes from the pointer and the log, as a skill calls
it), the median of ``--runs`` events of each kind:

* ``first``: the first plain event on the grown log (with an index, the one that builds it);
* ``plain``: a ``progress`` event (its ``event_id`` is looked up in the run: a retry is answered
  deduplicated);
* ``call``: a ``model_call`` claim with a new ``call_id`` (the call id is looked up too);
* ``usage``: the ``model_usage`` that completes that claim (checked against the claim);
* ``resource``: a resource ``acquired`` then ``released`` (guarded: the run's resources);
* ``test_run``: a QA invocation's ``start`` then ``complete`` (guarded: the run's invocations);
* ``task_done``: a ``task_done`` (guarded: the run's resources and invocations).

``--tree DIR`` (repeatable) times the writer of another source tree too (a ``git archive`` of an
older commit, say), on a copy of the same log. ``--peer CM_TREE`` times the CM project's own writer
(``scripts/cm-log-event.py`` of a rebuilt CM tree, see the cm-peer README) the same way, right
after ours.
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
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOG_NAME = "运行日志.jsonl"
CODE = "import sys; from toolkit.cm.events import main; raise SystemExit(main(sys.argv[1:]))"
KINDS = ("plain", "call", "usage", "resource", "test_run", "task_done")
CALL = {
    "stage": "bench",
    "role": "writer",
    "adapter": "bench-adapter",
    "requested_model": "bench-model",
    "source": "bench",
    "purpose": "bench",
}


def writer(tree: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment additions of one writer."""
    if tree.startswith("peer:"):
        return [sys.executable, str(Path(tree[5:]) / "scripts" / "cm-log-event.py")], {}
    return [sys.executable, "-P", "-c", CODE], {"PYTHONPATH": tree}  # -P: not the working dir's tree


def event(
    cmd: list[str],
    extra: dict[str, str],
    base: Path,
    name: str,
    i: int,
    phase: str | None = None,
    data: Mapping[str, object] | None = None,
) -> float:
    env = {**os.environ, **extra, "CM_WORKFLOW_LOG_HOME": str(base / "home")}
    argv = ["--workflow", "cm-ai", "--event", name, "--runtime", "codex", "--detail", f"bench {name} {i}"]
    argv += ["--specs-dir", str(base / "specs")]
    if phase is not None:
        argv += ["--phase", phase]
    if data:
        argv += ["--data-json", json.dumps(data)]
    before, started = _children_cpu(), time.perf_counter()
    proc = subprocess.run([*cmd, *argv], env=env, capture_output=True, check=False)
    wall, cpu = time.perf_counter() - started, _children_cpu() - before
    if proc.returncode != 0:
        raise SystemExit(f"{name} {phase} failed ({cmd}): {proc.stderr.decode()[-500:]}")
    return wall if WALL else cpu


WALL = False  # --wall: seconds on the clock instead of CPU seconds (user + system, the writer's
# processes and theirs: the peer's node included), which a busy machine disturbs less


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(base: Path, rows: int) -> None:
    """One open run of ``rows`` rows, its pointer and global mirror, under ``base``."""
    (base / "specs").mkdir(parents=True)
    cmd, extra = writer(str(ROOT))
    event(cmd, extra, base, "run_start", 0)
    log = base / "specs" / LOG_NAME
    first = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    mirror = next((base / "home" / "runs").glob(f"*/{first['run_id']}.jsonl"))
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


def measure(base: Path, tree: str, runs: int) -> dict[str, float]:
    """Seconds per event of each kind (medians; a two-event kind counts each event)."""
    cmd, extra = writer(tree)
    took: dict[str, list[float]] = {kind: [] for kind in KINDS}
    first = event(cmd, extra, base, "progress", 0)
    for i in range(1, runs + 1):
        took["plain"].append(event(cmd, extra, base, "progress", i))
    for i in range(runs):
        call = {"call_id": f"bench-call-{i}", **CALL}
        took["call"].append(event(cmd, extra, base, "model_call", i, "claimed", call))
        usage = {
            **call,
            "usage_state": "observed",
            "outcome": "success",
            "input_tokens": 10,
            "output_tokens": 5,
        }
        took["usage"].append(event(cmd, extra, base, "model_usage", i, "complete", usage))
    for i in range(runs):
        res = {"resource_id": f"bench-res-{i}", "resource_kind": "sandbox"}
        took["resource"].append(
            event(cmd, extra, base, "resource", i, "acquired", {**res, "cleanup_required": True})
        )
        took["resource"].append(event(cmd, extra, base, "resource", i, "released", res))
    for i in range(runs):
        took["test_run"].append(event(cmd, extra, base, "test_run", i, "start", {"bench": i}))
        took["test_run"].append(event(cmd, extra, base, "test_run", i, "complete", {"bench": i}))
    for i in range(runs):
        took["task_done"].append(event(cmd, extra, base, "task_done", i))
    return {"first": first, **{kind: statistics.median(values) for kind, values in took.items()}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="1000,10000,100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], help="another source tree's writer")
    parser.add_argument("--peer", help="a rebuilt CM tree: time its own writer too")
    parser.add_argument("--wall", action="store_true", help="clock seconds instead of CPU seconds")
    args = parser.parse_args()
    global WALL
    WALL = args.wall
    trees = (
        [str(ROOT)] + ([f"peer:{args.peer}"] if args.peer else []) + args.tree
    )  # the peer right after ours
    columns = ("first", *KINDS)
    print(
        f"{'rows':>9} {'MiB':>6}  {'writer':<24}"
        + "".join(f" {c:>9}" for c in columns)
        + ("  (seconds)" if WALL else "  (CPU seconds)")
    )
    for rows in (int(part) for part in args.rows.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-cm-growth-") as tmp:
            master = Path(tmp) / "master"
            build(master, rows)
            size = (master / "specs" / LOG_NAME).stat().st_size / 1024 / 1024
            for n, tree in enumerate(trees):
                copy = Path(tmp) / f"w{n}"
                shutil.copytree(master, copy, symlinks=True)
                took = measure(copy, tree, args.runs)
                label = "this tree" if tree == str(ROOT) else tree[-24:]
                cells = "".join(f" {took[c]:>9.3f}" for c in columns)
                print(f"{rows:>9} {size:>6.1f}  {label:<24}{cells}", flush=True)
                shutil.rmtree(copy)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
