"""`workgroup statusline`: the Claude Code status line from a recorded transcript, counted by hand.

The recorded session (``data/projects/-home-dev-demo/s-1111.jsonl`` and its subagent log) holds a
streaming partial and its final line, a compaction, a summary, a ``/btw`` sidechain replay, a
broken line and a subagent call on another model. By hand, the kept calls are::

    msg_A  input 3   cache write 1,200 (5 m)          cache read 15,000  output 180  sonnet-4-5
    msg_B  input 5   cache write   300 (5 m)          cache read 16,200  output 420  sonnet-4-5
    msg_C  input 10  cache write 2,000 (1,500 5 m + 500 1 h) read     0  output  90  sonnet-4-5
    msg_D  input 2   cache write   800 (5 m)          cache read  4,000  output  60  haiku-4-5 (subagent)

    tokens 20 + 4,300 + 35,200 + 750 = 40,270; re-read 35,200 / 39,520 = 89.07 %
    list price (USD per million: sonnet 3 / 3.75 / 6 / 0.30 / 15, haiku 1 / 1.25 / 2 / 0.10 / 5):
    A 11,709 + B 12,300 + C 10,005 + D 1,702 = 35,716 -> 0.035716
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, cli

from toolkit.agents import statusline
from toolkit.usage import live

DATA = Path(__file__).parents[1] / "agents" / "data" / "projects" / "-home-dev-demo"
CANARY = "CANARY-statusline-do-not-leak"
HAND_LINE = "workgroup: 40.3k tok verified · 4 calls · re-read 89% · ~$0.036 list"


def _usage(inp: int, write: int, read: int, out: int) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
        "output_tokens": out,
    }


def assistant_line(
    msg: str, usage: dict[str, Any], stop: str | None = "end_turn", ts: str = "05:00:00"
) -> str:
    return json.dumps(
        {
            "type": "assistant",
            "sessionId": "s-1111",
            "cwd": f"/home/dev/{CANARY}",
            "version": "2.1.0",
            "timestamp": f"2026-01-06T{ts}.000Z",
            "requestId": "req_" + msg,
            "message": {
                "id": msg,
                "model": "claude-sonnet-4-5",
                "stop_reason": stop,
                "content": [{"type": "text", "text": CANARY}],
                "usage": usage,
            },
        },
        separators=(",", ":"),  # as Claude Code writes its lines
    )


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A copy of the recorded session in a Claude projects folder; returns the transcript path."""
    folder = tmp_path / "claude" / "projects" / "-home-dev-demo"
    shutil.copytree(DATA, folder)
    return folder / "s-1111.jsonl"


def status_input(transcript: Path, project: Path | None = None, **extra: Any) -> bytes:
    doc: dict[str, Any] = {
        "hook_event_name": "Status",
        "session_id": "s-1111",
        "transcript_path": str(transcript),
        "cwd": str(project or transcript.parent),
        "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet " + CANARY},
        "workspace": {"current_dir": str(project or transcript.parent), "project_dir": str(project or "")},
        "version": "2.1.0",
        "cost": {"total_cost_usd": 0.0123, "total_duration_ms": 1000},
        **extra,
    }
    return json.dumps(doc).encode()


def fresh_counts(transcript: Path) -> str:
    return statusline.status_line(status_input(transcript), use_cache=False)


def test_the_recorded_session_gives_the_hand_count(session: Path) -> None:
    states = {}
    for name, path in statusline.session_files(str(session)):
        state = live.read_file(path, "s-1111", None)
        assert state is not None
        states[name] = state
    assert sorted(states) == ["", "subagents/agent-x1.jsonl"]
    calls, _kept = live.session_calls(list(states.values()), live.Earlier())
    counts = live.count(calls)
    assert (counts.calls, counts.input, counts.cache_write, counts.cache_read, counts.output) == (
        4,
        20,
        4300,
        35200,
        750,
    )
    assert counts.tokens == 40270
    assert counts.reread_share == pytest.approx(35200 / 39520)
    assert counts.cost == pytest.approx(0.035716)
    assert counts.unpriced == 0
    assert live.render(counts) == HAND_LINE


def test_the_command_prints_the_hand_count_and_nothing_of_the_input(git_repo: GitRepo, session: Path) -> None:
    code, out, err = cli("statusline", stdin=status_input(session, git_repo.path))
    assert code == 0, err
    assert out == HAND_LINE + "\n" and err == ""
    assert CANARY not in out and "s-1111" not in out and str(session) not in out


