"""The vault delta journal: `workgroup vault add|flush|list` (VERIFY CEO-11, CEO-20)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.harness import ROOT, GitRepo, cli, declared_keys
from support.sync import AT_START_LINE, StartLine

from toolkit.infra.git import discover

NOW = "2026-03-01T10:00:00Z"


def layout(repo: GitRepo) -> Any:
    return discover(str(repo.path)).layout


def add(repo: GitRepo, payload: Any, name: str = "d.json") -> tuple[int, Any]:
    path = repo.path.parent / name
    path.write_text(json.dumps(payload), encoding="utf-8")
    code, out, _ = cli("vault", "add", str(path), "--json", "--now", NOW)
    return code, (json.loads(out) if out.strip() else None)


def journal_bytes(repo: GitRepo) -> bytes:
    path = layout(repo).vault_journal
    return path.read_bytes() if path.exists() else b""


def flush() -> dict[str, Any]:
    flushed = cli("vault", "flush", "--now", NOW)
    assert flushed.exit_code == 0
    batch: dict[str, Any] = json.loads(flushed.stdout)
    return batch


DELTA = {"category": "pattern", "title": "Retry budget", "content": "Three retries with jitter."}


def test_batch_is_pending_until_flushed_once(git_repo: GitRepo) -> None:
    code, out = add(git_repo, {"delta": DELTA})
    assert code == 0
    assert out == {
        "action": "batch",
        "reason": "NORMAL_DELTA",
        "seq": 1,
        "journaled": True,
        "flush_due": False,
    }
    # nothing outside the local journal: the work tree has no new file
    assert not (git_repo.path / ".workgroup").exists()
    listed = cli("vault", "list", "--json")
    assert listed.exit_code == 0
    listing = json.loads(listed.stdout)
    assert listing["pending"] == 1 and listing["entries"][0]["state"] == "pending"

    batch = flush()
    assert batch["schema"] == "workgroup.vault-batch/v1" and batch["batch_id"].startswith("batch-")
    assert [e["seq"] for e in batch["entries"]] == [1]
    assert batch["entries"][0]["delta"] == DELTA
    # a second flush prints an empty batch and appends nothing
    before = journal_bytes(git_repo)
    again = flush()
    assert again["entries"] == [] and again["batch_id"] is None
    assert journal_bytes(git_repo) == before
    rows = json.loads(cli("vault", "list", "--json").stdout)["entries"]
    assert rows[0]["state"] == "flushed" and rows[0]["batch_id"] == batch["batch_id"]


@pytest.mark.parametrize(
    "payload",
    [
        {"delta": {}},  # empty
        {"delta": {"title": " ", "content": "..."}},  # empty after normalization
        {"delta": {**DELTA, "title": "RETRY budget!!"}},  # duplicate of the journaled delta
    ],
)
def test_skip_appends_nothing(git_repo: GitRepo, payload: Any) -> None:
    add(git_repo, {"delta": DELTA})
    before = journal_bytes(git_repo)
    code, out = add(git_repo, payload, "skip.json")
    assert code == 0 and out["action"] == "skip" and out["journaled"] is False and out["seq"] is None
    assert journal_bytes(git_repo) == before


def test_duplicate_of_a_flushed_entry_is_still_skipped(git_repo: GitRepo) -> None:
    add(git_repo, {"delta": DELTA})
    flush()
    _, out = add(git_repo, {"delta": DELTA})
    assert out["reason"] == "SEMANTIC_DUPLICATE"


def test_amend_chain_keeps_one_target(git_repo: GitRepo) -> None:
    add(git_repo, {"delta": {**DELTA, "semantic_key": "retry-budget", "KnowledgeId": "K-1"}})
    _, first = add(git_repo, {"delta": {**DELTA, "content": "Five retries.", "semantic_key": "Retry budget"}})
    assert (first["action"], first["KnowledgeId"]) == ("amend", "K-1")
    # the second amendment targets the same record, not "two records with this key"
    _, second = add(git_repo, {"delta": {**DELTA, "content": "Six retries.", "semantic_key": "retry_budget"}})
    assert (second["action"], second["KnowledgeId"], second["seq"]) == ("amend", "K-1", 3)
    # going back to the first amendment's content is an amendment again, not a duplicate
    _, back = add(git_repo, {"delta": {**DELTA, "content": "Five retries.", "semantic_key": "retry budget"}})
    assert back["action"] == "amend"
    batch = flush()
    assert [(e["action"], e.get("KnowledgeId")) for e in batch["entries"]] == [
        ("batch", None),
        ("amend", "K-1"),
        ("amend", "K-1"),
        ("amend", "K-1"),
    ]


def test_update_by_supersedes(git_repo: GitRepo) -> None:
    add(git_repo, {"delta": {**DELTA, "knowledge_id": "K-7"}})
    _, out = add(
        git_repo,
        {"delta": {"category": "pattern", "title": "Retry v2", "content": "Two.", "supersedes": "K-7"}},
    )
    assert (out["action"], out["reason"], out["KnowledgeId"]) == ("update", "SUPERSESSION_CHANGED", "K-7")


def test_caller_prior_records_count(git_repo: GitRepo) -> None:
    prior = [{**DELTA, "semantic_key": "k", "KnowledgeId": "K-3"}]
    _, out = add(
        git_repo,
        {"delta": {**DELTA, "content": "new", "semantic_key": "k"}, "previous_deltas": prior},
    )
    assert out["KnowledgeId"] == "K-3"


@pytest.mark.parametrize(
    ("payload", "exit_code", "code"),
    [
        (
            {
                "delta": {**DELTA, "content": "x", "semantic_key": "k"},
                "previous_deltas": [{**DELTA, "semantic_key": "k"}],
            },
            1,
            "VAULT_TARGET_REQUIRED",
        ),
        (
            {
                "delta": {**DELTA, "content": "x", "semantic_key": "k"},
                "previous_deltas": [
                    {**DELTA, "semantic_key": "k", "KnowledgeId": "A"},
                    {"title": "t", "semantic_key": "k", "KnowledgeId": "B"},
                ],
            },
            1,
            "VAULT_TARGET_AMBIGUOUS",
        ),
        ({"delta": DELTA, "severity": "urgent"}, 2, "INVALID_SEVERITY"),
        ({"delta": DELTA, "extra": 1}, 2, "VAULT_INPUT_INVALID"),
        ({"title": "no delta key"}, 2, "VAULT_INPUT_INVALID"),
        ([DELTA], 2, "VAULT_INPUT_INVALID"),
        ({"delta": {"title": 3}}, 2, "INVALID_REQUEST"),
    ],
)
def test_refusals_write_nothing(git_repo: GitRepo, payload: Any, exit_code: int, code: str) -> None:
    path = git_repo.path.parent / "bad.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    code_, out, err = cli("vault", "add", str(path), "--json", "--now", NOW)
    assert code_ == exit_code and json.loads(out)["error"]["code"] == code  # --json error object
    assert err.startswith(f"error[{code}]")
    assert not layout(git_repo).vault_journal.exists()


def test_refusal_message_is_coded(git_repo: GitRepo) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "vault", "add", "-"],
        input=b'{"delta":{"title":"x"},"severity":"sk-secretvalue123"}',
        capture_output=True,
        cwd=git_repo.path,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("error[INVALID_SEVERITY]")
    assert b"sk-secretvalue123" not in proc.stderr + proc.stdout and b"Traceback" not in proc.stderr


def test_flush_due_for_high_risk(git_repo: GitRepo) -> None:
    _, out = add(git_repo, {"delta": DELTA, "severity": "critical"})
    assert (out["action"], out["reason"], out["flush_due"], out["journaled"]) == (
        "flush",
        "HIGH_RISK",
        True,
        True,
    )
    assert flush()["entries"][0]["severity"] == "CRITICAL"


def test_torn_last_line_is_fenced_off(git_repo: GitRepo) -> None:
    add(git_repo, {"delta": DELTA})
    path = layout(git_repo).vault_journal
    with open(path, "ab") as handle:
        handle.write(b'{"type":"delta","seq":2,"del')  # a writer died mid-line
    _, out = add(git_repo, {"delta": {**DELTA, "title": "Other"}})
    assert out["seq"] == 2
    listing = json.loads(cli("vault", "list", "--json").stdout)
    assert [e["seq"] for e in listing["entries"]] == [1, 2] and listing["unreadable_lines"] == 1


def test_stdin_input(git_repo: GitRepo) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "vault", "add", "-", "--json"],
        input=json.dumps({"delta": DELTA}).encode(),
        capture_output=True,
        cwd=git_repo.path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["seq"] == 1


# Each worker is a real process; it imports first, then waits for a shared start signal so the
# eight appends really contend for the journal lock (the CLI path is covered by other tests).
_WORKER = (
    """
