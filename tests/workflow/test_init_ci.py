"""``workgroup init --ci github``: the workflow is written through the confined layer, never over
a different file without --force, pins the hooks' rev, and its steps run here, on a real
repository with real commits, with the arguments GitHub would give them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.harness import cli

from toolkit.workflow.ci import WORKFLOW_REL, install_spec
from toolkit.workflow.hook_source import release_rev, repository_url

STRIPE = "sk_" + "live_" + "a1B2c3D4e5F6g7H8i9J0kLmN"
BIN = str(Path(sys.executable).parent)  # where the installed `workgroup` console script is


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def commit(repo: Path, rel: str, text: str) -> str:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", rel)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


def steps(repo: Path) -> list[dict[str, Any]]:
    workflow = yaml.safe_load((repo / WORKFLOW_REL).read_text(encoding="utf-8"))
    assert workflow[True] == {"push": None, "pull_request": None}  # YAML 1.1 reads `on` as True
    assert workflow["permissions"]["security-events"] == "write"
    [job] = workflow["jobs"].values()
    found: list[dict[str, Any]] = job["steps"]
    return found


def run_step(
    step: dict[str, Any], repo: Path, env: dict[str, str], tmp_path: Path
) -> tuple[int, dict[str, str]]:
    """A ``run:`` step through bash, as the runner does, with ``env`` standing in for its ``${{ }}``."""
    assert "${{" not in step["run"]  # event data reaches the shell only through env (no injection)
    output = tmp_path / "github_output"
    output.write_text("", encoding="utf-8")
    full = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "GITHUB_OUTPUT": str(output), **env}
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], cwd=repo, env=full, capture_output=True, text=True
    )
    outputs = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines() if line)
    return done.returncode, outputs


def test_init_ci_github_writes_a_workflow_whose_steps_run_here(repo: Path, tmp_path: Path) -> None:
    code, out, err = cli("init", "--local", "--no-install", "--ci", "github", "--json", cwd=repo)
    assert code == 0, err
    assert json.loads(out)["ci_workflow"] == "written"
    assert f"{WORKFLOW_REL}: written (installs git+{repository_url()}@{release_rev()}" in err
    flow = steps(repo)
    checkout = next(s for s in flow if str(s.get("uses", "")).startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    install = next(s for s in flow if "pip install" in str(s.get("run", "")))
    # the rev of the hooks: the release (its commit) for the local form, as its install hint says
    assert install["run"] == f'python -m pip install "git+{repository_url()}@{release_rev()}"'
    uploads = [s for s in flow if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif")]
    assert {u["with"]["sarif_file"] for u in uploads} == {
        "workgroup-verify.sarif",
        "workgroup-privacy-history.sarif",
    }
    by_name = {s.get("name"): s for s in flow}
    range_step = next(s for s in flow if s.get("id") == "range")
    verify_step = by_name["Verify checkpoints, hashes, artifacts and privacy"]
    history_step = by_name["Scan the pushed commits for secrets"]

    first = commit(repo, "a.py", "x = 1\n")
    second = commit(repo, "b.py", f"k = '{STRIPE}'\n")
    third = commit(repo, "b.py", "k = 2\n")  # removed again: only the history scan sees it
    zero = "0" * 40
    cases = {
        "first push": ({"EVENT": "push", "BEFORE": zero, "AFTER": third}, third),
        "push": ({"EVENT": "push", "BEFORE": first, "AFTER": third}, f"{first}..{third}"),
        "force push": ({"EVENT": "push", "BEFORE": "1" * 40, "AFTER": third}, third),
        "pull request": ({"EVENT": "pull_request", "BASE": second, "HEAD": third}, f"{second}..{third}"),
    }
    for name, (env, expected) in cases.items():
        code, outputs = run_step(range_step, repo, {"BEFORE": "", "BASE": "", "HEAD": "", **env}, tmp_path)
        assert (code, outputs.get("range")) == (0, expected), name

    # the commands of the workflow, with its arguments, on this repository
    assert run_step(verify_step, repo, {}, tmp_path)[0] == 0
    verify_log = json.loads((repo / "workgroup-verify.sarif").read_text(encoding="utf-8"))
    assert verify_log["version"] == "2.1.0" and verify_log["runs"][0]["results"] == []
    code, _ = run_step(history_step, repo, {"RANGE": f"{first}..{third}"}, tmp_path)
    assert code == 1  # the secret added in `second` fails the job, though HEAD no longer has it
    history = json.loads((repo / "workgroup-privacy-history.sarif").read_text(encoding="utf-8"))
    [result] = history["runs"][0]["results"]
    assert result["properties"]["commit"] == second and result["ruleId"] == "stripe-secret-key"
    assert run_step(history_step, repo, {"RANGE": f"{second}..{third}"}, tmp_path)[0] == 0
    # the file scan alone, as the hooks see HEAD, finds nothing: --no-verify is caught here only
    assert cli("privacy", "scan", "b.py", cwd=repo).exit_code == 0


def test_an_existing_workflow_is_kept_or_refused_without_force(repo: Path) -> None:
    assert cli("init", "--local", "--no-install", "--ci", "github", cwd=repo).exit_code == 0
    code, _, err = cli("init", "--local", "--no-install", "--ci", "github", cwd=repo)
    assert code == 0 and f"{WORKFLOW_REL}: kept" in err
    target = repo / WORKFLOW_REL
    target.write_text("name: ours\n", encoding="utf-8")
    (repo / ".gitignore").unlink()
    code, _, err = cli("init", "--local", "--no-install", "--ci", "github", cwd=repo)
    assert code == 1 and "CI_WORKFLOW_EXISTS" in err
    assert target.read_text(encoding="utf-8") == "name: ours\n"
    assert not (repo / ".gitignore").exists()  # refused before anything was written
    code, _, err = cli("init", "--local", "--no-install", "--ci", "github", "--force", cwd=repo)
    assert (
        code == 0
        and f"{WORKFLOW_REL}: replaced" in err
        and "upload-sarif" in target.read_text(encoding="utf-8")
    )


def test_unknown_ci_and_a_symlinked_workflows_folder_are_refused(repo: Path, tmp_path: Path) -> None:
    code, _, err = cli("init", "--local", "--no-install", "--ci", "gitlab", cwd=repo)
    assert code == 2 and "CI_KIND_UNKNOWN" in err and not (repo / ".github").exists()
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".github").symlink_to(outside, target_is_directory=True)
    code, _, err = cli("init", "--local", "--no-install", "--ci", "github", cwd=repo)
    assert code == 2 and "Traceback" not in err
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("repo_url", "rev", "spec"),
    [
        (None, "v0.2.0", "workgroup-toolkit==0.2.0"),  # no repository known: the package index
        (
            "https://tok:secret@git.example.invalid/wg.git",
            "abc",
            "git+https://git.example.invalid/wg.git@abc",
        ),
        ("git@git.example.invalid:team/wg.git", "v1", "git+ssh://git@git.example.invalid/team/wg.git@v1"),
    ],
)
def test_install_spec(repo_url: str | None, rev: str, spec: str) -> None:
    assert install_spec(repo_url, rev) == spec


@pytest.mark.parametrize("local", ["/srv/git/wg", "file:///srv/git/wg", "../wg"])
def test_a_local_hook_repository_cannot_be_installed_in_ci(local: str) -> None:
    from toolkit.core.errors import InvalidInput

    with pytest.raises(InvalidInput) as caught:
        install_spec(local, "v1")
    assert caught.value.code == "CI_REPO_LOCAL"
