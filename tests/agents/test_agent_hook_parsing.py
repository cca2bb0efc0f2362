"""Parsing the agents' payloads into typed records: events, the agent, and the writes of a tool call."""

from __future__ import annotations

import io
import json

import pytest

from toolkit.agents.payload import HookInput, decode, detect_agent, event_name, parse, read_stdin
from toolkit.agents.writes import patch_writes, shell_writes, write_intents
from toolkit.core.errors import InvalidInput


def _tool(name: str, tool_input: object) -> HookInput:
    return HookInput("pre-tool-use", "claude", {"tool_name": name, "tool_input": tool_input})


def _writes(name: str, tool_input: object) -> list[tuple[str, str | None, str]]:
    found = write_intents(_tool(name, tool_input))
    return [(w.path, w.text, w.part) for w in found or []]


@pytest.mark.parametrize(
    ("given", "ours"),
    [
        ("SessionStart", "session-start"),
        ("session_start", "session-start"),
        ("PreCompact", "pre-compact"),
        ("SessionEnd", "session-end"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("SubagentStop", "subagent-stop"),
    ],
)
def test_event_names_of_both_spellings(given: str, ours: str) -> None:
    assert event_name(given) == ours


def test_an_unknown_event_is_a_coded_error() -> None:
    with pytest.raises(InvalidInput) as caught:
        event_name("Notification")
    assert caught.value.code == "UNKNOWN_EVENT"


@pytest.mark.parametrize(
    ("fields", "agent"),
    [
        ({"turn_id": "t1"}, "codex"),  # Codex's turn-scoped events carry the turn id
        ({"transcript_path": "/h/.codex/sessions/2026/01/05/rollout-2026-01-05T10-00-00-x.jsonl"}, "codex"),
        ({"transcript_path": "/h/.claude/projects/-w/s.jsonl", "permission_mode": "default"}, "claude"),
        ({}, "claude"),
    ],
)
def test_the_agent_is_detected_from_the_payload(fields: dict[str, object], agent: str) -> None:
    assert detect_agent(fields, None) == agent
    assert detect_agent(fields, "codex") == "codex"  # --agent wins


def test_unknown_fields_are_ignored_and_missing_ones_are_none() -> None:
    hook = parse(
        b'{"hook_event_name": "Stop", "future_field": {"x": [1]}, "stop_hook_active": "yes"}', "stop"
    )
    assert hook.session_id is None and hook.transcript_path is None
    assert hook.stop_hook_active is False  # only a real true counts


def test_stdin_is_bounded() -> None:
    assert read_stdin(io.BytesIO(b"x" * 10), limit=10) == b"x" * 10
    with pytest.raises(InvalidInput) as caught:
        read_stdin(io.BytesIO(b"x" * 11), limit=10)
    assert caught.value.code == "PAYLOAD_TOO_LARGE"


def test_decode_refuses_what_is_not_one_object() -> None:
    for raw in (b"1", b"null", b'"s"', b"{} {}"):
        with pytest.raises(InvalidInput):
            decode(raw)


def test_claude_write_tools() -> None:
    assert _writes("Write", {"file_path": "/r/a.py", "content": "x"}) == [("/r/a.py", "x", "")]
    assert _writes("Edit", {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"}) == [
        ("/r/a.py", "y", "")
    ]
    assert _writes(
        "MultiEdit", {"file_path": "/r/a.py", "edits": [{"new_string": "1"}, {"new_string": "2"}]}
    ) == [
        ("/r/a.py", "1", "edit 1"),
        ("/r/a.py", "2", "edit 2"),
    ]
    assert _writes("NotebookEdit", {"notebook_path": "/r/n.ipynb", "new_source": "s"}) == [
        ("/r/n.ipynb", "s", "")
    ]
    assert write_intents(_tool("Read", {"file_path": "/r/a.py"})) is None
    assert write_intents(_tool("Bash", {"command": "ls -la"})) is None


def test_an_apply_patch_body_names_each_file_and_its_added_lines() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: src/new.py\n+A = 1\n+B = 2\n*** Update File: src/old.py\n@@\n-x\n+y\n"
        "*** Delete File: src/gone.py\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@\n+moved\n*** End Patch"
    )
    assert [(w.path, w.text) for w in patch_writes(patch)] == [
        ("src/new.py", "A = 1\nB = 2"),
        ("src/old.py", "y"),
        ("src/gone.py", None),  # a deletion is a write without text: ownership still applies
        ("src/a.py", ""),
        ("src/a.py", None),
        ("src/b.py", "moved"),
    ]
    # Codex's argv form and the patch tool
    argv = {"command": ["apply_patch", patch]}
    assert [w.path for w in write_intents(_tool("Bash", argv)) or []][0] == "src/new.py"
    assert [w.path for w in write_intents(_tool("apply_patch", {"input": patch})) or []][0] == "src/new.py"


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("echo hi > out.txt", ["out.txt"]),
        ("echo hi >> 'logs/a b.log'", ["logs/a b.log"]),
        ("make 2> err.log >/dev/null", ["err.log"]),
        ("cmd &> all.log", ["all.log"]),
        ("echo x | tee -a one.txt two.txt", ["one.txt", "two.txt"]),
        ("cat > notes.md <<'EOF'\nnot > a target\nEOF\necho ok > done.txt", ["notes.md", "done.txt"]),
        ("ls 2>&1 | grep x >&2", []),
        ("diff <(ls a) <(ls b)", []),
        ('bash -lc "echo hi > /dev/null"', []),
        ('bash -lc "echo hi > inner.txt"', ["inner.txt"]),  # the nested shell's writes count
        ('git commit -m "a > b"', []),  # a quoted > is text
        ("cmd >& both.log", ["both.log"]),
        ('echo "open quote > q.txt', ["q.txt"]),  # unreadable by the tokenizer: the pattern decides
    ],
)
def test_shell_redirect_targets(command: str, targets: list[str]) -> None:
    writes = shell_writes(command)
    assert [w.path for w in writes] == targets
    assert all(w.text == command for w in writes)  # the whole command is the text scanned


def test_codex_bash_argv_is_unwrapped() -> None:
    found = write_intents(_tool("Bash", {"command": ["bash", "-lc", "echo x > f.txt"]}))
    assert [w.path for w in found or []] == ["f.txt"]


@pytest.mark.parametrize(
    "tool_input",
    [{"content": "x"}, {"file_path": "", "content": "x"}, {"file_path": 3}],
)
def test_a_write_without_a_destination_is_refused(tool_input: dict[str, object]) -> None:
    with pytest.raises(InvalidInput) as caught:
        write_intents(_tool("Write", tool_input))
    assert caught.value.code == "INVALID_TOOL_INPUT"


def test_recorded_payloads_parse() -> None:
    from support.agent_hooks import PAYLOADS

    transcripts = {  # where each agent keeps its session log (the payloads leave it as a placeholder)
        "claude": "/srv/dev/.claude/projects/-srv-demo/0b7e5c1e.jsonl",
        "codex": "/srv/dev/.codex/sessions/2026/01/05/rollout-2026-01-05T10-00-00-019a4f2e.jsonl",
    }
    for file in sorted(PAYLOADS.glob("*/*.json")):
        text = file.read_text(encoding="utf-8").replace("@TRANSCRIPT@", transcripts[file.parent.name])
        data = json.loads(text)
        event = event_name(file.stem.split(".")[0])
        hook = parse(json.dumps(data).encode(), event)
        assert hook.agent == file.parent.name, file  # detected from the payload alone
