"""The run-state checkpoint beside the project log: the same answers as one pass from the start.

``cm log-event`` asks the project log for the latest run and a run's state on every event. With
the checkpoint only the rows after its offset are parsed, so an event costs the same in a long
open run as in a short one. The checkpoint is a cache that is checked before use: generated logs
(junk, torn and oversized rows) grown, edited, truncated and replaced between reads, a torn
checkpoint, and a writer killed between its append and the checkpoint write must all give the
answers of a plain read from the start.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.harness import GitRepo, cli

from toolkit.cm import event_error, event_input, event_write, lifecycle, log_facts, logindex, run_logs
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
            if len(raw) > run_logs.MAX_ROW_BYTES or b'"run_id"' not in raw:
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
            elif event in run_logs.TERMINAL_EVENTS:
                states[run_id] = "done"
            else:
                states.setdefault(run_id, "running")
    return latest, states


def _check(log: Path) -> run_logs.CheckpointedRuns:
    latest, states = _plain(log)
    runs = run_logs.project_runs(log, log.parent / run_logs.CHECKPOINT_NAME)
    assert isinstance(runs, run_logs.CheckpointedRuns)
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
    rows: list[str] = draw(st.lists(_ROW, max_size=8))
    text = "\n".join(rows)
    whole_last_row: bool = draw(st.booleans())
    if rows and whole_last_row:
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
    ckpt = log.parent / run_logs.CHECKPOINT_NAME
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
        patch.setattr(run_logs, "MAX_ROW_BYTES", limit)  # rows over the limit are common at 150 bytes
        log = Path(tmp) / run_logs.PROJECT_LOG_NAME
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
    log = tmp_path / run_logs.PROJECT_LOG_NAME
    _long_log(log, 20_000)
    assert _check(log).rebuilt is True
    parsed: list[bytes] = []
    real = run_logs.loads_row

    def counted(raw: bytes) -> object:
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(run_logs, "loads_row", counted)
    with open(log, "a") as handle:
        handle.write(json.dumps({"run_id": RUNS[0], "event": "run_done"}) + "\n")
    runs = _check(log)
    assert runs.rebuilt is False and runs.state(RUNS[0]) == "done"
    assert len(parsed) == 1  # the new row only, not 20,002


@pytest.mark.parametrize("edit", ["same_length_at_end", "shorter_in_middle", "new_inode", "truncated"])
def test_an_edited_long_log_is_read_again_from_the_start(tmp_path: Path, edit: str) -> None:
    """Edits the probes see on a log far longer than they cover: the checkpoint is not used."""
    log = tmp_path / run_logs.PROJECT_LOG_NAME
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
    log = tmp_path / run_logs.PROJECT_LOG_NAME
    _long_log(log, 100)
    _check(log)
    ckpt = tmp_path / run_logs.CHECKPOINT_NAME
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
from toolkit.cm import event_input, event_write
specs, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    args = event_input.EventArgs(workflow="cm-ai", event="run_start" if i == 0 else "phase", runtime="codex",
                            detail=f"step {i}", specs_dir=specs, data_json='{"i": %d}' % i)
    event_write.write_event(args, environ={"CM_WORKFLOW_LOG_HOME": sys.argv[3], "HOME": sys.argv[3]})
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
    log = specs / run_logs.PROJECT_LOG_NAME
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
    os.symlink(outside, specs / run_logs.CHECKPOINT_NAME)
    code, out, err = cli(
        "--workflow", "cm-ai", "--event", "progress", "--runtime", "codex", "--detail", "d",
        "--specs-dir", "specs", script="cm-log-event",
    )  # fmt: skip
    assert code == 1 and out == "" and "(PATH_OUTSIDE_REPOSITORY)" in err and "run checkpoint" in err
    assert outside.read_text() == "{}\n"
    assert not (specs / run_logs.PROJECT_LOG_NAME).exists()


# ---------------------------------------------------------------- the log index (event ids, calls, lifecycle)

EIDS = ["evt-1", "evt-2", "evt-3"]
CIDS = ["call-1", "call-2"]
RIDS = ["res-1", "res-2"]
KINDS = [frozenset({"resource"}), frozenset({"test_run"}), frozenset({"resource", "test_run"})]


def _escaped(text: str, value: str) -> str:
    """``text`` with ``value``'s first character written as a JSON escape (same row, other bytes)."""
    return text.replace(f'"{value}"', f'"\\u{ord(value[0]):04x}{value[1:]}"', 1)


