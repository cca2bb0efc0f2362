"""Hostile input to ``workgroup agent-hook``: malformed, huge or deeply nested stdin, wrong events,
paths outside the repository and symlinks. Each gets a coded deny or error and nothing is written.

A crashing hook fails open at both agents (any exit but 0 and 2 lets the action proceed), so a
pre-tool call the gate cannot read is denied (exit 2); a stop never blocks on our error (exit 1).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.agent_hooks import HookResult, claude_transcript, github_token, hook, payload
from support.harness import GitRepo

from toolkit.agents.payload import MAX_STDIN_BYTES


@pytest.fixture
def repo(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("base", {"src/api.py": "x = 1\n", "docs/readme.md": "# demo\n"})
    return git_repo


def _write(root: Path, path: str | Path, content: str = "VALUE = 1\n") -> dict[str, object]:
    data = payload("claude", "pre-tool-use.write", root)
    data["tool_input"] = {"file_path": str(path), "content": content}
    return data


def _denied(result: HookResult, code: str | None = None) -> str:
    code_, data, _out, err = result
    assert code_ == 2 and data is not None, result
    assert data["hookSpecificOutput"]["permissionDecision"] == "deny"
    if code is not None:
        assert f"error[{code}]" in err, err
    return str(err)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"not json", "INVALID_PAYLOAD"),
        (b"", "INVALID_PAYLOAD"),
        (b'["a", "list"]', "INVALID_PAYLOAD"),
        (b'{"tool_name": "Write", "tool_input": {"file_path": "a"', "INVALID_PAYLOAD"),  # torn
        (b'{"tool_name": "Write"}\n{"tool_name": "Read"}', "INVALID_PAYLOAD"),  # two objects
        (b'{"cwd": "\xff\xfe"}', "INVALID_PAYLOAD"),  # not UTF-8
        (b"[" * 100_000 + b"]" * 100_000, "INVALID_PAYLOAD"),  # nests past the decoder
        (json.dumps({"a": json.loads("[" * 70 + "]" * 70)}).encode(), "INVALID_PAYLOAD"),  # past our bound
        (b'{"hook_event_name": "Stop"}', "EVENT_MISMATCH"),  # a settings file wired the wrong command
        (b'{"tool_name": "Write", "tool_input": {"content": "x"}}', "INVALID_TOOL_INPUT"),  # no path
        (b'{"tool_name": "MultiEdit", "tool_input": {"file_path": "/a", "edits": 3}}', "INVALID_TOOL_INPUT"),
    ],
)
def test_unreadable_pre_tool_input_is_denied(raw: bytes, code: str, repo: GitRepo) -> None:
    _denied(hook("pre-tool-use", raw=raw, cwd=repo.path), code)


def test_huge_stdin_is_denied_without_reading_it_all(repo: GitRepo) -> None:
    raw = b'{"tool_name": "Write", "tool_input": {"content": "' + b"a" * MAX_STDIN_BYTES + b'"}}'
    _denied(hook("pre-tool-use", raw=raw, cwd=repo.path), "PAYLOAD_TOO_LARGE")


@pytest.mark.parametrize(
    "args", [("bogus-event",), (), ("pre-tool-use", "--agent", "cursor"), ("stop", "stop")]
)
def test_a_bad_command_line_blocks(args: tuple[str, ...], repo: GitRepo) -> None:
    from support.harness import run_workgroup

    proc = run_workgroup("agent-hook", *args, stdin=b"{}", cwd=repo.path)
    assert proc.returncode == 2 and b"error[" in proc.stderr


def test_a_stop_never_blocks_on_bad_input_and_writes_nothing(repo: GitRepo) -> None:
    for raw in (b"not json", b"[" * 100_000):
        result = hook("stop", raw=raw, cwd=repo.path)
        assert result.code == 1 and "error[INVALID_PAYLOAD]" in result.stderr  # shown to the user, no block
        assert result.data is None
    assert not (repo.path / ".reviews").exists() and not (repo.path / ".git" / "workgroup").exists()


def test_a_write_outside_the_repository_is_scanned_but_not_owned(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "notes.txt"
    assert hook("pre-tool-use", _write(repo.path, outside), cwd=repo.path).code == 0
    token = github_token()
    denied = _denied(hook("pre-tool-use", _write(repo.path, outside, f"t = {token}\n"), cwd=repo.path))
    assert "notes.txt: line 1 holds a github-token secret" in denied and token not in denied
    # `..` that climbs out is outside as well: scanned, never owned
    climbing = repo.path / "src" / ".." / ".." / "elsewhere" / "other.txt"
    assert hook("pre-tool-use", _write(repo.path, climbing), cwd=repo.path).code == 0
    assert not outside.exists() and not outside.parent.exists()


def test_a_folder_symlink_leaving_the_repository_is_denied(repo: GitRepo, tmp_path: Path) -> None:
    target = tmp_path / "outside"
    target.mkdir()
    repo.link("vendor", target)
    err = _denied(hook("pre-tool-use", _write(repo.path, repo.path / "vendor" / "lib.py"), cwd=repo.path))
    assert "vendor/lib.py: the destination leads outside the repository through a symlink" in err
    assert list(target.iterdir()) == []


def test_a_file_symlink_is_denied_wherever_it_points(repo: GitRepo, tmp_path: Path) -> None:
    repo.link("docs/alias.md", "readme.md")  # inside the repository: still a write through a link
    _denied(hook("pre-tool-use", _write(repo.path, repo.path / "docs" / "alias.md"), cwd=repo.path))
    # a link outside the repository that points into it would change a repository file unseen
    outside_link = tmp_path / "api-link.py"
    os.symlink(repo.path / "src" / "api.py", outside_link)
    err = _denied(hook("pre-tool-use", _write(repo.path, outside_link), cwd=repo.path))
    assert "a symlink into the repository" in err
    assert (repo.path / "src" / "api.py").read_text(encoding="utf-8") == "x = 1\n"


def test_writes_into_the_git_directory_are_denied(repo: GitRepo) -> None:
    err = _denied(
        hook("pre-tool-use", _write(repo.path, repo.path / ".git" / "hooks" / "pre-commit"), cwd=repo.path)
    )
    assert ".git/hooks/pre-commit: writes into the git directory are never allowed" in err


def test_a_shell_redirect_through_a_symlinked_folder_is_denied(repo: GitRepo, tmp_path: Path) -> None:
    target = tmp_path / "outside"
    target.mkdir()
    repo.link("out", target)
    data = payload("codex", "pre-tool-use.redirect", repo.path)
    data["tool_input"] = {"command": "echo hello > out/greeting.txt"}
    _denied(hook("pre-tool-use", data, cwd=repo.path))


def test_session_files_behind_symlinks_are_never_read_or_written(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "session-handoff.md").write_text("CANARY-outside-handoff\n", encoding="utf-8")
    repo.link(".reviews", outside)
    start = hook("session-start", payload("claude", "session-start.startup", repo.path), cwd=repo.path)
    assert start.code == 0
    assert "not read (it leads outside the repository through a symlink)" in start.context
    assert "CANARY" not in start.stdout
    # the stop's handoff is not written through the link: the verdict says so
    transcript = claude_transcript(tmp_path / "home")
    stop = hook("stop", payload("claude", "stop", repo.path, transcript), cwd=repo.path)
    assert stop.code == 0 and "Handoff summary: not written" in stop.message
    assert sorted(p.name for p in outside.iterdir()) == ["session-handoff.md"]
    assert (outside / "session-handoff.md").read_text(encoding="utf-8") == "CANARY-outside-handoff\n"
    # nor is a capsule sealed through a symlinked .workgroup
    repo.link(".workgroup", outside)
    compact = hook("pre-compact", payload("claude", "pre-compact", repo.path, transcript), cwd=repo.path)
    assert compact.code == 1 and "error[PATH_OUTSIDE_REPOSITORY]" in compact.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["session-handoff.md"]


def test_a_transcript_that_is_no_log_is_not_read(repo: GitRepo, tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)  # reading it would block the agent
    for transcript in (
        fifo,
        tmp_path / "missing.jsonl",
        "relative/s.jsonl",
        str(repo.path / "src" / "api.py"),
    ):
        stop = hook("stop", payload("claude", "stop", repo.path, transcript), cwd=repo.path)
        assert stop.code == 0 and "usage: no verified model calls" in stop.message
    assert not (repo.path / ".git" / "workgroup" / "telemetry.jsonl").exists()


def test_pre_compact_on_an_unborn_branch_is_a_coded_error(git_repo: GitRepo) -> None:
    result = hook("pre-compact", payload("claude", "pre-compact", git_repo.path), cwd=git_repo.path)
    assert result.code == 1 and "error[UNBORN_HEAD]" in result.stderr
    assert not (git_repo.path / ".workgroup").exists()


def test_outside_any_repository_writes_are_still_scanned(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    data = payload("claude", "pre-tool-use.write", folder)
    data["tool_input"] = {"file_path": str(folder / "a.txt"), "content": f"{github_token()}\n"}
    _denied(hook("pre-tool-use", data, cwd=folder))
    data["tool_input"] = {"file_path": str(folder / "a.txt"), "content": "plain\n"}
    assert hook("pre-tool-use", data, cwd=folder).code == 0


def test_a_call_writing_too_many_files_is_denied(repo: GitRepo) -> None:
    data = payload("claude", "pre-tool-use.multiedit", repo.path)
    data["tool_input"] = {"file_path": str(repo.path / "src" / "api.py"), "edits": [{"new_string": "y"}] * 65}
    _denied(hook("pre-tool-use", data, cwd=repo.path), "TOO_MANY_WRITES")
    shell = payload("codex", "pre-tool-use.redirect", repo.path)
    shell["tool_input"] = {"command": "echo x | tee " + " ".join(f"f{n}.txt" for n in range(65))}
    _denied(hook("pre-tool-use", shell, cwd=repo.path), "TOO_MANY_WRITES")


def test_one_command_writing_to_several_files_is_judged_per_destination(repo: GitRepo) -> None:
    # an address is ordinary content in source, private in a workflow artifact
    shell = payload("codex", "pre-tool-use.redirect", repo.path)
    shell["tool_input"] = {
        "command": "echo 'owner: jane.doe@acmecorp.io' | tee src/owners.txt .reviews/owners.md"
    }
    err = _denied(hook("pre-tool-use", shell, cwd=repo.path))
    assert ".reviews/owners.md (the command): line 1 holds an email address" in err
    assert "src/owners.txt" not in err


# --- the shared hostile-input catalogue (tests/support/hostile.py) ----------------------------------------

_TEMPLATE = (
    b'{"session_id": @SID@, "transcript_path": @TRANSCRIPT@, "cwd": @CWD@, "hook_event_name": @NAME@,'
    b' "tool_name": "Write", "tool_input": {"file_path": @PATH@, "content": @CONTENT@}, "source": @SOURCE@,'
    b' "stop_hook_active": @ACTIVE@, "prompt": @CONTENT@}'
)
_SLOTS = (b"@SID@", b"@TRANSCRIPT@", b"@CWD@", b"@NAME@", b"@PATH@", b"@CONTENT@", b"@SOURCE@", b"@ACTIVE@")
_ALLOWED_CODES = {
    "pre-tool-use": {0, 2},
    "user-prompt-submit": {0, 2},
    "session-start": {0, 1},
    "stop": {0, 1},
}


def _in_process(event: str, raw: bytes) -> tuple[int, str]:
    import io

    from toolkit.agents.main import answer

    result = answer([event], io.BytesIO(raw))
    out, err = io.StringIO(), io.StringIO()
    code = result.write(out, err)
    return code, out.getvalue() + err.getvalue()


@pytest.mark.parametrize("name", sorted(__import__("support.hostile", fromlist=["_"]).CONTENTS))
def test_every_hostile_stdin_gets_a_coded_answer(
    name: str, repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.hostile import CONTENTS, tried

    monkeypatch.chdir(repo.path)
    for event, codes in _ALLOWED_CODES.items():
        code, shown = _in_process(event, CONTENTS[name])
        tried(f"agent-hook {event}")
        assert code in codes, (event, code, shown)
        if code:  # refused input names its code, nothing else
            assert "error[" in shown


@pytest.mark.parametrize("fragment", sorted(__import__("support.hostile", fromlist=["_"]).REQUEST_FRAGMENTS))
def test_hostile_values_in_every_field_get_a_coded_answer(fragment: str, repo: GitRepo) -> None:
    from support.hostile import REQUEST_FRAGMENTS, tried

    good = {
        b"@SID@": b'"s-1"',
        b"@TRANSCRIPT@": b'"/nonexistent/s-1.jsonl"',
        b"@CWD@": json.dumps(str(repo.path)).encode(),
        b"@NAME@": b"null",
        b"@PATH@": json.dumps(str(repo.path / "src" / "a.py")).encode(),
        b"@CONTENT@": b'"x = 1\\n"',
        b"@SOURCE@": b'"startup"',
        b"@ACTIVE@": b"false",
    }
    for slot in _SLOTS:
        raw = _TEMPLATE
        for other, value in good.items():
            raw = raw.replace(other, REQUEST_FRAGMENTS[fragment] if other == slot else value)
        for event, codes in _ALLOWED_CODES.items():
            code, _shown = _in_process(event, raw)
            tried(f"agent-hook {event}")
            assert code in codes, (slot, event, code)
    # nothing of the tool call was written by the hook
    assert not (repo.path / "src" / "a.py").exists()
