"""Command-line conventions (issue 26, item 9): ``-h`` and ``-V``, unknown options named, JSON errors
with line and column, ``usage`` saying where it looked, every hook's help naming the hook itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.harness import GitRepo, cli

import toolkit


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_short_and_long(flag: str) -> None:
    result = cli(flag)
    assert result.exit_code == 0
    assert result.stdout == f"workgroup {toolkit.__version__}\n"


@pytest.mark.parametrize(
    "path",
    [
        (),
        ("capsule",),
        ("capsule", "seal"),
        ("verify",),
        ("usage",),
        ("privacy", "scan"),
        ("packet", "build"),
    ],
)
def test_dash_h_prints_the_same_help_as_dash_dash_help(path: tuple[str, ...]) -> None:
    short, long = cli(*path, "-h"), cli(*path, "--help")
    assert (short.exit_code, long.exit_code) == (0, 0), short.stderr
    assert short.stdout == long.stdout
    assert short.stdout.startswith(f"Usage: workgroup {' '.join(path)}".rstrip())


def test_top_level_help_lists_both_short_options() -> None:
    text = cli("--help").stdout
    assert "-V, --version" in text
    assert "-h, --help" in text


def test_privacy_scan_names_the_unknown_option_never_its_value(tmp_path: Path) -> None:
    result = cli("privacy", "scan", "--frobnicate=sk-live-value", cwd=tmp_path)
    assert result.exit_code == 2
    assert "unknown option --frobnicate" in result.stderr
    assert "sk-live-value" not in result.stderr + result.stdout


def test_an_unknown_option_with_a_control_character_is_shown_escaped(tmp_path: Path) -> None:
    result = cli("privacy", "scan", "--a\x1b]0;x\x07", cwd=tmp_path)
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr
    assert "unknown option --a\\x1b]0;x\\x07" in result.stderr


@pytest.mark.parametrize(
    "script",
    [
        "workgroup-privacy-hook",
        "workgroup-privacy-all-hook",
        "workgroup-privacy-commit-msg-hook",
        "workgroup-docs-claims-hook",
        "workgroup-verify-hook",
        "workgroup-skills-hook",
    ],
)
def test_every_hook_help_names_the_hook_itself(script: str) -> None:
    result = cli("--help", script=script)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"usage: {script} ")


@pytest.mark.parametrize("script", ["workgroup-privacy-hook", "workgroup-privacy-all-hook"])
def test_a_hook_names_its_unknown_option(script: str, tmp_path: Path) -> None:
    result = cli("--bogus=secret-value", cwd=tmp_path, script=script)
    assert result.exit_code == 2
    assert f"{script}: error: unrecognized argument --bogus" in result.stderr
    assert "secret-value" not in result.stderr


BAD = '{\n  "input": {\n    "role" "coder"\n  }\n}\n'  # line 3: the colon is missing


def test_a_bad_json_file_error_says_line_and_column_not_the_content(tmp_path: Path) -> None:
    (tmp_path / "request.json").write_text(BAD.replace("coder", "sk-hidden"), encoding="utf-8")
    result = cli("route", "request.json", cwd=tmp_path)
    assert result.exit_code == 2
    assert "error[INVALID_JSON]" in result.stderr
    assert "line 3 column 12" in result.stderr
    assert "sk-hidden" not in result.stderr


def test_bad_json_on_stdin_and_in_json_mode_keep_the_position(tmp_path: Path) -> None:
    result = cli("route", "--json", stdin=BAD, cwd=tmp_path)
    assert result.exit_code == 2
    error = json.loads(result.stdout)
    assert "line 3 column 12" in json.dumps(error)


def test_item_json_error_says_where(tmp_path: Path) -> None:
    result = cli(
        "packet",
        "build",
        "coder",
        "--workflow",
        "cm-ai",
        "--stage",
        "s",
        "--item-json",
        'k={"x" 1}',
        cwd=tmp_path,
    )
    assert result.exit_code == 2
    assert "--item-json k is not valid JSON: Expecting ':' delimiter at line 1 column 6" in result.stderr


def test_a_bad_plan_says_where(tmp_path: Path) -> None:
    (tmp_path / "plan.yml").write_text("workers:\n  - role: coder\n   bad: [\n", encoding="utf-8")
    result = cli("fanout", "check", "plan.yml", cwd=tmp_path)
    assert result.exit_code == 2
    assert "INVALID_PLAN" in result.stderr
    assert "(line 3 column" in result.stderr


def test_usage_without_logs_says_where_it_looked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "XDG_CONFIG_HOME": None}
    result = cli("usage", cwd=tmp_path, env=env)
    assert result.exit_code == 0
    assert "no agent log found; looked in ~/.config/claude/projects, ~/.claude/projects" in result.stderr
    assert "~/.codex/sessions, ~/.codex/archived_sessions" in result.stderr
    assert str(home) not in result.stderr  # the home folder is written ~


def test_usage_without_logs_names_the_folders_of_the_variables(tmp_path: Path) -> None:
    (tmp_path / "cc" / "projects").mkdir(parents=True)
    (tmp_path / "cx" / "sessions").mkdir(parents=True)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "CODEX_HOME": str(tmp_path / "cx")}
    result = cli("usage", "--json", cwd=tmp_path, env=env)
    assert result.exit_code == 0
    assert json.loads(result.stdout)["totals"]["calls"] == 0  # stdout stays one JSON document
    assert f"{tmp_path / 'cc' / 'projects'} (from CLAUDE_CONFIG_DIR)" in result.stderr
    assert f"{tmp_path / 'cx'}/sessions" in result.stderr
    assert "(from CODEX_HOME)" in result.stderr


def test_usage_with_logs_says_nothing_of_where(tmp_path: Path) -> None:
    import support.usage_fixtures as usage_fixtures

    env = usage_fixtures.build(tmp_path / "logs")
    result = cli("usage", "--json", cwd=tmp_path, env=dict(env))
    assert result.exit_code == 0
    assert json.loads(result.stdout)["totals"]["calls"] > 0
    assert "looked in" not in result.stderr


def test_a_bad_config_says_where(git_repo: GitRepo) -> None:
    git_repo.write(".workgroup/config.yml", "profile: balanced\nrouting: [\n")
    request = '{"input":{"role":"builder","owned_files":["a.py"],"active_writers":[]}}'
    result = cli("route", stdin=request, cwd=git_repo.path)
    assert result.exit_code == 2
    assert "error[CONFIG_INVALID]: .workgroup/config.yml is not valid YAML (line 3 column 1)" in result.stderr
