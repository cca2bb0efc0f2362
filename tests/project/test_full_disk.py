"""A real full device: the logs live on a 64 KiB tmpfs that the test fills up.

``os.write`` on a full tmpfs writes what fits in the file's last page and refuses the rest, so an
append that crosses the page boundary is a short write. The command must fail with exit 3 and a
coded error (cm-log-event: its documented exit 1 for a failed authoritative write) and leave the
log byte for byte as it was; once space is back, the next record lands whole.

Mounting needs root; elsewhere these tests skip with the reason (tests/infra/test_appendlog.py
covers the same paths with a short-writing ``os.write`` on any machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_telemetry import BASE as TELEMETRY_EVENT

NOW = "2026-03-01T10:00:00Z"


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "fs"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True, check=False)


def run(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def fill(mount: Path) -> None:
    """Take every free block of the file system."""
    with open(mount / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass
    try:  # and the last partial block, if any
        with open(mount / "filler2", "wb", buffering=0) as handle:
            while handle.write(b"\0"):
                pass
    except OSError:
        pass


def prime(log: Path, add: Callable[[int], None]) -> None:
    """Append records until the next one cannot fit in the log's last page (a short write)."""
    start = log.stat().st_size if log.exists() else 0
    number = 1
    add(number)
    record = log.stat().st_size - start  # every record of a test has the same length
    page = os.statvfs(log.parent).f_bsize
    while True:
        slack = page - log.stat().st_size % page
        if 0 < slack < record:
            return
        number += 1
        add(number)


def assert_refused_and_untouched(
    log: Path, mount: Path, attempt: Callable[[], subprocess.CompletedProcess[str]], code: int, marker: str
) -> None:
    fill(mount)
    before = log.read_bytes()
    done = attempt()
    assert done.returncode == code, (done.returncode, done.stderr)
    assert marker in done.stderr and "Traceback" not in done.stderr
    assert log.read_bytes() == before  # no torn line: only the whole lines of before
    (mount / "filler").unlink()
    (mount / "filler2").unlink(missing_ok=True)
    again = attempt()
    assert again.returncode == 0, again.stderr
    rows = log.read_bytes().split(b"\n")
    assert rows[-1] == b"" and all(json.loads(row) for row in rows[:-1])
    assert log.stat().st_size > len(before)


def small_repo(mount: Path) -> Path:
    repo = mount / "repo"
    subprocess.run(["git", "init", "-q", "--template=", str(repo)], check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "i",
        ],
        cwd=repo,
        check=True,
    )
    return repo


def test_vault_add_on_a_full_device(tiny_fs: Path, tmp_path: Path) -> None:
    repo = small_repo(tiny_fs)

    def add(number: int, title: str | None = None) -> subprocess.CompletedProcess[str]:
        delta = {
            "category": "pattern",
            "title": title or f"Entry {number:04d}",
            "content": "Retry with jitter.",
        }
        source = tmp_path / "delta.json"
        source.write_text(json.dumps({"delta": delta}), encoding="utf-8")
        return run("-m", "toolkit", "vault", "add", str(source), "--now", NOW, cwd=repo)

    log = repo / ".git" / "workgroup" / "vault-journal.jsonl"

    def add_ok(number: int) -> None:
        assert add(number).returncode == 0

    prime(log, add_ok)
    assert_refused_and_untouched(log, tiny_fs, lambda: add(9999, "Entry last"), 3, "error[DISK_FULL]")
    listed = run("-m", "toolkit", "vault", "list", cwd=repo)
    assert "unreadable" not in listed.stderr + listed.stdout


def test_telemetry_record_on_a_full_device(tiny_fs: Path, tmp_path: Path) -> None:
    repo = small_repo(tiny_fs)
    source = tmp_path / "event.json"

    def record(number: int = 0) -> subprocess.CompletedProcess[str]:
        event: dict[str, Any] = {
            **TELEMETRY_EVENT,
            "observed_at": f"2026-03-01T10:{number // 60 % 60:02d}:{number % 60:02d}Z",
        }
        source.write_text(json.dumps(event), encoding="utf-8")
        return run("-m", "toolkit", "telemetry", "record", str(source), cwd=repo)

    log = repo / ".git" / "workgroup" / "telemetry.jsonl"

    def record_ok(number: int) -> None:
        done = record(number)
        assert done.returncode == 0, done.stderr

    prime(log, record_ok)
    assert_refused_and_untouched(log, tiny_fs, record, 3, "error[DISK_FULL]")


