"""`workgroup init` against committed symlinks: it never reads or writes outside the work tree
(``toolkit.infra.confined``); every path is checked before the first file is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, cli

CODE = "PATH_OUTSIDE_REPOSITORY"
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUtc2VjcmV0\n"


link = GitRepo.link  # link(repo, rel, target): a committed symlink (conftest)


def tree(folder: Path) -> dict[str, Any]:
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
        if ".git" not in p.relative_to(folder).parts
    }


@pytest.fixture
def outside(git_repo: GitRepo) -> Path:
    folder = git_repo.path.parent / "outside"
    folder.mkdir()
    (folder / "id_key").write_text(SECRET)
    return folder


@pytest.mark.parametrize(
    ("rel", "target"),
    [
        (".workgroup", "../outside"),  # the reproduction: config.yml would be created outside
        (".gitignore", "../outside/id_key"),  # merged and written back: the key would be committed
        (".pre-commit-config.yaml", "../outside/id_key"),
        (".gitignore", "nowhere"),  # dangling
    ],
)
def test_init_writes_nothing_when_a_path_leads_outside(
    git_repo: GitRepo, outside: Path, rel: str, target: str
) -> None:
    git_repo.commit("init", {"README.md": "x\n"})
    link(git_repo, rel, target)
    before, inside = tree(outside), tree(git_repo.path)
    code, out, err = cli("init", "--local", "--no-install")
    assert code == 2 and f"error[{CODE}]" in err, err
    assert "PRIVATE KEY" not in out + err
    assert tree(outside) == before and tree(git_repo.path) == inside  # none of the three files written


def test_init_follows_a_workgroup_folder_that_stays_inside(git_repo: GitRepo) -> None:
    git_repo.commit("init", {"shared/wg/keep": ""})
    link(git_repo, ".workgroup", "shared/wg")
    code, _, err = cli("init", "--local", "--no-install")
    assert code == 0, err
    assert (git_repo.path / "shared/wg/config.yml").is_file()
    assert (git_repo.path / ".gitignore").is_file() and not (git_repo.path / ".gitignore").is_symlink()


def test_profile_set_never_edits_a_config_outside(git_repo: GitRepo, outside: Path) -> None:
    (outside / "config.yml").write_text("context_efficiency:\n  profile: balanced\n")
    link(git_repo, ".workgroup", "../outside")
    before = tree(outside)
    code, _, err = cli("profile", "set", "economy")
    assert code == 2 and f"error[{CODE}]" in err, err
    assert tree(outside) == before