import json, os, sys
from pathlib import Path
from toolkit.infra.store import Layout
from toolkit.infra.clock import now_utc
from toolkit.records.vault import add_delta
workdir, common, payload = sys.argv[1:4]
request = json.loads(Path(payload).read_text())
"""
    + AT_START_LINE
    + """
at_start_line()
print(json.dumps(add_delta(Layout(Path(workdir), Path(common)), request, now=now_utc())))
"""
)


def _race(
    repo: GitRepo, payloads: list[Any], line: StartLine | None = None, waiting: int = 0
) -> list[subprocess.CompletedProcess[bytes]]:
    """One adder process per payload, released together with ``waiting`` others already at ``line``."""
    lay = layout(repo)
    with line or StartLine() as start:
        procs = []
        for index, payload in enumerate(payloads):
            path = repo.path.parent / f"race-{index}.json"
            path.write_text(json.dumps(payload), encoding="utf-8")
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _WORKER, str(lay.workdir), str(lay.common_dir), str(path)],
                    cwd=repo.path,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    **start.popen_kwargs(_env()),
                )
            )
        start.release(len(payloads) + waiting)
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


_FLUSHER = (
    """
import json, os, sys
from pathlib import Path
from toolkit.infra.store import Layout
from toolkit.infra.clock import now_utc
from toolkit.records.vault import flush
workdir, common = sys.argv[1:3]
"""
    + AT_START_LINE
    + """
