"""`workgroup demo` from the development install (the wheel's run is in tests/project/test_packaging.py).

Runs the narrated main job end to end and checks what it leaves behind with --keep: a real git
history and sealed records that `workgroup verify` accepts, so the demo cannot pass by narration alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
from support.harness import run_workgroup

from toolkit.demo.steps import STEPS


def test_demo_runs_every_step_and_leaves_records_that_verify(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = run_workgroup("demo", "--keep", env=env, timeout=600)
    out = proc.stdout.decode()
    assert proc.returncode == 0, out[-4000:] + proc.stderr.decode()[-2000:]
    headings = [line for line in out.splitlines() if line.startswith("== ")]
    assert len(headings) == len(STEPS) and "!! step" not in out
    assert out.rstrip().endswith("every step behaved as narrated")
    (root,) = tmp_path.glob("workgroup-demo-*/project")
    repo = pygit2.Repository(str(root))
    assert sum(1 for _ in repo.walk(repo.head.target)) >= 2  # the demo committed its work
    assert list((root / ".workgroup" / "workgroups").rglob("*.json"))  # sealed records exist
    verified = run_workgroup("verify", cwd=root, env=env, timeout=120)
    assert verified.returncode == 0, verified.stdout.decode() + verified.stderr.decode()
