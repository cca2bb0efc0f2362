"""Benchmark the ``workgroup-verify`` pre-commit hook against history size (run on purpose).

    .venv/bin/python tests/bench/bench_verify_hook.py [--commits 10000,50000,200000] [--records 100]

For each history size it builds, in a temporary directory, a repository with that many commits
(``git fast-import``, one tiny tree) and RECORDS sealed capsules bound to commits spread over the
history, then prints side by side (medians of three, CPU seconds = user + system of the child):

* ``hook``: ``workgroup-verify-hook`` on a 1-file commit (one staged source file), as pre-commit
  runs it, with its cache warm from the previous commit (the steady state of a developer);
* ``cold``: the same with no cache (the first commit after a clone, or any CI run);
* ``ds``: ``detect-secrets-hook`` on the same staged file (the peer; ``--detect-secrets`` or
  ``DETECT_SECRETS_HOOK``, skipped when absent);
* ``verify RSS`` / ``rev-list RSS``: max resident memory of a full ``workgroup verify --no-cache``
  and of ``git rev-list HEAD`` (the memory peer), from ``RUSAGE_CHILDREN`` in a fresh child
  (the largest process of the tree: for verify, itself or the ``git rev-list`` it runs);
* ``--bin DIR``: the hook and ``workgroup`` of another environment's scripts folder (a fresh
  venv with a regular, non-editable install: an editable install's path finder adds about 30 ms
  of CPU to every start);
* ``before hook`` / ``before RSS`` (``--before DIR``): the hook and a full verify run by an older
  copy of the package (``git archive REV toolkit | tar -x -C DIR``), in the same repository.
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
BIN = Path(sys.executable).parent
# children run as from a regular install: bytecode cached (in a temporary prefix, not the tree)
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), "bench-verify-hook-pycache"),
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def build(root: Path, commits: int, records: int) -> None:
    """``commits`` linear commits by fast-import, then one commit adding ``records`` sealed capsules."""
    from toolkit.runtime.capsule import prepare_capsule

    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=ENV)
    stream = bytearray(b"blob\nmark :1\ndata 6\nbench\n")
    for i in range(commits):
        stream += b"commit refs/heads/main\nmark :%d\ncommitter bench <b@example.invalid> %d +0000\n" % (
            i + 2,
            1_600_000_000 + i,
        )
        msg = b"commit %d" % i
        stream += b"data %d\n%s\n" % (len(msg), msg)
        if i == 0:
            stream += b"M 100644 :1 README.md\n"
        stream += b"\n"
    marks = root / ".git" / "bench-marks"
    subprocess.run(
        ["git", "fast-import", "--quiet", f"--export-marks={marks}"],
        cwd=root,
        input=bytes(stream),
        check=True,
        env=ENV,
    )
    shas = {}
    for line in marks.read_text().splitlines():
        mark, sha = line.split()
        shas[int(mark[1:]) - 2] = sha
    marks.unlink()
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=root, check=True, env=ENV)
    for i in range(records):
        wg = f"wg-{i % 20:02d}"
        capsule = {
            "schema": "knowzcode.context-capsule/v1",
            "task_id": f"task-{i:04d}",
            "workgroup_id": wg,
            "phase": "2A",
            "objective": f"Implement step {i} of the feature without widening the API.",
            "node_ids": ["Feature"],
            "owned_files": [f"src/mod{i % 50}.py"],
            "read_files": ["README.md"],
            "specs": [{"path": "knowzcode/specs/Feature.md", "verify_ids": ["FEAT-01"]}],
            "approved_decisions": ["Keep the public API."],
            "checkpoint_sha": shas[(i * (commits - 1)) // max(records - 1, 1)],
            "failures": [],
            "risks": ["Regressions in callers."],
            "constraints": ["TDD."],
            "next_action": "Write the failing test.",
            "evidence": [],
            "artifact_refs": [],
        }
        sealed = prepare_capsule(capsule).capsule
        path = root / ".workgroup" / "workgroups" / wg / "capsules" / f"task-{i:04d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(sealed, indent=2))
    subprocess.run(["git", "add", ".workgroup"], cwd=root, check=True, env=ENV)
    subprocess.run(["git", "commit", "-q", "-m", "records"], cwd=root, check=True, env=ENV)


def child(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """(CPU seconds, max RSS in KiB, exit code) of one child, measured by a fresh wrapper process
    so RUSAGE_CHILDREN holds that child alone."""
    probe = (
        "import resource,subprocess,sys,json;"
        "p=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
        "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(json.dumps([r.ru_utime+r.ru_stime,r.ru_maxrss,p.returncode]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *command], cwd=cwd, capture_output=True, check=True, env=env or ENV
    )
    cpu, rss, code = json.loads(out.stdout)
    return float(cpu), int(rss), int(code)


def one_file_commit(root: Path, n: int) -> None:
    """Stage one changed source file (the commit the hook is timed on)."""
    (root / "src").mkdir(exist_ok=True)
    (root / "src" / "app.py").write_text(f"VALUE = {n}\n")
    subprocess.run(["git", "add", "src/app.py"], cwd=root, check=True, env=ENV)


def commit(root: Path) -> None:
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "change"], cwd=root, check=True, env=ENV)


def median_cpu(
    command: list[str], root: Path, *, warm: bool, repeat: int = 3, env: dict[str, str] | None = None
) -> tuple[float, int]:
    """Median CPU of ``command`` over ``repeat`` 1-file commits; ``warm`` runs it once on the
    previous commit first (the cache a developer's last commit left), else removes the cache."""
    cpus, code = [], 0
    cache = root / ".git" / "workgroup" / "verify-cache.json"
    for n in range(repeat):
        if warm:
            child(command, root, env)
        one_file_commit(root, n)
        if not warm and cache.exists():
            cache.unlink()
        cpu, _rss, code = child(command, root, env)
        cpus.append(cpu)
        commit(root)
    return statistics.median(cpus), code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", default="10000,50000,200000")
    parser.add_argument("--records", type=int, default=100)
    parser.add_argument(
        "--detect-secrets",
        default=os.environ.get("DETECT_SECRETS_HOOK") or shutil.which("detect-secrets-hook") or "",
    )
    parser.add_argument(
        "--before", default="", help="a folder holding an older toolkit/ (git archive REV toolkit | tar -x)"
    )
    parser.add_argument("--full-flags", default="--no-cache", help="flags of the full verify (memory)")
    parser.add_argument(
        "--bin",
        default=str(BIN),
        help="scripts folder whose hook and workgroup to time (default: this environment's; give a fresh venv"
        " with the package installed the regular, non-editable way for the figure users see)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="1-file commits per median")
    args = parser.parse_args(argv)
    scripts = Path(args.bin)
    hook = [str(scripts / "workgroup-verify-hook")]
    full = [str(scripts / "workgroup"), "verify", *args.full_flags.split()]
    ds = [args.detect_secrets, "src/app.py"] if args.detect_secrets else None
    print(
        f"workgroup-verify hook ({scripts}) vs detect-secrets-hook ({args.records} records; median of"
        f" {args.repeat} CPU s; "
        f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    print(
        f"{'commits':>8} {'hook':>7} {'cold':>7} {'ds':>7} {'hook/ds':>8} "
        f"{'verify RSS':>11} {'rev-list RSS':>13} {'ratio':>6} {'before hook':>12} {'before RSS':>11}  result"
    )
    failed = False
    for commits in [int(x) for x in args.commits.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "repo"
            started = time.perf_counter()
            build(root, commits, args.records)
            built = time.perf_counter() - started
            warm, code_w = median_cpu(hook, root, warm=True, repeat=args.repeat)
            cold, code_c = median_cpu(hook, root, warm=False, repeat=args.repeat)
            if ds:
                one_file_commit(root, 99)
                peer = statistics.median(child(ds, root)[0] for _ in range(args.repeat))
            else:
                peer = float("nan")
            _cpu, rss, code_f = child(full, root)
            _cpu, peer_rss, _code = child(["git", "rev-list", "HEAD"], root)
            old_cpu, old_rss = float("nan"), float("nan")
            if args.before:
                old_env = {**ENV, "PYTHONPATH": args.before}
                old_cpu, _code = median_cpu(hook, root, warm=True, repeat=args.repeat, env=old_env)
                old_rss = child([str(BIN / "workgroup"), "verify"], root, old_env)[1] / 1024
            ok = code_w == code_c == code_f == 0
            failed |= not ok
            print(
                f"{commits:>8} {warm:>6.3f}s {cold:>6.3f}s {peer:>6.3f}s {warm / peer:>7.2f}x "
                f"{rss / 1024:>9.1f}MB {peer_rss / 1024:>11.1f}MB {rss / peer_rss:>5.2f}x "
                f"{old_cpu:>11.3f}s {old_rss:>9.1f}MB  "
                f"{'ok' if ok else 'FAILED'} (built in {built:.0f}s)",
                flush=True,
            )
    print("targets: hook/ds <= 0.5x at 50,000 commits; verify RSS <= 2x rev-list RSS at 200,000 commits")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
