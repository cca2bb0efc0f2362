"""The shapes the agent hooks print (toolkit.agents.shapes) are the order they print them in.

Each ``TypedDict`` declares its keys in the order of the output; these tests read the emitted JSON
(the answer as the process writes it, the files a hook writes) and fail when a shape's declared
order, or its optional keys, disagree with what is printed.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import get_args

from support.agent_hooks import claude_transcript, github_token, hook, payload
from support.harness import GitRepo, cli, declared_keys

from toolkit.agents import answers, statusline
from toolkit.agents.shapes import (
    BlockAnswer,
    CarriedWork,
    ContextAnswer,
    ContextOutput,
    DenyAnswer,
    LineCache,
    MessageAnswer,
    PermissionOutput,
    SessionCapsule,
    SigEntry,
)
from toolkit.runtime.capsule import seal


def _printed(answer: answers.Answer) -> dict[str, object]:
    """The JSON object an answer writes on stdout, keys in their printed order."""
    out, err = io.StringIO(), io.StringIO()
    answer.write(out, err)
    data: dict[str, object] = json.loads(out.getvalue())
    return data


def _keys(value: object) -> list[str]:
    assert isinstance(value, dict)
    return list(value)


def _required(shape: type) -> list[str]:
    required: frozenset[str] = getattr(shape, "__required_keys__")  # noqa: B009 - a TypedDict class attribute `type` does not declare
    return [key for key in declared_keys(shape) if key in required]


def test_a_denial_prints_the_deny_shape_in_order() -> None:
    data = _printed(answers.deny("a reason"))
    assert _keys(data) == declared_keys(DenyAnswer)
    assert _keys(data["hookSpecificOutput"]) == declared_keys(PermissionOutput)


def test_an_error_at_a_tool_call_is_a_denial_of_the_same_shape() -> None:
    data = _printed(answers.error("X", "broken", "pre-tool-use"))
    assert _keys(data) == declared_keys(DenyAnswer)
    assert _keys(data["hookSpecificOutput"]) == declared_keys(PermissionOutput)


def test_context_prints_its_shape_with_and_without_the_message() -> None:
    bare = _printed(answers.context("SessionStart", "text"))
    assert _keys(bare) == _required(ContextAnswer) == ["hookSpecificOutput"]
    assert _keys(bare["hookSpecificOutput"]) == declared_keys(ContextOutput)
    full = _printed(answers.context("SessionStart", "text", "to the user"))
    assert _keys(full) == declared_keys(ContextAnswer)
    assert _keys(full["hookSpecificOutput"]) == declared_keys(ContextOutput)


def test_block_and_message_print_their_shapes() -> None:
    assert _keys(_printed(answers.block("why"))) == declared_keys(BlockAnswer)
    assert _keys(_printed(answers.message("hello"))) == declared_keys(MessageAnswer)


def test_the_real_hook_prints_the_declared_orders(git_repo: GitRepo, tmp_path: Path) -> None:
    """The process's own stdout: a denied write, a held-back prompt, a session start with its
    message (resume), a stop's message."""
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    secret = github_token()
    denied = hook(
        "pre-tool-use",
        {
            "cwd": str(git_repo.path),
            "tool_name": "Write",
            "tool_input": {"file_path": str(git_repo.path / "a.py"), "content": f"k = '{secret}'\n"},
        },
        cwd=git_repo.path,
    )
    assert denied.code == 2
    assert denied.data is not None
    assert _keys(denied.data) == declared_keys(DenyAnswer)
    assert _keys(denied.data["hookSpecificOutput"]) == declared_keys(PermissionOutput)

    held = hook(
        "user-prompt-submit", {"cwd": str(git_repo.path), "prompt": f"use {secret}"}, cwd=git_repo.path
    )
    assert held.data is not None and _keys(held.data) == declared_keys(BlockAnswer)

    resumed = hook(
        "session-start", payload("claude", "session-start.resume", git_repo.path), cwd=git_repo.path
    )
    assert resumed.data is not None and _keys(resumed.data) == declared_keys(ContextAnswer)
    assert _keys(resumed.data["hookSpecificOutput"]) == declared_keys(ContextOutput)

    stopped = hook(
        "stop", payload("claude", "stop", git_repo.path, tmp_path / "none.jsonl"), cwd=git_repo.path
    )
    assert stopped.data is not None and _keys(stopped.data) == declared_keys(MessageAnswer)


