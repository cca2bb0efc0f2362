"""MCP health probes: TTL reuse with age, failures retried only at a later phase (VERIFY CEO-11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import ROOT, GitRepo
from support.harness import cli as workgroup

from toolkit.core.timefmt import format_utc, parse_rfc3339
from toolkit.infra.git import discover
from toolkit.records.probes import (
    PHASES,
    ProbeRecord,
    decide,
    describe_age,
    read_cache,
    record,
    ttl_from_config,
)

_T0 = parse_rfc3339("2026-03-01T10:00:00Z")
assert _T0 is not None
T0: datetime = _T0


def rec(status: str, phase: str, minutes_ago: float = 0) -> ProbeRecord:
    record = ProbeRecord.parse(
        {"status": status, "phase": phase, "recorded_at": format_utc(T0 - timedelta(minutes=minutes_ago))}
    )
    assert record is not None
    return record


@pytest.mark.parametrize(
    ("record", "phase", "decision", "reason"),
    [
        (None, "1A", "probe", "NO_RESULT"),
        (rec("healthy", "1A", 0), "1A", "reuse", "HEALTHY_WITHIN_TTL"),
        (rec("healthy", "1A", 14.9), "2B", "reuse", "HEALTHY_WITHIN_TTL"),  # TTL, not phase, bounds reuse
        (rec("healthy", "1A", 15), "1A", "probe", "EXPIRED"),  # exactly the TTL is expired
        (rec("healthy", "1A", 60), "1A", "probe", "EXPIRED"),
        (rec("failed", "2A", 0), "2A", "wait", "FAILED_THIS_PHASE"),  # same phase: no retry
        (rec("failed", "2A", 600), "2A", "wait", "FAILED_THIS_PHASE"),  # however old
        (rec("failed", "2A", 0), "1B", "wait", "FAILED_THIS_PHASE"),  # an earlier phase is not later
        (rec("failed", "2A", 0), "2B", "probe", "RETRY_AT_LATER_PHASE"),
        (rec("failed", "1A", 0), "3", "probe", "RETRY_AT_LATER_PHASE"),
        (rec("healthy", "1A", -5), "1A", "probe", "RECORDED_IN_FUTURE"),  # skew beyond a minute
        (rec("healthy", "1A", -0.5), "1A", "reuse", "HEALTHY_WITHIN_TTL"),  # small skew tolerated
    ],
)
def test_decision_table(record: ProbeRecord | None, phase: str, decision: str, reason: str) -> None:
    d = decide("knowz", record, phase=phase, now=T0, ttl_minutes=15)
    assert (d.decision, d.reason) == (decision, reason)
    if record is not None:
        assert d.age_seconds is not None and d.recorded_phase == record.phase


@pytest.mark.parametrize(
    "entry",
    [
        [],
        {"status": "healthy", "phase": "1A"},
        {"status": "unknown", "phase": "1A", "recorded_at": "2026-01-01T00:00:00Z"},
        {"status": "healthy", "phase": "9Z", "recorded_at": "2026-01-01T00:00:00Z"},
        {"status": "healthy", "phase": "1A", "recorded_at": 7},
        {"status": "healthy", "phase": "1A", "recorded_at": "yesterday"},
    ],
)
def test_a_bad_cache_entry_parses_to_nothing(entry: Any) -> None:
    assert ProbeRecord.parse(entry) is None


def test_a_rewrite_keeps_other_entries_as_written(git_repo: GitRepo) -> None:
    """Recording one probe rewrites the cache; the other entries are kept exactly as they were
    written (their time text included), not re-serialized from the parsed record."""
    lay = discover(str(git_repo.path)).layout
    lay.probe_cache.parent.mkdir(parents=True, exist_ok=True)
    other = {"status": "failed", "phase": "1B", "recorded_at": "2026-03-01T09:00:00.250+00:00"}
    lay.probe_cache.write_text(json.dumps({"schema": "workgroup.probe-cache/v1", "probes": {"b": other}}))
    record(lay, "a", healthy=True, phase="1A", now=T0)
    assert json.loads(lay.probe_cache.read_text())["probes"]["b"] == other
    assert read_cache(lay)["b"].phase == "1B"


def test_reuse_says_how_old() -> None:
    d = decide("knowz", rec("healthy", "1B", 4.2), phase="2A", now=T0, ttl_minutes=15)
    assert d.age_seconds == 252 and describe_age(252) == "4 min 12 s"


def test_zero_ttl_never_reuses() -> None:
    assert decide("k", rec("healthy", "1A", 0), phase="1A", now=T0, ttl_minutes=0).decision == "probe"


def test_phase_order() -> None:
    assert PHASES == ("1A", "1B", "2A", "2B", "3")


@pytest.mark.parametrize(
    ("config", "ttl"),
    [
        (None, 15),
        ({}, 15),
        ({"context_efficiency": {"mcp_health_ttl_minutes": 3}}, 3),
        ({"context_efficiency": {"mcp_health_ttl_minutes": True}}, 15),
    ],
)
def test_ttl_from_config(config: Any, ttl: int) -> None:
    assert ttl_from_config(config) == ttl


def cli(*args: str) -> tuple[int, Any, str]:
    code, out, err = workgroup(*args)
    return code, (json.loads(out) if out.strip() else None), err


def test_cli_flow_with_exit_codes(git_repo: GitRepo) -> None:
    code, out, _ = cli(
        "probe",
        "check",
        "knowz-mcp",
        "--phase",
        "1A",
        "--json",
        "--now",
        "2026-03-01T10:00:00Z",
    )
    assert (code, out["decision"], out["reason"]) == (0, "probe", "NO_RESULT")
    assert (
        cli(
            "probe",
            "record",
            "knowz-mcp",
            "--failed",
            "--phase",
            "1A",
            "--now",
            "2026-03-01T10:00:00Z",
        )[0]
        == 0
    )
    code, out, err = cli(
        "probe",
        "check",
        "knowz-mcp",
        "--phase",
        "1A",
        "--json",
        "--now",
        "2026-03-01T10:30:00Z",
    )
    assert (code, out["decision"]) == (1, "wait") and "30 min 0 s ago" in err
    code, out, _ = cli(
        "probe",
        "check",
        "knowz-mcp",
        "--phase",
        "1B",
        "--json",
        "--now",
        "2026-03-01T10:31:00Z",
    )
    assert (code, out["decision"], out["reason"]) == (0, "probe", "RETRY_AT_LATER_PHASE")
    cli(
        "probe",
        "record",
        "knowz-mcp",
        "--healthy",
        "--phase",
        "1B",
        "--now",
        "2026-03-01T10:32:00Z",
    )
    code, out, err = cli(
        "probe",
        "check",
        "knowz-mcp",
        "--phase",
        "2A",
        "--json",
        "--now",
        "2026-03-01T10:40:30Z",
    )
    assert (code, out["decision"], out["age_seconds"]) == (0, "reuse", 510)
    assert "8 min 30 s ago" in err and "TTL 15 min" in err
    code, out, _ = cli(
        "probe",
        "check",
        "knowz-mcp",
        "--phase",
        "2A",
        "--json",
        "--now",
        "2026-03-01T10:47:00Z",
    )
    assert (out["decision"], out["reason"]) == ("probe", "EXPIRED")


def test_config_ttl_and_override(git_repo: GitRepo) -> None:
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  mcp_health_ttl_minutes: 2\n")
    cli(
        "probe",
        "record",
        "vault",
        "--healthy",
        "--phase",
        "1A",
        "--now",
        "2026-03-01T10:00:00Z",
    )
    _, out, _ = cli("probe", "check", "vault", "--phase", "1A", "--json", "--now", "2026-03-01T10:03:00Z")
    assert (out["decision"], out["ttl_minutes"]) == ("probe", 2)
    _, out, _ = cli(
        "probe",
        "check",
        "vault",
        "--phase",
        "1A",
        "--json",
        "--now",
        "2026-03-01T10:03:00Z",
        "--ttl-minutes",
        "5",
    )
    assert (out["decision"], out["ttl_minutes"]) == ("reuse", 5)


@pytest.mark.parametrize(
    "args",
    [
        ("probe", "check", "x", "--phase", "4"),
        ("probe", "check", "../x", "--phase", "1A"),
        ("probe", "check", "x", "--phase", "1A", "--now", "2026-02-31T00:00:00Z"),
        ("probe", "record", "x", "--phase", "1A"),  # neither --healthy nor --failed
        ("probe", "record", "x", "--healthy", "--phase", "1a"),
    ],
)
def test_bad_input_exit_2_writes_nothing(git_repo: GitRepo, args: tuple[str, ...]) -> None:
    assert cli(*args)[0] == 2
    assert not discover(str(git_repo.path)).layout.probe_cache.exists()


def test_corrupt_cache_means_probe_again(git_repo: GitRepo) -> None:
    lay = discover(str(git_repo.path)).layout
    lay.probe_cache.parent.mkdir(parents=True, exist_ok=True)
    lay.probe_cache.write_text(
        '{"schema": "workgroup.probe-cache/v1", "probes": {"a": {"status": "healthy"', "utf-8"
    )
    code, out, _ = cli("probe", "check", "a", "--phase", "1A", "--json")
    assert (code, out["reason"]) == (0, "NO_RESULT")
    # recording repairs it
    assert cli("probe", "record", "a", "--healthy", "--phase", "1A")[0] == 0
    assert set(read_cache(lay)) == {"a"}


def test_no_repository_is_exit_3(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert cli("probe", "check", "a", "--phase", "1A")[0] == 3


_WORKER = (
    "import sys; from pathlib import Path; from toolkit.infra.store import Layout;"
    "from toolkit.records.probes import record; from toolkit.infra.clock import now_utc;"
    "lay = Layout(Path(sys.argv[1]), Path(sys.argv[2]));"
    "record(lay, sys.argv[3], healthy=True, phase='1A', now=now_utc())"
)


def test_concurrent_records_keep_every_probe(git_repo: GitRepo) -> None:
    # real processes (the light core path, so the race is not hidden behind CLI start-up)
    lay = discover(str(git_repo.path)).layout
    names = [f"server-{i}" for i in range(6)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(lay.workdir), str(lay.common_dir), n],
            cwd=git_repo.path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for n in names
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert set(read_cache(lay)) == set(names)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["healthy", "failed"]),
    st.sampled_from(PHASES),
    st.sampled_from(PHASES),
    st.integers(-10_000, 100_000),
    st.integers(0, 1440),
)
def test_decision_invariants(status: str, recorded: str, phase: str, seconds_ago: int, ttl: int) -> None:
    record = ProbeRecord.parse(
        {"status": status, "phase": recorded, "recorded_at": format_utc(T0 - timedelta(seconds=seconds_ago))}
    )
    d = decide("k", record, phase=phase, now=T0, ttl_minutes=ttl)
    if d.decision == "reuse":
        assert status == "healthy" and -60 <= seconds_ago < ttl * 60
    if d.decision == "wait":
        assert status == "failed" and PHASES.index(phase) <= PHASES.index(recorded)
    if status == "failed" and PHASES.index(phase) > PHASES.index(recorded) and seconds_ago >= -60:
        assert d.decision == "probe"


def test_record_returns_and_stores_the_declared_rows(git_repo: GitRepo) -> None:
    """``record`` returns a RecordedProbe (name first, then the row) and stores a ProbeEntry: the keys
    in the declared order, every value a string."""
    from typing import get_type_hints

    from toolkit.records.probes import ProbeEntry, RecordedProbe

    lay = discover(str(git_repo.path)).layout
    out = record(lay, "a", healthy=False, phase="1A", now=T0)
    assert list(out) == list(get_type_hints(RecordedProbe))
    assert out == {"name": "a", "status": "failed", "phase": "1A", "recorded_at": format_utc(T0)}
    stored = json.loads(lay.probe_cache.read_text())["probes"]["a"]
    assert list(stored) == list(get_type_hints(ProbeEntry))
    assert {k: v for k, v in out.items() if k != "name"} == stored
