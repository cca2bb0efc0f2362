"""Temp files of the write primitives (issue 24): never in the work tree, orphans swept.

A writer killed with SIGKILL between its temp write and the rename used to leave
``.<name>.<random>.tmp`` beside the target, under ``.workgroup/``: untracked, not ignored, and
committed by ``git add -A``. Temps now live in ``<git common dir>/workgroup/tmp/``; the next
writer removes those older than a minute; a work tree on another file system (EXDEV) gets a temp
beside the target whose name ``info/exclude`` ignores.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.harness import ROOT, GitRepo
from support.sync import read_line

from toolkit.infra.git import discover
from toolkit.infra.store import (
    BESIDE_EXCLUDE,
    BESIDE_SUFFIX,
    ORPHAN_AGE_SECONDS,
    Layout,
    atomic_write,
    create_exclusive,
)

WRITER = """
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from toolkit.infra.store import Layout, atomic_write
layout = Layout(Path(sys.argv[1]), Path(sys.argv[2]))
hold = sys.argv[3] == "hold"
real_replace = os.replace
def replace(src, dst):
    if hold and i == 3:  # the temp is whole on disk and not yet renamed: the kill lands here
        print("between", flush=True)
        time.sleep(600)  # not a barrier: held here until the test kills it
    real_replace(src, dst)
os.replace = replace
big = "x" * 4_000_000
i = 0
while True:
    i += 1
    atomic_write(layout.lineage_path("wg", "lin-1"), json.dumps({{"n": i, "pad": big}}))
    if i == 2:
        print("writing", flush=True)
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def _untracked(repo: Path) -> list[str]:
    out = _git(repo, "status", "--porcelain", "--untracked-files=all")
    return sorted(line[3:] for line in out.splitlines())


def _kill_writer(lay: Layout, hold: bool, delay: float) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WRITER.format(root=str(ROOT)),
            str(lay.workdir),
            str(lay.common_dir),
            "hold" if hold else "free",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert read_line(proc.stdout.fileno(), timeout=60) == b"writing\n"
    if hold:
        assert read_line(proc.stdout.fileno(), timeout=60) == b"between\n"
    else:
        time.sleep(delay)  # not a barrier: anywhere inside the write loop
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_kill_mid_write_leaves_nothing_in_the_work_tree(git_repo: GitRepo) -> None:
    git_repo.commit("base", {"README.md": "hi\n"})
    lay = discover(str(git_repo.path)).layout
    temp_dir = lay.local / "tmp"
    target = lay.lineage_path("wg", "lin-1")
    # held between the temp's write and its rename (deterministic), then killed at loose times
    for attempt, hold in enumerate([True, True, False, False, False, False]):
        _kill_writer(lay, hold, delay=attempt * 0.013)
        # only the intended file, whole; no temp anywhere in the work tree
        assert _untracked(git_repo.path) == [".workgroup/workgroups/wg/lineages/lin-1.json"]
        assert target.read_text(encoding="utf-8").startswith('{"n": ')
        leftovers = list(temp_dir.iterdir()) if temp_dir.is_dir() else []
        if hold:  # the kill did land mid-write: its orphan is in the local state dir
            assert len(leftovers) == 1 and leftovers[0].name.startswith(".lin-1.json.")
        for leftover in leftovers:
            leftover.unlink()
    _git(git_repo.path, "add", "-A")
    staged = _git(git_repo.path, "diff", "--cached", "--name-only").split()
    assert staged == [".workgroup/workgroups/wg/lineages/lin-1.json"]


def test_orphan_older_than_a_minute_is_removed_by_the_next_write(git_repo: GitRepo) -> None:
    lay = discover(str(git_repo.path)).layout
    temp_dir = lay.local / "tmp"
    temp_dir.mkdir(parents=True)
    old = temp_dir / ".lin-1.json.abcd1234.tmp"
    fresh = temp_dir / ".lin-1.json.efgh5678.tmp"
    unrelated = temp_dir / "keep-me"
    for item in (old, fresh, unrelated):
        item.write_text("partial", encoding="utf-8")
    stale = time.time() - ORPHAN_AGE_SECONDS - 30
    os.utime(old, (stale, stale))
    os.utime(unrelated, (stale, stale))
    atomic_write(lay.capsule_path("wg", "t1"), "{}\n")
    assert not old.exists()
    assert fresh.exists() and unrelated.exists()
    assert sorted(p.name for p in temp_dir.iterdir()) == [fresh.name, "keep-me"]
    assert _untracked(git_repo.path) == [".workgroup/workgroups/wg/capsules/t1.json"]


def test_create_exclusive_leaves_no_temp(git_repo: GitRepo) -> None:
    lay = discover(str(git_repo.path)).layout
    claim = lay.workgroup / "claims" / "c.json"
    assert create_exclusive(claim, "{}\n") is True
    assert create_exclusive(claim, "{}\n") is False
    assert _untracked(git_repo.path) == [".workgroup/claims/c.json"]
    assert list((lay.local / "tmp").iterdir()) == []


