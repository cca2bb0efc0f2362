"""``workgroup usage`` on small hand-built logs whose totals are worked out here, line by line.

Each test writes a few Claude Code or Codex log lines, states the totals a careful reader gets from
those lines by hand (the arithmetic is in the test), and checks the report against them: session
order when modification times lie, a compaction copied into a resumed session, a content block
split over two lines with equal counts, Codex forks whose replayed lines keep their original times,
and price tables with missing rates or models they do not price.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.harness import cli
from support.usage_fixtures import _meta, _tc, _turn, _usage, _write, assistant, user

from toolkit.usage.fold import By, LocalDays, read_logs, resolve_tz
from toolkit.usage.model import Call, replaces
from toolkit.usage.report import build as build_report
from toolkit.usage.sources import discover

if TYPE_CHECKING:
    from toolkit.usage.shapes import UsageTotals

OLD, NEW = 1_700_000_000.0, 1_800_000_000.0  # modification times


def _env(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {"CLAUDE_CONFIG_DIR": str(root / "claude"), "CODEX_HOME": str(root / "codex")}
    (root / "claude" / "projects").mkdir(parents=True, exist_ok=True)
    (root / "codex" / "sessions").mkdir(parents=True, exist_ok=True)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def _sessions(
    env: dict[str, str], source: str, jobs: int = 1
) -> tuple[dict[str, Mapping[str, object]], UsageTotals]:
    """(rows by session, totals) of a ``--by session`` report."""
    ledger = read_logs(discover(source, env), jobs)
    data, _ = build_report(ledger, by=By.SESSION, days=LocalDays(resolve_tz("UTC")), timezone="UTC")
    return {row["key"]: row for row in data["rows"]}, data["totals"]


def _copy(lines: list[str], into: str) -> list[str]:
    """Lines copied into a resumed session: verbatim (same ids, same times), the new session id."""
    return [line.replace('"sessionId":"s-orig"', f'"sessionId":"{into}"') for line in lines]


def _compaction(session: str, ts: str, uuid: str, pre: int) -> str:
    return json.dumps(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": uuid,
            "parentUuid": None,
            "logicalParentUuid": "u1",
            "sessionId": session,
            "timestamp": ts,
            "cwd": "/home/dev/demo",
            "compactMetadata": {"trigger": "auto", "preTokens": pre},
        },
        separators=(",", ":"),
    )


# -- item 1: sessions in the order of the times inside their logs, not of their files' mtimes ----------


def _resumed_pair(root: Path, original_mtime: float, resumed_mtime: float) -> None:
    proj = root / "claude" / "projects" / "-home-dev-demo"
    original = [
        user("s-orig", "2026-02-10T10:00:00.000Z", "u1"),
        assistant("s-orig", "2026-02-10T10:00:05.000Z", "msg_1", "req_1", _usage(5, 2000, 10000, 100)),
        user("s-orig", "2026-02-10T10:05:00.000Z", "u2"),
        assistant("s-orig", "2026-02-10T10:05:05.000Z", "msg_2", "req_2", _usage(5, 300, 13000, 80)),
    ]
    _write(proj / "s-orig.jsonl", original, original_mtime)
    r = "s-resumed"
    _write(
        proj / f"{r}.jsonl",
        [
            *_copy(original, r),
            user(r, "2026-02-10T11:00:00.000Z", "u3"),
            assistant(r, "2026-02-10T11:00:05.000Z", "msg_3", "req_3", _usage(10, 500, 14000, 60)),
            user(r, "2026-02-10T11:05:00.000Z", "u4"),
            assistant(r, "2026-02-10T11:05:05.000Z", "msg_4", "req_4", _usage(10, 200, 15500, 40)),
        ],
        resumed_mtime,
    )


# By hand. s-orig: msg_1 sets the base B = 5 + 2,000 + 10,000 = 12,005; msg_2 re-reads 13,000, so
# 995 carried. s-resumed: msg_1 and msg_2 are copies (counted in s-orig); its first own call msg_3
# sets B = 10 + 500 + 14,000 = 14,510 (carried 0), msg_4 re-reads 15,500: 990 carried.
HAND_ORIGINAL = {"calls": 2, "output": 100 + 80, "carried_history": 15000 - 15000 + 13000 - 12005}
HAND_RESUMED = {"calls": 2, "output": 60 + 40, "carried_history": 15500 - 14510}


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(
    "mtimes", [(OLD, NEW), (NEW, OLD), (NEW, NEW)], ids=["in-order", "restored", "copied"]
)
def test_resumed_session_is_ordered_by_the_times_inside_the_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mtimes: tuple[float, float], jobs: int
) -> None:
    env = _env(tmp_path, monkeypatch)
    _resumed_pair(tmp_path, *mtimes)
    rows, totals = _sessions(env, "claude", jobs)
    for name, hand in (("s-orig", HAND_ORIGINAL), ("s-resumed", HAND_RESUMED)):
        assert {k: rows[name][k] for k in hand} == hand, name
    assert totals["calls"] == 4 and totals["output"] == 280 and totals["carried_history"] == 995 + 990
    code, out, _ = cli("usage", "session", "s-resumed", "--source", "claude", "--json", "--jobs", str(jobs))
    assert code == 0 and json.loads(out)["resumed_from"] == "s-orig"


def test_a_session_resumed_from_the_middle_comes_after_its_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy starts later than the original (first times differ): the first time decides."""
    env = _env(tmp_path, monkeypatch)
    proj = tmp_path / "claude" / "projects" / "-home-dev-demo"
    original = [
        user("s-orig", "2026-02-10T10:00:00.000Z", "u1"),
        assistant("s-orig", "2026-02-10T10:00:05.000Z", "msg_1", "req_1", _usage(5, 2000, 10000, 100)),
        user("s-orig", "2026-02-10T10:05:00.000Z", "u2"),
        assistant("s-orig", "2026-02-10T10:05:05.000Z", "msg_2", "req_2", _usage(5, 300, 13000, 80)),
    ]
    _write(proj / "s-orig.jsonl", original, NEW)
    # the resumed copy is only the second half, and its file is the older one
    _write(
        proj / "s-late.jsonl",
        [
            *_copy(original[2:], "s-late"),
            assistant("s-late", "2026-02-10T11:00:05.000Z", "msg_3", "req_3", _usage(10, 500, 14000, 60)),
        ],
        OLD,
    )
    rows, _ = _sessions(env, "claude")
    # by hand: s-orig keeps msg_1 and msg_2 (100 + 80 output), s-late only msg_3 (60)
    assert (rows["s-orig"]["calls"], rows["s-orig"]["output"]) == (2, 180)
    assert (rows["s-late"]["calls"], rows["s-late"]["output"]) == (1, 60)


