"""`workgroup init --agent claude|codex`: our hooks merged into the agent's project file.

Every case runs the real command in a real git repository: empty and missing files, other tools'
hooks kept in place, a re-run that adds nothing, invalid or unmergeable JSON refused with the file
unchanged, and a `.claude`/`.codex` folder or settings file that leads outside the work tree."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, cli

from toolkit.workflow.agent_settings import FILES, STATUS_LINE, TIMEOUT, WANTED, command_for

SECRET = "ghp_" + "Z" * 36

CLAUDE_EVENTS = {
    "SessionStart": "startup|resume|compact|clear",
    "PreToolUse": "Write|Edit|MultiEdit|NotebookEdit",
    "PreCompact": None,
    "Stop": None,
    "SessionEnd": None,
}
CODEX_EVENTS = {"SessionStart": "startup|resume|clear", "PreToolUse": "Bash|apply_patch", "Stop": None}
HOOK_NAMES = {
    "SessionStart": "session-start",
    "PreToolUse": "pre-tool-use",
    "PreCompact": "pre-compact",
    "Stop": "stop",
    "SessionEnd": "session-end",
}
# another tool's hooks, as a project might already have them
OTHER_HOOKS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bar"},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --check", "timeout": 5}]},
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
    },
    "model": "claude-sonnet-4-5",
}


def settings(repo: GitRepo, agent: str = "claude") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.path / FILES[agent]).read_text(encoding="utf-8"))
    return data


def ours(data: dict[str, Any], event: str) -> list[tuple[str | None, dict[str, Any]]]:
    """(matcher, handler) of every handler of ``event`` that runs our hook."""
    found = []
    for group in data["hooks"].get(event, []):
        for handler in group["hooks"]:
            if f"workgroup agent-hook {HOOK_NAMES[event]} " in handler["command"]:
                found.append((group.get("matcher"), handler))
    return found


@pytest.mark.parametrize(("agent", "events"), [("claude", CLAUDE_EVENTS), ("codex", CODEX_EVENTS)])
def test_a_missing_file_is_written_with_every_hook_once(
    git_repo: GitRepo, agent: str, events: dict[str, str | None]
) -> None:
    code, out, err = cli("init", "--agent", agent)
    assert code == 0, err
    data = settings(git_repo, agent)
    assert set(data["hooks"]) == set(events)
    for event, matcher in events.items():
        [(found_matcher, handler)] = ours(data, event)
        assert found_matcher == matcher
        assert handler == {
            "type": "command",
            "command": command_for(agent, HOOK_NAMES[event]),
            "timeout": TIMEOUT,
        }
        assert f"added {event}" in err
    if agent == "claude":
        assert data["statusLine"] == {"type": "command", "command": STATUS_LINE, "padding": 0}
    else:
        assert "statusLine" not in data
        assert "codex_hooks = true" in err  # the feature flag the user sets; no config.toml written
        assert not (git_repo.path / ".codex" / "config.toml").exists()
    assert out == ""  # human lines on stderr; stdout only with --json


def test_an_empty_file_is_filled(git_repo: GitRepo) -> None:
    (git_repo.path / ".claude").mkdir()
    (git_repo.path / ".claude" / "settings.json").write_text("\n")
    code, _, err = cli("init", "--agent", "claude")
    assert code == 0, err
    assert ".claude/settings.json: written" in err
    assert set(settings(git_repo)["hooks"]) == set(CLAUDE_EVENTS)


def test_other_tools_hooks_and_keys_are_kept_in_place(git_repo: GitRepo) -> None:
    path = git_repo.path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(OTHER_HOOKS, indent=4))
    code, _, err = cli("init", "--agent", "claude")
    assert code == 0, err
    data = settings(git_repo)
    # every key kept, in its order; ours come after
    assert list(data)[:4] == ["permissions", "env", "hooks", "model"]
    for key in ("permissions", "env", "model"):
        assert data[key] == OTHER_HOOKS[key]
    # the existing groups come first and are unchanged; ours is appended
    assert data["hooks"]["PreToolUse"][:2] == OTHER_HOOKS["hooks"]["PreToolUse"]
    assert len(data["hooks"]["PreToolUse"]) == 3
    assert data["hooks"]["Notification"] == OTHER_HOOKS["hooks"]["Notification"]
    assert ".claude/settings.json: updated" in err


def test_a_rerun_adds_nothing_and_does_not_rewrite(git_repo: GitRepo) -> None:
    assert cli("init", "--agent", "claude").exit_code == 0
    path = git_repo.path / ".claude" / "settings.json"
    before = path.read_bytes()
    inode = path.stat().st_ino
    code, out, err = cli("init", "--agent", "claude", "--json")
    assert code == 0, err
    assert path.read_bytes() == before and path.stat().st_ino == inode  # not even rewritten
    report = json.loads(out)
    assert report["status"] == "unchanged" and report["added"] == []
    assert report["present"] == list(CLAUDE_EVENTS) and report["status_line"] == "present"
    for event in CLAUDE_EVENTS:
        assert len(ours(settings(git_repo), event)) == 1


def test_a_hook_the_user_retuned_is_kept_as_written(git_repo: GitRepo) -> None:
    """Our entry with another matcher, timeout or path to the program is ours: left alone, not doubled."""
    path = git_repo.path / ".claude" / "settings.json"
    path.parent.mkdir()
    mine: dict[str, Any] = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/opt/tools/bin/workgroup agent-hook stop",
                            "timeout": 30,
                        }
                    ]
                }
            ],
            "PreToolUse": [
                {
                    "matcher": "Write",
                    "hooks": [{"type": "command", "command": "workgroup agent-hook pre-tool-use"}],
                }
            ],
        },
        "statusLine": {"type": "command", "command": "~/bin/my-status.sh"},
    }
    path.write_text(json.dumps(mine))
    code, out, err = cli("init", "--agent", "claude", "--json")
    assert code == 0, err
    data = settings(git_repo)
    assert data["hooks"]["Stop"] == mine["hooks"]["Stop"]
    assert data["hooks"]["PreToolUse"] == mine["hooks"]["PreToolUse"]
    assert data["statusLine"] == mine["statusLine"]  # the user's status line is theirs
    report = json.loads(out)
    assert report["present"] == ["PreToolUse", "Stop"] and report["status_line"] == "kept yours"
    assert [a["event"] for a in report["added"]] == ["SessionStart", "PreCompact", "SessionEnd"]
    assert "statusLine: yours is kept" in err


def test_our_hooks_in_the_local_settings_are_pointed_out(git_repo: GitRepo) -> None:
    """Claude Code runs the hooks of settings.local.json too: the same hook there would run twice."""
    local = git_repo.path / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(
        json.dumps(
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "workgroup agent-hook stop"}]}]}}
        )
    )
    code, out, err = cli("init", "--agent", "claude", "--json")
    assert code == 0, err
    assert ".claude/settings.local.json also runs our hook for Stop: Claude Code runs both" in err
    assert json.loads(out)["also_in_local_settings"] == ["Stop"]
    assert (
        json.loads(local.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
        == "workgroup agent-hook stop"
    )
    local.write_text("{not json")  # a local file init cannot read is Claude Code's business: no note
    code, _, err = cli("init", "--agent", "claude")
    assert code == 0 and "settings.local.json" not in err


def test_another_event_name_is_not_taken_for_ours(git_repo: GitRepo) -> None:
    """`workgroup agent-hook stop` does not count as our SessionEnd (or a `stop-x` hook as Stop)."""
    path = git_repo.path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "SessionEnd": [{"hooks": [{"type": "command", "command": "workgroup agent-hook stop-x"}]}]
                }
            }
        )
    )
    assert cli("init", "--agent", "claude").exit_code == 0
    assert len(ours(settings(git_repo), "SessionEnd")) == 1
    assert (
        settings(git_repo)["hooks"]["SessionEnd"][0]["hooks"][0]["command"] == "workgroup agent-hook stop-x"
    )


@pytest.mark.parametrize(
    ("text", "code", "exit_code"),
    [
        ('{"hooks": {"Stop": []},', "AGENT_SETTINGS_INVALID", 2),  # truncated
        ("{'hooks': {}}", "AGENT_SETTINGS_INVALID", 2),  # not JSON (single quotes)
        ('{"hooks": {}, // a comment\n}', "AGENT_SETTINGS_INVALID", 2),  # JSON with comments
        (
            '{"hooks": {}, "hooks": {"Stop": []}}',
            "AGENT_SETTINGS_INVALID",
            2,
        ),  # a duplicate key would be lost
        ('{"x": NaN}', "AGENT_SETTINGS_INVALID", 2),
        ("[1, 2]", "AGENT_SETTINGS_UNMERGEABLE", 1),  # not an object
        ('{"hooks": []}', "AGENT_SETTINGS_UNMERGEABLE", 1),
        ('{"hooks": {"Stop": {"hooks": []}}}', "AGENT_SETTINGS_UNMERGEABLE", 1),  # an event not a list
    ],
)
def test_a_file_that_cannot_be_merged_is_refused_unchanged(
    git_repo: GitRepo, text: str, code: str, exit_code: int
) -> None:
    path = git_repo.path / ".claude" / "settings.json"
    path.parent.mkdir()
    body = text.replace("{}", '{"env": {"TOKEN": "' + SECRET + '"}}', 1) if text.startswith("{") else text
    path.write_text(body)
    before = path.read_bytes()
    result = cli("init", "--agent", "claude")
    assert result.exit_code == exit_code, result.stderr
    assert f"error[{code}]" in result.stderr
    assert SECRET not in result.stdout + result.stderr  # the file's content is never echoed
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]  # no temp file left


def test_a_file_where_the_folder_should_be_is_refused(git_repo: GitRepo) -> None:
    (git_repo.path / ".claude").write_text("not a folder")
    result = cli("init", "--agent", "claude")
    assert result.exit_code == 2 and "error[NOT_A_FOLDER]: .claude is not a folder" in result.stderr
    assert (git_repo.path / ".claude").read_text() == "not a folder"


def test_not_utf8_is_refused_unchanged(git_repo: GitRepo) -> None:
    path = git_repo.path / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_bytes(b'{"hooks": {"Stop": [\xff]}}')
    result = cli("init", "--agent", "codex")
    assert result.exit_code == 2 and "error[FILE_NOT_UTF8]" in result.stderr
    assert path.read_bytes() == b'{"hooks": {"Stop": [\xff]}}'


@pytest.mark.parametrize(
    ("rel", "target"),
    [
        (".claude", "../outside"),  # the folder leads outside: settings.json would be created there
        (".claude/settings.json", "../../outside/settings.json"),  # the file itself is a link
        (".claude/settings.json", "nowhere.json"),  # dangling
    ],
)
def test_a_settings_path_leading_outside_is_refused(git_repo: GitRepo, rel: str, target: str) -> None:
    outside = git_repo.path.parent / "outside"
    outside.mkdir()
    (outside / "settings.json").write_text(json.dumps({"env": {"TOKEN": SECRET}}))
    before = (outside / "settings.json").read_bytes()
    link = git_repo.path / rel
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(target)
    result = cli("init", "--agent", "claude")
    assert result.exit_code == 2 and "error[PATH_OUTSIDE_REPOSITORY]" in result.stderr, result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["settings.json"]
    assert (outside / "settings.json").read_bytes() == before


def test_a_claude_folder_linked_inside_is_followed(git_repo: GitRepo) -> None:
    (git_repo.path / "shared" / "claude").mkdir(parents=True)
    (git_repo.path / ".claude").symlink_to("shared/claude")
    assert cli("init", "--agent", "claude").exit_code == 0
    assert (git_repo.path / "shared" / "claude" / "settings.json").is_file()


def test_dry_run_says_what_it_would_add_and_writes_nothing(git_repo: GitRepo) -> None:
    path = git_repo.path / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {}}')
    code, out, err = cli("init", "--agent", "codex", "--dry-run", "--json")
    assert code == 0, err
    assert path.read_text() == '{"hooks": {}}'
    assert "would add PreToolUse (matcher Bash|apply_patch)" in err
    assert json.loads(out)["dry_run"] is True and len(json.loads(out)["added"]) == 3


def test_existing_file_mode_is_kept(git_repo: GitRepo) -> None:
    path = git_repo.path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{}")
    path.chmod(0o600)
    assert cli("init", "--agent", "claude").exit_code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "args",
    [
        ("--agent", "gemini"),
        ("--agent", "claude", "--local"),
        ("--agent", "claude", "--ci", "github"),
        ("--dry-run",),
    ],
)
def test_bad_options_are_refused_before_anything_is_written(git_repo: GitRepo, args: tuple[str, ...]) -> None:
    result = cli("init", *args)
    assert result.exit_code == 2, result.stderr
    assert not (git_repo.path / ".claude").exists() and not (git_repo.path / ".workgroup").exists()


def test_from_a_subfolder_it_writes_at_the_work_tree_top(git_repo: GitRepo) -> None:
    sub = git_repo.path / "src" / "pkg"
    sub.mkdir(parents=True)
    assert cli("init", "--agent", "claude", cwd=sub).exit_code == 0
    assert (git_repo.path / ".claude" / "settings.json").is_file()
    assert not (sub / ".claude").exists()


def test_outside_a_repository_is_an_environment_error(tmp_path: Path) -> None:
    result = cli("init", "--agent", "claude", cwd=tmp_path)
    assert result.exit_code == 3
    assert not (tmp_path / ".claude").exists()


def test_the_gate_fails_closed_when_workgroup_is_not_on_path(tmp_path: Path) -> None:
    """The written PreToolUse command, run by a shell whose PATH has no workgroup, exits 2 (block)
    and says why on stderr; without the guard the shell's 127 would let the agent write."""
    for agent in WANTED:
        command = command_for(agent, "pre-tool-use")
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            input=b"{}",
            capture_output=True,
            env={"PATH": str(tmp_path)},
            timeout=30,
            check=False,
        )
        assert proc.returncode == 2, proc
        assert b"workgroup is not on PATH" in proc.stderr and FILES[agent].encode() in proc.stderr


