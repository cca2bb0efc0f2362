"""Atomic writes, exclusive claims under a 16-process race, torn JSONL lines, lock timeouts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.sync import AT_START_LINE, StartLine

from toolkit.core.errors import EnvironmentFailure, InvalidInput
from toolkit.infra.store import (
    Layout,
    append_jsonl,
    atomic_write,
    create_exclusive,
    file_lock,
    read_jsonl,
    safe_segment,
    write_json_atomic,
)

ROOT = Path(__file__).resolve().parents[2]


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b.json"
    atomic_write(target, "one")
    atomic_write(target, b"two")
    write_json_atomic(tmp_path / "a" / "c.json", {"k": "é"})
    assert target.read_text() == "two" and json.loads((tmp_path / "a" / "c.json").read_text()) == {"k": "é"}
    assert leftovers(tmp_path / "a") == []


def test_failed_atomic_write_keeps_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.txt"
    atomic_write(target, "old")

    def broken(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        atomic_write(target, "new")
    assert target.read_text() == "old" and leftovers(tmp_path) == []


def test_concurrent_reader_sees_old_or_new_never_part(tmp_path: Path) -> None:
    target = tmp_path / "big.txt"
    versions = ["A" * 200_000, "B" * 300_000]
    atomic_write(target, versions[0])
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from toolkit.infra.store import atomic_write
        versions = ["A" * 200_000, "B" * 300_000]
        for i in range(60):
            atomic_write(Path({str(target)!r}), versions[i % 2])
    """),
        ]
    )
    seen = set()
    while writer.poll() is None:
        seen.add(target.read_text())
    assert writer.wait() == 0
    assert seen <= set(versions) and leftovers(tmp_path) == []


RACE = (
    """
import os, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from toolkit.infra.store import create_exclusive
"""
    + AT_START_LINE
    + """
at_start_line()  # imported: wait for the others
print(create_exclusive(Path({claim!r}), "claimed by %s\\n" % sys.argv[1]))
"""
)


def test_create_exclusive_sixteen_racing_processes_one_winner(tmp_path: Path) -> None:
    claim = tmp_path / "claims" / "call-1.json"
    code = RACE.format(root=str(ROOT), claim=str(claim))
    # a start-line barrier: under load the racers would otherwise import one after another and
    # nothing would race
    with StartLine() as line:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, str(i)], stdout=subprocess.PIPE, text=True, **line.popen_kwargs()
            )
            for i in range(16)
        ]
        line.release(16)
    results = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert results.count("True") == 1 and results.count("False") == 15
    assert claim.read_text().startswith("claimed by ") and leftovers(claim.parent) == []


def test_create_exclusive_second_call_false(tmp_path: Path) -> None:
    assert create_exclusive(tmp_path / "x", "1") is True
    assert create_exclusive(tmp_path / "x", "2") is False
    assert (tmp_path / "x").read_text() == "1" and leftovers(tmp_path) == []


def test_append_jsonl_after_torn_line(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    append_jsonl(log, {"n": 1})
    with open(log, "ab") as handle:
        handle.write(b'{"n": 2, "torn')  # a writer died mid-line
    rows, problems = read_jsonl(log)
    assert [r.value for r in rows] == [{"n": 1}] and [(p.line, p.reason) for p in problems] == [
        (2, "torn last line")
    ]
    append_jsonl(log, {"n": 3})
    rows, problems = read_jsonl(log)
    assert [r.value for r in rows] == [{"n": 1}, {"n": 3}]
    assert [(p.line, p.reason) for p in problems] == [(2, "invalid JSON line")]
    assert log.read_bytes().endswith(b'\n{"n":3}\n')


def test_read_jsonl_missing_and_garbage(tmp_path: Path) -> None:
    assert read_jsonl(tmp_path / "none.jsonl") == ([], [])
    (tmp_path / "g.jsonl").write_bytes(b'\xff\n{"ok":1}\n\n')
    rows, problems = read_jsonl(tmp_path / "g.jsonl")
    assert [r.value for r in rows] == [{"ok": 1}] and problems[0].reason == "invalid JSON line"


HOLDER = """
import sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from toolkit.infra.store import file_lock
with file_lock(Path({lock!r})):
    print("held", flush=True)
    sys.stdin.read()  # hold the lock until the test is done with it (it kills this process)
"""


def test_file_lock_timeout_is_exit_three(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "x.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER.format(root=str(ROOT), lock=str(lock))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(EnvironmentFailure) as info, file_lock(lock, timeout=0.3):
            pass
        assert info.value.code == "LOCK_TIMEOUT" and int(info.value.exit_code) == 3
        assert time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()
    with file_lock(lock, timeout=5):  # released when the holder died
        pass


@pytest.mark.parametrize("value", ["a", "A.b_c-9", "x" * 128])
def test_safe_segment_accepts(value: str) -> None:
    assert safe_segment(value) == value


@pytest.mark.parametrize("value", [".", "..", "", "a/b", "a\\b", "x" * 129, "é", "a b", None, 3, "a\n"])
def test_safe_segment_refuses(value: object) -> None:
    with pytest.raises(InvalidInput) as info:
        safe_segment(value)
    assert info.value.code == "UNSAFE_SEGMENT" and int(info.value.exit_code) == 2


def test_layout_paths(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "wt", tmp_path / "git")
    assert layout.config == tmp_path / "wt" / ".workgroup" / "config.yml"
    assert (
        layout.lineage_path("wg", "l1")
        == tmp_path / "wt" / ".workgroup" / "workgroups" / "wg" / "lineages" / "l1.json"
    )
    assert layout.owners_registry.parent == tmp_path / "git" / "workgroup"
    with pytest.raises(InvalidInput):
        layout.capsule_path("../x", "t")