# -- item 2: a compaction copied into a resumed session happened once ------------------------------------


def test_a_copied_compaction_is_counted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env(tmp_path, monkeypatch)
    proj = tmp_path / "claude" / "projects" / "-home-dev-demo"
    original = [
        user("s-orig", "2026-02-10T10:00:00.000Z", "u1"),
        assistant("s-orig", "2026-02-10T10:00:05.000Z", "msg_1", "req_1", _usage(5, 2000, 10000, 100)),
        _compaction("s-orig", "2026-02-10T10:10:00.000Z", "cmp-1", 12105),
        user("s-orig", "2026-02-10T10:11:00.000Z", "u2"),
        assistant("s-orig", "2026-02-10T10:11:05.000Z", "msg_2", "req_2", _usage(5, 3000, 0, 50)),
    ]
    _write(proj / "s-orig.jsonl", original, OLD)
    _write(
        proj / "s-resumed.jsonl",
        [
            *_copy(original, "s-resumed"),
            user("s-resumed", "2026-02-10T11:00:00.000Z", "u3"),
            assistant("s-resumed", "2026-02-10T11:00:05.000Z", "msg_3", "req_3", _usage(5, 100, 3000, 40)),
            # a compaction of its own, after its last call
            _compaction("s-resumed", "2026-02-10T11:30:00.000Z", "cmp-2", 3145),
        ],
        NEW,
    )
    # another session whose compaction has the same time but another uuid: a compaction of its own
    _write(
        proj / "s-other.jsonl",
        [
            user("s-other", "2026-02-11T09:00:00.000Z", "u9"),
            assistant("s-other", "2026-02-11T09:00:05.000Z", "msg_9", "req_9", _usage(5, 100, 0, 10)),
            _compaction("s-other", "2026-02-10T10:10:00.000Z", "cmp-9", 115),
        ],
        NEW,
    )
    for jobs in (1, 2):
        rows, totals = _sessions(env, "claude", jobs)
        # by hand: cmp-1 happened in s-orig (its copy in s-resumed is history), cmp-2 in s-resumed,
        # cmp-9 in s-other: one each, three in all
        assert rows["s-orig"]["compactions"] == 1
        assert rows["s-resumed"]["compactions"] == 1
        assert rows["s-other"]["compactions"] == 1
        assert totals["compactions"] == 3
    code, out, _ = cli("usage", "session", "s-resumed", "--source", "claude", "--json")
    view = json.loads(out)
    assert code == 0 and [b["kind"] for b in view["boundaries"]] == ["resume"]  # no copied compaction
    assert view["calls"][0]["compactions_before"] == 0 and view["calls"][0]["compactions_after"] == 1