_LIFECYCLE_ROW = st.one_of(
    st.fixed_dictionaries(
        {
            "event": st.just("resource"),
            "phase": st.sampled_from(["acquired", "released", "cleanup_failed", "bogus"]),
            "resource_id": st.sampled_from(RIDS),
            "resource_kind": st.sampled_from(["sandbox", "vm"]),
            "cleanup_required": st.just(True),
        }
    ),
    st.fixed_dictionaries(
        {
            "event": st.just("test_run"),
            "phase": st.sampled_from(["start", "case_start", "case_complete", "complete", "abandoned"]),
            "case_id": st.sampled_from(["c1", "c2"]),
            "result": st.sampled_from(["PASS", "FAIL"]),
        }
    ),
    st.fixed_dictionaries(
        {
            "event": st.sampled_from(["model_call", "model_usage"]),
            "phase": st.sampled_from(["claimed", "complete"]),
            "call_id": st.sampled_from(CIDS),
        }
    ),
    st.fixed_dictionaries({"event": st.sampled_from(["task_done", "progress", "run_done"])}),
)


@st.composite
def _event_row(draw: st.DrawFn) -> str:
    row = {"run_id": draw(st.sampled_from(RUNS)), **draw(_LIFECYCLE_ROW)}
    if draw(st.booleans()):
        row["event_id"] = draw(st.sampled_from(EIDS))  # duplicate ids are common
    if draw(st.integers(0, 4)) == 0:
        row["detail"] = "mentions " + draw(st.sampled_from([*EIDS, *RUNS, *CIDS]))  # a needle, not the id
    text = json.dumps(row)
    if draw(st.integers(0, 5)) == 0:  # an id written with an escape: the same row to a parser
        text = _escaped(text, draw(st.sampled_from([str(v) for v in row.values() if isinstance(v, str)])))
    return text


_INDEX_ROW = st.one_of(
    _event_row(),
    _event_row(),
    st.builds(lambda r: r + " " * 200, _event_row()),  # over the row limit when it is 150 bytes
    st.sampled_from(['{"run_id": "' + RUNS[0] + '", "event": "resource"', "not json evt-1", "[1]", "   "]),
    st.builds(lambda e: "garbage mentioning " + e, st.sampled_from([*EIDS, *RUNS])),
)


@st.composite
def _index_chunk(draw: st.DrawFn) -> bytes:
    rows: list[str] = draw(st.lists(_INDEX_ROW, max_size=10))
    text = "\n".join(rows)
    ended: int = draw(st.integers(0, 3))
    if rows and ended:
        text += "\n"  # otherwise the last row is torn (the next chunk may end it)
    return text.encode()


def _tear_index(log: Path, where: float) -> None:
    path = logindex.index_path(log)
    if path.exists():
        data = path.read_bytes()
        cut = int(where * len(data))
        path.write_bytes(data[:cut] + b"\xff" * 64 + data[cut + 64 :])  # garbage in its pages


_INDEX_STEP = st.one_of(
    st.tuples(st.just("append"), _index_chunk()),
    st.tuples(st.just("append"), _index_chunk()),
    st.tuples(st.just("edit"), st.tuples(st.floats(0, 1), _event_row())),
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("replace"), _index_chunk()),
    st.tuples(st.just("tear_index"), st.floats(0, 1)),
    st.tuples(st.just("drop_index"), st.just(b"")),
)


def _plain_calls(log: Path, run: str, eid: str, cid: str | None) -> tuple[object, ...]:
    facts = log_facts._scan_plainly(log, run, eid, cid)
    return facts.duplicate, facts.usage, facts.claim


def _view(state: lifecycle.RunLifecycle, rid: str) -> tuple[object, ...]:
    """What ``decide`` reads of a replayed run for an event on ``rid``."""
    open_ids = set(state.resources.unclosed())
    resources = {r: state.resources.states.get(r) for r in open_ids | {rid}}
    return {r: v for r, v in resources.items() if v is not None}, dataclasses.asdict(state.invocations)


