"""The verify hook's cache (``<git common dir>/workgroup/verify-cache.json``): used by the hook,
never by ``workgroup verify``; an edit, a history rewrite, a corrupt or symlinked cache file all
mean recompute, never "verified"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, cli, run_workgroup
from test_verify import CAPSULE_REL, git, seal

from toolkit.infra.git import discover, squash_onto
from toolkit.records import verify_cache


def hook(repo: GitRepo, *args: str) -> Any:
    return cli(*args, cwd=repo.path, script="workgroup-verify-hook")


def cache_file(repo: GitRepo) -> Path:
    return repo.path / ".git" / "workgroup" / "verify-cache.json"


@pytest.fixture
def sealed_repo(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("initial", {"src/app.py": "a = 1\n"})
    git_repo.commit("work", {"src/app.py": "a = 2\n"})
    seal(git_repo)
    git_repo.commit("record capsule")
    return git_repo


def forge(repo: GitRepo, rel: str) -> None:
    """A cache that vouches for the record at ``rel`` as it is now, at the current HEAD (what a
    previous hook run would have written had the record been clean)."""
    data = json.loads((repo.path / rel).read_text())
    path = cache_file(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "version": verify_cache.VERSION,
        "rules": verify_cache.rules_fingerprint(),
        "workdir": str(repo.path.resolve()),
        "head": str(repo.raw.head.target),
        "records": {rel: verify_cache.record_key(data)},
    }
    path.write_text(json.dumps(document))


def tamper(repo: GitRepo) -> None:
    data = json.loads((repo.path / CAPSULE_REL).read_text())
    data["objective"] = data["objective"] + " (edited)"
    (repo.path / CAPSULE_REL).write_text(json.dumps(data))


def test_the_hook_writes_a_cache_of_the_records_it_proved(sealed_repo: GitRepo) -> None:
    assert not cache_file(sealed_repo).exists()
    assert hook(sealed_repo).exit_code == 0
    document = json.loads(cache_file(sealed_repo).read_text())
    assert document["head"] == str(sealed_repo.raw.head.target)
    assert list(document["records"]) == [CAPSULE_REL]
    assert os.stat(cache_file(sealed_repo)).st_mode & 0o077 == 0
    # `workgroup verify` (CI) neither reads nor writes it
    cache_file(sealed_repo).unlink()
    assert run_workgroup("verify", cwd=sealed_repo.path).returncode == 0
    assert not cache_file(sealed_repo).exists()


def test_an_entry_is_trusted_by_the_hook_and_never_by_ci(sealed_repo: GitRepo) -> None:
    """The cache is what makes the hook skip a record: a (forged) entry for an edited capsule
    passes the hook, while `workgroup verify` and the hook's --no-cache still find the edit."""
    tamper(sealed_repo)
    forge(sealed_repo, CAPSULE_REL)
    assert hook(sealed_repo).exit_code == 0
    ci = run_workgroup("verify", cwd=sealed_repo.path)
    assert ci.returncode == 1 and b"hash-mismatch" in ci.stdout
    assert run_workgroup("verify", "--no-cache", cwd=sealed_repo.path).returncode == 1
    no_cache = hook(sealed_repo, "--no-cache")
    assert no_cache.exit_code == 1 and "hash-mismatch" in no_cache.stdout


def test_an_edit_after_caching_is_found(sealed_repo: GitRepo) -> None:
    assert hook(sealed_repo).exit_code == 0
    tamper(sealed_repo)
    result = hook(sealed_repo)
    assert result.exit_code == 1 and "hash-mismatch" in result.stdout
    # a record with a finding is not cached: the next run finds it again
    assert CAPSULE_REL not in json.loads(cache_file(sealed_repo).read_text())["records"]
    assert hook(sealed_repo).exit_code == 1


def test_new_commits_keep_the_cache_and_a_history_rewrite_drops_it(sealed_repo: GitRepo) -> None:
    assert hook(sealed_repo).exit_code == 0
    sealed_repo.commit("more work", {"src/other.py": "b = 1\n"})
    assert hook(sealed_repo).exit_code == 0  # the cached HEAD is an ancestor of the new one
    assert json.loads(cache_file(sealed_repo).read_text())["head"] == str(sealed_repo.raw.head.target)
    squash_onto(discover(sealed_repo.path), "HEAD~3", "rewrite")  # drops the checkpoint
    result = hook(sealed_repo)
    assert result.exit_code == 1 and "checkpoint-not-ancestor" in result.stdout