def test_the_gate_runs_workgroup_when_it_is_on_path(tmp_path: Path) -> None:
    """With a `workgroup` on PATH the guard hands over to it, with stdin and its exit code."""
    fake = tmp_path / "workgroup"
    fake.write_text('#!/bin/sh\necho "args: $*"; cat; exit 7\n')
    fake.chmod(0o755)
    proc = subprocess.run(
        ["/bin/sh", "-c", command_for("claude", "pre-tool-use")],
        input=b"{payload}",
        capture_output=True,
        env={"PATH": f"{tmp_path}{os.pathsep}/usr/bin{os.pathsep}/bin"},
        timeout=30,
        check=False,
    )
    assert proc.returncode == 7
    assert proc.stdout == b"args: agent-hook pre-tool-use --agent claude\n{payload}"


def test_every_written_command_names_a_hook_event_the_cli_knows() -> None:
    names = {name for events in WANTED.values() for _, _, name in events}
    assert names <= {
        "session-start",
        "pre-tool-use",
        "post-tool-use",
        "pre-compact",
        "stop",
        "session-end",
        "user-prompt-submit",
    }
    for agent, events in WANTED.items():
        for _, _, name in events:
            assert shlex.split(command_for(agent, name))[-4:] == ["agent-hook", name, "--agent", agent]