def _plain_lifecycle(log: Path, run: str, eid: str, kinds: frozenset[str], rid: str) -> object:
    try:
        with open(log, "rb") as handle:
            return _view(lifecycle.replay(handle, run, eid, kinds), rid)
    except FileNotFoundError:
        return _view(lifecycle.RunLifecycle(), rid)
    except lifecycle.Unverifiable as exc:
        return exc.reason


def _indexed_lifecycle(log: Path, run: str, eid: str, kinds: frozenset[str], rid: str) -> object:
    try:
        state = logindex.run_lifecycle(log, run, eid, kinds, rid)
    except lifecycle.Unverifiable as exc:
        return exc.reason
    return None if state is None else _view(state, rid)


def _check_index(log: Path) -> int:
    """Every question asked through the index and plainly: the same answers. The number of
    lifecycle questions the index handed back to the plain replay."""
    handed_back = 0
    for run in ALL:
        for eid in EIDS:
            for cid in (None, *CIDS):
                assert logindex.call_rows(log, run, eid, cid) == _plain_calls(log, run, eid, cid), (
                    run,
                    eid,
                    cid,
                )
    for run in RUNS:
        for eid in EIDS[:2]:
            for kinds in KINDS:
                rid = RIDS[len(kinds) % 2]
                got = _indexed_lifecycle(log, run, eid, kinds, rid)
                if got is None:
                    handed_back += 1
                    continue
                assert got == _plain_lifecycle(log, run, eid, kinds, rid), (run, eid, kinds)
    return handed_back


@settings(max_examples=80, deadline=None)
@given(
    first=_index_chunk(), steps=st.lists(_INDEX_STEP, max_size=6), limit=st.sampled_from([150, 256 * 1024])
)
# a torn index on an empty log: Python 3.11.2's sqlite3 raised UnicodeDecodeError on the garbage file
@example(first=b"", steps=[("tear_index", 0.0859375)], limit=150)
def test_indexed_answers_equal_a_plain_read_after_every_change(
    first: bytes, steps: list[tuple[str, object]], limit: int
) -> None:
    """Generated logs (duplicate ids, call ids, resources, QA invocations and task_done of several
    runs; torn, oversized and junk rows; ids written with escapes), grown, edited, truncated and
    replaced, with the index torn or dropped between reads: the writer's questions (the event id,
    the call id, the run's lifecycle) get the answers of a plain read from the start."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(run_logs, "MAX_ROW_BYTES", limit)
        log = Path(tmp) / run_logs.PROJECT_LOG_NAME
        _check_index(log)  # absent
        log.write_bytes(first)
        _check_index(log)
        for kind, arg in steps:
            if kind == "tear_index":
                assert isinstance(arg, float)
                _tear_index(log, arg)
            elif kind == "drop_index":
                logindex.remove(log)
            else:
                _apply(log, (kind, arg))
            _check_index(log)
            _check_index(log)  # and again, through the index the previous read left


def test_a_plain_log_is_answered_by_the_index_alone(tmp_path: Path) -> None:
    """Without escaped ids of the run the index answers every lifecycle question itself."""
    log = tmp_path / run_logs.PROJECT_LOG_NAME
    rows: list[dict[str, object]] = [{"run_id": RUNS[0], "event": "run_start", "event_id": "evt-0"}]
    rows += [{"run_id": RUNS[0], "event": "resource", "phase": "acquired", "resource_id": RIDS[0],
              "resource_kind": "vm", "cleanup_required": True, "event_id": "evt-1"},
             {"run_id": RUNS[0], "event": "test_run", "phase": "start", "event_id": "evt-2"}]  # fmt: skip
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert _check_index(log) == 0


def _grown(log: Path, rows: int) -> None:
    lines: list[dict[str, object]] = [{"run_id": RUNS[0], "event": "run_start", "event_id": "evt-start"}]
    lines += [{"run_id": RUNS[0], "event": "progress", "event_id": f"evt-{i:06d}"} for i in range(rows)]
    lines += [{"run_id": RUNS[0], "event": "model_call", "phase": "claimed", "call_id": CIDS[0], "event_id": "c"},
              {"run_id": RUNS[0], "event": "resource", "phase": "acquired", "resource_id": RIDS[0],
               "resource_kind": "vm", "cleanup_required": True, "event_id": "r"}]  # fmt: skip
    log.write_text("".join(json.dumps(row) + "\n" for row in lines))


def test_the_index_reads_only_the_rows_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first question, a question on a grown log parses the new rows only and never
    reads the log plainly: the cost of an event does not grow with the log."""
    log = tmp_path / run_logs.PROJECT_LOG_NAME
    _grown(log, 20_000)
    assert logindex.call_rows(log, RUNS[0], "evt-000007", None) is not None
    parsed: list[bytes] = []
    real = run_logs.loads_row

    def counted(raw: bytes) -> object:
        parsed.append(raw)
        return real(raw)

    monkeypatch.setattr(run_logs, "loads_row", counted)
    with open(log, "a") as handle:
        handle.write(json.dumps({"run_id": RUNS[0], "event": "progress", "event_id": "evt-new"}) + "\n")
    duplicate, usage, claim = logindex.call_rows(log, RUNS[0], "evt-019999", CIDS[0]) or (None, None, None)
    assert duplicate is not None and duplicate["event_id"] == "evt-019999"
    assert usage is None and claim is not None and claim["event_id"] == "c"
    state = logindex.run_lifecycle(log, RUNS[0], "evt-x", frozenset({"resource", "test_run"}))
    assert state is not None and state.resources.unclosed() == [RIDS[0]]
    assert len(parsed) == 1 + 2  # the new row, then the two rows the answers name (read back)


