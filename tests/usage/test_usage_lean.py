"""The status line's lean reader (``toolkit.usage.lean``) against the verified usage reader.

Two readers of one Claude log must never disagree: line by line, every field the lean reader
reads equals what the typed decoder reads, and a line it cannot be sure of (a wrong type, an
escape, a malformed value) is one it hands on (``Unsure``), never one it reads differently. Then
session by session, the status line's counts (read whole, or tail by tail as a session grows)
equal the kept calls ``workgroup usage`` reports for that session, resumed sessions included.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.usage_fixtures import _usage, assistant, build_claude, compact, summary, user

from toolkit.agents import statusline
from toolkit.usage import claude, lean, live, rules
from toolkit.usage.cost import PRICE_TABLE, Estimate
from toolkit.usage.fold import read_logs
from toolkit.usage.sources import discover

DATA = Path(__file__).parent.parent / "agents" / "data" / "projects" / "-home-dev-demo"


def _fields(line: Any) -> dict[str, Any]:
    """What the counting rules read of a line (the values the lean reader keeps, and the null-ness
    of those it only checks)."""

    def plain(value: Any) -> Any:
        return "UNSET" if type(value).__name__ in ("UnsetType", "_Unset") else value

    out: dict[str, Any] = {
        name: plain(getattr(line, name))
        for name in ("timestamp", "sessionId", "requestId", "version", "subtype", "isSidechain")
    }
    out["cwd"] = "UNSET" if plain(line.cwd) == "UNSET" else line.cwd is None
    out["compact"] = None if line.compactMetadata is None else line.compactMetadata.preTokens
    message = line.message
    if message is None:
        return out
    out["message"] = (plain(message.id), plain(message.model), message.stop_reason is None)
    usage = message.usage
    if usage is not None:
        created = usage.cache_creation
        out["usage"] = (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
            None
            if created is None
            else (created.ephemeral_5m_input_tokens, created.ephemeral_1h_input_tokens),
            plain(usage.speed),
        )
    return out


def _agree(raw: bytes) -> bool:
    """Whether the lean reader reads ``raw`` as the typed decoder does; True also when it hands
    the line on. A line the typed decoder rejects must never be read by the lean one."""
    typed = claude.decode_line(raw)
    try:
        mine = lean.parse_line(raw)
    except lean.Unsure:
        return True
    return typed is not None and _fields(mine) == _fields(typed)


def _fixture_lines(root: Path) -> list[bytes]:
    build_claude(root)
    out = [line for path in sorted(root.rglob("*.jsonl")) for line in path.read_bytes().split(b"\n")]
    out += [line for path in sorted(DATA.rglob("*.jsonl")) for line in path.read_bytes().split(b"\n")]
    return [line for line in out if line.strip()]


def test_the_lean_reader_reads_every_fixture_line_as_the_typed_decoder(tmp_path: Path) -> None:
    lines = _fixture_lines(tmp_path)
    assert len(lines) > 30
    read = 0
    for raw in lines:
        assert _agree(raw), raw
        try:
            lean.parse_line(raw)
            read += 1
        except lean.Unsure:
            assert claude.decode_line(raw) is None, raw  # only broken lines are handed on
    assert read >= len(lines) - 3  # the torn and broken lines of the fixtures


BASE = assistant("s-1", "2026-01-06T05:00:00.000Z", "msg_A", "req_A", _usage(3, 100, 1000, 50))

MUTATIONS = [
    ('"input_tokens":3', '"input_tokens":3.0'),
    ('"input_tokens":3', '"input_tokens":"3"'),
    ('"input_tokens":3', '"input_tokens":null'),
    ('"input_tokens":3', '"input_tokens":true'),
    ('"input_tokens":3', '"input_tokens":123456789012345678901234567890'),
    ('"input_tokens":3', '"input_tokens":-3'),
    ('"input_tokens":3', '"input_tokens":03'),
    ('"input_tokens":3', '"input_tokens":3e0'),
    ('"cache_read_input_tokens":1000', '"cache_read_input_tokens":null'),
    ('"cache_creation":{', '"cache_creation":null,"x":{'),
    ('"ephemeral_5m_input_tokens":100', '"ephemeral_5m_input_tokens":null'),
    ('"isSidechain":false', '"isSidechain":"no"'),
    ('"isSidechain":false', '"isSidechain":null'),
    ('"version":"2.1.0"', '"version":2'),
    ('"version":"2.1.0"', '"version":null'),
    ('"timestamp":"2026', '"timestamp":"\\u0032026'),
    ('"model":"claude', '"model":"\\u0063laude'),
    ('"model":"claude-sonnet-4-5"', '"model":"claude-sonnet-4-5\xff"'),
    ('"stop_reason":"end_turn"', '"stop_reason":7'),
    ('"requestId":"req_A"', '"requestId":"req_A","requestId":"req_B"'),
    ('"message":{', '"message":{"id":"msg_first",'),
    ('"usage":{', '"us\\u0061ge":{'),
    ('"uuid":', '"uuid":5,"x":'),
    ('"text":"answer', '"text":"\\x answer'),
    ('"text":"answer', '"text":"\x01answer'),
    ('"text":"answer', '"text":"\xff\xfeanswer'),
    ('"content":[', '"content":[[[[[[[[[[' + "[" * 80 + "]" * 90 + ","),
    ('"content":[', '"content":[1,,'),
    ('"content":[', '"content":[1 2,'),
    ('"content":[', '"content":{"a" "b"},"x":['),
    ('"content":[', '"content":[tru,'),
    ('"gitBranch":', '"gitBranch" : '),
    (",", " , "),
    (":", " :\t"),
]


@pytest.mark.parametrize(("old", "new"), MUTATIONS)
def test_a_changed_line_is_read_alike_or_handed_on(old: str, new: str) -> None:
    assert old in BASE
    for raw in (BASE.replace(old, new, 1).encode(), BASE.replace(old, new).encode()):
        assert _agree(raw), raw
    assert _agree((BASE + " x").encode()) and _agree(BASE.encode()[:-1])


def test_random_damage_is_read_alike_or_handed_on() -> None:
    """Seeded random edits of a real line: a byte dropped, doubled or replaced by a JSON character."""
    rng = random.Random(20261204)
    base = BASE.encode()
    for _ in range(3000):
        raw = bytearray(base)
        for _edit in range(rng.randint(1, 3)):
            at = rng.randrange(len(raw))
            choice = rng.random()
            if choice < 0.3:
                del raw[at]
            elif choice < 0.5:
                raw.insert(at, raw[at])
            else:
                raw[at] = rng.choice(b'{}[],:"\\ 0123456789.-eEtruefalsn\x00\xff')
        assert _agree(bytes(raw)), bytes(raw)


# -- sessions: the status line's counts equal the usage reader's ------------------------------------


def _reader_totals(env: dict[str, str], session: str) -> tuple[int, int, int, int, int, float | None]:
    kept = [c for c in read_logs(discover("claude", env)).calls if c.session == session and not c.dropped]
    estimate = Estimate(PRICE_TABLE, lambda _call: "session")
    estimate.add_all(kept)
    return (
        len(kept),
        sum(c.input for c in kept),
        sum(c.output for c in kept),
        sum(c.cache_write for c in kept),
        sum(c.cache_read for c in kept),
        estimate.result()["total"],
    )


def _line_totals(transcript: Path) -> tuple[int, int, int, int, int, float | None]:
    states = [live.read_file(p, transcript.stem, None) for _n, p in statusline.session_files(str(transcript))]
    files = [s for s in states if s is not None]
    calls, _kept = live.session_calls(files, live.earlier_sessions(str(transcript), files[0]))
    counts = live.count(calls)
    return (counts.calls, counts.input, counts.output, counts.cache_write, counts.cache_read, counts.cost)


def _grown_totals(
    transcript: Path, pieces: int, rng: random.Random
) -> tuple[int, int, int, int, int, float | None]:
    """The counts after reading the transcript as it grew, in ``pieces`` appends (cut anywhere,
    torn lines included), each refresh reading on from the state the previous one left."""
    data = transcript.read_bytes()
    cuts = sorted(rng.sample(range(1, len(data)), min(pieces, len(data) - 1))) + [len(data)]
    grown = transcript.with_name("grow-" + transcript.name)
    grown.write_bytes(b"")
    state = None
    for cut in cuts:
        grown.write_bytes(data[:cut])
        state = live.read_file(str(grown), transcript.stem, state)
        assert state is not None
        if rng.random() < 0.5:  # through the stored form, as a refresh in another process reads it
            files, _earlier = live.decode_state(live.encode_state({"": state}, live.Earlier()))
            state = files[""]
    grown.unlink()
    shutil.copyfile(transcript, grown)  # the same inode checks would refuse a rename: compare the picks
    fresh = live.read_file(str(grown), transcript.stem, None)
    grown.unlink()
    assert fresh is not None and state is not None
    assert [live.pack(p) for p in state.picks] == [live.pack(p) for p in fresh.picks]
    return _line_totals(transcript)


@pytest.mark.parametrize("lean_bytes", [live.LEAN_BYTES, -1], ids=["lean", "typed"])
def test_every_fixture_session_counts_as_the_usage_reader_counts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean_bytes: int
) -> None:
    monkeypatch.setattr(live, "LEAN_BYTES", lean_bytes)  # -1: every read by the typed decoder
    build_claude(tmp_path / "fixture")
    # the recorded status-line session in a tree of its own (its ids are the fixture's: the reader,
    # which deduplicates across every project folder, would take them for copies)
    shutil.copytree(DATA, tmp_path / "recorded" / "claude" / "projects" / "-home-dev-rec")
    rng = random.Random(7)
    seen = set()
    for tree in ("fixture", "recorded"):
        env = {"CLAUDE_CONFIG_DIR": str(tmp_path / tree / "claude")}
        for transcript in sorted((tmp_path / tree / "claude" / "projects").glob("*/*.jsonl")):
            seen.add(transcript.stem)
            expected = _reader_totals(env, transcript.stem)
            assert expected[0] > 0
            assert _line_totals(transcript) == expected, transcript.stem
            for pieces in (2, 7, 40):
                assert _grown_totals(transcript, pieces, rng) == expected, (transcript.stem, pieces)
    assert seen == {"s-aaaa", "s-bbbb", "s-gw01", "s-gw02", "s-1111"}
    # the resumed session s-bbbb: its copies of s-aaaa's msg_A and msg_C are not its calls
    assert (
        _line_totals(tmp_path / "fixture" / "claude" / "projects" / "-home-dev-demo" / "s-bbbb.jsonl")[0] == 2
    )


@pytest.mark.parametrize("lean_bytes", [live.LEAN_BYTES, -1], ids=["lean", "typed"])
def test_a_long_generated_session_counts_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean_bytes: int
) -> None:
    """Many calls with streaming partials, content blocks split over lines, /btw replays, tool
    results naming "usage", lines written with blanks after the colons, subagents, and a resumed
    copy of it: the status line and the usage reader count the same."""
    monkeypatch.setattr(live, "LEAN_BYTES", lean_bytes)
    rng = random.Random(99)
    folder = tmp_path / "claude" / "projects" / "-home-dev-long"
    lines: list[str] = []
    for n in range(300):
        ts = f"2026-02-0{1 + n // 100}T{10 + n % 12:02d}:{n % 60:02d}:{n % 59:02d}.000Z"
        lines.append(user("s-long", ts, f"u{n}"))
        usage = _usage(rng.randint(1, 9), rng.randint(0, 900), rng.randint(0, 90_000), rng.randint(1, 900))
        if rng.random() < 0.3:  # a streaming partial first
            lines.append(
                assistant("s-long", ts, f"msg_{n}", f"req_{n}", {**usage, "output_tokens": 1}, stop=None)
            )
        line = assistant(
            "s-long",
            ts,
            f"msg_{n}",
            f"req_{n}",
            usage,
            model=rng.choice(["claude-sonnet-4-5", "claude-opus-4-5", "local-x"]),
        )
        lines.append(json.dumps(json.loads(line)) if rng.random() < 0.2 else line)
        if rng.random() < 0.1:  # a /btw replay: the parent's message id, a new request id, a sidechain
            lines.append(assistant("s-long", ts, f"msg_{n}", f"req_b{n}", usage, sidechain=True))
        if rng.random() < 0.05:
            lines.append(compact("s-long", ts, 1000))
            lines.append(summary())
    folder.mkdir(parents=True)
    (folder / "s-long.jsonl").write_text("\n".join(lines) + "\n")
    sub = folder / "s-long" / "subagents" / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(
        assistant(
            "s-long", "2026-02-01T10:00:30.000Z", "msg_sub", "req_sub", _usage(1, 2, 3, 4), sidechain=True
        )
        + "\n"
    )
    copied = [line.replace('"sessionId":"s-long"', '"sessionId":"s-next"') for line in lines[-60:]]
    own = assistant("s-next", "2026-02-09T10:00:00.000Z", "msg_own", "req_own", _usage(7, 0, 70, 7))
    (folder / "s-next.jsonl").write_text("\n".join([*copied, own]) + "\n")
    # resumed again from another project folder (the working folder changed): still a copy
    elsewhere = tmp_path / "claude" / "projects" / "-home-dev-elsewhere"
    elsewhere.mkdir()
    again = [line.replace('"sessionId":"s-next"', '"sessionId":"s-far"') for line in copied[-20:]]
    far = assistant("s-far", "2026-02-10T10:00:00.000Z", "msg_far", "req_far", _usage(3, 0, 30, 3))
    (elsewhere / "s-far.jsonl").write_text("\n".join([*again, far]) + "\n")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    for path in (folder / "s-long.jsonl", folder / "s-next.jsonl", elsewhere / "s-far.jsonl"):
        expected = _reader_totals(env, path.stem)
        assert _line_totals(path) == expected, path.stem
        assert _grown_totals(path, 25, rng) == expected, path.stem
    assert _reader_totals(env, "s-next")[0] == 1 and _reader_totals(env, "s-far")[0] == 1


def test_the_rules_are_the_readers_own() -> None:
    """One copy of each rule: the typed reader and dedup use the functions the status line uses."""
    from toolkit.usage import dedup

    assert claude.admit_line is rules.admit_line and claude._USAGE is rules.USAGE
    assert dedup.settle_local is rules.settle_local and dedup.InSession is rules.InSession


def test_content_is_passed_over_in_place_never_copied() -> None:
    """The lean reader reads a line's allowlisted fields and passes over the rest where it lies:
    a megabyte of content (text, tool input, a path in ``cwd``) is never copied into a Python
    object, so reading the line allocates a few kilobytes, not the content's size."""
    import tracemalloc

    big = "x" * 1_000_000
    line = json.loads(BASE)
    line["message"]["content"] = [{"type": "text", "text": big}, {"type": "tool_use", "input": {"a": [big]}}]
    line["cwd"] = "/home/" + big
    raw = json.dumps(line, separators=(",", ":")).encode()
    lean.parse_line(raw)  # the patterns compiled, the first call's allocations done
    tracemalloc.start()
    try:
        read = lean.parse_line(raw)
        _size, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert read.message is not None and read.message.usage is not None and read.cwd == "?"
    assert peak < 64_000, peak  # the content is 3 MB