# -- item 3: a content block split over lines with equal counts keeps the line with final usage ----------


@pytest.mark.parametrize("final_first", [False, True])
def test_split_content_block_with_equal_counts_keeps_the_final_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, final_first: bool
) -> None:
    env = _env(tmp_path, monkeypatch)
    proj = tmp_path / "claude" / "projects" / "-home-dev-demo"
    same = _usage(5, 1000, 2000, 120)
    blocks = [
        assistant("s-split", "2026-02-10T10:00:05.000Z", "msg_1", "req_1", same, stop=None),
        assistant("s-split", "2026-02-10T10:00:05.000Z", "msg_1", "req_1", same, stop="end_turn"),
    ]
    _write(
        proj / "s-split.jsonl",
        [user("s-split", "2026-02-10T10:00:00.000Z", "u1"), *(blocks[::-1] if final_first else blocks)],
    )
    rows, totals = _sessions(env, "claude")
    # by hand: one call (two lines, one message and request id), output 120, and its final usage is known
    assert rows["s-split"]["calls"] == 1 and rows["s-split"]["output"] == 120
    assert totals["calls_without_final_usage"] == 0
    code, out, _ = cli("usage", "session", "s-split", "--source", "claude")
    assert code == 0 and "no final usage" not in out


def test_equal_copies_across_a_sessions_files_keep_the_final_one() -> None:
    def call(final: bool) -> Call:
        return Call(
            "claude",
            "s",
            "p",
            "t",
            False,
            "2026-02-10T10:00:05.000Z",
            "m",
            5,
            120,
            1000,
            2000,
            None,
            0,
            final,
        )

    assert replaces(call(True), call(False)) and not replaces(call(False), call(True))
    assert not replaces(call(True), call(True))  # no reason to swap equal copies


# -- item 4: a Codex fork's replay adds nothing, re-stamped or not ----------------------------------------

PARENT = "0000aaaa"
FORK = "0000bbbb"
P1 = _meta("2026-01-05T15:00:00.000Z", PARENT)
P2 = _turn("2026-01-05T15:00:01.000Z")
P3 = _tc("2026-01-05T15:00:09.000Z", (12000, 0, 400, 128), (12000, 0, 400, 128))
P4 = _tc("2026-01-05T15:01:00.000Z", (25000, 11800, 650, 200), (13000, 11800, 250, 72))
OWN = _tc("2026-01-05T16:01:30.000Z", (39000, 24800, 800, 230), (14000, 13000, 150, 30))
# By hand. Parent: 2 calls, 25,000 input of which 11,800 cached, output 400 + 250 = 650. The fork's
# own call is the total's move after the replay: input 39,000 - 25,000 = 14,000 (24,800 - 11,800 =
# 13,000 cached), output 800 - 650 = 150. The replayed lines (times 15:00:09 and 15:01:00, before
# the fork started at 16:00) add nothing.
HAND_PARENT = {"calls": 2, "input": 25000 - 11800, "cache_read": 11800, "output": 650}
HAND_FORK = {"calls": 1, "input": 14000 - 13000, "cache_read": 13000, "output": 150}

