"""Claude Code logs written again by other tools: ``json.dumps`` with its default separators puts a
space after every colon (``"usage": {``). The reader's slow path (taken when one line of the file
does not fit the typed structs) must find those calls as its fast path does."""

from __future__ import annotations

import json
from pathlib import Path

from support.usage_fixtures import _usage, assistant, user

from toolkit.usage import claude
from toolkit.usage.model import Call
from toolkit.usage.sources import LogFile


def _spaced(line: str) -> str:
    """The line as a tool re-serializing it writes it: ``", "`` and ``": "`` separators."""
    return json.dumps(json.loads(line))


def _calls(tmp_path: Path, lines: list[str]) -> list[tuple[str | None, int, int]]:
    path = tmp_path / "projects" / "-p" / "s-1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    read = claude.read(LogFile("claude", str(path), tmp_path / "projects"), 0)
    return [(c.msg_id, c.tokens, c.output) for c in read.items if isinstance(c, Call)]


def test_a_spaced_usage_object_is_read_on_the_slow_path_too(tmp_path: Path) -> None:
    calls = [
        _spaced(assistant("s-1", "2026-01-06T05:00:00.000Z", "msg_A", "req_A", _usage(3, 100, 1000, 50))),
        _spaced(assistant("s-1", "2026-01-06T05:01:00.000Z", "msg_B", "req_B", _usage(4, 0, 1200, 60))),
        # the blanks a re-serializer may leave anywhere JSON allows them
        assistant("s-1", "2026-01-06T05:02:00.000Z", "msg_C", "req_C", _usage(5, 0, 0, 7)).replace(
            '"usage":{', '"usage" :\t{'
        ),
    ]
    assert '"usage": {' in calls[0] and '"usage":{' not in calls[0]
    fast = _calls(tmp_path, calls)
    assert fast == [("msg_A", 1153, 50), ("msg_B", 1264, 60), ("msg_C", 12, 7)]
    # a user line whose timestamp is a number does not fit the structs: the file takes the slow path
    bad = json.loads(user("s-1", "2026-01-06T04:59:00.000Z", "u1"))
    bad["timestamp"] = 5
    slow = _calls(tmp_path, [json.dumps(bad), *calls])
    assert slow == fast


def test_a_torn_spaced_last_line_is_decoded_on_its_own(tmp_path: Path) -> None:
    """A last line without its newline (a session still being written) is decoded alone when it
    holds a usage object, spaced or not."""
    whole = _spaced(assistant("s-1", "2026-01-06T05:00:00.000Z", "msg_A", "req_A", _usage(3, 100, 1000, 50)))
    path = tmp_path / "projects" / "-p" / "s-1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(whole)  # no newline
    read = claude.read(LogFile("claude", str(path), tmp_path / "projects"), 0)
    assert [c.msg_id for c in read.items if isinstance(c, Call)] == ["msg_A"]
