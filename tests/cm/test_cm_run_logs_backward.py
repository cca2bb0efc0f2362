"""The project log read from its end: the same rows as from the start, and the same run answers.

``cm log-event`` asks the project log for its latest run and for one or two runs' states on every
event; those are now read from the end and only as far as needed. Generated logs (valid rows, junk,
empty lines, torn last rows, rows over the size limit, rows split across read blocks) must give
exactly what one pass from the start gives.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.cm import run_logs
from toolkit.core.identifiers import CM_RUN_ID

RUNS = ["cm-20261201T000000Z-0000000a", "cm-20261201T000000Z-0000000b", "cm-20261201T000000Z-0000000c"]
EVENTS = ["run_start", "resume", "phase", "model_call", "done", "run_done", "note"]


def _forward(log: Path) -> tuple[str | None, dict[str, str]]:
    """The one-pass reading: the model the backward reader must agree with."""
    latest: str | None = None
    states: dict[str, str] = {}
    for row in run_logs.iter_json_lines(log, b'"run_id"'):
        run_id, event = row.get("run_id"), row.get("event")
        if not isinstance(run_id, str) or not CM_RUN_ID.fullmatch(run_id) or not isinstance(event, str):
            continue
        latest = run_id
        if event in ("run_start", "resume"):
            states[run_id] = "running"
        elif event in run_logs.TERMINAL_EVENTS:
            states[run_id] = "done"
        else:
            states.setdefault(run_id, "running")
    return latest, states


_ROW = st.one_of(
    st.builds(
        lambda run, event, pad: json.dumps({"run_id": run, "event": event, "pad": "x" * pad}),
        st.sampled_from([*RUNS, "bad id", ""]),
        st.sampled_from([*EVENTS, 7]),
        st.integers(0, 300),
    ),
    st.sampled_from(
        ["", "not json", "[1, 2]", '{"run_id": 5}', '{"event": "done"}', '{"run_id": "cm-x', "{" * 80]
    ),
)


@st.composite
def _logs(draw: st.DrawFn) -> bytes:
    rows: list[str] = draw(st.lists(_ROW, max_size=30))
    text = "\n".join(rows)
    whole_last_row: bool = draw(st.booleans())
    if rows and whole_last_row:
        text += "\n"  # a whole last row; otherwise the last row is torn (no newline)
    return text.encode()


@settings(max_examples=300, deadline=None)
@given(data=_logs(), block=st.sampled_from([1, 7, 64, 65536]), limit=st.sampled_from([150, 256 * 1024]))
def test_backward_rows_and_run_answers_equal_one_pass_from_the_start(
    data: bytes, block: int, limit: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(run_logs, "_BLOCK", block)
        patch.setattr(run_logs, "MAX_ROW_BYTES", limit)  # rows over the limit are common at 150 bytes
        log = Path(tmp) / run_logs.PROJECT_LOG_NAME
        log.write_bytes(data)
        for needle in (None, b'"run_id"'):
            forward = list(run_logs.iter_json_lines(log, needle))
            assert list(run_logs.iter_json_lines_backward(log, needle)) == forward[::-1]
        latest, states = _forward(log)
        runs = run_logs.project_runs(log)
        assert runs.latest == latest
        for run in [*RUNS, "cm-20261201T000000Z-0000000z"]:
            assert runs.state(run) == states.get(run)


def test_a_long_log_is_read_only_as_far_as_the_answer_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / run_logs.PROJECT_LOG_NAME
    old = [json.dumps({"run_id": RUNS[0], "event": "phase", "i": i}) for i in range(20_000)]
    recent = [
        json.dumps({"run_id": RUNS[1], "event": "run_start"}),
        json.dumps({"run_id": RUNS[1], "event": "phase"}),
    ]
    log.write_text("\n".join(old + recent) + "\n")
    parsed: list[bytes] = []
    real = run_logs.loads_row

    def counted(raw: bytes) -> object:
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(run_logs, "loads_row", counted)
    runs = run_logs.project_runs(log)
    assert (runs.latest, runs.state(RUNS[1])) == (RUNS[1], "running")
    assert len(parsed) <= 3  # the newest rows only, not 20,002
    assert run_logs.project_runs(None).latest is None and run_logs.project_runs(None).state(RUNS[0]) is None


def test_a_missing_log_has_no_runs_and_a_fifo_is_refused(tmp_path: Path) -> None:
    import os

    runs = run_logs.project_runs(tmp_path / "absent.jsonl")
    assert runs.latest is None and runs.state(RUNS[0]) is None
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        list(run_logs.iter_json_lines_backward(fifo))


@pytest.mark.parametrize("block", [1, 10, 65536])
def test_a_row_at_the_size_limit_is_judged_with_its_newline(
    block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_logs, "_BLOCK", block)
    row = json.dumps({"run_id": RUNS[0], "event": "run_start", "pad": ""})
    monkeypatch.setattr(run_logs, "MAX_ROW_BYTES", len(row))  # the row fits only without a newline
    log = tmp_path / run_logs.PROJECT_LOG_NAME
    log.write_text(row + "\n" + row + "\n" + row)  # two with their newline (too long), a torn last one
    forward = list(run_logs.iter_json_lines(log))
    assert len(forward) == 1
    assert list(run_logs.iter_json_lines_backward(log)) == forward


@settings(max_examples=300, deadline=None)
@given(
    data=_logs(),
    chunk=st.sampled_from([1, 5, 64, 1 << 20]),
    limit=st.sampled_from([150, 256 * 1024]),
    needle=st.sampled_from([b"0000000a", b'"done"', b"pad", b"zzz"]),
)
def test_lines_found_a_block_at_a_time_equal_a_line_by_line_read(
    data: bytes, chunk: int, limit: int, needle: bytes
) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(run_logs, "_CHUNK", chunk)
        patch.setattr(run_logs, "MAX_ROW_BYTES", limit)
        log = Path(tmp) / run_logs.PROJECT_LOG_NAME
        log.write_bytes(data)
        with log.open("rb") as handle:
            expected = [raw for raw in handle if needle in raw and len(raw) <= limit]
        assert list(run_logs.iter_lines_with(log, [needle, b"never-there"])) == expected
