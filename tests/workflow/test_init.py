"""`workgroup init`: config from the template, .gitignore lines, the pre-commit config merged
(never clobbered, idempotent), the git hook installed through the real pre-commit."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pygit2
import pytest
import yaml
from support.harness import ROOT, GitRepo, run_workgroup

import toolkit
from toolkit.cm import run_logs
from toolkit.core.errors import Refused
from toolkit.infra.resources import template_text
from toolkit.workflow.hook_source import release_tag, repository_url
from toolkit.workflow.init import (
    GITIGNORE_MARK,
    HOOK_IDS,
    MARKER,
    HookForm,
    merge_gitignore,
    merge_pre_commit_config,
    uses_cm,
)

LOCAL = HookForm("local", "https://git.example.invalid/workgroup.git", "v0.2.0")

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
    first = run_workgroup("init", "--local", "--json", cwd=git_repo.path)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {
        "config": "written",
        "gitignore": "written",
        "pre_commit_config": "written",
        "hook": "installed",
        "hooks": "local",
        "cm": False,
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
    second = run_workgroup("init", "--local", "--json", "--no-install", cwd=root)
    assert second.returncode == 0
    assert json.loads(second.stdout) == {
        "config": "kept",
        "gitignore": "unchanged",
        "pre_commit_config": "unchanged",
        "hook": "skipped",
        "hooks": "local",
        "cm": False,
    }
    assert {p: (root / p).read_bytes() for p in snapshot} == snapshot


def test_init_keeps_an_edited_config_and_merges_existing_files(git_repo: GitRepo) -> None:
    root = git_repo.path
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  enabled: false\n")
    git_repo.write(".gitignore", "node_modules/\n.workgroup/local/")
    git_repo.write(".pre-commit-config.yaml", EXISTING)
    proc = run_workgroup("init", "--local", "--json", "--no-install", cwd=root)
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
    proc = run_workgroup("init", "--local", "--no-install", cwd=git_repo.path)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert not (git_repo.path / ".workgroup/config.yml").exists()  # nothing written at all
    git_repo.write(".pre-commit-config.yaml", "repos: [\n")
    assert run_workgroup("init", "--local", "--no-install", cwd=git_repo.path).returncode == 2


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
    new, how = merge_pre_commit_config(text, LOCAL)
    assert how == "merged" and new is not None
    assert set(HOOK_IDS) <= set(_ids(new))
    again, how2 = merge_pre_commit_config(new, LOCAL)
    assert (again, how2) == (None, "unchanged")


def test_merge_adds_only_missing_hooks_and_remote_form() -> None:
    text = (
        "repos:\n  - repo: local\n    hooks:\n      - id: workgroup-privacy\n        name: p\n"
        "        entry: workgroup-privacy-hook\n        language: system\n"
    )
    new, _ = merge_pre_commit_config(
        text, HookForm("remote", "https://git.example.invalid/workgroup.git", "v9")
    )
    assert new is not None
    assert sorted(_ids(new)) == sorted(HOOK_IDS)
    remote = yaml.safe_load(new)["repos"][0]
    assert remote["repo"] == "https://git.example.invalid/workgroup.git" and remote["rev"] == "v9"


def test_merge_refuses_a_non_mapping() -> None:
    with pytest.raises(Refused):
        merge_pre_commit_config("repos: 3\n", LOCAL)


def test_gitignore_merge_without_trailing_newline() -> None:
    new, how = merge_gitignore("dist")
    assert how == "updated" and new is not None and new.startswith("dist\n# workgroup")
    assert merge_gitignore(new) == (None, "unchanged")


def test_failed_hook_install_is_an_environment_error_after_writing(git_repo: GitRepo) -> None:
    git_repo.raw.config["core.hooksPath"] = "custom-hooks"  # pre-commit refuses to install then
    proc = run_workgroup("init", "--local", "--json", cwd=git_repo.path)
    assert proc.returncode == 3 and b"HOOK_INSTALL_FAILED" in proc.stderr and b"Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["hook"] == "failed"
    assert (git_repo.path / ".pre-commit-config.yaml").is_file()  # the files were written first


# --- the hook forms, patterns, indentation and CM detection (issue 16) -------------------------

FOUR_SPACES = """\
repos:
    -   repo: https://github.com/pre-commit/pre-commit-hooks
        rev: v4.6.0
        hooks:
        -   id: trailing-whitespace