def test_a_forged_or_foreign_index_is_rebuilt(tmp_path: Path) -> None:
    """An index whose schema is not ours (a trigger that would hide ids), another log's, one that
    claims more of the log than there is, or garbage: deleted and built again, same answers."""
    import sqlite3

    log = tmp_path / run_logs.PROJECT_LOG_NAME
    _grown(log, 500)
    path = logindex.index_path(log)

    def forge(statement: str) -> None:
        assert logindex.call_rows(log, RUNS[0], "evt-000001", None) is not None  # built and current
        db = sqlite3.connect(path)
        db.execute(statement)
        db.commit()
        db.close()

    for statement in (
        "CREATE TRIGGER hide AFTER INSERT ON ids BEGIN DELETE FROM ids; END",
        "DELETE FROM ids",  # with the meta left as it was: the rows it names are read back
        "UPDATE meta SET v = '1' WHERE k = 'ino'",
        "UPDATE meta SET v = '999999999' WHERE k = 'offset'",
        "UPDATE ids SET pos = 0",
    ):
        forge(statement)
        if statement == "DELETE FROM ids":  # a missing id cannot be read back: drop the index
            logindex.remove(log)  # (this is the trust the checkpoint has: the log decides)
        assert _check_index(log) == 0, statement
    path.write_bytes(b"not a database" * 100)
    assert _check_index(log) == 0
    path.unlink()
    os.mkfifo(path)  # never opened as a database: removed, then built again
    assert _check_index(log) == 0
    assert path.is_file()


