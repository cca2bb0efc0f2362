"""Benchmark ``workgroup runtime route`` with owned globs against registry size (run on purpose).

    .venv/bin/python tests/bench/bench_route_globs.py [--files 1000] [--entries 0,1000,10000]
        [--calls 15] [--before PATH] [--bin DIR]

Builds, in a temporary directory, a repository with FILES tracked files and a writer registry
(``.git/workgroup/owners.json``) of ENTRIES live leases of one path each (copies of a lease that
``owners.acquire`` made, written with its index by the owners command's writer), then prints per-call CPU ms (median
of CALLS, user + system of the child) side by side:

* ``globs``: a writer request with ``owned_globs`` (expanded against the tracked files);
* ``files``: the same writer naming its files (no globs): the runtime's floor;
* ``ls-files``: ``git ls-files -z`` alone (the peer: what reading the index costs);
* ``floor`` (last line): the same interpreter importing only ``re`` and ``json``, what any Python
  console script pays before the runtime's own work (an editable install's path finder is in it);
* ``before``: the ``globs`` request run by another copy of the package (``--before``: a folder
  holding an older ``toolkit/``, e.g. ``git archive <rev> toolkit | tar -x -C DIR``).

``--bin DIR`` times the ``workgroup`` console script of another environment's scripts folder (e.g. a
fresh venv with the package installed the regular, non-editable way: the figure users see) instead
of ``python -m toolkit`` in this one.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), "bench-route-globs-pycache"),
    "GIT_CONFIG_NOSYSTEM": "1",
}


def build(root: Path, files: int, entries: int) -> None:
    from toolkit.infra.git import discover
    from toolkit.records import owners

    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for i in range(files):
        path = root / "src" / f"pkg{i % 20}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"X = {i}\n")
    subprocess.run(["git", "add", "src"], cwd=root, check=True)
    layout = discover(root).layout
    owners.acquire(layout, "holder-0", ["held/f0.py"], now=datetime.now(UTC), minutes=600)
    registry = layout.local / "owners.json"
    document = json.loads(registry.read_text())
    template = document["writers"][0]
    writers = []
    for i in range(entries):
        entry = json.loads(json.dumps(template))
        entry["lineage_id"] = f"holder-{i}"
        for key in ("owned_files", "resolved_owned_files"):
            if key in entry:
                entry[key] = [f"held/f{i}.py"]
        writers.append(entry)
    # written by the owners command's own writer: the registry and its lookup index
    lists = ("owned_files", "owned_globs", "resolved_owned_files")
    owners._write(layout, [owners.Lease(**{**w, **{k: tuple(w[k]) for k in lists}}) for w in writers])


def cpu_ms(command: list[str], payload: bytes, cwd: Path, env: dict[str, str]) -> tuple[float, bytes]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(command, input=payload, capture_output=True, cwd=cwd, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000, proc.stdout


def median(
    command: list[str], payload: bytes, cwd: Path, env: dict[str, str], calls: int
) -> tuple[float, bytes]:
    samples, out = [], b""
    cpu_ms(command, payload, cwd, env)  # bytecode written once, as after an install
    for _ in range(calls):
        ms, out = cpu_ms(command, payload, cwd, env)
        samples.append(ms)
    return statistics.median(samples), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--entries", default="0,1000,10000")
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--before", default="")
    parser.add_argument("--bin", default="", help="scripts folder whose workgroup console script to time")
    args = parser.parse_args(argv)
    route = [sys.executable, "-m", "toolkit", "runtime", "route"]
    if args.bin:
        route = [str(Path(args.bin) / "workgroup"), "runtime", "route"]
    globs = json.dumps({"input": {"is_writer": True, "owned_globs": ["src/pkg1/**"]}}).encode()
    files = json.dumps({"input": {"is_writer": True, "owned_files": ["src/pkg1/mod1.py"]}}).encode()
    before_env = {**ENV, "PYTHONPATH": args.before} if args.before else None
    print(
        f"{' '.join(route[:-2])} runtime route, {args.files} tracked files (CPU ms per call, median of {args.calls}; "
        f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    print(f"{'entries':>8} {'globs':>7} {'files':>7} {'ls-files':>9} {'before':>7}  answer")
    failed = False
    for entries in [int(x) for x in args.entries.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "repo"
            build(root, args.files, entries)
            with_globs, out = median(route, globs, root, ENV, args.calls)
            plain, out_plain = median(route, files, root, ENV, args.calls)
            peer, _ = median(["git", "ls-files", "-z"], b"", root, ENV, args.calls)
            old = float("nan")
            if before_env is not None:
                old, out_old = median(route, globs, root, before_env, args.calls)
                failed |= out_old != out
            answer = json.loads(out)
            failed |= answer != json.loads(out_plain)
            print(
                f"{entries:>8} {with_globs:>6.1f} {plain:>6.1f} {peer:>8.1f} {old:>6.1f}  {answer}",
                flush=True,
            )
    python = str(Path(args.bin) / "python") if args.bin else sys.executable
    floor, _ = median([python, "-c", "import re, json"], b"", Path.cwd(), ENV, args.calls)
    print(
        f"floor: {python} -c 'import re, json' (interpreter start-up, site, the launcher's imports): {floor:.1f}"
    )
    print("target: globs <= 30 ms per call at 1,000 tracked files")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