def _global_note(home: Path, run_id: str, cwd: Path) -> Callable[[int], subprocess.CompletedProcess[str]]:
    def note(number: int) -> subprocess.CompletedProcess[str]:
        return run(
            "-m",
            "toolkit.cm.events",
            "--workflow",
            "cm-prd",
            "--event",
            "note",
            "--runtime",
            "codex",
            "--run-id",
            run_id,
            "--detail",
            f"note {number:04d}",
            cwd=cwd,
            env={"CM_WORKFLOW_LOG_HOME": str(home)},
        )

    return note


def test_cm_log_event_global_mode_on_a_full_device(tiny_fs: Path, tmp_path: Path) -> None:
    """The log's own append on a full device: its index cannot be kept (a directory holds its place,
    so the plain readers answer) and takes no space of its own that a failed update could free."""
    home = tiny_fs / "logs"
    run_id = "run-20260301-fulldisk"
    note = _global_note(home, run_id, tmp_path)

    def note_ok(number: int) -> None:
        done = note(number)
        assert done.returncode == 0, done.stderr

    note_ok(0)  # the run's first event also registers it in index.jsonl
    (log,) = (home / "runs").glob(f"*/{run_id}.jsonl")
    index = log.parent / f".{log.name}.idx"
    index.unlink(missing_ok=True)
    index.mkdir()
    prime(log, note_ok)
    # exit 1 is cm-log-event's documented code for an authoritative write that failed
    assert_refused_and_untouched(
        log, tiny_fs, lambda: note(9999), 1, "global-only log write failed (DISK_FULL)"
    )


def test_cm_log_event_with_its_index_on_a_full_device_acknowledges_only_whole_rows(
    tiny_fs: Path, tmp_path: Path
) -> None:
    """With the run's index beside the log, a full device may cost the index (a cache, rebuilt
    from the log), never a row: the event is refused with the log untouched, or written whole
    and acknowledged."""
    home = tiny_fs / "logs"
    run_id = "run-20260301-fullindex"
    note = _global_note(home, run_id, tmp_path)
    assert note(0).returncode == 0
    (log,) = (home / "runs").glob(f"*/{run_id}.jsonl")
    prime(log, lambda number: None if note(number).returncode == 0 else pytest.fail("priming failed"))
    fill(tiny_fs)
    before = log.read_bytes()
    done = note(9999)
    after = log.read_bytes()
    assert "Traceback" not in done.stderr
    if done.returncode == 0:
        assert after.startswith(before) and after[len(before) :].count(b"\n") == 1
        assert json.loads(after[len(before) :])["detail"] == "note 9999"
    else:
        assert done.returncode == 1 and "DISK_FULL" in done.stderr and after == before
    (tiny_fs / "filler").unlink()
    (tiny_fs / "filler2").unlink(missing_ok=True)
    assert note(10000).returncode == 0
    rows = log.read_bytes().split(b"\n")
    assert rows[-1] == b"" and all(json.loads(row) for row in rows[:-1])


def test_atomic_write_on_a_full_device_keeps_the_old_file(tiny_fs: Path) -> None:
    from toolkit.infra.appendlog import WriteFailed
    from toolkit.infra.store import atomic_write

    folder = tiny_fs / "state"
    folder.mkdir()
    target = folder / "state.json"
    target.write_text('{"old": true}\n')
    fill(tiny_fs)
    with pytest.raises(WriteFailed) as info:
        atomic_write(target, json.dumps({"new": "x" * 20_000}))
    assert info.value.code == "DISK_FULL" and info.value.exit_code == 3
    assert target.read_text() == '{"old": true}\n'
    assert [p.name for p in folder.iterdir()] == ["state.json"]  # no temp file left behind