_INDEX_BUILDER = """
import sys
from pathlib import Path
from toolkit.cm import logindex
print("ready", flush=True)
logindex.call_rows(Path(sys.argv[1]), "cm-20261201T000000Z-0000000a", "evt-x", None)
"""


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8])
def test_a_process_killed_while_it_builds_the_index_leaves_the_answers_right(
    tmp_path: Path, delay: float
) -> None:
    """kill -9 in the middle of an index transaction (a long first build): SQLite rolls the journal
    back, and the next question builds or catches up from what was committed."""
    log = tmp_path / run_logs.PROJECT_LOG_NAME
    _grown(log, 60_000)
    proc = subprocess.Popen([sys.executable, "-c", _INDEX_BUILDER, str(log)], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    time.sleep(delay)  # not a barrier: where the kill lands in the build
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _check_index(log) == 0


_GUARDED_WRITER = """
import json, sys
from toolkit.cm import event_input, event_write
specs, n, home = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def write(event, phase=None, **data):
    args = event_input.EventArgs(workflow="cm-ai", event=event, phase=phase, runtime="codex", detail="d",
                            specs_dir=specs, data_json=json.dumps(data))
    event_write.write_event(args, environ={"CM_WORKFLOW_LOG_HOME": home, "HOME": home})
write("run_start")
for i in range(n):
    rid = f"res-{i}"
    write("resource", "acquired", resource_id=rid, resource_kind="vm", cleanup_required=True)
    write("progress", i=i)
    write("resource", "released", resource_id=rid, resource_kind="vm")
    write("task_done", i=i)
"""


@pytest.mark.parametrize("delay", [0.5, 1.0, 1.6])
def test_a_writer_killed_mid_run_leaves_indexed_answers_equal_to_a_plain_read(
    tmp_path: Path, delay: float
) -> None:
    """The real writer (resources, progress, task_done) killed at some point: the project log's and
    the global log's indexes answer as a plain read of each log; the next events are judged alike."""
    specs, home = tmp_path / "specs", tmp_path / "home"
    specs.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _GUARDED_WRITER, str(specs), "100000", str(home)])
    log = specs / run_logs.PROJECT_LOG_NAME
    deadline = time.monotonic() + 60
    while not log.exists() and time.monotonic() < deadline:  # the run has begun
        time.sleep(0.01)  # not a barrier: the poll interval of a wait bounded by its deadline
    time.sleep(delay)  # not a barrier: where the kill lands inside the run
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert log.exists()
    run = json.loads(log.read_bytes().splitlines()[0])["run_id"]
    mirrors = list((home / "runs").glob(f"*/{run}.jsonl"))
    for each in [log, *mirrors]:
        with open(each, "ab") as handle:  # and a torn row of the run at the end
            handle.write(b'{"run_id": "%s", "event": "resource"' % run.encode())
        for eid in EIDS[:1]:
            assert logindex.call_rows(each, run, eid, None) == _plain_calls(each, run, eid, None)
        for kinds in KINDS:
            assert _indexed_lifecycle(each, run, "evt-x", kinds, "res-0") == _plain_lifecycle(
                each, run, "evt-x", kinds, "res-0"
            )


def test_log_event_refuses_a_symlinked_index(git_repo: GitRepo) -> None:
    """The index and its journal are files of the specs dir like the checkpoint: a symlink in their
    place that leads outside the repository is refused before anything is read or written."""
    outside = git_repo.path.parent / "outside-index.db"
    outside.write_text("x")
    specs = git_repo.path / "specs"
    specs.mkdir()
    for name in (run_logs.INDEX_NAME, run_logs.INDEX_JOURNAL_NAME):
        os.symlink(outside, specs / name)
        code, out, err = cli(
            "--workflow", "cm-ai", "--event", "progress", "--runtime", "codex", "--detail", "d",
            "--specs-dir", "specs", script="cm-log-event",
        )  # fmt: skip
        assert code == 1 and out == "" and "(PATH_OUTSIDE_REPOSITORY)" in err and "run index" in err
        assert outside.read_text() == "x"
        assert not (specs / run_logs.PROJECT_LOG_NAME).exists()
        (specs / name).unlink()


def test_an_index_that_cannot_be_made_leaves_the_plain_readers_answering(tmp_path: Path) -> None:
    """A directory in the index's place: the writer reads the log plainly, with the same answers (an
    exact retry deduplicated, an open resource blocking task_done)."""
    specs, home = tmp_path / "specs", tmp_path / "home"
    specs.mkdir()
    (specs / run_logs.INDEX_NAME).mkdir()
    environ = {"CM_WORKFLOW_LOG_HOME": str(home), "HOME": str(home)}

    def write(event: str, phase: str | None = None, **data: object) -> event_write.WriteResult:
        args = event_input.EventArgs(workflow="cm-ai", event=event, phase=phase, runtime="codex", detail="d",
                                specs_dir=str(specs), data_json=json.dumps(data), at="2026-12-01T00:00:00Z")  # fmt: skip
        return event_write.write_event(args, environ=environ)

    write("run_start")
    first = write("progress", i=1)
    assert write("progress", i=1).result["deduplicated"] is True
    assert first.result["deduplicated"] is False
    write("resource", "acquired", resource_id="r1", resource_kind="vm", cleanup_required=True)
    with pytest.raises(event_error.EventError) as refused:
        write("task_done")
    assert refused.value.code == "RESOURCES_OPEN"
    assert (specs / run_logs.INDEX_NAME).is_dir()
    assert logindex.call_rows(specs / run_logs.PROJECT_LOG_NAME, RUNS[0], "evt-1", None) is None