def test_the_second_run_is_served_from_the_cache(git_repo: GitRepo, session: Path) -> None:
    given = status_input(session, git_repo.path)
    assert cli("statusline", stdin=given).stdout == HAND_LINE + "\n"
    folder = Path(git_repo.path, ".git", "workgroup", "statusline")
    key = statusline.cache_key(str(session))
    line_file = folder / f"{key}.line"
    assert line_file.is_file() and (folder / f"{key}.state").is_file()
    # a planted line with the right signature is what the next run prints: it read no transcript
    doc = json.loads(line_file.read_text())
    doc["line"] = "workgroup: from the cache"
    line_file.write_text(json.dumps(doc))
    assert cli("statusline", stdin=given).stdout == "workgroup: from the cache\n"
    # the transcript changes: the signature no longer matches and the counts are read again
    with session.open("a") as log:
        log.write(assistant_line("msg_E", _usage(1, 0, 100, 9)) + "\n")
    out = cli("statusline", stdin=given).stdout
    assert out.startswith("workgroup: 40.4k tok verified · 5 calls") and out == fresh_counts(session) + "\n"
    assert CANARY not in line_file.read_text() and CANARY not in (folder / f"{key}.state").read_text()


def test_the_cached_path_imports_no_reader(git_repo: GitRepo, session: Path) -> None:
    """When nothing changed the line comes from the cache; when a call was appended the tail is
    read by the lean reader: msgspec and the typed usage reader are imported by neither (their
    import was most of a refresh's cost)."""
    given = status_input(session, git_repo.path)
    assert cli("statusline", stdin=given).stdout == HAND_LINE + "\n"
    probe = (
        "import sys; from toolkit.agents import statusline as s; "
        "print(s.status_line(sys.stdin.buffer.read())); "
        "print(sorted(m for m in ('msgspec', 'toolkit.usage.claude', 'toolkit.usage.dedup') if m in sys.modules))"
    )
    run = [sys.executable, "-c", probe]
    proc = subprocess.run(run, input=given, capture_output=True, timeout=60, check=True)
    assert proc.stdout.decode().splitlines() == [HAND_LINE, "[]"]
    with session.open("a") as log:
        log.write(assistant_line("msg_E", _usage(1, 0, 100, 9)) + "\n")
    proc = subprocess.run(run, input=given, capture_output=True, timeout=60, check=True)
    line, loaded = proc.stdout.decode().splitlines()
    assert line.startswith("workgroup: 40.4k tok verified · 5 calls") and line == fresh_counts(session)
    assert loaded == "[]"


def user_line(text: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "sessionId": "s-1111",
            "cwd": f"/home/dev/{CANARY}",
            "version": "2.1.0",
            "timestamp": "2026-01-06T06:00:00.000Z",
            "message": {"role": "user", "content": text},
        },
        separators=(",", ":"),
    )


def test_a_tail_without_model_calls_keeps_the_line_without_the_reader(
    git_repo: GitRepo, session: Path
) -> None:
    """Prompts and tool results appended: the counts cannot have changed, and the line is kept
    without reading (the state is not touched). That gap is read later, with the next model call;
    a tail that names "usage" anywhere, or a changed start, is read."""
    given = status_input(session, git_repo.path)
    assert cli("statusline", stdin=given).stdout == HAND_LINE + "\n"
    state_file = Path(
        git_repo.path, ".git", "workgroup", "statusline", statusline.cache_key(str(session)) + ".state"
    )
    probe = (
        "import sys; from toolkit.agents import statusline as s; "
        "print(s.status_line(sys.stdin.buffer.read())); print('msgspec' in sys.modules)"
    )

    def run() -> list[str]:
        """[the line, whether msgspec was imported, whether the transcript was read]"""
        before = state_file.read_bytes()
        proc = subprocess.run(
            [sys.executable, "-c", probe], input=given, capture_output=True, timeout=60, check=True
        )
        read = json.loads(state_file.read_bytes())["files"][""]["offset"] == session.stat().st_size
        return [*proc.stdout.decode().splitlines(), str(read and state_file.read_bytes() != before)]

    with session.open("a") as log:
        log.write(user_line("a prompt " + CANARY) + "\n" + user_line("a tool result") + "\n")
    assert run() == [HAND_LINE, "False", "False"]
    assert run() == [HAND_LINE, "False", "False"]  # and now served as unchanged
    with session.open("a") as log:
        log.write(user_line('the word usage, quoted: "usage"') + "\n")  # escaped inside a string
    assert run() == [HAND_LINE, "False", "False"]
    with session.open("a") as log:
        log.write(user_line("usage") + "\n")  # a string "usage" looks like the key: the reader decides
    assert run() == [HAND_LINE, "False", "True"]
    with session.open("a") as log:
        log.write(assistant_line("msg_E", _usage(1, 0, 100, 9)) + "\n")
    out = run()
    assert out[0].startswith("workgroup: 40.4k tok verified · 5 calls") and out[0] == fresh_counts(session)
    assert out[1:] == ["False", "True"]
    # the start rewritten (same length) and a prompt appended: not trusted, read again
    text = session.read_text()
    session.write_text(
        text.replace('"uuid":"u1"', '"uuid":"u8"').replace("msg_E", "msg_Q") + user_line("p") + "\n"
    )
    # read whole again: the recorded session's broken line goes to the typed decoder (msgspec)
    assert run() == [fresh_counts(session), "True", "True"]


