"""The run-state checkpoint beside the project log: the same answers as one pass from the start.

``cm log-event`` asks the project log for the latest run and a run's state on every event. With
the checkpoint only the rows after its offset are parsed, so an event costs the same in a long
open run as in a short one. The checkpoint is a cache that is checked before use: generated logs
(junk, torn and oversized rows) grown, edited, truncated and replaced between reads, a torn
checkpoint, and a writer killed between its append and the checkpoint write must all give the
answers of a plain read from the start.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import GitRepo, cli
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.cm import runptr
from toolkit.core.identifiers import CM_RUN_ID

RUNS = ["cm-20261201T000000Z-0000000a", "cm-20261201T000000Z-0000000b", "cm-20261201T000000Z-0000000c"]
EVENTS = ["run_start", "resume", "phase", "model_call", "done", "run_done", "note"]
ALL = [*RUNS, "cm-20261201T000000Z-0000000z"]


def _plain(log: Path) -> tuple[str | None, dict[str, str]]:
    """A plain read from the start, line by line: the model the checkpointed reader must agree with."""
    latest: str | None = None
    states: dict[str, str] = {}
    if not log.exists():
        return None, {}
    with open(log, "rb") as handle:
        for raw in handle:
            if len(raw) > runptr.MAX_ROW_BYTES or b'"run_id"' not in raw:
                continue
            try:
                row = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(row, dict):
                continue
            run_id, event = row.get("run_id"), row.get("event")
            if not isinstance(run_id, str) or not CM_RUN_ID.fullmatch(run_id) or not isinstance(event, str):
                continue
            latest = run_id
            if event in ("run_start", "resume"):
                states[run_id] = "running"
            elif event in runptr.TERMINAL_EVENTS:
                states[run_id] = "done"
            else:
                states.setdefault(run_id, "running")
    return latest, states


def _check(log: Path) -> runptr.CheckpointedRuns:
    latest, states = _plain(log)
    runs = runptr.project_runs(log, log.parent / runptr.CHECKPOINT_NAME)
    assert isinstance(runs, runptr.CheckpointedRuns)
    assert runs.latest == latest
    assert {run: runs.state(run) for run in ALL} == {run: states.get(run) for run in ALL}
    return runs


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
def _chunk(draw: st.DrawFn) -> bytes:
    rows = draw(st.lists(_ROW, max_size=8))
    text = "\n".join(rows)
    if rows and draw(st.booleans()):
        text += "\n"  # otherwise the last row is torn (the next chunk may end it)
    return text.encode()


_STEP = st.one_of(
    st.tuples(st.just("append"), _chunk()),
    st.tuples(st.just("edit"), st.tuples(st.floats(0, 1), _ROW)),  # a row's bytes replaced in place
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("replace"), _chunk()),  # an editor's save: a new file in the log's place
    st.tuples(st.just("tear_checkpoint"), st.floats(0, 1)),
    st.tuples(st.just("drop_checkpoint"), st.just(b"")),
)


def _apply(log: Path, step: tuple[str, object]) -> None:
    kind, arg = step
    ckpt = log.parent / runptr.CHECKPOINT_NAME
    if kind == "append":  # also what a writer killed before its checkpoint write leaves
        assert isinstance(arg, bytes)
        with open(log, "ab") as handle:
            handle.write(arg)
    elif kind == "edit":
        assert isinstance(arg, tuple)
        where, row = arg
        data = log.read_bytes()
        at = int(where * len(data))
        new = data[:at] + row.encode() + b"\n" + data[at + len(row) + 1 :]
        with open(log, "r+b") as handle:  # the same file (inode), rewritten: a hand edit
            handle.write(new)
            handle.truncate()
    elif kind == "truncate":
        assert isinstance(arg, float)
        size = log.stat().st_size
        os.truncate(log, int(arg * size))
    elif kind == "replace":
        assert isinstance(arg, bytes)
        data = log.read_bytes()
        tmp = log.with_suffix(".new")
        tmp.write_bytes(data[: len(data) // 2] + arg)
        os.replace(tmp, log)
    elif kind == "tear_checkpoint" and ckpt.exists():
        assert isinstance(arg, float)
        data = ckpt.read_bytes()
        ckpt.write_bytes(data[: int(arg * len(data))])
    elif kind == "drop_checkpoint":
        ckpt.unlink(missing_ok=True)


@settings(max_examples=250, deadline=None)
@given(
    first=_chunk(),
    steps=st.lists(_STEP, max_size=8),
    limit=st.sampled_from([150, 256 * 1024]),
)
def test_checkpointed_answers_equal_a_plain_read_after_every_change(
    first: bytes, steps: list[tuple[str, object]], limit: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(runptr, "MAX_ROW_BYTES", limit)  # rows over the limit are common at 150 bytes
        log = Path(tmp) / runptr.PROJECT_LOG_NAME
        _check(log)  # absent
        log.write_bytes(first)
        _check(log)
        for step in steps:
            _apply(log, step)
            _check(log)
            _check(log)  # and again, through the checkpoint the previous read left


def _long_log(log: Path, rows: int) -> None:
    lines = [json.dumps({"run_id": RUNS[0], "event": "run_start"})]
    lines += [json.dumps({"run_id": RUNS[0], "event": "phase", "i": i}) for i in range(rows)]
    log.write_text("\n".join(lines) + "\n")


def test_only_rows_after_the_checkpoint_are_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / runptr.PROJECT_LOG_NAME
    _long_log(log, 20_000)
    assert _check(log).rebuilt is True
    parsed: list[bytes] = []
    real = runptr.loads_row
    monkeypatch.setattr(runptr, "loads_row", lambda raw: parsed.append(raw) or real(raw))
    with open(log, "a") as handle:
        handle.write(json.dumps({"run_id": RUNS[0], "event": "run_done"}) + "\n")
    runs = _check(log)
    assert runs.rebuilt is False and runs.state(RUNS[0]) == "done"
    assert len(parsed) == 1  # the new row only, not 20,002


@pytest.mark.parametrize("edit", ["same_length_at_end", "shorter_in_middle", "new_inode", "truncated"])
def test_an_edited_long_log_is_read_again_from_the_start(tmp_path: Path, edit: str) -> None:
    """Edits the probes see on a log far longer than they cover: the checkpoint is not used."""
    log = tmp_path / runptr.PROJECT_LOG_NAME
    _long_log(log, 20_000)
    _check(log)
    data = log.read_bytes()
    done = json.dumps({"run_id": RUNS[0], "event": "done"}).encode()
    if edit == "same_length_at_end":  # the last row, same length, same inode
        last = data.rstrip(b"\n").rsplit(b"\n", 1)[1]
        fake = done + b" " * (len(last) - len(done))
        with open(log, "r+b") as handle:
            handle.seek(len(data) - len(last) - 1)
            handle.write(fake)
    elif edit == "shorter_in_middle":  # a row dropped from the middle: every later byte moves
        lines = data.splitlines(keepends=True)
        with open(log, "r+b") as handle:
            handle.write(b"".join(lines[:10_000] + lines[10_001:]))
            handle.truncate()
    elif edit == "new_inode":
        tmp = tmp_path / "new"
        tmp.write_bytes(data + done + b"\n")
        os.replace(tmp, log)
    else:
        os.truncate(log, len(data) // 2)
    assert _check(log).rebuilt is True
    assert _check(log).rebuilt is False  # and the rebuilt checkpoint serves the next read


def test_a_checkpoint_of_another_log_or_a_foreign_one_is_not_used(tmp_path: Path) -> None:
    log = tmp_path / runptr.PROJECT_LOG_NAME
    _long_log(log, 100)
    _check(log)
    ckpt = tmp_path / runptr.CHECKPOINT_NAME
    value = json.loads(ckpt.read_text())
    for forged in (
        {**value, "states": {RUNS[0]: "done"}, "digest": "0" * 64},
        {**value, "ino": value["ino"] + 1},
        {**value, "offset": value["offset"] + 5},
        {**value, "version": 99},
        {**value, "states": {"not a run id": "done"}},
        [1, 2],
    ):
        ckpt.write_text(json.dumps(forged))
        assert _check(log).rebuilt is True
    os.mkfifo(tmp_path / "fifo")
    ckpt.unlink()
    os.symlink(tmp_path / "fifo", ckpt)  # never opened as a checkpoint (and never written through)
    assert _check(log).rebuilt is True
    assert ckpt.is_symlink() is False  # the rename replaced the link itself


_WRITER = """
import sys
from toolkit.cm import events
specs, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    args = events.EventArgs(workflow="cm-ai", event="run_start" if i == 0 else "phase", runtime="codex",
                            detail=f"step {i}", specs_dir=specs, data_json='{"i": %d}' % i)
    events.write_event(args, environ={"CM_WORKFLOW_LOG_HOME": sys.argv[3], "HOME": sys.argv[3]})
