"""Property: no answer of ``workgroup agent-hook`` ever contains a private value planted in its input.

Values (GitHub tokens, AWS key ids, email addresses, home paths) are planted wherever a payload or
the repository can carry them: the text of a write, an edit, a patch, a heredoc, the destination
path itself, a prompt, the handoff, a stored capsule, the transcript and the stop payload. Whatever
the hook decides, its stdout and stderr hold neither the value nor its tell-tale core.
"""

from __future__ import annotations

import io
import json
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.agent_hooks import claude_transcript, payload
from support.harness import GitRepo

from toolkit.agents.main import answer
from toolkit.privacy.providers import base62_crc32
from toolkit.runtime.capsule import seal

B62 = string.ascii_letters + string.digits

tokens = st.text(alphabet=B62, min_size=30, max_size=30).map(lambda body: "ghp_" + body + base62_crc32(body))
aws_ids = st.text(alphabet=string.ascii_uppercase + "234567", min_size=16, max_size=16).map(
    lambda s: "AKIA" + s
)
emails = st.tuples(
    st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=10),
    st.text(alphabet=string.ascii_lowercase, min_size=4, max_size=10),
    st.sampled_from(["io", "com", "net", "dev"]),
).map(lambda p: f"{p[0]}.{p[0][::-1]}@{p[1]}corp.{p[2]}")
homes = st.text(alphabet=string.ascii_lowercase, min_size=4, max_size=10).map(
    lambda n: f"/home/{n}/private-notes"
)
private = st.one_of(tokens, aws_ids, emails, homes)
wrappers = st.sampled_from(
    ['TOKEN = "{v}"\n', "{v}", "line one\n\n  {v}  \nlast\n", "# {v}\n", "x={v};y={v}\n"]
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    base = tmp_path_factory.mktemp("property")
    repo = GitRepo(base / "repo")
    repo.commit("base", {"src/api.py": "x = 1\n", "docs/readme.md": "# demo\n"})
    transcript = claude_transcript(base / "claude-home")
    yield repo.path, transcript


def _run(event: str, data: dict[str, Any] | bytes, *args: str) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode("utf-8")
    result = answer([event, *args], io.BytesIO(raw))
    out, err = io.StringIO(), io.StringIO()
    result.write(out, err)
    return out.getvalue() + err.getvalue()


def _leaks(value: str, shown: str) -> bool:
    core = value.split("@")[0] if "@" in value else value[4:] if value[:4] in ("ghp_", "AKIA") else value[6:]
    return value in shown or (len(core) >= 8 and core in shown)


def _pre_tool(root: Path, place: str, text: str, value: str) -> dict[str, Any]:
    if place in ("codex-patch", "codex-heredoc"):
        data = payload("codex", "pre-tool-use.apply-patch", root)
        body = "\n".join("+" + line for line in text.split("\n"))
        data["tool_input"] = {
            "command": f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: src/gen.py\n{body}\n*** End Patch\nEOF"
            if place == "codex-patch"
            else f"cat > .reviews/notes.md <<'EOF'\n{text}\nEOF"
        }
        return data
    data = payload("claude", "pre-tool-use.write", root)
    target = {
        "source": root / "src" / "gen.py",
        "artifact": root / ".reviews" / "notes.md",
        "name": root / "docs" / f"{value.replace('/', '_')}.md",
        "outside": root.parent / "elsewhere" / "gen.txt",
    }.get(place, root / "src" / "gen.py")
    if place == "edit":
        data["tool_name"] = "Edit"
        data["tool_input"] = {"file_path": str(target), "old_string": "x", "new_string": text}
    elif place == "multiedit":
        data["tool_name"] = "MultiEdit"
        data["tool_input"] = {"file_path": str(target), "edits": [{"new_string": "ok"}, {"new_string": text}]}
    else:
        data["tool_input"] = {"file_path": str(target), "content": text}
    return data


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    value=private,
    wrapper=wrappers,
    place=st.sampled_from(
        [
            "source",
            "artifact",
            "name",
            "outside",
            "edit",
            "multiedit",
            "codex-patch",
            "codex-heredoc",
            "prompt",
        ]
    ),
)
def test_no_pre_tool_or_prompt_answer_holds_a_planted_value(
    world: tuple[Path, Path], value: str, wrapper: str, place: str
) -> None:
    root, _ = world
    text = wrapper.format(v=value)
    if place == "prompt":
        data = payload("claude", "user-prompt-submit", root)
        data["prompt"] = text
        shown = _run("user-prompt-submit", data)
    else:
        shown = _run("pre-tool-use", _pre_tool(root, place, text, value))
    assert not _leaks(value, shown), (place, shown)


def _capsule(value: str, head: str) -> dict[str, Any]:
    raw = {
        "schema": "knowzcode.context-capsule/v1",
        "task_id": "t1",
        "workgroup_id": "wg1",
        "phase": "2A",
        "objective": f"Deploy with {value}",
        "node_ids": [],
        "owned_files": [],
        "read_files": [],
        "specs": [],
        "approved_decisions": [],
        "checkpoint_sha": head,
        "failures": [],
        "risks": [],
        "constraints": [],
        "next_action": "continue",
    }
    return seal(raw)  # a hand-written capsule with a valid hash: the session start must still withhold it


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=private, wrapper=wrappers, place=st.sampled_from(["handoff", "capsule", "transcript", "stop"]))
def test_no_session_answer_holds_a_planted_value(
    world: tuple[Path, Path], value: str, wrapper: str, place: str
) -> None:
    root, transcript = world
    text = wrapper.format(v=value)
    reviews = root / ".reviews"
    reviews.mkdir(exist_ok=True)
    capsules = root / ".workgroup" / "workgroups" / "wg1" / "capsules"
    capsules.mkdir(parents=True, exist_ok=True)
    head = (root / ".git" / "refs" / "heads" / "main").read_text(encoding="utf-8").strip()
    (reviews / "session-handoff.md").write_text(
        text if place == "handoff" else "# handoff\n", encoding="utf-8"
    )
    (capsules / "t1.json").write_text(json.dumps(_capsule(value if place == "capsule" else "care", head)))
    log = transcript.read_text(encoding="utf-8")
    try:
        if place == "transcript":  # message content is never read by the usage reader
            line = {"type": "user", "sessionId": "s-1111", "message": {"role": "user", "content": text}}
            transcript.write_text(log + json.dumps(line) + "\n", encoding="utf-8")
        start = _run("session-start", payload("claude", "session-start.resume", root, transcript))
        stop_data = payload("codex", "stop", root, transcript)
        stop_data["last_assistant_message"] = text
        stop = _run("stop", stop_data, "--agent", "claude")
        compact_data = payload("claude", "pre-compact", root, transcript)
        compact_data["custom_instructions"] = text
        compact = _run("pre-compact", compact_data)
    finally:
        transcript.write_text(log, encoding="utf-8")
    for shown in (start, stop, compact):
        assert not _leaks(value, shown), (place, shown)