def test_an_appended_tail_is_read_from_the_cached_offset(git_repo: GitRepo, session: Path) -> None:
    """The state's calls are kept and only the tail is parsed: a call planted in the cached state
    (never in the file) is still counted after the file grew; a rewrite before the offset is noticed."""
    given = status_input(session, git_repo.path)
    assert cli("statusline", stdin=given).exit_code == 0
    state_file = Path(
        git_repo.path, ".git", "workgroup", "statusline", statusline.cache_key(str(session)) + ".state"
    )
    state = json.loads(state_file.read_text())
    main = state["files"][""]
    assert main["offset"] == session.stat().st_size  # read to the end (the file ends with a newline)
    planted = list(main["picks"][0])
    planted[main["picks"][0].index("msg_A")] = "msg_PLANTED"  # the msg_id field
    planted[planted.index("msg_A\x00req_A")] = "msg_PLANTED\x00req_P"  # the dedup key
    main["picks"].append(planted)
    state_file.write_text(json.dumps(state))
    with session.open("a") as log:
        log.write(assistant_line("msg_E", _usage(1, 0, 100, 9)) + "\n")
    out = cli("statusline", stdin=given).stdout
    assert "6 calls" in out  # 4 + the planted one (from the cache) + msg_E (the tail)
    # the same length but other bytes at the start or just before the offset: read again
    for old, new in (("u1", "u9"), ("msg_E", "msg_Q")):
        text = session.read_text()
        assert old in text
        session.write_text(text.replace(old, new))
        out = cli("statusline", stdin=given).stdout
        assert "5 calls" in out and out == fresh_counts(session) + "\n"  # the planted call is gone
        main["picks"].append(planted)
        state_file.write_text(json.dumps(state))


def test_a_call_split_over_two_refreshes_counts_once_with_its_final_usage(
    git_repo: GitRepo, session: Path
) -> None:
    given = status_input(session, git_repo.path)
    with session.open("a") as log:
        log.write(assistant_line("msg_F", _usage(2, 0, 1000, 1), stop=None) + "\n")  # streaming partial
    first = cli("statusline", stdin=given).stdout
    assert "5 calls" in first
    with session.open("a") as log:
        log.write(assistant_line("msg_F", _usage(2, 0, 1000, 700), ts="05:00:02") + "\n")  # its final line
    second = cli("statusline", stdin=given).stdout
    assert "5 calls" in second and second == fresh_counts(session) + "\n"
    # 40,270 + 2 + 1,000 + 700 = 41,972
    assert second.startswith("workgroup: 42.0k tok verified")


def test_a_torn_last_line_waits_until_it_is_whole(git_repo: GitRepo, session: Path) -> None:
    given = status_input(session, git_repo.path)
    whole = assistant_line("msg_G", _usage(1, 0, 0, 5)) + "\n"
    with session.open("a") as log:
        log.write(whole[:40])
    assert cli("statusline", stdin=given).stdout == HAND_LINE + "\n"
    with session.open("a") as log:
        log.write(whole[40:])
    assert "5 calls" in cli("statusline", stdin=given).stdout


