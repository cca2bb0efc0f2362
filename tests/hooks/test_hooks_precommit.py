"""The hooks through the real pre-commit framework (`pre-commit try-repo`), and the agreement of
the manifest, the console scripts and the README.

try-repo installs the hook repository with pip into a virtual environment under
PRE_COMMIT_HOME. try-repo always builds the hook environment in a fresh temporary store, so it
runs once here; the other cases run `pre-commit run` with a config naming the same repository
and commit (exactly what try-repo generates), in one session-scoped PRE_COMMIT_HOME, so that
environment is built once for all of them. The hook repository is a clean snapshot commit of
this repository's tracked files as they are in the work tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")
WORKGROUP = [sys.executable, "-m", "toolkit"]
KEY = "sk_" + "live_" + "4eC39HqLyjWD4rjtT1zdp7dcFAKE"  # synthetic, non-working
SALT = "test-salt-shared-by-the-team"
SIG = pygit2.Signature("Test Author", "author@example.invalid", 1_700_000_000, 0)


def _manifest() -> list[dict[str, Any]]:
    hooks: list[dict[str, Any]] = yaml.safe_load(
        (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    )
    return hooks


def test_manifest_console_scripts_and_readme_agree() -> None:
    hooks = _manifest()
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ids = [h["id"] for h in hooks]
    assert {
        "workgroup-privacy",
        "workgroup-privacy-all",
        "workgroup-privacy-commit-msg",
        "workgroup-verify",
        "workgroup-docs-claims",
        "workgroup-skills",
    } <= set(ids)
    for hook in hooks:
        assert hook["language"] == "python" and hook["minimum_pre_commit_version"] == "3.2.0"
        target = scripts[hook["entry"]]  # every entry is a declared console script
        module = re.fullmatch(r"toolkit\.hooks\.(\w+):main", target)
        assert module, target
        assert (ROOT / "hooks" / f"{module.group(1)}.py").is_file()  # installed as toolkit.hooks
        assert f"`{hook['id']}`" in readme, f"README does not document {hook['id']}"
    # the privacy hooks take every staged file: pre-commit's `types: [text]` would keep binary,
    # UTF-16 and compressed files from the gate without a word (issue 24)
    by_id = {h["id"]: h for h in hooks}
    for hook_id in ("workgroup-privacy", "workgroup-privacy-all"):
        assert "types" not in by_id[hook_id] and "types_or" not in by_id[hook_id], hook_id
    assert by_id["workgroup-privacy-commit-msg"]["stages"] == ["commit-msg"]
    assert "commit-msg" not in by_id["workgroup-privacy-all"]["stages"]  # not run again on the message
    hook_scripts = {name for name, target in scripts.items() if target.startswith("toolkit.hooks.")}
    assert hook_scripts == {h["entry"] for h in hooks}
    proc = subprocess.run(
        [PRE_COMMIT, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _commit_all(repo: pygit2.Repository, message: str) -> None:
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    repo.create_commit("HEAD", SIG, SIG, message, tree, parents)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean snapshot commit of this repository's tracked files (work-tree content)."""
    dest = tmp_path_factory.mktemp("hook-repo")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, tracked.decode("utf-8").split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    for package_dir in ("corpus", "templates", "schemas"):  # package-data folders must exist to build
        if not (dest / package_dir).is_dir():
            (dest / package_dir).mkdir()
            (dest / package_dir / ".keep").write_text("", encoding="utf-8")
    _commit_all(pygit2.init_repository(str(dest), initial_head="main"), "snapshot")
    return dest


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "project"
    pygit2.init_repository(str(path), initial_head="main")
    yield path


def _stage(project: Path, files: dict[str, str]) -> None:
    repo = pygit2.Repository(str(project))
    for rel, text in files.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text, encoding="utf-8")
        repo.index.add(rel)
    repo.index.write()


def _try_repo(
    hook_repo: Path,
    home: Path,
    project: Path,
    hook_id: str,
    files: list[str],
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PRE_COMMIT, "try-repo", str(hook_repo), hook_id, "--files", *files],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
        env={**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", **(env or {})},
    )


CAPSULE = ".workgroup/workgroups/wg-1/capsules/task-1.json"
CLEAN = ".workgroup/workgroups/wg-1/capsules/task-2.json"
HANDOFF = ".reviews/session-handoff.md"


