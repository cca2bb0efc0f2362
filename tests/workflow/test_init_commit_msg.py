"""``workgroup init`` writes the commit-message privacy hook and ``default_install_hook_types``, so a
plain ``pre-commit install`` (here and in every clone) installs the commit-msg hook as well: a
hook that sits in the config without its git hook installed never runs.

Checked with the real pre-commit: init in a scratch repository, a commit whose message holds a
token is refused and not made; a fresh clone gets both git hooks from a plain ``pre-commit install``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.harness import cli

from toolkit.core.errors import Refused
from toolkit.workflow.init import HOOK_IDS, INSTALL_TYPES, merge_install_types

PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
# assembled here so that this file holds no token itself
TOKEN = "ghp_" + "Zq7Rt2Lm9Xw4Kp8Vn3Hs6Jd1Fb5Gc0Ya2Ue7Io4"
REPOS = "repos:\n  - repo: meta\n    hooks:\n      - id: check-hooks-apply\n"


def test_the_commit_message_hook_is_one_of_inits_hooks() -> None:
    assert "workgroup-privacy-commit-msg" in HOOK_IDS
    assert INSTALL_TYPES == ("pre-commit", "commit-msg")


def test_an_absent_key_is_added_above_repos_and_nothing_else_changes() -> None:
    text = "# team config\nexclude: ^vendor/\n" + REPOS
    new, note = merge_install_types(text)
    assert new is not None and "added" in note
    data = yaml.safe_load(new)
    assert data["default_install_hook_types"] == ["pre-commit", "commit-msg"]
    assert {k: v for k, v in data.items() if k != "default_install_hook_types"} == yaml.safe_load(text)
    assert new.startswith("# team config\nexclude: ^vendor/\ndefault_install_hook_types:")
    assert merge_install_types(new)[0] is None  # idempotent


def test_a_one_line_list_gets_the_missing_type_appended_with_its_comment_kept() -> None:
    text = "default_install_hook_types: [pre-push]  # ours\n" + REPOS
    new, _ = merge_install_types(text)
    assert new is not None
    assert new.splitlines()[0] == "default_install_hook_types: [pre-push, pre-commit, commit-msg]  # ours"
    assert yaml.safe_load(new)["repos"] == yaml.safe_load(text)["repos"]


def test_a_block_list_is_left_as_written_and_the_output_says_what_to_add() -> None:
    text = "default_install_hook_types:\n  - pre-commit\n" + REPOS
    new, note = merge_install_types(text)
    assert new is None
    assert "add commit-msg" in note


def test_a_complete_list_is_unchanged() -> None:
    text = "default_install_hook_types: [commit-msg, pre-commit]\n" + REPOS
    assert merge_install_types(text)[0] is None


def test_a_config_that_is_no_mapping_is_refused() -> None:
    with pytest.raises(Refused):
        merge_install_types("- just\n- a list\n")


def _git(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False, timeout=300
    )


@pytest.mark.skipif(not PRE_COMMIT.is_file(), reason="pre-commit is a test dependency")
def test_init_then_pre_commit_install_refuses_a_token_in_the_commit_message(tmp_path: Path) -> None:
    repo = tmp_path / "project"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PRE_COMMIT_COLOR": "never",
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.invalid",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.invalid",
    }
    env.pop("VIRTUAL_ENV", None)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (repo / "README.md").write_text("# project\n", encoding="utf-8")

    result = cli("init", "--local", cwd=repo, env={"PATH": env["PATH"]})
    assert result.exit_code == 0, result.stderr
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert config["default_install_hook_types"] == ["pre-commit", "commit-msg"]
    assert "default_install_hook_types: pre-commit, commit-msg" in result.stderr
    assert "the pre-commit and commit-msg hooks" in result.stderr
    hooks = repo / ".git" / "hooks"
    assert (hooks / "pre-commit").is_file() and (hooks / "commit-msg").is_file()

    _git(repo, "add", "-A", env=env)
    refused = _git(repo, "commit", "-q", "-m", f"deploy with {TOKEN}", env=env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    said = refused.stdout + refused.stderr
    assert "github-token" in said and TOKEN not in said, said
    assert _git(repo, "rev-parse", "--verify", "-q", "HEAD", env=env).returncode != 0  # no commit made
    made = _git(repo, "commit", "-q", "-m", "add the workgroup hooks", env=env)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "workgroup privacy (commit message)....." in made.stdout + made.stderr

    # a teammate's clone: the config is committed, a plain `pre-commit install` installs both
    clone = tmp_path / "clone"
    assert subprocess.run(["git", "clone", "-q", str(repo), str(clone)], env=env, check=False).returncode == 0
    installed = subprocess.run(
        [str(PRE_COMMIT), "install"], cwd=clone, env=env, capture_output=True, text=True, check=False
    )
    assert installed.returncode == 0, installed.stderr
    assert (clone / ".git" / "hooks" / "commit-msg").is_file(), installed.stdout