FORK_FILES = {
    # the fork's session_meta first and naming its parent (the usual order)
    "names-parent": [_meta("2026-01-05T16:00:00.000Z", FORK, forked_from_id=PARENT), P1, P2, P3, P4, OWN],
    # the parent's session_meta first
    "parent-meta-first": [
        P1,
        _meta("2026-01-05T16:00:00.000Z", FORK, forked_from_id=PARENT),
        P2,
        P3,
        P4,
        OWN,
    ],
    # no forked_from_id: the two leading session_meta lines alone say it is a fork
    "two-metas-only": [_meta("2026-01-05T16:00:00.000Z", FORK), P1, P2, P3, P4, OWN],
}


@pytest.mark.parametrize("shape", sorted(FORK_FILES))
@pytest.mark.parametrize("with_parent", [True, False], ids=["parent-file", "parent-gone"])
def test_codex_fork_replay_with_original_times_adds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str, with_parent: bool
) -> None:
    env = _env(tmp_path, monkeypatch)
    day = tmp_path / "codex" / "sessions" / "2026" / "01" / "05"
    if with_parent:
        _write(day / f"rollout-2026-01-05T10-00-00-{PARENT}.jsonl", [P1, P2, P3, P4])
    _write(day / f"rollout-2026-01-05T11-00-00-{FORK}.jsonl", FORK_FILES[shape])
    for jobs in (1, 2):
        rows, totals = _sessions(env, "codex", jobs)
        assert {k: rows[FORK][k] for k in HAND_FORK} == HAND_FORK
        if with_parent:
            assert {k: rows[PARENT][k] for k in HAND_PARENT} == HAND_PARENT
            assert totals["calls"] == 3 and totals["output"] == 650 + 150
        else:
            assert PARENT not in rows and totals["calls"] == 1 and totals["output"] == 150


# -- item 5: price tables name what they lack; unpriced is not free -------------------------------------

RATES = {"input": 1_000_000, "cache_write_5m": 0, "cache_write_1h": 0, "cache_read": 0, "output": 2_000_000}


