"""The local telemetry log rotates by size and every reader takes every segment (issue 24 item 8).

``workgroup telemetry record`` renames a full active log to the next numbered segment under the
telemetry lock; ``telemetry export`` streams every segment in order, line by line, so a log of
any total size exports, and the ids equal those of the same records written to one file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from support.harness import ROOT, GitRepo, cli

from toolkit.infra.git import discover
from toolkit.infra.telemetrylog import SEGMENT_ENV, all_paths, append_held, segment_paths
from toolkit.otel.export import Collected, stream_spans

EVENT: dict[str, Any] = {
    "event": "worker_usage",
    "observed_at": "2026-07-30T12:00:00Z",
    "task_corpus_id": "anon-0123456789abcdef",
    "provider": "claude",
    "runtime": "cli",
    "model": "sonnet",
    "profile": "balanced",
    "mode": "fresh-capsule",
    "reason_codes": ["INDEPENDENT_CAPSULE"],
    "logical": {"estimated_context_occupancy": 0.4, "prompt_bytes": 2048},
    "billed": {
        "uncached_input_tokens": 1200,
        "cache_read_input_tokens": 800,
        "cache_creation_input_tokens": 100,
        "output_tokens": 300,
        "accounting_source": "provider-reported",
    },
    "outcome": {"verify_passed": 3, "verify_total": 3, "elapsed_ms": 4000},
}


def collect(log: Path, **options: Any) -> Collected:
    """Every span of an export held in one list (the export itself streams them)."""
    out = Collected()
    out.spans = list(stream_spans(out, log, **options))
    return out


def _event(index: int) -> dict[str, Any]:
    # every third event repeats an earlier one: equal records get their ids by occurrence number
    minute = index if index % 3 else 0
    return {**EVENT, "observed_at": f"2026-07-30T12:{minute:02d}:00Z"}


def _record(repo: GitRepo, events: list[dict[str, Any]], env: dict[str, str | None]) -> None:
    for index, event in enumerate(events):
        path = repo.path.parent / f"event-{index}.json"
        path.write_text(json.dumps(event), encoding="utf-8")
        result = cli("telemetry", "record", str(path), env=env)
        assert result.exit_code == 0, result.stderr


def _dry_run(env: Mapping[str, str | None]) -> dict[str, Any]:
    result = cli("telemetry", "export", "--otlp", "--dry-run", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


def test_rotated_log_exports_like_one_file(git_repo: GitRepo, tmp_path: Path) -> None:
    events = [_event(i) for i in range(40)]
    _record(git_repo, events, {SEGMENT_ENV: "3000"})
    log = discover(str(git_repo.path)).layout.telemetry_log
    segments = segment_paths(log)
    assert len(segments) >= 5, segments  # rotated several times
    assert all(path.stat().st_size <= 3000 for path in all_paths(log))
    assert [p.name for p in segments[:2]] == ["telemetry.1.jsonl", "telemetry.2.jsonl"]
    # the same records written to one file, never rotated
    plain = tmp_path / "plain" / "telemetry.jsonl"
    recorded = [json.loads(line) for path in all_paths(log) for line in path.read_text().splitlines()]
    assert len(recorded) == 40
    for record in recorded:
        append_held(plain, record)
    assert segment_paths(plain) == []
    rotated = collect(log, cm_home=None, specs_dir=None, since_ns=None)
    single = collect(plain, cm_home=None, specs_dir=None, since_ns=None)
    assert len(rotated.spans) == 40
    assert rotated.spans == single.spans  # same spans, same ids, same order
    assert len({span.span_id for span in rotated.spans}) == 40
    assert _dry_run({SEGMENT_ENV: "3000"})["spans"] == 40


def test_log_past_the_read_cap_exports(git_repo: GitRepo) -> None:
    """The whole log is far past the read cap (lowered from 64 MiB to 64 KiB by its variable);
    before, the export refused it (FILE_TOO_LARGE, exit 2); now it streams every line."""
    cap = {"WORKGROUP_MAX_READ_BYTES": "65536"}
    log = discover(str(git_repo.path)).layout.telemetry_log
    _record(git_repo, [_event(1)], {})
    line = log.read_bytes()
    count = 65536 * 3 // len(line) + 1
    log.write_bytes(line * count)  # about 192 KiB in the active log alone
    summary = _dry_run(cap)
    assert summary["spans"] == count and summary["skipped"] == {}
    # rotated into segments, the total past the cap exports too
    _record(git_repo, [_event(2)] * 30, {SEGMENT_ENV: "20000", **cap})
    assert len(segment_paths(log)) >= 1
    assert _dry_run(cap)["spans"] == count + 30


def test_overlong_line_is_skipped_not_fatal(git_repo: GitRepo) -> None:
    log = discover(str(git_repo.path)).layout.telemetry_log
    _record(git_repo, [_event(1)], {})
    good = log.read_bytes()
    log.write_bytes(good + b'{"pad":"' + b"x" * 100_000 + b'"}\n' + good)
    summary = _dry_run({"WORKGROUP_MAX_READ_BYTES": "65536"})
    assert summary["spans"] == 2 and summary["skipped"] == {"unreadable line": 1}


_WRITER = """
import sys
from pathlib import Path
from toolkit.infra.store import file_lock
from toolkit.infra.telemetrylog import append_held
log, lock, start = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
pad = "x" * 3000
i = start
while True:
    with file_lock(lock):
        append_held(log, {"n": i, "pad": pad})
    if i == start + 2:
        print("writing", flush=True)
    i += 1