"""


def _ours(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    (repo,) = [r for r in data["repos"] if any(h["id"].startswith("workgroup-") for h in r["hooks"])]
    return repo  # type: ignore[no-any-return]


def test_local_hooks_carry_the_published_file_patterns() -> None:
    # the same files/exclude/types as .pre-commit-hooks.yaml, read from it (the old init left out
    # knowzcode/artifacts/ in its own copy of the privacy pattern)
    published = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))}
    new, _ = merge_pre_commit_config(None, LOCAL)
    assert new is not None
    for hook in _ours(new)["hooks"]:
        spec = published[hook["id"]]
        copied = {k: v for k, v in hook.items() if k not in ("id", "name", "entry", "language")}
        # the all-files privacy hook has no pattern: it takes every staged file
        assert copied == {k: spec[k] for k in copied} and (copied or hook["id"] == "workgroup-privacy-all")
        for key in ("files", "exclude", "types", "types_or", "pass_filenames", "always_run"):
            assert hook.get(key) == spec.get(key), (hook["id"], key)
    privacy = next(h for h in _ours(new)["hooks"] if h["id"] == "workgroup-privacy-all")
    assert "files" not in privacy and "exclude" not in privacy and "types" not in privacy


def test_the_users_indentation_is_kept() -> None:
    new, how = merge_pre_commit_config(FOUR_SPACES, LOCAL)
    assert how == "merged" and new is not None
    assert new.endswith(FOUR_SPACES.split("\n", 1)[1])  # the user's lines are untouched
    ours = new.split("\n", 1)[1][: -len(FOUR_SPACES.split("\n", 1)[1])]
    assert "\n    -   repo: local\n        hooks:\n        -   id: workgroup-privacy-all\n" in "\n" + ours
    assert "\n            name: workgroup privacy" in ours
    for line in ours.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 4 == 0, line  # never a 2-space block in a 4-space file
    two = "repos:\n  - repo: meta\n    hooks:\n      - id: check-useless-excludes\n"
    new2, _ = merge_pre_commit_config(two, HookForm("remote", "https://git.example.invalid/w.git", "v1"))
    assert (
        new2 is not None
        and "\n  - repo: https://git.example.invalid/w.git\n    rev: v1\n    hooks:\n" in new2
    )
    assert "\n      - id: workgroup-verify\n" in new2


def test_rerun_switches_forms_in_place_and_is_then_idempotent() -> None:
    remote = HookForm("remote", "https://git.example.invalid/w.git", "v0.2.0")
    text = EXISTING
    seen = []
    for form in (LOCAL, remote, LOCAL, remote):
        new, how = merge_pre_commit_config(text, form)
        assert new is not None, how
        seen.append(how)
        data = yaml.safe_load(new)
        assert data["repos"][1:] == yaml.safe_load(EXISTING)["repos"]  # the user's repos unchanged
        assert "# team hooks: keep this comment" in new and "# inline comment" in new
        assert new.count(MARKER) == 1
        assert (_ours(new)["repo"] == "local") == (form is LOCAL)
        assert merge_pre_commit_config(new, form) == (None, "unchanged")
        text = new
    assert seen == [
        "merged",
        "switched to remote hooks",
        "switched to local hooks",
        "switched to remote hooks",
    ]
    bumped, how = merge_pre_commit_config(text, HookForm("remote", remote.repo, "v0.3.0"))
    assert how == "updated" and bumped is not None and _ours(bumped)["rev"] == "v0.3.0"


def test_hooks_written_by_the_old_init_are_brought_up_to_date() -> None:
    old = (
        "repos:\n  - repo: local\n    hooks:\n      - id: workgroup-privacy\n        name: p\n"
        "        entry: workgroup-privacy-hook\n        language: system\n"
        "        files: '(^|/)(\\.workgroup|\\.reviews)/'\n      - id: workgroup-skills\n        name: s\n"
        "        entry: workgroup-skills-hook\n        language: system\n"
        "  - repo: meta\n    hooks:\n      - id: check-hooks-apply\n"
    )
    new, how = merge_pre_commit_config(old, LOCAL)
    assert how == "updated" and new is not None
    ids = [h["id"] for h in _ours(new)["hooks"]]
    # the artifact-only privacy hook is replaced by the all-files one in place
    assert ids == [
        "workgroup-privacy-all",
        "workgroup-skills",
        "workgroup-privacy-commit-msg",
        "workgroup-docs-claims",
        "workgroup-verify",
    ]
    assert "files" not in _ours(new)["hooks"][0]
    assert yaml.safe_load(new)["repos"][1] == {"repo": "meta", "hooks": [{"id": "check-hooks-apply"}]}


def test_hooks_mixed_with_the_users_own_are_refused() -> None:
    mixed = (
        "repos:\n  - repo: local\n    hooks:\n      - id: mine\n        name: m\n        entry: m\n"
        "        language: system\n      - id: workgroup-privacy\n        name: p\n"
        "        entry: workgroup-privacy-hook\n        language: system\n"
    )
    with pytest.raises(Refused) as info:
        merge_pre_commit_config(mixed, LOCAL)
    assert "mixed with other hooks" in info.value.message


def test_gitignore_cm_lines_only_for_cm_projects(git_repo: GitRepo) -> None:
    plain = run_workgroup("init", "--local", "--no-install", "--json", cwd=git_repo.path)
    assert plain.returncode == 0, plain.stderr
    assert json.loads(plain.stdout)["cm"] is False
    lines = (git_repo.path / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".workgroup/local/" in lines and not [x for x in lines if x.startswith(".cm-")]
    git_repo.write("specs/feature/.reviews/session-handoff.md", "# handoff\n")  # a CM handoff: CM in use
    cm = run_workgroup("init", "--local", "--no-install", "--json", cwd=git_repo.path)
    assert json.loads(cm.stdout)["cm"] is True and json.loads(cm.stdout)["gitignore"] == "updated"
    lines = (git_repo.path / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert {".cm-run.json", ".cm-run.lock", ".cm-write.lock"} <= set(lines)
    assert {run_logs.CHECKPOINT_NAME, run_logs.INDEX_NAME, run_logs.INDEX_JOURNAL_NAME} <= set(
        lines
    )  # caches of the log
    assert merge_gitignore("x\n", cm=False)[0] == f"x\n{GITIGNORE_MARK}\n.workgroup/local/\n"


@pytest.mark.parametrize("marker", [".cm-run.json", "specs/运行日志.jsonl", ".cm-workflow.yml"])
def test_cm_markers(git_repo: GitRepo, marker: str) -> None:
    assert uses_cm(git_repo.path) is False
    git_repo.write(".gitignore", ".cm-run.json\n")  # an ignored run pointer still counts
    git_repo.write(marker, "{}\n")
    assert uses_cm(git_repo.path) is True


# --- the remote form: the rev is checked with git before anything is written ------------------


@pytest.fixture(scope="module")
def toolkit_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the toolkit: its files as a real repository with the release tag init writes."""
    dest = tmp_path_factory.mktemp("toolkit-clone")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, tracked.decode("utf-8").split("\0")):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    repo = GitRepo(dest)
    repo.commit("release")
    repo.raw.references.create(f"refs/tags/{release_tag()}", repo.raw.head.target)
    repo.commit("after the release", {"NOTES.md": "next\n"})
    return dest