def _compact(repo: GitRepo, trigger: str) -> tuple[Path, dict[str, object]]:
    """Run the real pre-compact hook; the capsule file it wrote and its content (keys in file order)."""
    data = payload("claude", "pre-compact", repo.path)
    data["trigger"] = trigger
    result = hook("pre-compact", data, cwd=repo.path)
    assert result.code == 0, result.stderr
    written = list(
        (repo.path / ".workgroup" / "workgroups" / "agents" / "capsules").glob("claude-work-*.json")
    )
    assert len(written) == 1
    capsule: dict[str, object] = json.loads(written[0].read_text(encoding="utf-8"))
    return written[0], capsule


def test_the_session_capsule_is_written_in_its_declared_order_and_carries_forward(git_repo: GitRepo) -> None:
    """The capsule pre-compact writes has SessionCapsule's keys in order, ``capsule_hash`` last; a
    second seal carries the first one's workgroup, work, constraints and next action forward."""
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    git_repo.write("src/api.py", "x = 2\n")
    path, first = _compact(git_repo, "auto")
    assert list(first) == [*declared_keys(SessionCapsule), "capsule_hash"]
    assert first["owned_files"] == ["src/api.py"]
    assert first["constraints"] == ["Sealed before a context compaction (auto trigger)."]

    carried: CarriedWork = {
        "phase": "2B",
        "objective": "Finish the parser.",
        "node_ids": ["NODE-1"],
        "read_files": ["src/api.py"],
        "specs": [{"path": "specs/api.md", "verify_ids": ["V-1"]}],
        "approved_decisions": ["keep the API"],
        "failures": [{"command": "pytest -q", "summary": "1 failed", "artifact": None}],
        "risks": ["the cache may be stale"],
    }
    edited = {
        **first,
        **carried,
        "constraints": ["no new dependency", "Sealed before a context compaction (auto trigger)."],
        "next_action": "Fix the failing test.",
    }
    path.write_text(json.dumps(seal(edited), indent=2) + "\n", encoding="utf-8")

    _path, second = _compact(git_repo, "manual")
    assert list(second) == [*declared_keys(SessionCapsule), "capsule_hash"]
    assert {key: second[key] for key in declared_keys(CarriedWork)} == carried
    assert second["workgroup_id"] == "agents" and second["task_id"] == first["task_id"]
    assert second["constraints"] == [
        "no new dependency",
        "Sealed before a context compaction (manual trigger).",
    ]
    assert second["next_action"] == "Fix the failing test."


def test_the_status_line_cache_is_written_in_its_declared_order(git_repo: GitRepo, tmp_path: Path) -> None:
    """The ``.line`` cache has LineCache's keys in order and a signature row per file of SigEntry's
    arity; a refresh after an append without a model call keeps the cached marks and the order."""
    transcript = claude_transcript(tmp_path / "home")
    given = json.dumps({"transcript_path": str(transcript), "workspace": {"project_dir": str(git_repo.path)}})
    first = cli("statusline", stdin=given.encode())
    assert first.exit_code == 0 and first.stdout.startswith("workgroup: 40.3k tok verified")
    line_file = (
        git_repo.path / ".git" / "workgroup" / "statusline" / f"{statusline.cache_key(str(transcript))}.line"
    )
    doc = json.loads(line_file.read_text(encoding="utf-8"))
    assert list(doc) == declared_keys(LineCache)
    assert [len(row) for row in doc["sig"]] == [
        len(get_args(SigEntry))
    ] * 2  # the transcript and its subagent log

    with transcript.open("a", encoding="utf-8") as log:
        log.write(json.dumps({"type": "user", "message": {"role": "user", "content": "go on"}}) + "\n")
    again = cli("statusline", stdin=given.encode())
    assert again.stdout == first.stdout
    refreshed = json.loads(line_file.read_text(encoding="utf-8"))
    assert list(refreshed) == declared_keys(LineCache)
    assert refreshed["at"] == doc["at"] and refreshed["sig"] != doc["sig"]  # the marks kept, the files grew