"""


def test_kill_during_rotation_loses_and_doubles_nothing(tmp_path: Path) -> None:
    """A writer killed with SIGKILL again and again while it rotates every few records: each
    record written is in exactly one segment, in order, none lost and none doubled."""
    log = tmp_path / "state" / "telemetry.jsonl"
    lock = tmp_path / "state" / "telemetry.lock"
    env = {**os.environ, "PYTHONPATH": str(ROOT), SEGMENT_ENV: "10000"}  # a rotation every 3 records
    start = 1
    for round_ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(log), str(lock), str(start)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"writing\n"
        time.sleep(0.01 * round_)  # not a barrier: where the kill lands inside the rotation
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        numbers = []
        for path in all_paths(log):
            if not path.exists():
                continue
            for raw in path.read_bytes().split(b"\n"):
                try:
                    numbers.append(json.loads(raw)["n"])
                except ValueError:
                    pass  # the record being written when the kill came: torn, never acknowledged
        assert numbers == list(range(1, len(numbers) + 1)), numbers  # in order, no gap, no double
        start = len(numbers) + 1
    assert len(segment_paths(log)) >= 3


_PEAK = """
import json, os, subprocess, sys
proc = subprocess.Popen(json.loads(sys.argv[1]), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out, err = proc.stdout.read(), proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
print(json.dumps({"status": os.waitstatus_to_exitcode(status), "peak_kib": usage.ru_maxrss,
                  "out": out.decode(), "err": err.decode()}))
"""


def _export_peak(repo: Path, *args: str) -> tuple[int, int]:
    """The spans and the peak memory (KiB) of a real `telemetry export` process (``--dry-run``
    unless an endpoint is given)."""
    command = [
        sys.executable,
        "-m",
        "toolkit",
        "telemetry",
        "export",
        "--otlp",
        "--json",
        *(args or ["--dry-run"]),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CM_WORKFLOW_LOG_HOME": str(repo.parent / "cm-home")}
    result = subprocess.run(
        [sys.executable, "-c", _PEAK, json.dumps(command)], cwd=repo, env=env, capture_output=True, check=True
    )
    figures = json.loads(result.stdout)
    assert figures["status"] == 0, figures["err"]
    return json.loads(figures["out"])["spans"], figures["peak_kib"]


def _distinct_events(git_repo: GitRepo) -> bytes:
    log = discover(str(git_repo.path)).layout.telemetry_log
    _record(git_repo, [_event(1)], {})
    template = json.loads(log.read_bytes())
    lines = []
    for n in range(1_000):
        record = {
            **template,
            "observed_at": f"2026-07-{1 + n // 1440:02d}T{n // 60 % 24:02d}:{n % 60:02d}:00Z",
        }
        lines.append(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    return b"".join(lines)  # ~0.7 MiB of distinct events


def test_dry_run_memory_does_not_grow_with_the_log(git_repo: GitRepo) -> None:
    """Before, the export parsed the whole log and kept every span: about 9 MiB of memory per MiB
    of log. Streamed, an eight times larger log costs no more than noise."""
    block = _distinct_events(git_repo)
    log = discover(str(git_repo.path)).layout.telemetry_log
    log.write_bytes(block)
    small_spans, small_peak = _export_peak(git_repo.path)
    log.write_bytes(block * 8)
    large_spans, large_peak = _export_peak(git_repo.path)
    assert (small_spans, large_spans) == (1_000, 8_000)
    growth_mib = (large_peak - small_peak) / 1024
    # measured: +0 MiB streamed; +21 MiB when every span was kept (the log alone is ~6 MiB larger)
    assert growth_mib < 8, f"peak grew by {growth_mib:.1f} MiB for 8x the log"


def test_rotation_while_reading_loses_and_doubles_nothing(tmp_path: Path, monkeypatch: Any) -> None:
    """A reader part-way through the segments while a writer rotates the active log twice: it
    reads every record that existed when it began exactly once, in order."""
    from toolkit.infra.telemetrylog import iter_lines

    monkeypatch.setenv(SEGMENT_ENV, "400")
    log = tmp_path / "state" / "telemetry.jsonl"
    pad = "x" * 100
    for n in range(1, 11):
        append_held(log, {"n": n, "pad": pad})
    assert len(segment_paths(log)) >= 2
    reader = iter_lines(log)
    first = next(reader)  # the reader is inside the first segment
    for n in range(11, 19):  # two more rotations: the active log it will read is renamed
        append_held(log, {"n": n, "pad": pad})
    numbers = [json.loads(line.raw or b"")["n"] for line in [first, *reader]]
    start = numbers[:10]
    assert start == list(range(1, 11)), numbers
    assert numbers == list(range(1, len(numbers) + 1)), numbers  # later records only in order, once


def test_sending_export_memory_does_not_grow_with_the_log(git_repo: GitRepo) -> None:
    """A real export to a loopback receiver (in this process; the export in a child whose peak
    is measured): the spans are read a second time and sent in batches, none kept."""
    import pytest

    pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra")
    sys.path.insert(0, str(ROOT / "tests"))
    from support.otlp_receiver import receiving

    block = _distinct_events(git_repo)
    log = discover(str(git_repo.path)).layout.telemetry_log
    with receiving() as rx:
        log.write_bytes(block)
        small_spans, small_peak = _export_peak(git_repo.path, rx.url)
        log.write_bytes(block * 8)
        large_spans, large_peak = _export_peak(git_repo.path, rx.url)
        received = len(rx.received.spans)
    assert (small_spans, large_spans) == (1_000, 8_000)
    assert received == 9_000  # every span of both exports reached the collector
    growth_mib = (large_peak - small_peak) / 1024
    assert growth_mib < 8, f"peak grew by {growth_mib:.1f} MiB for 8x the log"


def test_live_key_counts_equal_events_in_every_segment(git_repo: GitRepo) -> None:
    """Live mode gives an event the id the export will give it: its occurrence number counts the
    equal events of the rotated segments too."""
    from toolkit.commands.telemetry import _live_key

    _record(git_repo, [_event(1)] * 6, {SEGMENT_ENV: "1500"})  # about two events per segment
    log = discover(str(git_repo.path)).layout.telemetry_log
    assert len(segment_paths(log)) >= 2
    event = json.loads(log.read_bytes().splitlines()[-1])
    assert _live_key(log, event).endswith("#6")
    spans = collect(log, cm_home=None, specs_dir=None, since_ns=None).spans
    assert len(spans) == 6 and len({span.span_id for span in spans}) == 6
