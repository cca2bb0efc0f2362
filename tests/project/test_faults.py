"""Faults (issue 15): kill -9 mid-write and unwritable output, for every kind of writer.

Writers: the append-only logs (vault journal and telemetry log through ``append_jsonl``, the CM
event log through ``run_logs.append_line``), the registry (``write_json_atomic``) and the stores
(``atomic_write``: capsules, results, rollout history, pseudonym map). Each is killed with
SIGKILL while it writes in a loop; afterwards the file is whole (the old or the new version, or
complete lines plus at most one torn last line that the next append fences off) and the toolkit
reads and writes it again without complaint.

Unwritable output: this suite runs as any user, root included, so permissions cannot make a
place unwritable; instead a directory is planted where the file must go, or a file where its
directory must be. Data on stdout is tried with stdout closed (``>&-``) and with ``/dev/full``.
Each case ends with a coded exit, no traceback, and nothing half-written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.harness import ROOT, GitRepo, run_workgroup
from support.hostile import snapshot, tried
from support.sync import read_line

from toolkit.infra.git import discover


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


# --- kill -9 mid-write ---------------------------------------------------------------------

WRITER = """
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
kind, workdir, common = sys.argv[1:4]
from toolkit.infra.store import Layout, append_jsonl, atomic_write, write_json_atomic
layout = Layout(Path(workdir), Path(common))
big = "x" * 200_000  # large records: a kill lands inside a write, not between them
i = 0
while True:
    i += 1
    if kind == "journal":
        append_jsonl(layout.vault_journal, {{"type": "delta", "seq": i, "delta": {{"title": big}}}})
    elif kind == "telemetry":
        append_jsonl(layout.telemetry_log, {{"n": i, "pad": big}})
    elif kind == "registry":
        registry = {{"schema": "workgroup.owners/v1", "writers": [], "pad": big, "n": i}}
        write_json_atomic(layout.owners_registry, registry)
    elif kind == "store":
        atomic_write(layout.capsule_path("wg", "t1"), json.dumps({{"n": i, "pad": big}}))
    elif kind == "cm-log":
        from toolkit.cm.run_logs import append_line
        append_line(Path(workdir) / "specs" / "log.jsonl", {{"n": i, "pad": big}}, private=False)
    if i == 3:
        print("writing", flush=True)  # three whole records down: the parent may kill from now on
"""

KILL_TARGETS = {
    "journal": lambda lay: lay.vault_journal,
    "telemetry": lambda lay: lay.telemetry_log,
    "registry": lambda lay: lay.owners_registry,
    "store": lambda lay: lay.capsule_path("wg", "t1"),
    "cm-log": lambda lay: lay.workdir / "specs" / "log.jsonl",
}


def _kill_mid_write(kind: str, repo: GitRepo, tmp_path: Path, delay: float) -> Path:
    lay = discover(str(repo.path)).layout
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WRITER.format(root=str(ROOT)),
            kind,
            str(lay.workdir),
            str(lay.common_dir),
        ],
        env=_env(),
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert read_line(proc.stdout.fileno(), timeout=60) == b"writing\n", "the writer never got going"
    # not a barrier: the writer runs on regardless; the delay moves where in its writes the kill lands
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    tried(f"kill -9 ({kind})")
    return Path(KILL_TARGETS[kind](lay))


@pytest.mark.parametrize("kind", ["journal", "telemetry", "cm-log"])
@pytest.mark.parametrize("delay", [0.0, 0.07])
def test_kill_mid_append_leaves_whole_lines(
    kind: str, delay: float, git_repo: GitRepo, tmp_path: Path
) -> None:
    from toolkit.infra.store import append_jsonl, read_jsonl

    path = _kill_mid_write(kind, git_repo, tmp_path, delay)
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    # every line but the last is one whole record; the last is empty (clean) or torn
    for line in lines[:-1]:
        assert json.loads(line)["pad"] if kind != "journal" else json.loads(line)["delta"]
    rows, problems = read_jsonl(path, follow_symlinks=True)
    assert len(rows) >= 3 and all(p.reason == "torn last line" for p in problems) and len(problems) <= 1
    # the next append starts on a fresh line: the new record is whole whatever the tear
    append_jsonl(path, {"after": "kill"})
    rows_after, problems_after = read_jsonl(path, follow_symlinks=True)
    assert rows_after[-1].value == {"after": "kill"}
    assert len(rows_after) == len(rows) + 1 and len(problems_after) == len(problems)


def test_kill_mid_journal_write_then_vault_works(git_repo: GitRepo, tmp_path: Path) -> None:
    _kill_mid_write("journal", git_repo, tmp_path, 0.03)
    listed = run_workgroup("vault", "list", "--json", cwd=git_repo.path)
    assert listed.returncode == 0, listed.stderr
    before = json.loads(listed.stdout)["entries"]
    added = run_workgroup(
        "vault",
        "add",
        "-",
        "--json",
        stdin=json.dumps({"delta": {"title": "After", "content": "kill"}}),
        cwd=git_repo.path,
    )
    assert added.returncode == 0, added.stderr
    after = json.loads(run_workgroup("vault", "list", "--json", cwd=git_repo.path).stdout)["entries"]
    assert len(after) == len(before) + 1  # nothing lost, the new entry whole


@pytest.mark.parametrize("kind", ["registry", "store"])
@pytest.mark.parametrize("delay", [0.0, 0.07])
def test_kill_mid_atomic_write_leaves_old_or_new(
    kind: str, delay: float, git_repo: GitRepo, tmp_path: Path
) -> None:
    path = _kill_mid_write(kind, git_repo, tmp_path, delay)
    data = json.loads(path.read_text(encoding="utf-8"))  # never a part of a file
    assert data["n"] >= 3 and len(data["pad"]) == 200_000
    if kind == "registry":
        data.pop("pad"), data.pop("n")
        path.write_text(json.dumps(data), encoding="utf-8")
        listed = run_workgroup("owners", "list", "--json", cwd=git_repo.path)
        assert listed.returncode == 0, listed.stderr


# --- unwritable destinations ----------------------------------------------------------------


def _local(repo: GitRepo) -> Path:
    return repo.path / ".git" / "workgroup"


def _block_local_state(repo: GitRepo) -> None:
    """The local state dir cannot be created: a file sits where it must go."""
    local = _local(repo)
    if local.exists():
        import shutil

        shutil.rmtree(local)
    local.write_text("not a directory\n", encoding="utf-8")


def _capsule_workgroup() -> str:
    from test_capsule_support import valid_capsule

    return str(valid_capsule()["workgroup_id"])


def _file_for_dir(repo: GitRepo, workgroup: str) -> None:
    """A file where the workgroup's directory must be: nothing can be stored under it."""
    folder = repo.path / ".workgroup" / "workgroups"
    folder.mkdir(parents=True)
    (folder / workgroup).write_text("a file, not a directory\n", encoding="utf-8")


