"""`workgroup privacy allow` and the allowlist read against committed symlinks (``toolkit.infra.confined``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.harness import GitRepo, cli

CODE = "PATH_OUTSIDE_REPOSITORY"
KEY = "sk_" + "live_" + "4eC39HqLyjWD4rjtT1zdp7dcFAKE"  # synthetic, non-working
ALLOW = (
    "privacy",
    "allow",
    "docs/vector.md",
    "--line",
    "1",
    "--rule",
    "secret",
    "--reason",
    "published vector",
)


link = GitRepo.link  # link(repo, rel, target): a committed symlink (conftest)


@pytest.fixture
def outside(git_repo: GitRepo) -> Path:
    folder = git_repo.path.parent / "outside"
    folder.mkdir()
    return folder


def test_allow_never_writes_through_a_symlinked_workgroup_folder(git_repo: GitRepo, outside: Path) -> None:
    git_repo.commit("vector", {"docs/vector.md": f"test vector: {KEY}\n"})
    link(git_repo, ".workgroup", "../outside")
    code, _, err = cli(*ALLOW)
    # the first file read under .workgroup/ (the config's artifact globs, then the allowlist) is refused
    assert code == 2 and err.startswith(f"error[{CODE}]: .workgroup/"), err
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("target", ["../../outside/list.yml", "real-list.yml", "nowhere.yml"])
def test_allow_never_replaces_a_symlinked_allowlist(git_repo: GitRepo, outside: Path, target: str) -> None:
    (outside / "list.yml").write_text("allow: []\n")
    git_repo.commit(
        "vector", {"docs/vector.md": f"test vector: {KEY}\n", ".workgroup/real-list.yml": "allow: []\n"}
    )
    allowlist = link(git_repo, ".workgroup/privacy-allowlist.yml", target)
    code, _, err = cli(*ALLOW)
    assert code == 2 and f"error[{CODE}]" in err, err
    assert allowlist.is_symlink() and (outside / "list.yml").read_text() == "allow: []\n"


def test_scan_refuses_an_allowlist_leading_outside(git_repo: GitRepo, outside: Path) -> None:
    # an allowlist outside the repository would let a hostile clone allow anything: fail closed
    (outside / "list.yml").write_text("allow: []\n")
    git_repo.commit("vector", {"docs/vector.md": f"test vector: {KEY}\n"})
    link(git_repo, ".workgroup", "../outside")
    (outside / "privacy-allowlist.yml").write_text("allow: []\n")
    code, _, err = cli("privacy", "scan", "docs/vector.md")
    assert code == 2 and f"error[{CODE}]" in err, err