at_start_line()
print(json.dumps(flush(Layout(Path(workdir), Path(common)), now=now_utc(), deliver=lambda b: None)))
"""
)


def test_racing_flushes_deliver_every_entry(git_repo: GitRepo) -> None:
    lay = layout(git_repo)
    line = StartLine()  # four flushers and four adders leave it together
    flushers = [
        subprocess.Popen(
            [sys.executable, "-c", _FLUSHER, str(lay.workdir), str(lay.common_dir)],
            stdout=subprocess.PIPE,
            **line.popen_kwargs(_env()),
        )
        for _ in range(4)
    ]
    payloads = [{"delta": {"title": f"Item {i}", "content": f"Body {i}."}} for i in range(4)]
    adders = _race(git_repo, payloads, line, waiting=len(flushers))
    assert all(r.returncode == 0 for r in adders)
    taken = [e["seq"] for p in flushers for e in json.loads(p.communicate(timeout=120)[0])["entries"]]
    from toolkit.infra.clock import now_utc
    from toolkit.records.vault import flush as flush_now

    taken += [e["seq"] for e in flush_now(lay, now=now_utc(), deliver=lambda b: None)["entries"]]
    # at least once: every entry is in some batch (two flushes overlapping may both carry one),
    # and afterwards the journal counts every entry delivered
    assert set(taken) == {1, 2, 3, 4}
    assert flush_now(lay, now=now_utc(), deliver=lambda b: None)["entries"] == []


def test_eight_concurrent_adds_lose_nothing(git_repo: GitRepo) -> None:
    payloads = [
        {"delta": {"category": "pattern", "title": f"Note {i}", "content": f"Fact number {i}."}}
        for i in range(8)
    ]
    results = _race(git_repo, payloads)
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    seqs = sorted(json.loads(r.stdout)["seq"] for r in results)
    assert seqs == list(range(1, 9))  # unique sequence numbers, none doubled
    lines = layout(git_repo).vault_journal.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 9
    records = [json.loads(line) for line in lines[:-1]]  # every line is whole, valid JSON
    assert sorted(r["delta"]["title"] for r in records) == sorted(f"Note {i}" for i in range(8))


def test_eight_concurrent_duplicates_keep_one(git_repo: GitRepo) -> None:
    results = _race(git_repo, [{"delta": DELTA}] * 8)
    outcomes = [json.loads(r.stdout) for r in results]
    assert sorted(o["action"] for o in outcomes) == ["batch"] + ["skip"] * 7
    assert len(layout(git_repo).vault_journal.read_bytes().splitlines()) == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=6),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "delta",
                        "title",
                        "content",
                        "severity",
                        "semantic_key",
                        "KnowledgeId",
                        "previous_deltas",
                        "explicit_save",
                        "x",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=10,
    )
)
def test_fuzz_add_never_crashes(tmp_path_factory: pytest.TempPathFactory, payload: Any) -> None:
    from toolkit.core.errors import ToolkitError
    from toolkit.core.timefmt import parse_rfc3339
    from toolkit.infra.store import Layout
    from toolkit.records.vault import add_delta, read_journal

    root = tmp_path_factory.mktemp("fuzz")
    lay = Layout(root, root / ".git")
    try:
        outcome = add_delta(lay, payload, now=parse_rfc3339(NOW))  # type: ignore[arg-type]
    except ToolkitError as exc:
        assert exc.exit_code in (1, 2)
        assert not lay.vault_journal.exists()
        return
    state = read_journal(lay)
    assert len(state.entries) == (1 if outcome["journaled"] else 0) and state.problems == 0


def test_journal_lives_in_local_state(git_repo: GitRepo) -> None:
    add(git_repo, {"delta": DELTA})
    path = layout(git_repo).vault_journal
    assert path.is_relative_to(Path(git_repo.raw.path).resolve()) or ".git" in path.parts


# --- at-least-once delivery (issue 15): an entry counts as flushed only after its batch went out ---


def _flush_with_stdout(repo: GitRepo, stdout: Any, *extra: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "toolkit", "vault", "flush", "--now", NOW, *extra],
        cwd=repo.path,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=_env(),
        timeout=120,
        check=False,
    )


def _closed_stdout_flush(repo: GitRepo) -> subprocess.CompletedProcess[bytes]:
    # `workgroup vault flush >&-`: the process starts with fd 1 closed
    return subprocess.run(
        ["/bin/sh", "-c", f'exec "{sys.executable}" -m toolkit vault flush --now {NOW} >&-'],
        cwd=repo.path,
        capture_output=False,
        stderr=subprocess.PIPE,
        env=_env(),
        timeout=120,
        check=False,
    )


def test_flush_with_closed_stdout_records_nothing_and_offers_again(git_repo: GitRepo) -> None:
    assert add(git_repo, {"delta": DELTA})[0] == 0
    before = journal_bytes(git_repo)
    proc = _closed_stdout_flush(git_repo)
    assert proc.returncode == 3, proc.stderr
    assert b"OUTPUT_UNWRITABLE" in proc.stderr and b"Traceback" not in proc.stderr
    assert journal_bytes(git_repo) == before  # no flush record: the entry was not delivered
    batch = flush()
    assert [e["seq"] for e in batch["entries"]] == [1]  # offered again


def test_flush_into_a_closed_pipe_records_nothing(git_repo: GitRepo) -> None:
    import os

    assert add(git_repo, {"delta": DELTA})[0] == 0
    before = journal_bytes(git_repo)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written: EPIPE on write
    try:
        proc = _flush_with_stdout(git_repo, write_end)
    finally:
        os.close(write_end)
    assert proc.returncode == 3, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert journal_bytes(git_repo) == before
    assert [e["seq"] for e in flush()["entries"]] == [1]


def test_flush_to_a_full_device_records_nothing(git_repo: GitRepo) -> None:
    from pathlib import Path as _P

    if not _P("/dev/full").exists():
        pytest.skip("no /dev/full here")
    assert add(git_repo, {"delta": DELTA})[0] == 0
    before = journal_bytes(git_repo)
    with open("/dev/full", "wb") as full:
        proc = _flush_with_stdout(git_repo, full)
    assert proc.returncode == 3 and b"Traceback" not in proc.stderr
    assert journal_bytes(git_repo) == before


def test_held_batch_is_offered_until_acknowledged(git_repo: GitRepo) -> None:
    assert add(git_repo, {"delta": DELTA})[0] == 0
    offered = cli("vault", "flush", "--hold", "--now", NOW)
    assert offered.exit_code == 0
    held = json.loads(offered.stdout)
    assert held["ack_required"] is True and [e["seq"] for e in held["entries"]] == [1]
    listing = json.loads(cli("vault", "list", "--json").stdout)
    assert listing["entries"][0]["state"] == "offered" and listing["pending"] == 1
    # a second entry arrives; the next flush offers the un-acknowledged entry again with it
    assert add(git_repo, {"delta": {"title": "Second", "content": "Another fact."}}, "e.json")[0] == 0
    offered = cli("vault", "flush", "--hold", "--now", "2026-03-01T10:05:00Z")
    assert offered.exit_code == 0
    again = json.loads(offered.stdout)
    assert [e["seq"] for e in again["entries"]] == [1, 2]
    # acknowledging the first batch delivers entry 1 only; entry 2 stays held in the second
    acked = cli("vault", "flush", "--ack", held["batch_id"], "--now", NOW)
    assert acked.exit_code == 0
    assert json.loads(acked.stdout)["acknowledged"] == [1]
    acked = cli("vault", "flush", "--ack", again["batch_id"], "--now", NOW)
    assert acked.exit_code == 0
    assert json.loads(acked.stdout)["acknowledged"] == [2]
    before = journal_bytes(git_repo)
    acked = cli("vault", "flush", "--ack", again["batch_id"], "--now", NOW)  # twice: a no-op
    assert acked.exit_code == 0
    assert json.loads(acked.stdout)["already"] is True
    assert journal_bytes(git_repo) == before
    assert flush()["entries"] == []


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--ack", "batch-0000000000000000"], 1),  # unknown batch: refused
        (["--ack", "../x"], 2),  # not a safe id
        (["--ack", "batch-1", "--hold"], 2),  # contradictory options
    ],
)
def test_bad_ack_is_coded_and_writes_nothing(git_repo: GitRepo, args: list[str], code: int) -> None:
    assert add(git_repo, {"delta": DELTA})[0] == 0
    before = journal_bytes(git_repo)
    assert cli("vault", "flush", *args, "--now", NOW).exit_code == code
    assert journal_bytes(git_repo) == before


# --- issue 24 item 8: a slow reader of the batch never holds the journal lock ---


def _pipe_fill(fd: int) -> int:
    import array
    import fcntl
    import termios

    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int(buf[0])


def test_slow_batch_reader_does_not_block_adds(git_repo: GitRepo) -> None:
    """`vault flush | (sleep N; cat)` while `vault add` processes run: they finish at once, and the
    next flush offers exactly the entries the slow batch did not carry."""
    import os
    import time

    from support.sync import wait_until

    big = "x" * 50_000  # two entries: the batch is larger than a pipe buffer, so its write blocks
    for index in range(2):
        payload = {"delta": {"title": f"Big {index}", "content": f"{index} {big}"}}
        assert add(git_repo, payload, f"big-{index}.json")[0] == 0
    read_end, write_end = os.pipe()
    flusher = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "vault", "flush", "--now", NOW],
        cwd=git_repo.path,
        stdout=write_end,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    os.close(write_end)
    try:
        # the pipe is full: the flush has copied its batch and is blocked writing it out
        wait_until(lambda: _pipe_fill(read_end) >= 65536 or flusher.poll() is not None, timeout=60)
        assert flusher.poll() is None, "the flush finished without blocking: batch too small for the test"
        started = time.monotonic()
        adders = []
        for index in range(3):
            path = git_repo.path.parent / f"late-{index}.json"
            path.write_text(json.dumps({"delta": {"title": f"Late {index}", "content": f"Fact {index}."}}))
            adders.append(
                subprocess.Popen(
                    [sys.executable, "-m", "toolkit", "vault", "add", str(path), "--json", "--now", NOW],
                    cwd=git_repo.path,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=_env(),
                )
            )
        results = [(p.wait(timeout=60), *p.communicate()) for p in adders]
        elapsed = time.monotonic() - started
        assert flusher.poll() is None  # the batch is still unread while the adds completed
    finally:
        chunks = []
        with os.fdopen(read_end, "rb") as reader:  # now the slow reader drains the batch
            chunks.append(reader.read())
    _, flush_err = flusher.communicate(timeout=60)
    assert all(code == 0 for code, _, _ in results), [err for _, _, err in results]
    assert elapsed < 8.0, elapsed  # the lock times out after 10 s; each add needs well under that
    assert sorted(json.loads(out)["seq"] for _, out, _ in results) == [3, 4, 5]
    assert flusher.returncode == 0, flush_err
    delivered = json.loads(b"".join(chunks))
    assert [e["seq"] for e in delivered["entries"]] == [1, 2]
    # entries added while the batch was being written stay undelivered: offered by the next flush
    assert [e["seq"] for e in flush()["entries"]] == [3, 4, 5]
    assert flush()["entries"] == []


def test_flush_during_a_flush_keeps_acknowledgements_right(git_repo: GitRepo) -> None:
    """Two held flushes overlapping (the second runs while the first is writing): both offer entry
    1 and 2, the second also 3; acknowledging each delivers what it carried and loses nothing."""
    from toolkit.infra.clock import moment_or_now as parse_utc
    from toolkit.records.vault import VaultBatch, ack, add_delta, list_entries
    from toolkit.records.vault import flush as flush_now

    lay = layout(git_repo)
    now = parse_utc(NOW)
    add_delta(lay, {"delta": {"title": "One", "content": "First fact."}}, now=now)
    add_delta(lay, {"delta": {"title": "Two", "content": "Second fact."}}, now=now)
    inner: list[VaultBatch] = []

    def deliver(batch: VaultBatch) -> None:
        # while the outer batch is being written: an add and a whole second flush complete
        add_delta(lay, {"delta": {"title": "Three", "content": "Third fact."}}, now=now)
        inner.append(flush_now(lay, now=parse_utc("2026-03-01T10:01:00Z"), deliver=lambda b: None, hold=True))

    outer = flush_now(lay, now=now, deliver=deliver, hold=True)
    assert [e["seq"] for e in outer["entries"]] == [1, 2]
    assert [e["seq"] for e in inner[0]["entries"]] == [1, 2, 3]
    outer_id, inner_id = outer["batch_id"], inner[0]["batch_id"]
    assert outer_id is not None and inner_id is not None
    assert list_entries(lay)["pending"] == 3  # held, none delivered yet
    assert ack(lay, outer_id, now=now)["acknowledged"] == [1, 2]
    assert list_entries(lay)["pending"] == 1
    assert ack(lay, inner_id, now=now)["acknowledged"] == [3]
    assert ack(lay, outer_id, now=now)["already"] is True
    assert flush_now(lay, now=now, deliver=lambda b: None)["entries"] == []
    rows = list_entries(lay)["entries"]
    assert [r["batch_id"] for r in rows] == [outer["batch_id"]] * 2 + [inner[0]["batch_id"]]


def test_odd_journal_rows_are_parsed_once_and_never_crash(git_repo: GitRepo) -> None:
    """Rows written by hand or by another version: a delta row whose delta is not an object, an
    amend whose KnowledgeId is not a string, a flush naming non-integer seqs. Each is parsed into
    its record once; list and flush hand on the rows as written."""
    from toolkit.records.vault import JournalEntry, current_records, read_journal

    path = layout(git_repo).vault_journal
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {"type": "delta", "seq": 1, "at": NOW, "action": "batch", "delta": ["not", "an", "object"]},
        {"type": "delta", "seq": 2, "at": NOW, "action": "amend", "KnowledgeId": 7, "delta": DELTA},
        {"type": "delta", "seq": 3, "at": NOW, "action": "update", "KnowledgeId": "k-1", "delta": DELTA},
        {"type": "flush", "batch_id": "batch-x", "at": NOW, "seqs": [1, "2", True, 9.0]},
        {"type": "delta", "seq": "4", "delta": DELTA},  # a string seq: a foreign row
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    state = read_journal(layout(git_repo))
    assert [type(e) for e in state.entries] == [JournalEntry] * 3
    assert [(e.seq, e.delta is None, e.target) for e in state.entries] == [
        (1, True, None),
        (2, False, None),
        (3, False, "k-1"),
    ]
    assert state.flushed == {1: "batch-x"} and state.problems == 1
    assert current_records(state)[-1]["KnowledgeId"] == "k-1"
    code, out, _ = cli("vault", "list", "--json")
    assert code == 0
    listed = json.loads(out)["entries"]
    assert [row["state"] for row in listed] == ["flushed", "pending", "pending"]
    assert listed[0]["delta"] == ["not", "an", "object"]  # handed on as written


@pytest.mark.parametrize(
    "row",
    [
        {"type": "delta", "seq": 2, "at": NOW, "action": "batch", "reason": "R", "delta": "a string"},
        {"type": "delta", "seq": 2, "at": NOW, "action": "batch", "reason": "R", "delta": True},
        {"type": "delta", "seq": 2, "at": NOW, "action": "batch", "reason": "R", "delta": [1]},
        {"type": "delta", "seq": 2, "delta": {"title": "no action nor reason"}},
        {"type": "delta", "seq": 2, "action": ["a"], "reason": {"x": 1}, "delta": {"title": 7}},
    ],
)
def test_plain_list_shows_a_hand_edited_row_as_written(git_repo: GitRepo, row: dict[str, Any]) -> None:
    """`vault list` (the table, not --json) shows a delta row whose delta is not an object, or
    whose action or reason is missing or not a string, like any entry (no title, blank fields):
    exit 0, no traceback, the journal unchanged."""
    assert add(git_repo, {"delta": DELTA})[0] == 0
    path = layout(git_repo).vault_journal
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
    before = journal_bytes(git_repo)
    code, out, err = cli("vault", "list")
    assert code == 0, err
    assert "Traceback" not in out + err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["1", "2"]
    assert lines[0].rstrip().endswith("Retry budget")
    assert "2 entries, 2 pending" in err
    assert journal_bytes(git_repo) == before


def test_add_flush_and_ack_answer_the_declared_records(git_repo: GitRepo) -> None:
    """``add_delta`` answers a VaultOutcome and appends a JournalDeltaRow, ``flush`` a VaultBatch and
    ``ack`` an AckOutcome: the keys are the declared ones, in the declared order."""
    from toolkit.infra.clock import moment_or_now as parse_utc
    from toolkit.records.vault import (
        AckOutcome,
        JournalDeltaRow,
        VaultBatch,
        VaultListing,
        VaultOutcome,
        ack,
        add_delta,
        list_entries,
    )
    from toolkit.records.vault import flush as flush_now

    lay = layout(git_repo)
    now = parse_utc(NOW)
    kept = add_delta(lay, {"delta": {"title": "One", "content": "First fact."}}, now=now)
    assert list(kept) == [k for k in declared_keys(VaultOutcome) if k != "KnowledgeId"]
    assert kept["seq"] == 1 and kept["journaled"] is True
    skipped = add_delta(lay, {"delta": {"title": "One", "content": "First fact."}}, now=now)
    assert list(skipped) == list(kept) and skipped["seq"] is None and skipped["journaled"] is False
    add_delta(
        lay, {"delta": {"title": "Two", "content": "Old.", "semantic_key": "k", "KnowledgeId": "x"}}, now=now
    )
    amended = add_delta(lay, {"delta": {"title": "Two", "content": "New.", "semantic_key": "k"}}, now=now)
    assert list(amended) == declared_keys(VaultOutcome) and amended["KnowledgeId"] == "x"
    rows = [json.loads(line) for line in lay.vault_journal.read_text().splitlines()]
    assert list(rows[0]) == [k for k in declared_keys(JournalDeltaRow) if k != "KnowledgeId"]
    assert list(rows[2]) == declared_keys(JournalDeltaRow)
    batch = flush_now(lay, now=now, deliver=lambda b: None, hold=True)
    assert list(batch) == declared_keys(VaultBatch)
    assert batch["batch_id"] is not None
    assert list(ack(lay, batch["batch_id"], now=now)) == declared_keys(AckOutcome)
    assert list(list_entries(lay)) == declared_keys(VaultListing)