def test_a_new_subagent_log_is_picked_up(git_repo: GitRepo, session: Path) -> None:
    given = status_input(session, git_repo.path)
    assert cli("statusline", stdin=given).stdout == HAND_LINE + "\n"
    extra = session.parent / "s-1111" / "subagents" / "agent-y2.jsonl"
    extra.write_text(assistant_line("msg_H", _usage(1, 0, 0, 5)) + "\n")
    out = cli("statusline", stdin=given).stdout
    assert "5 calls" in out and out == fresh_counts(session) + "\n"


def test_a_truncated_transcript_is_read_again(git_repo: GitRepo, session: Path) -> None:
    given = status_input(session, git_repo.path)
    assert cli("statusline", stdin=given).stdout == HAND_LINE + "\n"
    lines = session.read_text().splitlines(keepends=True)
    session.write_text("".join(lines[:3]))  # only msg_A remains in the main file
    out = cli("statusline", stdin=given).stdout
    assert "2 calls" in out and out == fresh_counts(session) + "\n"


def test_old_caches_are_pruned_to_the_last_written(git_repo: GitRepo, session: Path) -> None:
    """The caches of the KEEP_CACHES transcripts written last stay; older ones (both files) go."""
    folder = Path(git_repo.path, ".git", "workgroup", "statusline")
    folder.mkdir(parents=True)
    keep = statusline.KEEP_CACHES
    for number in range(keep + 5):
        for suffix in (".state", ".line"):
            stale = folder / f"old{number:03d}{suffix}"
            stale.write_text("{}")
            os.utime(stale, (1_000_000 + number, 1_000_000 + number))
    assert cli("statusline", stdin=status_input(session, git_repo.path)).stdout == HAND_LINE + "\n"
    states = sorted(p.name for p in folder.glob("*.state"))
    key = statusline.cache_key(str(session))
    # pruned before the new state was written: the newest KEEP_CACHES old ones and the new one
    assert states == sorted([f"old{n:03d}.state" for n in range(5, keep + 5)] + [f"{key}.state"])
    assert sorted(p.name for p in folder.glob("*.line")) == sorted(
        [f"old{n:03d}.line" for n in range(5, keep + 5)] + [f"{key}.line"]
    )


def test_a_corrupt_cache_is_ignored(git_repo: GitRepo, session: Path) -> None:
    given = status_input(session, git_repo.path)
    assert cli("statusline", stdin=given).exit_code == 0
    folder = Path(git_repo.path, ".git", "workgroup", "statusline")
    for path in folder.iterdir():
        path.write_bytes(b"\x00{not json")
    assert cli("statusline", stdin=given).stdout == HAND_LINE + "\n"


@pytest.mark.parametrize(
    ("number", "shown"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1.0k"),
        (40_270, "40.3k"),
        (99_949, "99.9k"),
        (99_950, "100k"),  # one decimal would round to 100.0k
        (999_499, "999k"),
        (999_500, "1.0M"),  # never 1000k when it rounds up
        (143_000_000, "143M"),
        (2_500_000_000, "2.5G"),
        (5_000_000_000_000, "5000G"),
    ],
)
def test_short_numbers(number: int, shown: str) -> None:
    assert live.short(number) == shown


