"""Issue #25: the answers and rows the workflow modules build are TypedDicts; these tests hold what
is returned and printed to the declared keys, in the declared order."""

from __future__ import annotations

import json

from support.harness import GitRepo, cli


def _keys(kind: type) -> list[str]:
    return list(kind.__annotations__)


def test_agent_merge_answers_the_declared_rows(git_repo: GitRepo) -> None:
    """``init --agent --json``: an AgentAnswer (Claude Code's optional keys, or Codex's note) with
    AddedHook rows, then the command's own ``dry_run``."""
    from toolkit.workflow.agent_settings import AddedHook, AgentAnswer

    claude_keys = [k for k in _keys(AgentAnswer) if k != "note"]
    codex_keys = [k for k in _keys(AgentAnswer) if k not in ("status_line", "also_in_local_settings")]
    code, out, err = cli("init", "--agent", "claude", "--json")
    assert code == 0, err
    claude = json.loads(out)
    assert list(claude) == [*claude_keys, "dry_run"]
    assert claude["added"] and all(list(row) == _keys(AddedHook) for row in claude["added"])
    code, out, err = cli("init", "--agent", "codex", "--dry-run", "--json")
    assert code == 0, err
    codex = json.loads(out)
    assert list(codex) == [*codex_keys, "dry_run"]
    assert codex["added"] and all(list(row) == _keys(AddedHook) for row in codex["added"])
