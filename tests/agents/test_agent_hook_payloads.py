"""Every recorded payload of both agents (tests/agents/payloads/, written from the documented shapes)
through the real ``workgroup agent-hook`` process: the exit code and an answer each agent accepts.

Codex's hook output schemas refuse unknown keys (``additionalProperties: false``), so an answer may
hold only the documented keys of its event; Claude Code reads the same keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.agent_hooks import PAYLOADS, claude_transcript, codex_transcript, hook, payload
from support.harness import GitRepo

from toolkit.agents.payload import EVENTS, event_name

COMMON = {"continue", "stopReason", "suppressOutput", "systemMessage"}
SPECIFIC = {
    "SessionStart": {"hookEventName", "additionalContext"},
    "PreToolUse": {"hookEventName", "permissionDecision", "permissionDecisionReason", "additionalContext"},
}
ALL = sorted((agent.name, file.stem) for agent in PAYLOADS.iterdir() for file in agent.glob("*.json"))


def _event_of(name: str) -> str:
    return event_name(name.split(".")[0])


def _keys_documented(event: str, data: dict[str, Any]) -> None:
    allowed = COMMON | ({"hookSpecificOutput"} if event in ("session-start", "pre-tool-use") else set())
    allowed |= {"decision", "reason"} if event in ("stop", "user-prompt-submit") else set()
    assert set(data) <= allowed, data
    inner = data.get("hookSpecificOutput")
    if inner is not None:
        assert set(inner) <= SPECIFIC[inner["hookEventName"]], inner
        assert inner["hookEventName"] == EVENTS[event]


def test_every_event_of_both_agents_has_a_recorded_payload() -> None:
    claude = {_event_of(name) for agent, name in ALL if agent == "claude"}
    codex = {_event_of(name) for agent, name in ALL if agent == "codex"}
    assert claude == set(EVENTS)  # Claude Code has every event we answer
    # Codex: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PreCompact and Stop (no SessionEnd)
    assert codex == {
        "session-start",
        "user-prompt-submit",
        "pre-tool-use",
        "post-tool-use",
        "pre-compact",
        "stop",
    }


@pytest.mark.parametrize(("agent", "name"), ALL, ids=[f"{a}-{n}" for a, n in ALL])
def test_each_recorded_payload_gets_an_answer_the_agent_accepts(
    agent: str, name: str, git_repo: GitRepo, tmp_path: Path
) -> None:
    git_repo.commit("base", {"src/api.py": "def handler(request):\n    return request.send()\n"})
    home = tmp_path / "agent-home"
    transcript = claude_transcript(home) if agent == "claude" else codex_transcript(home)
    event = _event_of(name)
    data = payload(agent, name, git_repo.path, transcript)
    # the agent named on the command line (as init writes it), and detected from the payload alone
    for given in (agent, None):
        result = hook(event, data, agent=given, cwd=git_repo.path)
        assert result.code == 0, (given, result.stderr)
        if result.data is not None:
            _keys_documented(event, result.data)
        if event == "session-start":
            assert result.context.startswith("workgroup session start")
        elif event in ("pre-compact",):
            assert "sealed the session's state" in result.message
        elif event in ("stop", "session-end") and not name.endswith(".active"):
            assert "Handoff summary" in result.message and "usage:" in result.message
        else:  # the writes are clean and the other events have nothing to say: go on, silently
            assert result.data is None and result.stderr == "", result
    if event in ("stop", "session-end") and not name.endswith(".active"):
        assert (git_repo.path / ".reviews" / "session-handoff.md").is_file()
    if name.endswith(".active"):  # stop_hook_active: nothing done, nothing written
        assert not (git_repo.path / ".reviews").exists()


@pytest.mark.parametrize("name", ["pre-tool-use", "PreToolUse", "pre_tool_use", "pretooluse"])
def test_the_agents_own_event_names_are_accepted(name: str) -> None:
    assert event_name(name) == "pre-tool-use"