def test_remote_form_defaults_to_the_release_tag_of_the_installed_version(
    git_repo: GitRepo, toolkit_clone: Path
) -> None:
    proc = run_workgroup(
        "init", "--hook-repo", str(toolkit_clone), "--no-install", "--json", cwd=git_repo.path
    )
    assert proc.returncode == 0, proc.stderr
    ours = _ours((git_repo.path / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert ours["repo"] == str(toolkit_clone) and ours["rev"] == f"v{toolkit.__version__}"
    assert [h["id"] for h in ours["hooks"]] == list(HOOK_IDS)
    # a commit no ref points at is accepted too (pre-commit fetches any commit)
    first = str(pygit2.Repository(str(toolkit_clone)).revparse_single("HEAD~1").id)
    proc = run_workgroup(
        "init", "--hook-repo", str(toolkit_clone), "--hook-rev", first, "--no-install", cwd=git_repo.path
    )
    assert proc.returncode == 0, proc.stderr
    assert _ours((git_repo.path / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["rev"] == first


@pytest.mark.parametrize(
    ("args", "code", "error"),
    [
        (["--hook-rev", "v0.0.0-missing"], 1, b"HOOK_REV_NOT_FOUND"),  # a tag that does not exist
        (["--hook-rev", "0" * 40], 1, b"HOOK_REV_NOT_FOUND"),  # a commit that does not exist
    ],
)
def test_a_rev_that_does_not_exist_writes_nothing(
    git_repo: GitRepo, toolkit_clone: Path, args: list[str], code: int, error: bytes
) -> None:
    proc = run_workgroup("init", "--hook-repo", str(toolkit_clone), *args, "--no-install", cwd=git_repo.path)
    assert proc.returncode == code and error in proc.stderr and b"Traceback" not in proc.stderr
    assert f"v{toolkit.__version__}".encode() in proc.stderr  # names the tags that do exist
    assert not (git_repo.path / ".pre-commit-config.yaml").exists()
    assert not (git_repo.path / ".workgroup").exists()


def test_an_unreachable_hook_repository_is_an_environment_error(git_repo: GitRepo, tmp_path: Path) -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://user:hunter2@127.0.0.1:{port}/workgroup.git"
    proc = run_workgroup("init", "--hook-repo", url, "--no-install", cwd=git_repo.path)
    assert proc.returncode == 3 and b"HOOK_REPO_UNREACHABLE" in proc.stderr
    assert b"--local" in proc.stderr and b"hunter2" not in proc.stderr  # credentials are masked
    assert not (git_repo.path / ".pre-commit-config.yaml").exists()
    bad = run_workgroup("init", "--hook-repo", "x' ; rm -rf /", "--no-install", cwd=git_repo.path)
    assert bad.returncode == 2 and b"HOOK_REPO_INVALID" in bad.stderr
    rev = run_workgroup("init", "--local", "--hook-rev", 'v1" $(id)', "--no-install", cwd=git_repo.path)
    assert rev.returncode == 2 and b"HOOK_REV_INVALID" in rev.stderr
    assert not (git_repo.path / ".pre-commit-config.yaml").exists()


def test_the_default_repository_is_the_project_url() -> None:
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert repository_url() == urls["Repository"]
    assert release_tag() == f"v{toolkit.__version__}"


# --- real pre-commit in a real repository: with and without the toolkit installed --------------

PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")
LEAK = '{"note": "' + "sk_" + "live_" + '4eC39HqLyjWD4rjtT1zdp7dcFAKE"}\n'  # synthetic, non-working key


def _pre_commit_run(project: Path, home: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": path,
        "PRE_COMMIT_HOME": str(home),
        "PRE_COMMIT_COLOR": "never",
    }
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [PRE_COMMIT, "run", "--all-files"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
        env=env,
    )


def _project_with_a_leak(git_repo: GitRepo, *init_args: str) -> None:
    proc = run_workgroup("init", *init_args, "--no-install", cwd=git_repo.path)
    assert proc.returncode == 0, proc.stderr
    git_repo.write(".workgroup/notes/leak.json", LEAK)
    git_repo.write("README.md", "# project\n")
    git_repo.commit("project")


BARE_PATH = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())


@pytest.mark.slow
def test_local_hooks_with_and_without_the_toolkit_on_path(git_repo: GitRepo, tmp_path: Path) -> None:
    _project_with_a_leak(git_repo, "--local")
    home = tmp_path / "pre-commit-home"
    with_toolkit = _pre_commit_run(
        git_repo.path, home, f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    )
    assert with_toolkit.returncode == 1, with_toolkit.stdout + with_toolkit.stderr
    assert ".workgroup/notes/leak.json" in with_toolkit.stdout and "4eC39HqLyjWD" not in with_toolkit.stdout
    assert "not found on PATH" not in with_toolkit.stdout
    if shutil.which("workgroup-privacy-hook", path=BARE_PATH) or not shutil.which("git", path=BARE_PATH):
        pytest.skip("the bare PATH of this machine has the toolkit, or no git")
    without = _pre_commit_run(git_repo.path, home, BARE_PATH)
    assert without.returncode == 1
    out = without.stdout
    for script in ("workgroup-privacy-all-hook", "workgroup-docs-claims-hook", "workgroup-verify-hook"):
        assert f"{script}: not found on PATH. Install the workgroup toolkit: pip install" in out, out
    assert "Executable `" not in out  # not pre-commit's bare "Executable ... not found"


@pytest.mark.slow
def test_remote_hooks_from_a_tagged_clone_work_without_the_toolkit_installed(
    git_repo: GitRepo, toolkit_clone: Path, tmp_path: Path
) -> None:
    _project_with_a_leak(git_repo, "--hook-repo", str(toolkit_clone))
    # pre-commit installs the toolkit from the tagged clone into its own environment: the
    # project's PATH has no toolkit, only git and python for pre-commit's installer
    python_dir = str(Path(sys.base_prefix) / "bin")
    proc = _pre_commit_run(
        git_repo.path, tmp_path / "pre-commit-home", os.pathsep.join([BARE_PATH, python_dir])
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert re.search(r"workgroup privacy \(all files\)\.+Failed", out), out
    assert re.search(r"workgroup docs claims\.+Passed", out), out
    assert re.search(r"workgroup verify \(checkpoints\)\.+Passed", out), out
    assert ".workgroup/notes/leak.json" in out and "4eC39HqLyjWD" not in out


@pytest.mark.parametrize(
    ("repo", "hint"),
    [
        ("https://git.example.invalid/w.git", "pip install git+https://git.example.invalid/w.git@v1"),
        (
            "https://me:s3cret@git.example.invalid/w.git",
            "pip install git+https://***@git.example.invalid/w.git@v1",
        ),
        ("git@git.example.invalid:team/w.git", "pip install git+ssh://git@git.example.invalid/team/w.git@v1"),
        (None, "pip install workgroup-toolkit==1 (see the toolkit's docs/install.md)"),
    ],
)
def test_install_hint_names_the_release_the_hooks_use(repo: str | None, hint: str) -> None:
    from toolkit.workflow.hook_source import install_hint

    assert install_hint(repo, "v1") == hint
