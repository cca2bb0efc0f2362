"""The one append primitive (toolkit.infra.appendlog): a record lands whole or not at all.

The real full device is tests/project/test_full_disk.py (a 64 KiB tmpfs); here a write that takes
half of what it is given and then refuses the rest stands in for it, so every failure path runs
on any machine: the file is cut back, the error is coded, the record never appears.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from toolkit.cm import run_logs
from toolkit.core.errors import EnvironmentFailure, exit_code_for
from toolkit.infra import appendlog
from toolkit.infra.appendlog import WriteFailed, append_whole
from toolkit.infra.store import append_jsonl, atomic_write

SECRET = "canary-value-7f3a"


def half_then(error: int) -> Callable[[int, bytes], int]:
    """An ``os.write`` that writes half of the first call's bytes, then raises ``error``."""
    real = os.write
    calls = {"n": 0}

    def write(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, bytes(data)[: max(1, len(data) // 2)])
        raise OSError(error, os.strerror(error))

    return write


def test_short_write_then_enospc_is_cut_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "journal.jsonl"
    append_jsonl(log, {"seq": 1})
    before = log.read_bytes()
    monkeypatch.setattr(appendlog.os, "write", half_then(errno.ENOSPC))
    with pytest.raises(WriteFailed) as info:
        append_jsonl(log, {"seq": 2, "note": SECRET})
    assert log.read_bytes() == before  # the half that reached the file was taken back
    err = info.value
    assert err.code == "DISK_FULL" and exit_code_for(err) == 3
    assert isinstance(err, EnvironmentFailure) and isinstance(err, OSError)
    assert "journal.jsonl" in err.message and SECRET not in err.diagnostics()
    monkeypatch.undo()
    append_jsonl(log, {"seq": 3})  # the log stays usable: only whole lines
    assert [json.loads(x)["seq"] for x in log.read_text().splitlines()] == [1, 3]


@pytest.mark.parametrize("error", [errno.EIO, errno.EDQUOT])
def test_other_errors_are_coded_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"a":1}\n')
    monkeypatch.setattr(appendlog.os, "write", half_then(error))
    with pytest.raises(WriteFailed) as info:
        run_logs.append_line(log, {"b": 2}, private=True)
    assert info.value.code == ("DISK_FULL" if error == errno.EDQUOT else "WRITE_INCOMPLETE")
    assert log.read_bytes() == b'{"a":1}\n'


def test_no_progress_is_not_a_success(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"a":1}\n')
    monkeypatch.setattr(appendlog.os, "write", lambda fd, data: 0)
    fd = os.open(log, os.O_RDWR | os.O_APPEND)
    try:
        with pytest.raises(WriteFailed) as info:
            append_whole(fd, b'{"b":2}\n', "log.jsonl")
    finally:
        os.close(fd)
    assert info.value.code == "WRITE_INCOMPLETE" and log.read_bytes() == b'{"a":1}\n'


def test_failed_fsync_is_cut_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"a":1}\n')
    real = os.fsync
    calls = {"n": 0}

    def fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(errno.EIO, "I/O error")
        real(fd)

    monkeypatch.setattr(appendlog.os, "fsync", fsync)
    with pytest.raises(WriteFailed):
        append_jsonl(log, {"b": 2})
    assert log.read_bytes() == b'{"a":1}\n'


def test_torn_line_fence_is_taken_back_with_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"a":1}\n{"to')  # a crash mid-append left a torn line
    monkeypatch.setattr(appendlog.os, "write", half_then(errno.ENOSPC))
    with pytest.raises(WriteFailed):
        append_jsonl(log, {"b": 2})
    assert log.read_bytes() == b'{"a":1}\n{"to'
    monkeypatch.undo()
    append_jsonl(log, {"b": 2})
    assert log.read_bytes() == b'{"a":1}\n{"to\n{"b":2}\n'


def test_atomic_write_on_a_full_device_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "state.json"
    target.write_text("old\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)  # the temp file's data cannot reach the device
    with pytest.raises(WriteFailed) as info:
        atomic_write(target, "new\n" * 1000)
    monkeypatch.undo()
    assert info.value.code == "DISK_FULL" and exit_code_for(info.value) == 3
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_the_otlp_spool_takes_a_failed_append_back_and_never_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit.infra import livespool as live

    otel_dir = tmp_path / "otel"
    otel_dir.mkdir()
    spool = otel_dir / live.SPOOL
    spool.write_bytes(b'{"kind":"decision"}\n')
    monkeypatch.setattr(appendlog.os, "write", half_then(errno.ENOSPC))
    live.emit(str(otel_dir), {"kind": "decision", "note": SECRET})  # telemetry never fails a decision
    monkeypatch.undo()
    assert spool.read_bytes() == b'{"kind":"decision"}\n'
