"""Shared fixtures: an isolated HOME, a real throwaway git repository. The code they use, and the CLI
helpers, live in tests/support/ (``support.harness``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from support.harness import GitRepo
from support.hostile import pytest_terminal_summary as pytest_terminal_summary  # noqa: F401 - the hostile-input tally
from support.usage_fixtures import build

# Wall-clock deadlines make fuzzing flaky on a loaded 2-core CI machine; example counts stay bounded
# per test, and speed is measured by the benchmarks in tests/bench/, never by timed unit tests.
settings.register_profile("workgroup", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("workgroup")

# Tests mirror the package folders (tests/runtime/, tests/cm/, ...). Test module names are unique across
# folders, and some share fixtures with one another (one valid capsule, one CM usage row), so every folder
# is importable by module name.
sys.path[:0] = [
    str(folder)
    for folder in sorted(Path(__file__).resolve().parent.iterdir())
    if folder.is_dir() and folder.name not in {"bench", "privacy_corpus", "__pycache__"}
]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the real home directory or the machine's git config."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("CM_WORKFLOW_LOG_HOME", str(home / ".cm-workflow" / "logs"))
    for var in (
        "CM_OPENAI_COMPATIBLE_ENABLED",
        "CM_OPENAI_COMPATIBLE_BASE_URL",
        "CM_OPENAI_COMPATIBLE_API_KEY",
        "GITHUB_ACTIONS",  # findings output adds workflow annotations inside a GitHub Actions job
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def without_coverage(monkeypatch: pytest.MonkeyPatch) -> None:
    """Child processes start without coverage measurement.

    The CI run measures coverage in every subprocess (``patch = ["subprocess"]``), which imports
    modules of its own into the child; tests that assert what a process imports opt out of it.
    """
    for name in list(os.environ):
        if name.startswith("COVERAGE_"):
            monkeypatch.delenv(name)


@pytest.fixture
def git_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitRepo]:
    repo_dir = tmp_path / "repo"
    repo_dir.mkdir()
    repo = GitRepo(repo_dir)
    monkeypatch.chdir(repo_dir)
    yield repo


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The usage fixture histories (Claude Code and Codex logs) built in ``tmp_path``, with the
    environment pointing at them (a usage test module may override it)."""
    env = build(tmp_path / "logs")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env
