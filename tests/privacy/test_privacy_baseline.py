"""Adopting the gate in a repository with findings (issue 26): `privacy baseline` records every
current finding as a fingerprint, `privacy allow` and `baseline` say to `git add` the allowlist,
and the hooks and `--history` read the allowlist the index holds (what teammates and CI get),
never an uncommitted edit. Real git repositories, the hook script as pre-commit runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.harness import GitRepo, run_workgroup

from toolkit.privacy.providers import base62_crc32

HOOK = str(Path(sys.executable).parent / "workgroup-privacy-all-hook")
ALLOWLIST = ".workgroup/privacy-allowlist.yml"
AWS = "Hq7Lm2Xw9Rt4Vy8Bd3Fh6Jk1Mc5Np0Zq2Wx7Ls4E"


def _token() -> str:
    body = "Zq8Xw2Lm4Np6Rt0Vy3Bd5Fh7Jk9Mc1"
    return "gh" + "p_" + body + base62_crc32(body)


FILES = {
    "src/settings.py": f"AWS_SECRET_ACCESS_KEY = '{AWS}'\n",
    "docs/setup.md": f"Use the token {_token()} for the demo.\n",
    ".env": "DB_PASSWORD=Qm7x&Lp2vR9zK4w\n",
    ".reviews/notes.md": "Worked in /home/alice/src/project.\n",
}


def _git(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", *args], cwd=repo.path, capture_output=True, text=True, env=env, check=False)


def _hook(repo: GitRepo, *names: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([HOOK, *names], cwd=repo.path, capture_output=True, text=True, env=env, timeout=120)


def _repo_with_findings(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("start", {"README.md": "# project\n"})
    for rel, text in FILES.items():
        git_repo.write(rel, text)
    assert _git(git_repo, "add", *FILES).returncode == 0
    return git_repo


def test_baseline_records_every_finding_once_and_the_hooks_read_the_index(git_repo: GitRepo) -> None:
    repo = _repo_with_findings(git_repo)
    before = _hook(repo, *FILES)
    assert before.returncode == 1
    # the teammate's refusal names what works with pre-commit alone
    assert "workgroup: allow <rule>" in before.stderr and "pre-commit alone" in before.stderr

    first = run_workgroup("privacy", "baseline", cwd=repo.path)
    out = first.stderr.decode() + first.stdout.decode()
    assert first.returncode == 0, out
    assert "4 new entries" in out, out
    assert f"git add {ALLOWLIST}" in out
    text = (repo.path / ALLOWLIST).read_text(encoding="utf-8")
    assert text.count("- rule:") == 4 and 'reason: "baseline 20' in text
    for secret in (AWS, _token(), "Qm7x&Lp2vR9zK4w", "alice"):
        assert secret not in text and secret[:12] not in text

    # the on-demand scan reads the work tree's allowlist and says it is not committed
    scan = run_workgroup("privacy", "scan", cwd=repo.path)
    assert scan.returncode == 0 and b"not committed yet" in scan.stderr, scan.stderr
    # the hooks read the index: the allowlist is not staged, so nothing is suppressed yet
    assert _hook(repo, *FILES).returncode == 1
    assert _git(repo, "add", ALLOWLIST).returncode == 0
    after = _hook(repo, *FILES, ALLOWLIST)
    assert after.returncode == 0, after.stdout + after.stderr

    # again: nothing new, the file is unchanged, and no git add line (the index has it)
    again = run_workgroup("privacy", "baseline", cwd=repo.path)
    said = again.stderr.decode() + again.stdout.decode()
    assert again.returncode == 0 and "0 new entries" in said and "4 already there" in said, said
    assert "git add" not in said
    assert (repo.path / ALLOWLIST).read_text(encoding="utf-8") == text

    # a finding after the baseline is still refused
    repo.write("src/later.py", f"API_TOKEN = '{_token()}'\n")
    assert _git(repo, "add", "src/later.py").returncode == 0
    later = _hook(repo, "src/later.py")
    assert later.returncode == 1 and "src/later.py" in later.stdout


def test_an_uncommitted_allowlist_edit_changes_nothing_for_the_hooks(git_repo: GitRepo) -> None:
    repo = _repo_with_findings(git_repo)
    assert run_workgroup("privacy", "baseline", "src", cwd=repo.path).returncode == 0
    assert _git(repo, "add", ALLOWLIST).returncode == 0
    assert _hook(repo, "src/settings.py").returncode == 0
    # entries added in the work tree only: the hook still refuses those files
    assert run_workgroup("privacy", "baseline", "docs", cwd=repo.path).returncode == 0
    assert _hook(repo, "docs/setup.md").returncode == 1
    # the work tree's file removed, the staged one still counts (what the commit holds)
    (repo.path / ALLOWLIST).unlink()
    assert _hook(repo, "src/settings.py").returncode == 0
    # the removal staged: nothing is suppressed any more
    assert _git(repo, "rm", "-q", "--cached", ALLOWLIST).returncode == 0
    assert _hook(repo, "src/settings.py").returncode == 1


def test_allow_prints_the_git_add_line(git_repo: GitRepo) -> None:
    repo = _repo_with_findings(git_repo)
    proc = run_workgroup(
        "privacy",
        "allow",
        "docs/setup.md",
        "--line",
        "1",
        "--rule",
        "secret",
        "--reason",
        "demo token",
        cwd=repo.path,
    )
    out = proc.stderr.decode() + proc.stdout.decode()
    assert proc.returncode == 0 and "1 entry added" in out and f"git add {ALLOWLIST}" in out, out


def test_a_symlink_staged_as_the_allowlist_suppresses_nothing(git_repo: GitRepo, tmp_path: Path) -> None:
    repo = _repo_with_findings(git_repo)
    assert run_workgroup("privacy", "baseline", cwd=repo.path).returncode == 0
    outside = tmp_path / "elsewhere.yml"
    outside.write_text((repo.path / ALLOWLIST).read_text(encoding="utf-8"), encoding="utf-8")
    (repo.path / ALLOWLIST).unlink()
    os.symlink(outside, repo.path / ALLOWLIST)
    assert _git(repo, "add", ALLOWLIST).returncode == 0
    proc = _hook(repo, "src/settings.py")
    assert proc.returncode == 2 and "ALLOWLIST_UNREADABLE" in proc.stderr, proc.stderr


def test_history_reads_the_committed_allowlist(git_repo: GitRepo) -> None:
    repo = _repo_with_findings(git_repo)
    assert (
        _git(repo, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qm", "x").returncode
        == 0
    )
    assert run_workgroup("privacy", "baseline", cwd=repo.path).returncode == 0
    # recorded in the work tree only: CI (a checkout of what was pushed) would not have it
    assert run_workgroup("privacy", "scan", "--history", cwd=repo.path).returncode == 1
    assert _git(repo, "add", ALLOWLIST).returncode == 0
    assert run_workgroup("privacy", "scan", "--history", cwd=repo.path).returncode == 0


def test_baseline_refuses_bad_input_and_writes_nothing(git_repo: GitRepo) -> None:
    repo = _repo_with_findings(git_repo)
    missing = run_workgroup("privacy", "baseline", "nope", cwd=repo.path)
    assert missing.returncode == 2 and b"PATH_NOT_FOUND" in missing.stderr
    empty = run_workgroup("privacy", "baseline", "--reason", "  ", cwd=repo.path)
    assert empty.returncode == 2 and b"REASON_REQUIRED" in empty.stderr
    # an allowlist whose list is not last: appending would land outside it
    repo.write(ALLOWLIST, "allow: []\nnote: kept\n")
    stuck = run_workgroup("privacy", "baseline", cwd=repo.path)
    assert stuck.returncode == 2 and b"ALLOWLIST_INVALID" in stuck.stderr
    assert (repo.path / ALLOWLIST).read_text(encoding="utf-8") == "allow: []\nnote: kept\n"