def _run_config(
    hook_repo: Path,
    home: Path,
    project: Path,
    hook_id: str,
    files: list[str],
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`pre-commit run` with a config naming the same hook repository and commit as try-repo
    would. Unlike try-repo (a fresh temporary store per call), this reuses the session's
    PRE_COMMIT_HOME, so the hook environment is built once for all these calls."""
    rev = pygit2.Repository(str(hook_repo)).head.target
    config = project / ".pre-commit-config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "repos": [
                    {
                        "repo": str(hook_repo),
                        "rev": str(rev),
                        "hooks": [
                            {"id": i}
                            for i in ("workgroup-privacy", "workgroup-privacy-all", "workgroup-docs-claims")
                        ],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    _stage(project, {".pre-commit-config.yaml": config.read_text(encoding="utf-8")})
    return subprocess.run(
        [PRE_COMMIT, "run", hook_id, "--files", *files],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
        env={**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", **(env or {})},
    )


@pytest.mark.slow
def test_try_repo_blocks_a_staged_capsule_with_a_key(
    hook_repo: Path, pre_commit_home: Path, project: Path
) -> None:
    """One try-repo run over a leaking capsule, a clean one and an inline-allowed handoff:
    exit 1, and the message names only the leaking file, its line and the rule."""
    leaking = '{\n  "objective": "ship",\n  "next_action": "call with ' + KEY + '"\n}\n'
    clean = '{\n  "objective": "ship",\n  "next_action": "run tests/test_api.py"\n}\n'
    allowed = f"# Handoff\n\nfixture key {KEY}  <!-- workgroup: allow stripe-secret-key -->\n"
    _stage(project, {CAPSULE: leaking, CLEAN: clean, HANDOFF: allowed})
    blocked = _try_repo(hook_repo, pre_commit_home, project, "workgroup-privacy", [CAPSULE, CLEAN, HANDOFF])
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert f"{CAPSULE}:3:" in blocked.stdout and "stripe-secret-key" in blocked.stdout
    assert CLEAN not in blocked.stdout and HANDOFF not in blocked.stdout
    assert KEY not in blocked.stdout + blocked.stderr and KEY[8:] not in blocked.stdout + blocked.stderr


@pytest.mark.slow
def test_installed_hooks_pass_clean_allowed_and_check_docs(
    hook_repo: Path, pre_commit_home: Path, project: Path
) -> None:
    leaking = '{\n  "objective": "ship",\n  "next_action": "call with ' + KEY + '"\n}\n'
    _stage(
        project,
        {
            CAPSULE: leaking,
            CLEAN: '{\n  "objective": "ship"\n}\n',
            HANDOFF: f"# Handoff\n\nfixture key {KEY}  <!-- workgroup: allow stripe-secret-key -->\n",
            "src/settings.py": f'DEBUG = True\nOWNER = "alice.smith@fake-corp.io"\nPAYMENTS = "{KEY}"\n',
            "docs/caching.md": "# Caching\n\nCache reads are billed at a lower rate.\n\n"
            "Prompt caching removes tokens from the context window.\n",
        },
    )
    clean = _run_config(hook_repo, pre_commit_home, project, "workgroup-privacy", [CLEAN])
    assert clean.returncode == 0 and "Passed" in clean.stdout, clean.stdout + clean.stderr
    inline = _run_config(hook_repo, pre_commit_home, project, "workgroup-privacy", [HANDOFF])
    assert inline.returncode == 0, inline.stdout + inline.stderr

    # A reviewed finding recorded in the allowlist passes; the file never holds the value, and
    # the entry works in every clone (no per-clone salt: a stray salt variable changes nothing).
    env = {"WORKGROUP_PRIVACY_SALT": SALT}
    allow = subprocess.run(
        [
            *WORKGROUP,
            "privacy",
            "allow",
            CAPSULE,
            "--line",
            "3",
            "--rule",
            "stripe-secret-key",
            "--reason",
            "published test fixture",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert allow.returncode == 0, allow.stderr
    allowlist = (project / ".workgroup/privacy-allowlist.yml").read_text(encoding="utf-8")
    assert KEY not in allowlist and "fingerprint: sha256:" in allowlist
    _stage(project, {".workgroup/privacy-allowlist.yml": allowlist})
    allowed = _run_config(
        hook_repo,
        pre_commit_home,
        project,
        "workgroup-privacy",
        [CAPSULE, ".workgroup/privacy-allowlist.yml"],
        env,
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    other = _run_config(
        hook_repo,
        pre_commit_home,
        project,
        "workgroup-privacy",
        [CAPSULE],
        {"WORKGROUP_PRIVACY_SALT": "another-salt"},
    )
    assert other.returncode == 0, other.stdout + other.stderr

    everything = _run_config(
        hook_repo, pre_commit_home, project, "workgroup-privacy-all", ["src/settings.py", HANDOFF]
    )
    assert everything.returncode == 1
    # source code: the secret is a finding, the author's email is ordinary content there
    assert "src/settings.py:3:" in everything.stdout and "stripe-secret-key" in everything.stdout
    assert "email-address" not in everything.stdout
    claims = _run_config(hook_repo, pre_commit_home, project, "workgroup-docs-claims", ["docs/caching.md"])
    assert claims.returncode == 1
    assert "docs/caching.md:5:" in claims.stdout and "docs/caching.md:3:" not in claims.stdout


# --- issue 24: the gate never passes what it did not read, through real pre-commit and git ---

FAIL_CLOSED_HOOKS = ("workgroup-privacy", "workgroup-privacy-all", "workgroup-privacy-commit-msg")


def _github_token() -> str:
    from toolkit.privacy.providers import base62_crc32

    body = "Zq8Xw2Lm4Np6Rt0Vy3Bd5Fh7Jk9Mc1"
    return "gh" + "p_" + body + base62_crc32(body)


def _bypasses() -> dict[str, bytes]:
    """The files the issue committed past the hooks, by name (secrets built at run time)."""
    import gzip

    token = _github_token()
    aws = "aws_secret_" + "access_key = " + "Hq7Lm2Xw9Rt4Vy8Bd3Fh6Jk1Mc5Np0Zq2Wx7Ls4E"
    filler = "x = 1  # ordinary source code, nothing to see here at all\n"
    record = '{"role": "user", "content": "an ordinary message of the pasted session"}\n'
    return {
        "big.py": (aws + "\n" + filler * (4_700_000 // len(filler))).encode(),
        "session.jsonl": (record * (5_100_000 // len(record))).encode(),
        "ps.txt": f"token = {token}\r\n".encode("utf-16"),  # what PowerShell's `>` writes
        "nul.txt": b"header\x00\ntoken = " + token.encode() + b"\n",
        "notes.txt.gz": gzip.compress(f"token = {token}\n".encode()),
    }


def _install(hook_repo: Path, home: Path, project: Path) -> dict[str, str]:
    """A project whose git runs the three privacy hooks of ``hook_repo`` on commit."""
    rev = pygit2.Repository(str(hook_repo)).head.target
    config = {
        "repos": [{"repo": str(hook_repo), "rev": str(rev), "hooks": [{"id": i} for i in FAIL_CLOSED_HOOKS]}]
    }
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    for key in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
        env.pop(key, None)
    git = ["git", "-c", "user.name=Test Author", "-c", "user.email=author@example.invalid"]
    subprocess.run([*git, "add", ".pre-commit-config.yaml"], cwd=project, check=True, env=env)
    installed = subprocess.run(
        [PRE_COMMIT, "install", "--hook-type", "pre-commit", "--hook-type", "commit-msg"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    first = subprocess.run(
        [*git, "commit", "-q", "-m", "add the hooks"], cwd=project, capture_output=True, text=True, env=env
    )
    assert first.returncode == 0, first.stdout + first.stderr  # builds the hook environment once
    return env


def _git_commit(project: Path, env: dict[str, str], message: str) -> subprocess.CompletedProcess[str]:
    git = ["git", "-c", "user.name=Test Author", "-c", "user.email=author@example.invalid"]
    return subprocess.run(
        [*git, "commit", "-m", message], cwd=project, capture_output=True, text=True, env=env, timeout=900
    )


def _head(project: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True).stdout


@pytest.mark.slow
def test_real_commits_of_each_bypass_are_blocked(
    hook_repo: Path, pre_commit_home: Path, project: Path
) -> None:
    """Each file of the issue, in source (the all-files hook) and in ``.reviews/`` (both hooks):
    ``git commit`` fails and HEAD does not move; each hook alone fails on it too."""
    env = _install(hook_repo, pre_commit_home, project)
    token = _github_token()
    start = _head(project)
    staged: list[str] = []
    for name, data in _bypasses().items():
        for folder in ("src", ".reviews"):
            if name == "session.jsonl" and folder == "src":
                continue  # a transcript in source code is ordinary content there
            rel = f"{folder}/{name}"
            (project / folder).mkdir(exist_ok=True)
            (project / rel).write_bytes(data)
            subprocess.run(["git", "add", rel], cwd=project, check=True, env=env)
            done = _git_commit(project, env, f"add {rel}")
            said = done.stdout + done.stderr  # git shows a hook's output on stderr
            assert done.returncode != 0, f"{rel} was committed: {said}"
            assert f"\n{rel}:" in said and "skipped" not in said and "not scanned" not in said, said
            assert token not in said and _head(project) == start
            subprocess.run(["git", "rm", "-q", "--cached", rel], cwd=project, check=True, env=env)
            staged.append(rel)
    # each hook alone, over every file: the all-files hook on all of them, the artifact hook
    # on the .reviews/ ones (its `files` pattern), one finding line at least per file
    for hook, wanted in (
        ("workgroup-privacy-all", staged),
        ("workgroup-privacy", [r for r in staged if r.startswith(".reviews/")]),
    ):
        done = subprocess.run(
            [PRE_COMMIT, "run", hook, "--files", *staged],
            cwd=project,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
        assert done.returncode == 1, done.stdout + done.stderr
        for rel in wanted:
            assert f"\n{rel}:" in done.stdout, (hook, rel, done.stdout[-3000:])
        assert "skipped" not in done.stdout


@pytest.mark.slow
def test_real_commit_of_an_unreadable_artifact_is_blocked(
    hook_repo: Path, pre_commit_home: Path, project: Path
) -> None:
    """A corrupt gzip in .reviews/ is an unreadable-file finding (no commit); in source it is
    committed with a notice saying it was not scanned."""
    env = _install(hook_repo, pre_commit_home, project)
    corrupt = b"\x1f\x8b\x08\x00" + b"not really deflate data" * 10
    (project / ".reviews").mkdir()
    (project / ".reviews" / "log.gz").write_bytes(corrupt)
    subprocess.run(["git", "add", ".reviews/log.gz"], cwd=project, check=True, env=env)
    start = _head(project)
    done = _git_commit(project, env, "add the log")
    assert done.returncode != 0 and _head(project) == start, done.stdout + done.stderr
    assert (
        ".reviews/log.gz:1:1: unreadable-file unreadable: gzip data is corrupt" in done.stdout + done.stderr
    )
    subprocess.run(["git", "rm", "-q", "--cached", ".reviews/log.gz"], cwd=project, check=True, env=env)
    (project / "src").mkdir()
    (project / "src" / "data.gz").write_bytes(corrupt)
    subprocess.run(["git", "add", "src/data.gz"], cwd=project, check=True, env=env)
    done = _git_commit(project, env, "add the data")
    assert done.returncode == 0, done.stdout + done.stderr
    # pre-commit shows a passing hook's output only with --verbose: the notice is printed there
    shown = subprocess.run(
        [PRE_COMMIT, "run", "workgroup-privacy-all", "--verbose", "--files", "src/data.gz"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "privacy: src/data.gz: not scanned (gzip data is corrupt)" in shown.stdout


@pytest.mark.slow
def test_real_commit_with_a_token_in_its_message_is_blocked(
    hook_repo: Path, pre_commit_home: Path, project: Path
) -> None:
    env = _install(hook_repo, pre_commit_home, project)
    token = _github_token()
    (project / "notes.md").write_text("# Notes\n", encoding="utf-8")
    subprocess.run(["git", "add", "notes.md"], cwd=project, check=True, env=env)
    start = _head(project)
    done = _git_commit(project, env, f"use {token} for the deploy")
    assert done.returncode != 0 and _head(project) == start, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "commit message:1:5: github-token secret: ghp_********" in said
    # the commit-msg hook blocks it; the file hooks do not run on the message file
    assert "hook id: workgroup-privacy-commit-msg" in said and "hook id: workgroup-privacy-all" not in said
    assert token not in done.stdout + done.stderr
    clean = _git_commit(project, env, "add the notes")
    assert clean.returncode == 0 and _head(project) != start, clean.stdout + clean.stderr
