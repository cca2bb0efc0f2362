"""The team's own artifact folders (privacy.artifact_paths, --artifact-path) and session notes in
Markdown wherever they lie (issue 26): the hook scripts run as pre-commit runs them, in a real
git repository."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.harness import GitRepo, run_workgroup

from toolkit.infra.config import load_config
from toolkit.privacy.artifacts import glob_regex, session_notes

HOOK = str(Path(sys.executable).parent / "workgroup-privacy-all-hook")
SESSION = "Session id: 3f2b8c1e-9a4d-4e6b-8f7a-1c2d3e4f5a6b\n"
HOME = "Worked in /home/alice/src/project all day.\n"
TRANSCRIPT = (
    "User: can you fix the failing test in api/routes.py?\n"
    "Assistant: Sure, the fixture was missing; I added it.\n"
    "User: run the suite again\n"
    "Assistant: Done, everything passes now.\n"
)


def _hook(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([HOOK, *args], cwd=repo.path, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("glob", "yes", "no"),
    [
        ("notes/**", ["notes/a.md", "notes/x/y.md"], ["docs/notes/a.md", "notesx/a.md"]),
        ("*.session.md", ["a.session.md", "docs/b.session.md"], ["a.session.md.txt", "session.md"]),
        ("docs/agent-*.md", ["docs/agent-notes.md"], ["docs/x/agent-notes.md", "agent-notes.md"]),
        ("logs/", ["logs/a.txt", "logs/b/c"], ["xlogs/a.txt"]),
        ("**/sessions/*.md", ["sessions/a.md", "a/b/sessions/c.md"], ["sessions/a/b.md"]),
    ],
)
def test_glob_semantics(glob: str, yes: list[str], no: list[str]) -> None:
    pattern = re.compile(glob_regex(glob))
    assert all(pattern.search(p) for p in yes), glob
    assert not any(pattern.search(p) for p in no), glob


def test_session_notes_in_docs_are_caught_with_the_default_config(git_repo: GitRepo) -> None:
    """The issue's file: a transcript, a home path and a session id in docs/."""
    git_repo.write("docs/agent-session-notes.md", "# Notes\n\n" + HOME + "\n" + TRANSCRIPT + "\n" + SESSION)
    proc = _hook(git_repo, "docs/agent-session-notes.md")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for rule in ("chat-role-dump", "home-path", "provider-session-id"):
        assert rule in proc.stdout, (rule, proc.stdout)
    assert "alice" not in proc.stdout and "3f2b8c1e-9a4d" not in proc.stdout


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        # one exchange is an example in a doc, not a session
        ("docs/api.md", HOME + "User: what is 2+2?\nAssistant: 4\n"),
        # code that prints a dialogue is not a prose file
        ("src/demo.py", HOME + TRANSCRIPT),
        # the roles inline, not at line starts
        ("docs/roles.md", HOME + "The User: field and the Assistant: field. User: x. Assistant: y.\n"),
    ],
)
def test_look_alikes_stay_source(git_repo: GitRepo, rel: str, text: str) -> None:
    assert not session_notes(rel, text)
    git_repo.write(rel, text)
    proc = _hook(git_repo, rel)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_config_artifact_paths_and_the_hook_argument(git_repo: GitRepo) -> None:
    git_repo.write("notes/today.md", HOME)
    git_repo.write("journal/today.md", HOME)
    assert _hook(git_repo, "notes/today.md").returncode == 0  # source context: a home path is fine
    git_repo.write(".workgroup/config.yml", "privacy:\n  artifact_paths: ['notes/**']\n")
    assert load_config(git_repo.path)["privacy"]["artifact_paths"] == ["notes/**"]
    proc = _hook(git_repo, "notes/today.md", "journal/today.md")
    assert proc.returncode == 1 and "notes/today.md" in proc.stdout and "journal/" not in proc.stdout
    both = _hook(git_repo, "--artifact-path", "journal/*.md", "notes/today.md", "journal/today.md")
    assert both.returncode == 1 and "journal/today.md" in both.stdout, both.stdout
    eq = _hook(git_repo, "--artifact-path=journal/**", "--", "journal/today.md")
    assert eq.returncode == 1 and "journal/today.md" in eq.stdout
    # the on-demand scan reads the same config
    scan = run_workgroup("privacy", "scan", "notes", cwd=git_repo.path)
    assert scan.returncode == 1 and b"notes/today.md" in scan.stdout


@pytest.mark.parametrize(
    "config",
    [
        "privacy:\n  artifact_paths: ['../outside/**']\n",
        "privacy:\n  artifact_paths: ['/etc/*']\n",
        "privacy:\n  artifact_paths: notes\n",
        "privacy:\n  artifact_paths: ['.git/**']\n",
        "privacy: [artifact_paths]\n",
    ],
)
def test_a_bad_artifact_glob_is_a_coded_error(git_repo: GitRepo, config: str) -> None:
    git_repo.write(".workgroup/config.yml", config)
    git_repo.write("notes/today.md", HOME)
    proc = _hook(git_repo, "notes/today.md")
    assert proc.returncode == 2 and "CONFIG_INVALID" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_bad_hook_argument_is_a_usage_error(git_repo: GitRepo) -> None:
    git_repo.write("notes/today.md", HOME)
    assert _hook(git_repo, "--artifact-path").returncode == 2
    bad = _hook(git_repo, "--artifact-path", "../x", "notes/today.md")
    assert bad.returncode == 2 and "CONFIG_INVALID" in bad.stderr
    assert "--artifact-path GLOB" in _hook(git_repo, "--help").stdout


def test_the_hook_parses_the_config_only_when_it_sets_artifact_paths(git_repo: GitRepo) -> None:
    from toolkit.infra.resources import template_text

    git_repo.write(".workgroup/config.yml", template_text("config.yml"))  # names the key in a comment
    git_repo.write("notes/today.md", HOME)
    code = "from toolkit.hooks.privacy_all import main; raise SystemExit(main(['notes/today.md']))"

    def imports() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code],
            cwd=git_repo.path,
            capture_output=True,
            text=True,
        )

    lean = imports()
    assert lean.returncode == 0 and " yaml" not in lean.stderr
    # flow style is read too: the key need not start its line
    git_repo.write(".workgroup/config.yml", "privacy: {artifact_paths: ['notes/**']}\n")
    flow = imports()
    assert flow.returncode == 1 and " yaml" in flow.stderr


def test_history_scans_session_notes_and_team_folders_as_artifacts(git_repo: GitRepo) -> None:
    git_repo.commit(
        "notes",
        {
            "docs/agent-session-notes.md": "# Notes\n" + HOME + TRANSCRIPT + SESSION,
            "notes/today.md": HOME,
            "docs/guide.md": HOME,  # ordinary docs: a home path is not a finding
        },
    )
    plain = run_workgroup("privacy", "scan", "--history", cwd=git_repo.path)
    out = plain.stdout.decode()
    assert plain.returncode == 1 and "docs/agent-session-notes.md" in out, out
    assert "chat-role-dump" in out and "home-path" in out and "provider-session-id" in out
    assert "notes/today.md" not in out and "docs/guide.md" not in out
    git_repo.commit("config", {".workgroup/config.yml": "privacy:\n  artifact_paths: ['notes/**']\n"})
    team = run_workgroup("privacy", "scan", "--history", cwd=git_repo.path)
    assert "notes/today.md" in team.stdout.decode() and "docs/guide.md" not in team.stdout.decode()