def test_a_forged_entry_for_a_rewritten_history_is_not_trusted(sealed_repo: GitRepo) -> None:
    """An entry proven for a HEAD that is no longer an ancestor vouches for nothing."""
    forge(sealed_repo, CAPSULE_REL)
    squash_onto(discover(sealed_repo.path), "HEAD~2", "rewrite")
    result = hook(sealed_repo)
    assert result.exit_code == 1 and "checkpoint-not-ancestor" in result.stdout


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"version": 1}',
        b"\xff\xfe",
        json.dumps({"version": 1, "records": 3}).encode(),
    ],
)
def test_a_corrupt_cache_reads_as_empty(sealed_repo: GitRepo, content: bytes) -> None:
    path = cache_file(sealed_repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    tamper(sealed_repo)
    result = hook(sealed_repo)
    assert result.exit_code == 1 and "hash-mismatch" in result.stdout and "Traceback" not in result.stderr
    assert json.loads(path.read_text())["version"] == verify_cache.VERSION  # rewritten whole


def test_a_cache_of_other_rules_or_another_work_tree_is_not_trusted(sealed_repo: GitRepo) -> None:
    tamper(sealed_repo)
    for field, value in (("rules", "0" * 64), ("workdir", "/elsewhere")):
        forge(sealed_repo, CAPSULE_REL)
        document = json.loads(cache_file(sealed_repo).read_text())
        document[field] = value
        cache_file(sealed_repo).write_text(json.dumps(document))
        result = hook(sealed_repo)
        assert result.exit_code == 1 and "hash-mismatch" in result.stdout, field


def test_a_symlinked_cache_is_neither_read_nor_written_through(sealed_repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    forge(sealed_repo, CAPSULE_REL)
    cache_file(sealed_repo).rename(outside)
    before = outside.read_bytes()
    cache_file(sealed_repo).symlink_to(outside)
    tamper(sealed_repo)  # the forged entry would vouch for it, were the link followed
    forge_doc = json.loads(before)
    forge_doc["records"][CAPSULE_REL] = verify_cache.record_key(
        json.loads((sealed_repo.path / CAPSULE_REL).read_text())
    )
    outside.write_text(json.dumps(forge_doc))
    before = outside.read_bytes()
    result = hook(sealed_repo)
    assert result.exit_code == 1 and "hash-mismatch" in result.stdout
    assert outside.read_bytes() == before
    # a symlinked workgroup/ folder is refused the same way
    cache_file(sealed_repo).unlink()
    folder = cache_file(sealed_repo).parent
    (tmp_path / "state").mkdir()
    for entry in folder.iterdir():
        entry.rename(tmp_path / "state" / entry.name)
    folder.rmdir()
    (tmp_path / "state" / "verify-cache.json").write_bytes(before)
    folder.symlink_to(tmp_path / "state")
    result = hook(sealed_repo)
    assert result.exit_code == 1 and "hash-mismatch" in result.stdout
    assert (tmp_path / "state" / "verify-cache.json").read_bytes() == before


def test_the_hook_does_not_import_pygit2(sealed_repo: GitRepo) -> None:
    code = (
        "import sys\nfrom toolkit.hooks.verify import main\nrc = main([])\n"
        "assert 'pygit2' not in sys.modules, 'pygit2 imported'\nraise SystemExit(rc)\n"
    )
    for _ in range(2):  # cold, then warm
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=sealed_repo.path, capture_output=True, check=False
        )
        assert proc.returncode == 0, proc.stderr


def test_an_option_shaped_rev_is_an_unknown_revision(sealed_repo: GitRepo, tmp_path: Path) -> None:
    target = tmp_path / "written"
    for args in ((f"--rev=--output={target}",), ("--rev=-h",)):
        proc = run_workgroup("verify", *args, cwd=sealed_repo.path)
        assert proc.returncode == 2 and b"UNKNOWN_REVISION" in proc.stderr, args
        assert hook(sealed_repo, *args).exit_code == 2
    assert not target.exists()


def test_the_hook_checks_records_in_a_linked_worktree(sealed_repo: GitRepo, tmp_path: Path) -> None:
    tree = tmp_path / "linked"
    git(sealed_repo.path, "worktree", "add", "-q", str(tree), "HEAD")
    assert cli(cwd=tree, script="workgroup-verify-hook").exit_code == 0
    document = json.loads(cache_file(sealed_repo).read_text())  # in the common dir
    assert document["workdir"] == str(tree.resolve())
    data = json.loads((tree / CAPSULE_REL).read_text())
    data["objective"] += " (edited)"
    (tree / CAPSULE_REL).write_text(json.dumps(data))
    result = cli(cwd=tree, script="workgroup-verify-hook")
    assert result.exit_code == 1 and "hash-mismatch" in result.stdout
