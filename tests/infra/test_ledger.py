"""The one replay-ledger reader: what the runtime's promotion op and ``workgroup promote`` both read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolkit.infra.boundedio import FileRefused
from toolkit.infra.ledger import read_replay_state
from toolkit.runtime.promotion import consumed_ids

RUN_A = "measurement-" + "a" * 16


def test_rows_and_names_torn_and_foreign_lines_skipped(tmp_path: Path) -> None:
    ledger = tmp_path / "replay-ledger.jsonl"
    ledger.write_bytes(
        json.dumps({"measurement_run_id": RUN_A}).encode() + b"\nnot json\n" + b"[" * 5000 + b'\n{"torn": '
    )
    promotions = tmp_path / "promotions"
    promotions.mkdir()
    (promotions / "x.json").write_text("{}")
    rows, names = read_replay_state(ledger, promotions)
    assert rows == [{"measurement_run_id": RUN_A}]
    assert names == ["x.json"]


def test_missing_ledger_and_folder_are_empty(tmp_path: Path) -> None:
    assert read_replay_state(tmp_path / "none.jsonl", tmp_path / "none") == ([], [])


@pytest.mark.parametrize("kind", ["fifo", "directory", "symlink"])
def test_an_unreadable_ledger_is_refused_never_empty(tmp_path: Path, kind: str) -> None:
    ledger = tmp_path / "replay-ledger.jsonl"
    if kind == "fifo":
        os.mkfifo(ledger)
    elif kind == "directory":
        ledger.mkdir()
    else:
        (tmp_path / "elsewhere.jsonl").write_text("")
        ledger.symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(FileRefused):
        read_replay_state(ledger, tmp_path / "promotions")


def test_both_callers_read_the_same_consumed_ids(tmp_path: Path) -> None:
    ledger = tmp_path / "replay-ledger.jsonl"
    ledger.write_text(json.dumps({"measurement_run_id": RUN_A}) + "\n" + json.dumps({"other": 1}) + "\n")
    promotions = tmp_path / "promotions"
    promotions.mkdir()
    run_b = "measurement-" + "b" * 16
    (promotions / f"{run_b}.json").write_text("{}")
    (promotions / "notes.txt").write_text("")
    assert consumed_ids(*read_replay_state(str(ledger), str(promotions))) == sorted([RUN_A, run_b])