def test_outside_any_repository_the_temp_is_beside(tmp_path: Path) -> None:
    target = tmp_path / "logs" / "state.json"
    stale_temp = tmp_path / "logs" / ".state.json.zzzz0000.tmp"
    stale_temp.parent.mkdir()
    stale_temp.write_text("partial", encoding="utf-8")
    stale = time.time() - ORPHAN_AGE_SECONDS - 5
    os.utime(stale_temp, (stale, stale))
    atomic_write(target, "{}\n")
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]


def _other_mount() -> Path | None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        return None
    return shm


def test_worktree_on_another_file_system_falls_back_to_an_ignored_temp(
    git_repo: GitRepo, tmp_path: Path
) -> None:
    shm = _other_mount()
    if shm is None or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second file system to put a worktree on")
    git_repo.commit("base", {"README.md": "hi\n"})
    import tempfile

    place = Path(tempfile.mkdtemp(dir=shm))
    try:
        tree = place / "wt"
        _git(git_repo.path, "worktree", "add", "-q", str(tree))
        lay = discover(str(tree)).layout
        assert os.stat(lay.common_dir).st_dev != os.stat(tree).st_dev
        target = lay.capsule_path("wg", "t1")
        target.parent.mkdir(parents=True)
        orphan = target.parent / f".t1.json.q1w2e3r4{BESIDE_SUFFIX}"
        orphan.write_text("partial", encoding="utf-8")
        stale = time.time() - ORPHAN_AGE_SECONDS - 5
        os.utime(orphan, (stale, stale))
        atomic_write(target, '{"a": 1}\n')
        assert target.read_text(encoding="utf-8") == '{"a": 1}\n'
        assert not orphan.exists()  # the fallback ran (it sweeps beside) and left nothing
        assert sorted(p.name for p in target.parent.iterdir()) == ["t1.json"]
        exclude = (Path(lay.common_dir) / "info" / "exclude").read_text(encoding="utf-8")
        assert BESIDE_EXCLUDE in exclude.splitlines()
        # a temp a kill would leave there is ignored by git
        planted = target.parent / f".t1.json.zzzz9999{BESIDE_SUFFIX}"
        planted.write_text("partial", encoding="utf-8")
        assert _untracked(tree) == [".workgroup/workgroups/wg/capsules/t1.json"]
        assert create_exclusive(target.parent / "c.json", "{}\n") is True
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(place / "wt")], cwd=git_repo.path)
        import shutil

        shutil.rmtree(place, ignore_errors=True)


ARTIFACT_WRITER = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from toolkit.infra.store import Layout
from toolkit.records.results import store_artifact
layout = Layout(Path(sys.argv[1]), Path(sys.argv[2]))
raw = Path(sys.argv[3])
hold = sys.argv[4] == "hold"
real_chmod = os.chmod
def chmod(path, mode):
    if hold and i == 2:  # the copy is whole in its temp and not yet renamed: the kill lands here
        print("between", flush=True)
        time.sleep(600)  # not a barrier: held here until the test kills it
    real_chmod(path, mode)
os.chmod = chmod
i = 0
while True:
    i += 1
    store_artifact(layout, raw, "knowzcode/artifacts")
    if i == 1:
        print("writing", flush=True)
"""


def test_kill_mid_artifact_copy_leaves_nothing_in_the_work_tree(git_repo: GitRepo, tmp_path: Path) -> None:
    git_repo.commit("base", {"README.md": "hi\n"})
    lay = discover(str(git_repo.path)).layout
    raw = tmp_path / "raw.log"
    raw.write_bytes(b"line of raw output\n" * 400_000)  # 7.6 MB: the copy takes a while
    temp_dir = lay.local / "tmp"
    for attempt, hold in enumerate([True, True, False, False, False, False]):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                ARTIFACT_WRITER.format(root=str(ROOT)),
                str(lay.workdir),
                str(lay.common_dir),
                str(raw),
                "hold" if hold else "free",
            ],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None
        assert read_line(proc.stdout.fileno(), timeout=60) == b"writing\n"
        if hold:
            assert read_line(proc.stdout.fileno(), timeout=60) == b"between\n"
        else:
            time.sleep(attempt * 0.011)  # not a barrier: where the kill lands inside the copy
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        untracked = _untracked(git_repo.path)
        assert len(untracked) == 1 and untracked[0].startswith("knowzcode/artifacts/sha256-"), untracked
        leftovers = list(temp_dir.iterdir()) if temp_dir.is_dir() else []
        if hold:  # the kill landed mid-copy, and what it left is outside the work tree
            assert len(leftovers) == 1
        for leftover in leftovers:
            leftover.unlink()
