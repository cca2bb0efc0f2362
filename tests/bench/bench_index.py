"""Benchmark `workgroup index` on a real repository with tens of thousands of files.

By default the repository is built from this Python's own standard library folder (a real tree of
real files, ~50k on CPython 3.11 with its test suite), committed with git. Prints the cold build
(no cache), the warm reuse (tree unchanged) and the CLI wall time.

    .venv/bin/python tests/bench/bench_index.py [SOURCE_DIR]
    BENCH_INDEX_REPO=/tmp/idx-repo BENCH_INDEX_PACKED=1 .venv/bin/python tests/bench/bench_index.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path


def build_repo(source: Path, dest: Path) -> int:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(
        source, dest / "src", symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(dest), "commit", "-qm", "snapshot"], check=True, env=env)
    return 0


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sysconfig.get_paths()["stdlib"])
    keep = os.environ.get("BENCH_INDEX_REPO")  # reuse a repository built by an earlier run
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        repo_dir = Path(keep) if keep else Path(tmp) / "repo"
        t0 = time.perf_counter()
        if not (repo_dir / ".git").is_dir():
            build_repo(source, repo_dir)
        if os.environ.get("BENCH_INDEX_PACKED"):
            subprocess.run(["git", "-C", str(repo_dir), "gc", "-q"], check=True)
        files = subprocess.run(
            ["git", "-C", str(repo_dir), "ls-files"], check=True, capture_output=True
        ).stdout.count(b"\n")
        packed = (
            "packed" if not any((repo_dir / ".git/objects").glob("[0-9a-f][0-9a-f]")) else "loose objects"
        )
        print(f"repository: {files} tracked files, {packed} (ready in {time.perf_counter() - t0:.1f} s)")
        home = os.getcwd()
        os.chdir(repo_dir)
        from toolkit.infra.git import discover
        from toolkit.workflow.indexing import inventory

        repo = discover()
        cold = []
        for _ in range(3):
            t = time.perf_counter()
            inv = inventory(repo, use_cache=False)
            cold.append(time.perf_counter() - t)
        inventory(repo)  # fill the cache
        warm = []
        for _ in range(5):
            t = time.perf_counter()
            assert inventory(repo).reused
            warm.append(time.perf_counter() - t)
        (repo.layout.local / "index").mkdir(exist_ok=True)
        exe = Path(sys.executable).with_name("workgroup")
        cli = []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run([str(exe), "index"], check=True, capture_output=True)
            cli.append(time.perf_counter() - t)
        size = len(inv.to_bytes())
        print(f"cold build (no cache), in-process: median {statistics.median(cold) * 1000:.0f} ms over 3")
        print(
            f"warm reuse (tree unchanged), in-process: median {statistics.median(warm) * 1000:.0f} ms over 5"
        )
        print(
            "`workgroup index` CLI, warm, whole process: "
            f"median {statistics.median(cli) * 1000:.0f} ms over 3"
        )
        os.chdir(home)
        print(
            f"inventory: {inv.document['totals']['files']} files, {size / 1e6:.1f} MB of JSON, "
            f"{inv.digest[:19]}..."
        )


if __name__ == "__main__":
    main()