def _prices(path: Path, models: dict[str, Any]) -> Path:
    path.write_text(
        json.dumps({"source": "test sheet", "date": "2026-01-01", "currency": "EUR", "models": models}),
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("missing", ["input", "cache_write_5m", "cache_write_1h", "cache_read", "output"])
def test_a_price_entry_missing_a_rate_is_a_coded_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    _env(tmp_path, monkeypatch)
    partial = {k: v for k, v in RATES.items() if k != missing}
    prices = _prices(tmp_path / "prices.json", {"claude-sonnet-4-5": RATES, "my-model": partial})
    code, out, err = cli("usage", "--prices", str(prices))
    assert code == 2 and out == ""
    assert "USAGE_PRICE_MISSING_RATE" in err and '"my-model"' in err and f"no {missing} rate" in err
    assert "Traceback" not in err


def _two_models(tmp_path: Path) -> None:
    proj = tmp_path / "claude" / "projects" / "-home-dev-demo"
    _write(
        proj / "s-cost.jsonl",
        [
            user("s-cost", "2026-02-10T10:00:00.000Z", "u1"),
            assistant("s-cost", "2026-02-10T10:00:05.000Z", "msg_1", "req_1", _usage(7, 0, 0, 3)),
            assistant(
                "s-cost", "2026-02-10T10:01:05.000Z", "msg_2", "req_2", _usage(4, 0, 0, 9), model="mystery-1"
            ),
            assistant(
                "s-cost", "2026-02-10T10:02:05.000Z", "msg_3", "req_3", _usage(6, 0, 0, 2), model="mystery-1"
            ),
        ],
    )


def test_unpriced_models_say_so_in_text_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _env(tmp_path, monkeypatch)
    _two_models(tmp_path)
    prices = _prices(tmp_path / "prices.json", {"claude-sonnet-4-5": RATES})
    # by hand: the sonnet call costs 7 x 1 + 3 x 2 = 13 EUR; the two mystery-1 calls have no price
    code, out, _ = cli("usage", "--prices", str(prices), "--by", "model", "--json", "--timezone", "UTC")
    estimate = json.loads(out)["estimate"]
    assert code == 0
    assert estimate["rows"] == [
        {"key": "claude-sonnet-4-5", "amount": 13.0, "unpriced_calls": 0},
        {"key": "mystery-1", "amount": None, "unpriced_calls": 2},
    ]
    assert estimate["total"] == 13.0 and estimate["unpriced_calls"] == 2
    assert estimate["unpriced_calls_by_model"] == {"mystery-1": 2}
    code, text, _ = cli("usage", "--prices", str(prices), "--by", "model", "--timezone", "UTC")
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert code == 0 and lines["mystery-1"].split()[-1] == "unpriced" and "0.0000" not in lines["mystery-1"]
    assert "13.0000 + 2 unpriced" in lines["total"]
    assert "2 calls not priced" in text
    # by day the one day holds both: its amount leaves the two calls out, and says so
    code, text, _ = cli("usage", "--prices", str(prices), "--by", "day", "--timezone", "UTC")
    assert code == 0 and "2026-02-10  13.0000 + 2 unpriced" in text


def test_a_group_with_nothing_priced_has_no_amount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _env(tmp_path, monkeypatch)
    _two_models(tmp_path)
    prices = _prices(tmp_path / "prices.json", {"other-model": RATES})
    code, out, _ = cli("usage", "--prices", str(prices), "--by", "session", "--json")
    estimate = json.loads(out)["estimate"]
    # by hand: no call of s-cost has a price: no amount at all (null), not 0
    assert code == 0 and estimate["rows"] == [{"key": "s-cost", "amount": None, "unpriced_calls": 3}]
    assert estimate["total"] is None and estimate["unpriced_calls"] == 3
    assert os.environ["CLAUDE_CONFIG_DIR"]  # the run read the hand-built logs, not the machine's


def _compacted(ts: str) -> str:
    return json.dumps(
        {"timestamp": ts, "type": "compacted", "payload": {"message": "summary"}}, separators=(",", ":")
    )


@pytest.mark.parametrize("restamped", [False, True], ids=["original-times", "re-stamped"])
def test_codex_fork_replay_of_a_compaction_adds_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, restamped: bool
) -> None:
    env = _env(tmp_path, monkeypatch)
    day = tmp_path / "codex" / "sessions" / "2026" / "01" / "05"
    compaction = _compacted("2026-01-05T15:00:30.000Z")
    _write(day / f"rollout-2026-01-05T10-00-00-{PARENT}.jsonl", [P1, P2, P3, compaction, P4])
    replay = [P1, P2, P3, compaction, P4]
    if restamped:  # the replay written in the fork's first second
        replay = [
            P1,
            P2,
            P3.replace("15:00:09.000Z", "16:00:00.100Z"),
            compaction.replace("15:00:30.000Z", "16:00:00.300Z"),
            P4.replace("15:01:00.000Z", "16:00:00.600Z"),
        ]
    own_compaction = _compacted("2026-01-05T16:05:00.000Z")
    _write(
        day / f"rollout-2026-01-05T11-00-00-{FORK}.jsonl",
        [_meta("2026-01-05T16:00:00.000Z", FORK, forked_from_id=PARENT), *replay, OWN, own_compaction],
    )
    for jobs in (1, 2):
        rows, totals = _sessions(env, "codex", jobs)
        # by hand: one compaction in the parent (15:00:30), one of the fork's own (16:05:00); the
        # fork's copy of the parent's is history; calls as in the replay test above
        assert rows[PARENT]["compactions"] == 1 and rows[FORK]["compactions"] == 1
        assert totals["compactions"] == 2
        assert {k: rows[FORK][k] for k in HAND_FORK} == HAND_FORK
        assert {k: rows[PARENT][k] for k in HAND_PARENT} == HAND_PARENT