def test_an_unpriced_model_shows_no_amount(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-p"
    folder.mkdir(parents=True)
    transcript = folder / "s-2.jsonl"
    line = json.loads(assistant_line("msg_X", _usage(10, 0, 90, 5)))
    line["message"]["model"] = "some-local-model"
    transcript.write_text(json.dumps(line) + "\n")
    assert fresh_counts(transcript) == "workgroup: 105 tok verified · 1 call · re-read 90%"


def test_a_transcript_without_calls(tmp_path: Path) -> None:
    transcript = tmp_path / "projects" / "-p" / "s-3.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({"type": "user", "message": {"content": CANARY}}) + "\n")
    assert fresh_counts(transcript) == live.NO_CALLS


@pytest.mark.parametrize(
    ("stdin", "line"),
    [
        (b"", statusline.UNAVAILABLE),
        (b"not json " + CANARY.encode(), statusline.UNAVAILABLE),
        (b"\xff\xfe", statusline.UNAVAILABLE),  # not UTF-8
        (b"[1, 2]", statusline.UNAVAILABLE),
        (json.dumps({"transcript_path": 7}).encode(), statusline.UNAVAILABLE),
        (json.dumps({"transcript_path": "relative/s.jsonl"}).encode(), statusline.UNAVAILABLE),
        (json.dumps({"transcript_path": "/etc/passwd"}).encode(), statusline.UNAVAILABLE),  # not a .jsonl
        (json.dumps({"transcript_path": "/nowhere/" + CANARY + ".jsonl"}).encode(), statusline.NO_TRANSCRIPT),
        (json.dumps({"transcript_path": "/tmp/a\x00b.jsonl"}).encode(), statusline.UNAVAILABLE),
        (b"[" * 100_000, statusline.UNAVAILABLE),  # nested too deep for the decoder
        (b" " * (statusline.MAX_STDIN + 1), statusline.UNAVAILABLE),  # over the input bound
    ],
)
def test_bad_input_prints_one_short_line_and_exits_0(stdin: bytes, line: str) -> None:
    code, out, err = cli("statusline", stdin=stdin)
    assert code == 0
    assert out == line + "\n" and err == ""
    assert CANARY not in out


def test_a_directory_or_fifo_as_transcript(tmp_path: Path) -> None:
    folder = tmp_path / "d.jsonl"
    folder.mkdir()
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    for path in (folder, fifo):
        assert cli("statusline", stdin=json.dumps({"transcript_path": str(path)})).stdout == (
            statusline.NO_TRANSCRIPT + "\n"
        )


def test_an_unknown_option_is_a_usage_error() -> None:
    result = cli("statusline", "--bogus")
    assert result.exit_code == 2 and result.stdout == ""


def test_as_a_subprocess_outside_a_repository(session: Path, tmp_path: Path) -> None:
    """The console script Claude Code runs, from a folder that is no repository: no cache, same line."""
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "statusline"],
        input=status_input(session, tmp_path),
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == HAND_LINE + "\n"
    assert not any(p.name == "statusline" for p in tmp_path.rglob("*"))


# -- a resumed session: the history it copied was counted where it was made -------------------------


