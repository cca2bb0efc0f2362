"""Adoption in one command (issue 26): `init` writes the all-files privacy hook and says what each
hook checks, pins the hooks' Python when the repository's default is below the toolkit's floor,
and every rev that init, the docs and the CI template write resolves in this repository."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest
import yaml
from support.harness import ROOT, GitRepo, run_workgroup
from support.source import source_copy

import toolkit
from toolkit.workflow.hook_source import RELEASE_COMMITS, release_rev, release_revs, release_tag
from toolkit.workflow.init import HOOK_IDS, HookForm, merge_pre_commit_config, python_pin

PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")
REMOTE = HookForm("remote", "https://git.example.invalid/workgroup.git", "v1")


def _ours(text: str) -> dict[str, Any]:
    repo: dict[str, Any] = next(
        r for r in yaml.safe_load(text)["repos"] if r["repo"] != "meta" and "rev" in r
    )
    return repo


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False, env=env)


# --- the default set and what init says about it ----------------------------------------------


def test_the_all_files_privacy_hook_is_in_the_default_set() -> None:
    assert "workgroup-privacy-all" in HOOK_IDS and "workgroup-privacy" not in HOOK_IDS
    new, _ = merge_pre_commit_config(None, REMOTE)
    assert new is not None
    assert [h["id"] for h in _ours(new)["hooks"]] == list(HOOK_IDS)


def test_an_older_artifact_only_privacy_hook_is_replaced_in_place() -> None:
    old = (
        "repos:\n  - repo: https://git.example.invalid/workgroup.git\n    rev: v0\n    hooks:\n"
        "      - id: workgroup-privacy\n      - id: workgroup-verify\n"
    )
    new, how = merge_pre_commit_config(old, REMOTE)
    assert how == "updated" and new is not None
    ids = [h["id"] for h in _ours(new)["hooks"]]
    assert ids == [
        "workgroup-privacy-all",
        "workgroup-verify",
        "workgroup-privacy-commit-msg",
        "workgroup-docs-claims",
    ]


# --- the hooks' Python ---------------------------------------------------------------------------

PINNED = f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.parametrize(
    ("default", "pinned"),
    [
        ("python3.10", True),
        ("python3.9", True),
        ("'3.8'", True),
        ("/usr/bin/python3.10", True),
        ("python2.7", True),
        ("python3.11", False),
        ("python3.12", False),
        ("python3", False),  # whatever python3 is: not ours to guess
        ("default", False),
        ("system", False),
    ],
)
def test_python_pin_only_below_the_floor(default: str, pinned: bool) -> None:
    text = f"default_language_version:\n  python: {default}\nrepos: []\n"
    assert python_pin(text)[0] == (PINNED if pinned else None)
    new, _ = merge_pre_commit_config(text, REMOTE)
    assert new is not None
    hooks = _ours(new)["hooks"]
    assert all(h.get("language_version") == (PINNED if pinned else None) for h in hooks)
    # local hooks run the installed scripts (language: system): nothing to pin
    local, _ = merge_pre_commit_config(text, HookForm("local", None, "v1"))
    assert local is not None and "  language_version" not in local


def test_init_prints_what_each_hook_checks_and_the_pin(git_repo: GitRepo) -> None:
    clone = git_repo.path.parent / "toolkit-clone"
    _clone_history(clone)
    git_repo.write(".pre-commit-config.yaml", "default_language_version:\n  python: python3.10\nrepos: []\n")
    proc = run_workgroup("init", "--hook-repo", str(clone), "--no-install", cwd=git_repo.path)
    assert proc.returncode == 0, proc.stderr
    out = (proc.stderr + proc.stdout).decode("utf-8")
    for hook_id in HOOK_IDS:
        line = next(x for x in out.splitlines() if x.strip().startswith(f"{hook_id}:"))
        assert "Not checked:" in line, line
    assert f"language_version: {PINNED} on these hooks" in out and "(python3.10)" in out
    ours = _ours((git_repo.path / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert all(h["language_version"] == PINNED for h in ours["hooks"])
    # a repository without tags: init writes the release commit, which resolves there
    assert ours["rev"] == RELEASE_COMMITS[toolkit.__version__]


# --- every rev written resolves in this repository's history ----------------------------------


def _in_a_clone() -> bool:
    return _git(ROOT, "rev-parse", "--is-inside-work-tree").stdout.strip() == "true" and not (
        _git(ROOT, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    )


def _clone_history(dest: Path) -> None:
    if not _in_a_clone():
        pytest.skip("not run from a full git clone of the toolkit")
    proc = _git(ROOT.parent, "clone", "-q", "--no-tags", str(ROOT), str(dest))
    assert proc.returncode == 0, proc.stderr


_PIN = re.compile(r"git\+https://github\.com/workgroup-toolkit/workgroup-toolkit@([^\"'\s`)]+)")
_REV = re.compile(r"^\s*rev:\s*([^\s#]+)", re.M)


def _written_revs() -> dict[str, set[str]]:
    """Every rev the README, docs and templates tell a user to install or write."""
    found: dict[str, set[str]] = {}
    files = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "templates").rglob("*")),
    ]
    for path in files:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        revs = set(_PIN.findall(text)) | {
            r for r in _REV.findall(text) if re.fullmatch(r"v\d+\.\d+\.\d+|[0-9a-f]{40}", r)
        }
        if revs:
            found[str(path.relative_to(ROOT))] = revs
    return found


def test_every_documented_rev_resolves_in_history() -> None:
    if not _in_a_clone():
        pytest.skip("not run from a full git clone of the toolkit")
    written = _written_revs()
    assert "templates/ci/workgroup-verify.yml" in written and "docs/install.md" in written, written
    revs = {rev for revs in written.values() for rev in revs} | {release_rev(), release_revs()[0]}
    for rev in sorted(revs):
        proc = _git(ROOT, "cat-file", "-e", f"{rev}^{{commit}}")
        where = [name for name, found in written.items() if rev in found]
        assert proc.returncode == 0, f"{rev} (written in {where or 'init'}) is not a commit here"
    assert _git(ROOT, "merge-base", "--is-ancestor", release_rev(), "HEAD").returncode == 0
    # the recorded commit is the current version's release: its tree has this version
    init_py = _git(ROOT, "show", f"{release_rev()}:toolkit/__init__.py").stdout
    assert f'__version__ = "{toolkit.__version__}"' in init_py
    assert release_revs() == (RELEASE_COMMITS[toolkit.__version__], release_tag())


def test_the_release_commit_publishes_every_hook_init_writes() -> None:
    """init writes this version's hook ids at its release commit: each must be in that commit's
    manifest, or pre-commit refuses every commit ("not present in repository")."""
    if not _in_a_clone():
        pytest.skip("not run from a full git clone of the toolkit")
    import yaml

    from toolkit.workflow.init import HOOK_IDS

    manifest = _git(ROOT, "show", f"{release_rev()}:.pre-commit-hooks.yaml")
    assert manifest.returncode == 0, manifest.stderr
    published = {hook["id"] for hook in yaml.safe_load(manifest.stdout)}
    assert set(HOOK_IDS) <= published, sorted(set(HOOK_IDS) - published)


# --- the real pre-commit: a repository on Python 3.10 by default --------------------------------


@pytest.mark.slow
def test_after_init_a_secret_commit_is_blocked_on_a_310_default(tmp_path: Path) -> None:
    """typer's config (default_language_version python3.10): after `init` the hook environment
    builds and a commit of an AWS key, a token, a key file, a .env and a config password is refused;
    a clean commit passes."""
    hook_repo = source_copy(tmp_path / "hook-repo")
    for package_dir in ("corpus", "templates", "schemas"):
        (hook_repo / package_dir).mkdir(exist_ok=True)
        (hook_repo / package_dir / ".keep").touch()
    repo = pygit2.init_repository(str(hook_repo), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature("Test Author", "author@example.invalid", 1_700_000_000, 0)
    head = repo.create_commit("HEAD", sig, sig, "snapshot", repo.index.write_tree(), [])
    project = tmp_path / "project"
    pygit2.init_repository(str(project), initial_head="main")
    (project / ".pre-commit-config.yaml").write_text(
        "default_language_version:\n  python: python3.10\nrepos: []\n", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "home"), PRE_COMMIT_COLOR="never")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    proc = run_workgroup("init", "--hook-repo", str(hook_repo), "--hook-rev", str(head), cwd=project, env=env)
    assert proc.returncode == 0, proc.stderr
    git = ["git", "-c", "user.name=Test Author", "-c", "user.email=author@example.invalid"]

    def commit(files: dict[str, str]) -> subprocess.CompletedProcess[str]:
        for rel, text in files.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(text, encoding="utf-8")
        subprocess.run([*git, "add", "-A"], cwd=project, check=True, env=env)
        return subprocess.run(
            [*git, "commit", "-m", "change"],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )

    first = commit({"README.md": "# project\n"})
    assert first.returncode == 0, first.stdout + first.stderr  # the hook environment builds
    secrets = {
        "settings.py": "AWS_SECRET_ACCESS_KEY = 'Hq7Lm2Xw9Rt4Vy8Bd3Fh6Jk1Mc5Np0Zq2Wx7Ls4E'\n",
        ".env": "DB_PASSWORD=Qm7x&Lp2vR9zK4w\n",
        "deploy/id_rsa": "-----BEGIN RSA "
        + "PRIVATE KEY-----\n"
        + base64.b64encode(bytes(range(7, 199))).decode()
        + "\n-----END RSA PRIVATE KEY-----\n",
    }
    for rel, text in secrets.items():
        blocked = commit({rel: text})
        out = blocked.stdout + blocked.stderr
        assert blocked.returncode != 0, out
        assert re.search(r"workgroup privacy \(all files\)\.+Failed", out), out
        assert rel in out
        subprocess.run([*git, "rm", "-q", "--cached", rel], cwd=project, check=True, env=env)
        (project / rel).unlink()

    # --- adoption of a repository with findings, through the same hooks -----------------------
    # findings already committed before the hooks (written with --no-verify)
    (project / "legacy.py").write_text("API_KEY = 'Zq8Xw2Lm4Np6Rt0Vy3Bd5Fh7Jk9Mc1aQ'\n", encoding="utf-8")
    subprocess.run([*git, "add", "legacy.py"], cwd=project, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "legacy", "--no-verify"], cwd=project, check=True, env=env)
    base = run_workgroup("privacy", "baseline", cwd=project, env=env)
    said = (base.stdout + base.stderr).decode()
    assert base.returncode == 0 and "git add .workgroup/privacy-allowlist.yml" in said, said
    # a change to the legacy file: refused until the allowlist is committed (hooks read the index)
    (project / "legacy.py").write_text(
        "API_KEY = 'Zq8Xw2Lm4Np6Rt0Vy3Bd5Fh7Jk9Mc1aQ'\nTIMEOUT = 3\n", encoding="utf-8"
    )
    subprocess.run([*git, "add", "legacy.py"], cwd=project, check=True, env=env)
    unstaged = subprocess.run(
        [*git, "commit", "-m", "timeout"], cwd=project, capture_output=True, text=True, env=env, timeout=900
    )
    assert unstaged.returncode != 0, unstaged.stdout
    assert "pre-commit alone" in unstaged.stdout + unstaged.stderr
    adopted = commit({})  # `git add -A` stages the allowlist with the change
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr

    # session notes in docs/ with the default config, and a team folder given as a hook argument
    notes = commit(
        {
            "docs/agent-session-notes.md": "# Notes\nWorked in /home/alice/src/app.\n\n"
            "User: fix the failing test\nAssistant: The fixture was missing; added it.\n"
            "User: run it again\nAssistant: All tests pass now.\n"
        }
    )
    said = notes.stdout + notes.stderr
    assert notes.returncode != 0 and "chat-role-dump" in said and "home-path" in said, said
    subprocess.run(
        [*git, "rm", "-q", "--cached", "docs/agent-session-notes.md"], cwd=project, check=True, env=env
    )
    (project / "docs/agent-session-notes.md").unlink()
    journal = {"journal/monday.md": "Worked in /home/alice/src/app.\n"}
    assert commit(journal).returncode == 0  # a home path in an ordinary file is not a finding
    config = (project / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    config = config.replace(
        "      - id: workgroup-privacy-all\n",
        "      - id: workgroup-privacy-all\n        args: [--artifact-path, 'journal/**']\n",
    )
    journal["journal/tuesday.md"] = "Worked in /home/alice/src/app again.\n"
    flagged = commit({".pre-commit-config.yaml": config, **journal})
    assert flagged.returncode != 0 and "journal/tuesday.md" in flagged.stdout + flagged.stderr, flagged.stdout
