"""An end-to-end simulated session: the real ``workgroup agent-hook`` process against a real git
repository and a real transcript file, as Claude Code (and Codex) would drive it.

start -> a write that passes -> a write denied for a secret -> a write denied for ownership ->
compaction (a capsule sealed at HEAD) -> start after compaction (the capsule comes back) -> stop
(verdict, handoff, one efficiency event counted from the transcript) -> stop again (nothing new) ->
stop with stop_hook_active (nothing at all) -> resume (the lineage check: allowed, then a fresh
capsule due once HEAD moved).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.agent_hooks import (
    CLAUDE_BILLED,
    CODEX_BILLED,
    claude_transcript,
    codex_transcript,
    github_token,
    hook,
    payload,
)
from support.harness import GitRepo, run_workgroup

from toolkit.runtime.capsule import seal


def _write(root: Path, rel: str, content: str) -> dict[str, Any]:
    data = payload("claude", "pre-tool-use.write", root)
    data["tool_input"] = {"file_path": str(root / rel), "content": content}
    return data


def _telemetry(repo: GitRepo) -> list[dict[str, Any]]:
    log = repo.path / ".git" / "workgroup" / "telemetry.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _lineage(repo: GitRepo, head: str, capsule_hash: str | None) -> None:
    lineage = {
        "schema": "knowzcode.agent-lineage/v1",
        "lineage_id": "builder-timeout",
        "workgroup_id": "agents",
        "platform": "claude",
        "platform_handle": None,
        "parent_lineage_id": None,
        "role": "builder",
        "scope": "api/timeout",
        "phase": "2A",
        "fix_loop_id": None,
        "mode": "resume",
        "model": None,
        "effort": None,
        "runtime_prefix_hash": "sha256:" + "b" * 64,
        "baseline_hash": None,
        "tools_hash": "sha256:tools-v1",
        "permissions_hash": "sha256:permissions-v1",
        "spec_hash": "sha256:spec-v1",
        "scope_hash": "sha256:scope-v1",
        "checkpoint_sha": head,
        "capsule_hash": capsule_hash,
        "sensitivity": "normal",
        "created_at": "2026-12-01T08:00:00Z",
        "last_used_at": "2026-12-01T08:10:00Z",
        "resumable": True,
        "lease_expires_at": "2999-01-01T00:00:00Z",
    }
    repo.write(".workgroup/workgroups/agents/lineages/builder-timeout.json", json.dumps(lineage))


def test_a_simulated_claude_session_end_to_end(git_repo: GitRepo, tmp_path: Path) -> None:
    root = git_repo.path
    head = git_repo.commit("base", {"src/api.py": "def handler(request):\n    return request.send()\n"})
    transcript = claude_transcript(tmp_path / "claude-home")

    # 1. start: no handoff, no capsule yet
    start = hook("session-start", payload("claude", "session-start.startup", root, transcript), cwd=root)
    assert start.code == 0
    assert "Handoff (.reviews/session-handoff.md): none yet." in start.context
    assert "Capsule bound to HEAD: none." in start.context

    # 2. a write that passes (and the agent makes it)
    clean = (
        "TIMEOUT_SECONDS = 30\n\n\ndef handler(request):\n    return request.send(timeout=TIMEOUT_SECONDS)\n"
    )
    passed = hook("pre-tool-use", _write(root, "src/api.py", clean), cwd=root)
    assert passed == (0, None, "", "")
    (root / "src" / "api.py").write_text(clean, encoding="utf-8")

    # 3. a write denied for a secret: the model reads where and what to do, never the value
    token = github_token()
    secret = f'import os\n\nTOKEN = "{token}"\n'
    denied = hook("pre-tool-use", _write(root, "src/client.py", secret), cwd=root)
    assert denied.code == 2
    assert denied.data is not None
    assert denied.data["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "src/client.py: line 3 holds a github-token secret" in denied.stderr
    assert "environment variable" in denied.reason
    assert token not in denied.stdout + denied.stderr and token[4:12] not in denied.stdout + denied.stderr
    assert not (root / "src" / "client.py").exists()

    # 4. a write denied for ownership: another writer holds a lease on the path (CEO-06)
    acquired = run_workgroup("owners", "acquire", "reviewer-7", "--path", "src/owned.py", cwd=root)
    assert acquired.returncode == 0, acquired.stderr
    owned = hook("pre-tool-use", _write(root, "src/owned.py", "VALUE = 1\n"), cwd=root)
    assert owned.code == 2
    assert "src/owned.py: the lease of writer reviewer-7 covers this path" in owned.reason
    # ... the holder itself may write there
    mine = hook(
        "pre-tool-use",
        _write(root, "src/owned.py", "VALUE = 1\n"),
        cwd=root,
        env={"WORKGROUP_LINEAGE_ID": "reviewer-7"},
    )
    assert mine.code == 0 and mine.data is None

    # 5. compaction: the session's state sealed into a capsule bound to HEAD
    compact = hook("pre-compact", payload("claude", "pre-compact", root, transcript), cwd=root)
    assert compact.code == 0, compact.stderr
    capsules = list((root / ".workgroup" / "workgroups" / "agents" / "capsules").glob("claude-work-*.json"))
    assert len(capsules) == 1
    capsule = json.loads(capsules[0].read_text(encoding="utf-8"))
    assert capsule["checkpoint_sha"] == head
    assert capsule["capsule_hash"] == seal(capsule)["capsule_hash"]
    assert capsule["owned_files"] == ["src/api.py"]  # what the session changed
    assert capsules[0].name in compact.message

    # 6. the session starts again after compaction: the capsule is in its context
    again = hook("session-start", payload("claude", "session-start.compact", root, transcript), cwd=root)
    assert (
        f"Capsule bound to HEAD (.workgroup/workgroups/agents/capsules/{capsules[0].name})" in again.context
    )
    assert capsule["task_id"] in again.context

    # 7. stop: the verdict, the handoff, one efficiency event counted from the transcript
    stop = hook("stop", payload("claude", "stop", root, transcript), cwd=root)
    assert stop.code == 0, stop.stderr
    assert stop.message.startswith("Session boundary: start a fresh session.")
    handoff = (root / ".reviews" / "session-handoff.md").read_text(encoding="utf-8")
    assert "- verdict: fresh" in handoff and "src/api.py" in handoff
    events = _telemetry(git_repo)
    assert len(events) == 1
    assert events[0]["event"] == "worker_usage" and events[0]["provider"] == "claude"
    assert {k: events[0]["billed"][k] for k in CLAUDE_BILLED} == CLAUDE_BILLED  # verified, deduplicated
    assert events[0]["logical"]["compaction_count"] == 1  # the logical side, kept apart
    assert "4 verified call(s), 40270 billed tokens" in stop.message

    # 8. stop again: nothing new in the transcript, no second event
    second = hook("stop", payload("claude", "stop", root, transcript), cwd=root)
    assert "nothing new since the last event" in second.message
    assert len(_telemetry(git_repo)) == 1

    # 9. stop_hook_active: nothing done, nothing written, never a block
    (root / ".reviews" / "session-handoff.md").unlink()
    active = hook("stop", payload("claude", "stop.active", root, transcript), cwd=root)
    assert active == (0, None, "", "")
    assert not (root / ".reviews" / "session-handoff.md").exists()

    # 10. the next session starts from the handoff
    hook("session-end", payload("claude", "session-end", root, transcript), cwd=root)
    fresh = hook("session-start", payload("claude", "session-start.startup", root, transcript), cwd=root)
    assert "Handoff (.reviews/session-handoff.md; reference only" in fresh.context
    assert "- verdict: fresh" in fresh.context


def test_resume_asks_the_lineage_check(git_repo: GitRepo, tmp_path: Path) -> None:
    root = git_repo.path
    head = git_repo.commit("base", {"src/api.py": "x = 1\n"})
    transcript = claude_transcript(tmp_path / "claude-home")
    data = payload("claude", "session-start.resume", root, transcript)
    env = {"WORKGROUP_LINEAGE_ID": "builder-timeout"}

    # no recorded lineage: the runtime's answer for a missing lineage, a fresh capsule is due
    unknown = hook("session-start", data, cwd=root, env=env)
    assert "Resume: a fresh capsule is due (lineage check INVALID; no recorded lineage" in unknown.context
    assert unknown.message.startswith("Resume: a fresh capsule is due")

    # a compatible lineage at HEAD: resuming is allowed
    _lineage(git_repo, head, None)
    allowed = hook("session-start", data, cwd=root, env=env)
    assert "Resume: allowed (lineage check HOT)" in allowed.context

    # HEAD moved since: the checkpoint no longer matches, a fresh capsule is due and the answer says why
    git_repo.commit("more", {"src/other.py": "y = 2\n"})
    moved = hook("session-start", data, cwd=root, env=env)
    assert (
        "Resume: a fresh capsule is due (lineage check INVALID; invalidations: CHECKPOINT_MISMATCH)"
        in moved.context
    )


def test_a_codex_session_gates_patches_and_counts_its_rollout(git_repo: GitRepo, tmp_path: Path) -> None:
    root = git_repo.path
    git_repo.commit("base", {"src/api.py": "def handler(request):\n    return request.send()\n"})
    transcript = codex_transcript(tmp_path / "codex-home")
    clean = payload("codex", "pre-tool-use.apply-patch", root, transcript)
    assert hook("pre-tool-use", clean, cwd=root).code == 0

    token = github_token("Zz9yX8wV7uT6sR5qP4oN3mL2kJ1iH0")
    leaky = payload("codex", "pre-tool-use.apply-patch", root, transcript)
    leaky["tool_input"]["command"] = leaky["tool_input"]["command"].replace(
        "+TIMEOUT_SECONDS = 30", f'+TIMEOUT_SECONDS = 30\n+API_TOKEN = "{token}"'
    )
    denied = hook("pre-tool-use", leaky, cwd=root)
    assert denied.code == 2
    assert "src/limits.py (the patch): line 2 holds a github-token secret" in denied.reason
    assert token not in denied.stdout + denied.stderr

    heredoc = payload("codex", "pre-tool-use.heredoc", root, transcript)
    heredoc["tool_input"]["command"] = "cat > .reviews/notes.md <<'EOF'\nmail jane.doe@acmecorp.io\nEOF"
    artifact = hook("pre-tool-use", heredoc, cwd=root)
    assert (
        artifact.code == 2
        and ".reviews/notes.md (the command): line 2 holds an email address (email-address)"
        in artifact.reason
    )

    stop = hook("stop", payload("codex", "stop", root, transcript), cwd=root)
    assert stop.code == 0, stop.stderr
    (event,) = _telemetry(git_repo)
    assert event["provider"] == "codex"
    assert {k: event["billed"][k] for k in CODEX_BILLED} == CODEX_BILLED


def test_every_claude_write_tool_and_a_prompt_are_gated(git_repo: GitRepo) -> None:
    root = git_repo.path
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    token = github_token()
    line = f'TOKEN = "{token}"'
    cases = {
        "Write": ({"file_path": str(root / "src/a.py"), "content": f"x = 1\n{line}\n"}, "src/a.py: line 2"),
        "Edit": (
            {"file_path": str(root / "src/api.py"), "old_string": "x", "new_string": line},
            "src/api.py: line 1",
        ),
        "MultiEdit": (
            {
                "file_path": str(root / "src/api.py"),
                "edits": [{"new_string": "y"}, {"new_string": f"\n{line}"}],
            },
            "src/api.py (edit 2): line 2",
        ),
        "NotebookEdit": ({"notebook_path": str(root / "nb.ipynb"), "new_source": line}, "nb.ipynb: line 1"),
    }
    for tool, (tool_input, where) in cases.items():
        data = payload("claude", "pre-tool-use.write", root)
        data["tool_name"], data["tool_input"] = tool, tool_input
        result = hook("pre-tool-use", data, cwd=root)
        assert result.code == 2, tool
        assert f"{where} holds a github-token secret" in result.reason, (tool, result.reason)
        assert token not in result.stdout + result.stderr
    prompt = payload("claude", "user-prompt-submit", root)
    prompt["prompt"] = f"deploy with\n{token} please"
    held = hook("user-prompt-submit", prompt, cwd=root)
    assert held.code == 0 and held.data is not None and held.data["decision"] == "block"
    assert "line 2 holds a github-token secret" in held.reason and token not in held.stdout


def test_reviewed_false_positives_pass_as_the_commit_hook_would(git_repo: GitRepo) -> None:
    root = git_repo.path
    token = github_token()
    content = f'FIXTURE = "{token}"\n'
    git_repo.commit("base", {"tests/fixture.py": content})
    write = _write(root, "tests/fixture.py", content)
    assert hook("pre-tool-use", write, cwd=root).code == 2
    # an inline reviewed suppression on the line
    inline = _write(root, "tests/fixture.py", f'FIXTURE = "{token}"  # workgroup: allow github-token\n')
    assert hook("pre-tool-use", inline, cwd=root).code == 0
    # a committed allowlist entry (a fingerprint of rule, path and value): what every clone and CI read
    allowed = run_workgroup(
        "privacy",
        "allow",
        "tests/fixture.py",
        "--line",
        "1",
        "--rule",
        "github-token",
        "--reason",
        "test fixture",
        cwd=root,
    )
    assert allowed.returncode == 0, allowed.stderr
    git_repo.commit("allow the fixture")
    assert hook("pre-tool-use", write, cwd=root).code == 0
    # the same value anywhere else is still refused
    assert hook("pre-tool-use", _write(root, "src/live.py", content), cwd=root).code == 2


def _append_call(transcript: Path, output: int) -> None:
    """One more assistant line as Claude Code writes it (compact JSON, one line each)."""
    usage = {
        "input_tokens": 7,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 500,
        "output_tokens": output,
    }
    line = {
        "type": "assistant",
        "uuid": f"u-new-{output}",
        "parentUuid": "u-prev",
        "sessionId": "s-1111",
        "requestId": "req_NEW",
        "timestamp": "2026-01-06T03:00:00.000Z",
        "cwd": "/home/dev/demo",
        "version": "2.1.0",
        "isSidechain": False,
        "message": {"id": "msg_NEW", "model": "claude-sonnet-4-5", "usage": usage},
    }
    text = transcript.read_text(encoding="utf-8")
    ending = "" if text.endswith("\n") else "\n"  # the recording ends in a torn line; the next starts anew
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(ending + json.dumps(line, separators=(",", ":")) + "\n")


def test_each_stop_counts_only_what_was_billed_since_the_last(git_repo: GitRepo, tmp_path: Path) -> None:
    root = git_repo.path
    git_repo.commit("base", {"src/api.py": "x = 1\n"})
    transcript = claude_transcript(tmp_path / "claude-home")
    data = payload("claude", "stop", root, transcript)
    assert hook("stop", data, cwd=root).code == 0
    _append_call(transcript, 1)  # a streamed call: its first line carries a partial output count
    partial = hook("stop", data, cwd=root)
    assert "1 verified call(s), 508 billed tokens" in partial.message
    _append_call(transcript, 40)  # the same call's final line: only its growth is new
    final = hook("stop", data, cwd=root)
    assert "1 verified call(s), 39 billed tokens" in final.message
    first, second, third = _telemetry(git_repo)
    assert [e["billed"]["output_tokens"] for e in (second, third)] == [1, 39]
    assert [e["billed"]["cache_read_input_tokens"] for e in (second, third)] == [500, 0]
    # the events add up to the session's verified total: nothing counted twice
    for key, value in CLAUDE_BILLED.items():
        if key != "accounting_source" and isinstance(value, int):
            extra = {"uncached_input_tokens": 7, "cache_read_input_tokens": 500, "output_tokens": 40}.get(
                key, 0
            )
            assert sum(e["billed"][key] for e in (first, second, third)) == value + extra, key


def test_telemetry_off_records_nothing(git_repo: GitRepo, tmp_path: Path) -> None:
    root = git_repo.path
    git_repo.commit("base", {".workgroup/config.yml": "context_efficiency:\n  telemetry: off\n"})
    transcript = claude_transcript(tmp_path / "claude-home")
    stop = hook("stop", payload("claude", "stop", root, transcript), cwd=root)
    assert stop.code == 0 and "telemetry is off: not recorded" in stop.message
    assert _telemetry(git_repo) == []
