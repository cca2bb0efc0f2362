"""``toolkit.usage.shapes``: every shape ``workgroup usage`` prints or stores has its keys in the order
the output has them (a declared order that disagrees with the output fails here), and the report, the
session view and the status line's counting never load the shapes module at run time."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC
from pathlib import Path

import pytest
from support.harness import cli, declared_keys

from toolkit.usage import live
from toolkit.usage.fold import Ledger, LocalDays
from toolkit.usage.model import Call
from toolkit.usage.session import session_view
from toolkit.usage.shapes import (
    BoundaryPoint,
    BoundaryVerdict,
    CallRow,
    CostEstimate,
    EarlierDoc,
    EstimateRow,
    EventProvenance,
    EventRecord,
    FileStateDoc,
    LogFacts,
    PriceSource,
    ReportNotes,
    ReportRow,
    SessionEvent,
    SessionView,
    StateDoc,
    SubagentEntry,
    SubagentsRow,
    UsageReport,
    UsageTotals,
)


def _follows(value: Mapping[str, object], shape: type) -> None:
    """``value``'s keys are the shape's, in its declared order (a key the shape marks optional may be
    absent), and every key it requires is there."""
    declared = declared_keys(shape)
    assert list(value) == [k for k in declared if k in value], (list(value), declared)
    required: frozenset[str] = getattr(shape, "__required_keys__")  # noqa: B009 - a TypedDict's own
    assert required <= set(value), sorted(required - set(value))


def _json(*args: str) -> dict[str, object]:
    code, out, err = cli(*args)
    assert code == 0, err
    parsed: dict[str, object] = json.loads(out)
    return parsed


def _objects(value: object) -> list[dict[str, object]]:
    assert isinstance(value, list) and value
    assert all(isinstance(item, dict) for item in value)
    return value


def _object(value: object) -> dict[str, object]:
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("by", ["day", "session", "model"])
def test_the_report_and_its_estimate_follow_the_declared_order(logs: dict[str, str], by: str) -> None:
    for cost in ((), ("--cost",)):
        data = _json("usage", "--json", "--timezone", "UTC", "--by", by, *cost)
        _follows(data, UsageReport)
        assert ("estimate" in data) is bool(cost)
        for row in _objects(data["rows"]):
            _follows(row, ReportRow)
        _follows(_object(data["totals"]), UsageTotals)
        _follows(_object(data["notes"]), ReportNotes)
        if cost:
            estimate = _object(data["estimate"])
            _follows(estimate, CostEstimate)
            _follows(_object(estimate["price_table"]), PriceSource)
            for row in _objects(estimate["rows"]):
                _follows(row, EstimateRow)


def test_shapes_built_by_spreading_another_agree_with_it() -> None:
    # a report row spreads ``Totals.as_dict`` after its key: the two declarations must agree
    assert declared_keys(ReportRow) == ["key", *declared_keys(UsageTotals)]
    assert declared_keys(SubagentEntry) == ["subagent", "first_time", *declared_keys(UsageTotals)]
    # a boundary point spreads the workflow's verdict between its time and kind and its counts
    assert declared_keys(BoundaryPoint) == [
        "time",
        "kind",
        *declared_keys(BoundaryVerdict),
        "calls_after",
        "carried_after",
    ]
    assert declared_keys(SubagentsRow) == [
        k for k in declared_keys(CallRow) if k in ("time", "model", "subagents")
    ]


@pytest.mark.parametrize("session", ["s-aaaa", "s-bbbb"])
def test_the_session_view_follows_the_declared_order(logs: dict[str, str], session: str) -> None:
    view = _json("usage", "session", session, "--timezone", "UTC", "--json")
    _follows(view, SessionView)
    _follows(_object(view["totals"]), UsageTotals)
    entries = 0
    for row in _objects(view["calls"]):
        _follows(row, CallRow)
        for entry in _objects(row["subagents"]) if row["subagents"] else []:
            _follows(entry, SubagentEntry)
            entries += 1
    points = _objects(view["boundaries"])
    for point in points:
        _follows(point, BoundaryPoint)
        _follows(_object(point["facts_from_log"]), LogFacts)
    # s-aaaa has a folded subagent and a compaction, s-bbbb a resume: each shape was looked at
    assert entries == (1 if session == "s-aaaa" else 0) and len(points) == 1


def _call(ts: str, thread: str) -> Call:
    return Call(
        source="claude",
        session="s-only-subagents",
        project="p-0",
        thread=thread,
        subagent=True,
        ts=ts,
        model="claude-haiku-4-5",
        input=1,
        output=2,
        cache_write=3,
        cache_read=4,
        reasoning=None,
        context=8,
    )


def test_a_session_of_subagent_calls_only_has_the_subagents_row_shape() -> None:
    ledger = Ledger(calls=[_call("2026-01-01T00:00:00Z", "t1"), _call("2026-01-01T00:01:00Z", "t2")])
    view = session_view(ledger, "s-only-subagents", LocalDays(UTC), UTC, "cm-ai")
    _follows(view, SessionView)
    (row,) = json.loads(json.dumps(view))["calls"]
    _follows(row, SubagentsRow)
    assert "input" not in row and [e["subagent"] for e in row["subagents"]] == [1, 2]
    for entry in row["subagents"]:
        _follows(entry, SubagentEntry)


def test_the_events_written_are_the_declared_records(logs: dict[str, str], tmp_path: Path) -> None:
    # written with sorted keys: the order is the file's own, the keys must be the shapes' keys
    target = tmp_path / "events.jsonl"
    code, _out, err = cli("usage", "--emit-events", str(target), "--timezone", "UTC")
    assert code == 0, err
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert records
    for record in records:
        assert list(record) == sorted(declared_keys(EventRecord))
        assert list(record["provenance"]) == sorted(declared_keys(EventProvenance))
        # the telemetry op's normalization keeps every key of the raw event and adds the schema's others
        assert set(declared_keys(SessionEvent)) < set(record["event"])


def test_the_status_line_state_follows_the_declared_order(logs: dict[str, str]) -> None:
    transcript = next(Path(logs["CLAUDE_CONFIG_DIR"]).rglob("s-aaaa.jsonl"))
    _line, _marks, raw = live.counted_line(str(transcript), [("", str(transcript))], None)
    assert raw is not None
    doc = json.loads(raw)
    _follows(doc, StateDoc)
    _follows(doc["earlier"], EarlierDoc)
    (state,) = doc["files"].values()
    _follows(state, FileStateDoc)
    assert len(state["picks"]) > 1 and all(len(p) == 13 for p in state["picks"])
    # what was stored reads back and is stored again byte for byte
    files, earlier = live.decode_state(raw)
    assert earlier is not None and live.encode_state(files, earlier) == raw


def test_the_usage_paths_never_load_the_shapes_module(logs: dict[str, str]) -> None:
    transcript = next(Path(logs["CLAUDE_CONFIG_DIR"]).rglob("s-aaaa.jsonl"))
    code = (
        "import sys\nfrom toolkit.entry import main\n"
        "from toolkit.usage import live\n"
        "live.counted_line(sys.argv[1], [('', sys.argv[1])], None)\n"
        "for args in (['usage', '--json', '--cost', '--timezone', 'UTC'],\n"
        "             ['usage', 'session', 's-aaaa', '--json', '--timezone', 'UTC']):\n"
        "    assert main(args) == 0\n"
        "sys.stderr.write('@@' + ' '.join(m for m in ('toolkit.usage.shapes', 'toolkit.core.jsontypes', "
        "'toolkit.usage.session', 'toolkit.usage.cost') if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(transcript)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    # the two modules that use the shapes were loaded; the shapes were not
    assert proc.stderr.rpartition("@@")[2].split() == ["toolkit.usage.session", "toolkit.usage.cost"]