"""


@pytest.mark.parametrize("delay", [0.3, 0.6, 0.9])
def test_a_writer_killed_mid_run_leaves_a_log_read_as_from_the_start(tmp_path: Path, delay: float) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    home = tmp_path / "home"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(specs), "100000", str(home)])
    time.sleep(delay)  # not a barrier: where the kill lands inside the run
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    log = specs / runptr.PROJECT_LOG_NAME
    if log.exists():
        with open(log, "ab") as handle:  # and one more row written without its checkpoint update
            handle.write(json.dumps({"run_id": json.loads(log.read_bytes().splitlines()[0])["run_id"],
                                     "event": "done"}).encode() + b"\n")  # fmt: skip
    _check(log)
    _check(log)


def test_log_event_refuses_a_symlinked_checkpoint(git_repo: GitRepo) -> None:
    """The checkpoint is a file of the specs dir like the pointer: a symlink in its place (here one a
    rename would replace, to a file outside) is refused before anything is read or written."""
    outside = git_repo.path.parent / "outside-ckpt.json"
    outside.write_text("{}\n")
    specs = git_repo.path / "specs"
    specs.mkdir()
    os.symlink(outside, specs / runptr.CHECKPOINT_NAME)
    code, out, err = cli(
        "--workflow", "cm-ai", "--event", "progress", "--runtime", "codex", "--detail", "d",
        "--specs-dir", "specs", script="cm-log-event",
    )  # fmt: skip
    assert code == 1 and out == "" and "(PATH_OUTSIDE_REPOSITORY)" in err and "run checkpoint" in err
    assert outside.read_text() == "{}\n"
    assert not (specs / runptr.PROJECT_LOG_NAME).exists()