def _session_lines(session: str, calls: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    out = []
    for msg, ts, usage in calls:
        line = json.loads(assistant_line(msg, usage, ts=ts))
        line["sessionId"] = session
        out.append(json.dumps(line, separators=(",", ":")))
    return out


ORIGINAL = [
    ("msg_R1", "07:00:00", _usage(5, 2000, 10000, 100)),
    ("msg_R2", "07:05:00", _usage(5, 300, 13000, 80)),
]
OWN = [
    ("msg_R3", "09:00:00", _usage(10, 500, 14000, 60)),
    ("msg_R4", "09:05:00", _usage(10, 200, 15500, 40)),
]


def _resumed(folder: Path, name: str = "s-resumed", source: str = "s-orig") -> Path:
    """``source``'s transcript copied into ``name``'s (same ids and times, the new session id), then
    two calls of its own."""
    copied = [
        line.replace(f'"sessionId":"{source}"', f'"sessionId":"{name}"')
        for line in (folder / f"{source}.jsonl").read_text().splitlines()
    ]
    path = folder / f"{name}.jsonl"
    path.write_text("\n".join([*copied, *_session_lines(name, OWN)]) + "\n")
    return path


@pytest.mark.parametrize("older_copy", [False, True], ids=["in-order", "copy-with-older-mtime"])
def test_a_resumed_session_counts_only_its_own_calls(
    git_repo: GitRepo, tmp_path: Path, older_copy: bool
) -> None:
    """By hand: s-resumed's own calls are msg_R3 (10 + 500 + 14,000 + 60 = 14,570) and msg_R4
    (10 + 200 + 15,500 + 40 = 15,750): 30,320 tokens, 2 calls, re-read 29,500 / 30,220 = 98 %. The
    copied msg_R1 and msg_R2 were counted in s-orig (12,105 + 13,385 = 25,490 tokens)."""
    folder = tmp_path / "claude" / "projects" / "-home-dev-demo"
    folder.mkdir(parents=True)
    original = folder / "s-orig.jsonl"
    original.write_text("\n".join(_session_lines("s-orig", ORIGINAL)) + "\n")
    resumed = _resumed(folder)
    if older_copy:  # a restore or a copy: modification times say nothing of the order
        os.utime(resumed, (1_000_000, 1_000_000))
    line = cli("statusline", stdin=status_input(resumed, git_repo.path)).stdout
    assert line.startswith("workgroup: 30.3k tok verified · 2 calls · re-read 98%"), line
    assert line == fresh_counts(resumed) + "\n"
    assert cli("statusline", stdin=status_input(original, git_repo.path)).stdout.startswith(
        "workgroup: 25.5k tok verified · 2 calls"
    )
    # the next call of the resumed session is read from the cached offset: still only its own
    with resumed.open("a") as log:
        log.write(_session_lines("s-resumed", [("msg_R5", "09:10:00", _usage(1, 0, 100, 9))])[0] + "\n")
    line = cli("statusline", stdin=status_input(resumed, git_repo.path)).stdout
    assert line.startswith("workgroup: 30.4k tok verified · 3 calls") and line == fresh_counts(resumed) + "\n"


def test_a_session_resumed_twice_drops_every_copied_generation(tmp_path: Path) -> None:
    """s-orig, then s-resumed (resumed from it), then s-third resumed from s-resumed: s-third's
    transcript holds copies of s-orig's and of s-resumed's calls; only its own call counts."""
    folder = tmp_path / "claude" / "projects" / "-home-dev-demo"
    folder.mkdir(parents=True)
    (folder / "s-orig.jsonl").write_text("\n".join(_session_lines("s-orig", ORIGINAL)) + "\n")
    _resumed(folder)
    third = folder / "s-third.jsonl"
    copied = (
        (folder / "s-resumed.jsonl").read_text().replace('"sessionId":"s-resumed"', '"sessionId":"s-third"')
    )
    third.write_text(
        copied + _session_lines("s-third", [("msg_T1", "10:00:00", _usage(2, 0, 8, 0))])[0] + "\n"
    )
    assert fresh_counts(third) == "workgroup: 10 tok verified · 1 call · re-read 80% · ~$0.000 list"


def test_a_later_copy_of_this_session_does_not_hide_its_calls(tmp_path: Path) -> None:
    """Another session resumed from this one later holds copies of its calls: they are this
    session's own (the copy is the later one), so they all count here."""
    folder = tmp_path / "claude" / "projects" / "-home-dev-demo"
    folder.mkdir(parents=True)
    original = folder / "s-orig.jsonl"
    original.write_text("\n".join(_session_lines("s-orig", ORIGINAL)) + "\n")
    before = fresh_counts(original)
    _resumed(folder)
    assert fresh_counts(original) == before and before.startswith("workgroup: 25.5k tok verified · 2 calls")


def test_importing_the_status_line_loads_no_reader_and_no_typing() -> None:
    """What the status line's module adds to a process (every run pays for it, a cached one too):
    nothing of the usage package (the lean reader, the rules and the price table come with the
    first refresh that reads), and not msgspec, typing, pathlib or datetime."""
    probe = (
        "import sys; import toolkit.entry; before = set(sys.modules); "
        "from toolkit.agents import statusline; "
        "print(sorted(m for m in set(sys.modules) - before "
        "if m.split('.')[0] in ('msgspec', 'typing', 'pathlib', 'datetime', 'dataclasses', 'inspect') "
        "or m.startswith('toolkit.usage.') and m != 'toolkit.usage.marks'))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60, check=True)
    assert proc.stdout.decode().strip() == "[]"
    # and the refresh's own module adds no msgspec, typed reader, fold or typing either
    probe = (
        "import sys; import toolkit.entry; before = set(sys.modules); from toolkit.usage import live; "
        "print(sorted(m for m in set(sys.modules) - before "
        "if m.split('.')[0] in ('msgspec', 'typing', 'pathlib', 'datetime', 'dataclasses', 'inspect') "
        "or m in ('toolkit.usage.claude', 'toolkit.usage.fold', 'toolkit.usage.dedup', 'toolkit.usage.model')))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60, check=True)
    assert proc.stdout.decode().strip() == "[]"


def test_a_resumed_session_whose_logs_start_with_a_long_line(tmp_path: Path) -> None:
    """The times that order the two sessions are found past a first line longer than the first
    window read (a long pasted prompt); by hand as in the test above: only s-resumed's own calls."""
    folder = tmp_path / "claude" / "projects" / "-home-dev-demo"
    folder.mkdir(parents=True)
    prompt = json.loads(user_line("x" * (3 * live.STAMP_WINDOW)))
    prompt["sessionId"], prompt["timestamp"] = "s-orig", "2026-01-06T06:59:00.000Z"
    original = folder / "s-orig.jsonl"
    original.write_text("\n".join([json.dumps(prompt), *_session_lines("s-orig", ORIGINAL)]) + "\n")
    resumed = _resumed(folder)
    assert fresh_counts(resumed).startswith("workgroup: 30.3k tok verified · 2 calls · re-read 98%")
