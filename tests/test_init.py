"""`workgroup init`: config from the template, .gitignore lines, the pre-commit config merged
(never clobbered, idempotent), the git hook installed through the real pre-commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import GitRepo, run_workgroup

from toolkit.core.errors import Refused
from toolkit.infra.resources import template_text
from toolkit.workflow.init import HOOK_IDS, merge_gitignore, merge_pre_commit_config

EXISTING = """\
# team hooks: keep this comment
default_stages: [pre-commit]
repos:
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v4.6.0
    hooks:
      - id: trailing-whitespace   # inline comment
exclude: '^vendor/'
"""


def _ids(text: str) -> list[str]:
    data = yaml.safe_load(text)
    return [h["id"] for r in data["repos"] for h in r["hooks"]]


def test_init_writes_everything_and_is_idempotent(git_repo: GitRepo) -> None:
    first = run_workgroup("init", "--json", cwd=git_repo.path)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {
        "config": "written",
        "gitignore": "written",
        "pre_commit_config": "written",
        "hook": "installed",
    }
    root = git_repo.path
    assert (root / ".workgroup/config.yml").read_text(encoding="utf-8") == template_text("config.yml")
    assert "context_efficiency:" in (root / ".workgroup/config.yml").read_text(encoding="utf-8")
    assert ".workgroup/local/" in (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert _ids((root / ".pre-commit-config.yaml").read_text(encoding="utf-8")) == list(HOOK_IDS)
    hook = root / ".git" / "hooks" / "pre-commit"
    assert hook.is_file() and "pre-commit" in hook.read_text(encoding="utf-8")
    snapshot = {
        p: (root / p).read_bytes() for p in (".workgroup/config.yml", ".gitignore", ".pre-commit-config.yaml")
    }
    second = run_workgroup("init", "--json", "--no-install", cwd=root)
    assert second.returncode == 0
    assert json.loads(second.stdout) == {
        "config": "kept",
        "gitignore": "unchanged",
        "pre_commit_config": "unchanged",
        "hook": "skipped",
    }
    assert {p: (root / p).read_bytes() for p in snapshot} == snapshot


def test_init_keeps_an_edited_config_and_merges_existing_files(git_repo: GitRepo) -> None:
    root = git_repo.path
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  enabled: false\n")
    git_repo.write(".gitignore", "node_modules/\n.workgroup/local/")
    git_repo.write(".pre-commit-config.yaml", EXISTING)
    proc = run_workgroup("init", "--json", "--no-install", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (root / ".workgroup/config.yml").read_text(
        encoding="utf-8"
    ) == "context_efficiency:\n  enabled: false\n"
    lines = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["node_modules/", ".workgroup/local/"] and lines.count(".workgroup/local/") == 1
    merged = (root / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert "# team hooks: keep this comment" in merged and "# inline comment" in merged
    data = yaml.safe_load(merged)
    assert data["exclude"] == "^vendor/" and data["default_stages"] == ["pre-commit"]
    assert _ids(merged) == [*HOOK_IDS, "trailing-whitespace"]


def test_init_outside_a_repository_is_an_environment_error(tmp_path: Path) -> None:
    proc = run_workgroup("init", cwd=tmp_path)
    assert proc.returncode == 3
    assert b"Traceback" not in proc.stderr
    assert not (tmp_path / ".workgroup").exists()


def test_unmergeable_config_writes_nothing(git_repo: GitRepo) -> None:
    git_repo.write(".pre-commit-config.yaml", "- just a list\n")
    proc = run_workgroup("init", "--no-install", cwd=git_repo.path)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert not (git_repo.path / ".workgroup/config.yml").exists()  # nothing written at all
    git_repo.write(".pre-commit-config.yaml", "repos: [\n")
    assert run_workgroup("init", "--no-install", cwd=git_repo.path).returncode == 2


@pytest.mark.parametrize(
    "text",
    [
        "repos: []\n",  # flow-style empty list
        # indent 0
        "repos:\n- repo: local\n  hooks:\n  - id: mine\n    name: m\n    entry: m\n    language: system\n",
        "minimum_pre_commit_version: '3.2.0'\nrepos:   # comment\n    - repo: meta\n      hooks:\n"
        "          - id: check-useless-excludes\n",  # deep indent + comment on repos
    ],
)
def test_merge_shapes(text: str) -> None:
    new, how = merge_pre_commit_config(text, None, "v0.1.0")
    assert how == "merged" and new is not None
    assert set(HOOK_IDS) <= set(_ids(new))
    again, how2 = merge_pre_commit_config(new, None, "v0.1.0")
    assert (again, how2) == (None, "unchanged")


def test_merge_adds_only_missing_hooks_and_remote_form() -> None:
    text = (
        "repos:\n  - repo: local\n    hooks:\n      - id: workgroup-privacy\n        name: p\n"
        "        entry: workgroup-privacy-hook\n        language: system\n"
    )
    new, _ = merge_pre_commit_config(text, "https://git.example.invalid/workgroup.git", "v9")
    assert new is not None
    assert sorted(_ids(new)) == sorted(HOOK_IDS)
    remote = yaml.safe_load(new)["repos"][0]
    assert remote["repo"] == "https://git.example.invalid/workgroup.git" and remote["rev"] == "v9"


def test_merge_refuses_a_non_mapping() -> None:
    with pytest.raises(Refused):
        merge_pre_commit_config("repos: 3\n", None, "v1")


def test_gitignore_merge_without_trailing_newline() -> None:
    new, how = merge_gitignore("dist")
    assert how == "updated" and new is not None and new.startswith("dist\n# workgroup")
    assert merge_gitignore(new) == (None, "unchanged")


def test_failed_hook_install_is_an_environment_error_after_writing(git_repo: GitRepo) -> None:
    git_repo.raw.config["core.hooksPath"] = "custom-hooks"  # pre-commit refuses to install then
    proc = run_workgroup("init", "--json", cwd=git_repo.path)
    assert proc.returncode == 3 and b"HOOK_INSTALL_FAILED" in proc.stderr and b"Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["hook"] == "failed"
    assert (git_repo.path / ".pre-commit-config.yaml").is_file()  # the files were written first