def _capsule_input(repo: GitRepo) -> Path:
    from test_capsule_support import valid_capsule

    capsule = valid_capsule()
    capsule.pop("capsule_hash", None)
    source = repo.path.parent / "capsule.json"
    source.write_text(json.dumps(capsule), encoding="utf-8")
    return source


UNWRITABLE: dict[str, tuple[Callable[[GitRepo], object], Callable[[GitRepo], list[str]]]] = {
    # writer: (how the destination is made unwritable, the command)
    "vault journal": (_block_local_state, lambda r: ["vault", "add", "-"]),
    "owners registry": (_block_local_state, lambda r: ["owners", "acquire", "lin-1", "--path", "src/a.py"]),
    "telemetry log": (
        lambda r: (_local(r) / "telemetry.jsonl").mkdir(parents=True),
        lambda r: ["route", "-", "--record"],
    ),
    "probe cache": (
        _block_local_state,
        lambda r: ["probe", "record", "knowz-mcp", "--healthy", "--phase", "1A"],
    ),
    "capsule store": (
        lambda r: _file_for_dir(r, _capsule_workgroup()),
        lambda r: ["capsule", "seal", str(_capsule_input(r)), "--write"],
    ),
    "result store": (
        lambda r: _file_for_dir(r, "wg"),
        lambda r: [
            "result",
            "store",
            "--policy",
            str(_policy(r)),
            "--summary",
            str(_summary(r)),
            "--workgroup",
            "wg",
            "--task",
            "t1",
        ],
    ),
}


def _policy(repo: GitRepo) -> Path:
    path = repo.path.parent / "policy.json"
    path.write_text(json.dumps({"input": {"material": True}}), encoding="utf-8")
    return path


def _summary(repo: GitRepo) -> Path:
    path = repo.path.parent / "summary.md"
    path.write_text("# Summary\n\nDone.\n", encoding="utf-8")
    return path


STDIN = {
    "vault journal": json.dumps({"delta": {"title": "T", "content": "C"}}),
    "telemetry log": json.dumps({"input": {"role": "builder", "owned_files": ["src/a.py"]}}),
}


@pytest.mark.parametrize("writer", sorted(UNWRITABLE))
def test_unwritable_destination_is_a_coded_error_and_nothing_half_written(
    writer: str, git_repo: GitRepo
) -> None:
    git_repo.commit("init", {"src/a.py": "x = 1\n", "README.md": "# p\n"})
    block, argv = UNWRITABLE[writer]
    block(git_repo)
    before = snapshot(git_repo.path)
    tried(f"unwritable ({writer})")
    proc = run_workgroup(*argv(git_repo), stdin=STDIN.get(writer), cwd=git_repo.path)
    err = proc.stderr.decode("utf-8", "replace")
    # exit 3: the environment refused the write (not a usage error that stopped before writing)
    assert proc.returncode == 3, (proc.returncode, err)
    assert "Traceback" not in err and "error[ENVIRONMENT" in err, err
    assert snapshot(git_repo.path) == before  # nothing half-written, no temp file left


# --- unwritable stdout for data commands ----------------------------------------------------

DATA_COMMANDS = {
    "owners list --json": (["owners", "list", "--json"], None),
    "vault list --json": (["vault", "list", "--json"], None),
    "verify --json": (["verify", "--json"], None),
    "route --json": (["route", "-"], json.dumps({"input": {"role": "builder", "owned_files": ["a.py"]}})),
    "runtime budget": (["runtime", "budget"], json.dumps({"used": 1, "limit": 2})),
}


@pytest.mark.parametrize("name", sorted(DATA_COMMANDS))
@pytest.mark.parametrize("how", ["closed", "full"])
def test_unwritable_stdout_is_a_coded_exit_without_traceback(name: str, how: str, git_repo: GitRepo) -> None:
    git_repo.commit("init", {"README.md": "# p\n"})
    argv, stdin = DATA_COMMANDS[name]
    if how == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    redirect = ">&-" if how == "closed" else ">/dev/full"
    line = " ".join(f"'{a}'" for a in argv)
    tried(f"stdout {how} ({name})")
    proc = subprocess.run(
        ["/bin/sh", "-c", f'exec "{sys.executable}" -m toolkit {line} {redirect}'],
        input=(stdin or "").encode(),
        stderr=subprocess.PIPE,
        cwd=git_repo.path,
        env=_env(),
        timeout=120,
        check=False,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if name.startswith("runtime"):
        assert proc.returncode == 1  # the runtime's exit codes are 0 and 1 only
    else:
        assert proc.returncode == 3 and "error[" in err, (proc.returncode, err)
