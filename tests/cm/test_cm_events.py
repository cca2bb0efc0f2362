"""cm-log-event: envelope, allowlists, identity rules, dedup, files, locks, degrade, torn lines."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from support.harness import CliResult, cli

from toolkit.cm import data_json, event_error, model_event_rules
from toolkit.core import cm_usage_format as usage_format
from toolkit.models.cm_event import UsageEvent


def log_event(argv: list[str]) -> CliResult:
    """``cm-log-event ARGV`` in-process, through the suite's one CLI helper."""
    return cli(*argv, script="cm-log-event")


RUN = "usage-fixture-0001"
CLAIM = {
    "call_id": "planner-call-0001",
    "stage": "design_generation",
    "role": "planner",
    "adapter": "company-api",
    "requested_model": "planner-default",
    "source": "api",
    "purpose": "cm-prd:design_generation",
}
USAGE = {
    **CLAIM,
    "effective_model": "provider-model-v2",
    "usage_state": "observed",
    "input_tokens": 1200,
    "output_tokens": 300,
    "cache_read_tokens": 800,
    "cache_write_tokens": 100,
    "duration_ms": 2500,
    "outcome": "success",
}


def home() -> Path:
    return Path(os.environ["CM_WORKFLOW_LOG_HOME"])


def write(
    data: dict[str, Any] | str,
    *,
    event: str = "model_usage",
    phase: str | None = "complete",
    run_id: str | None = RUN,
    specs: Path | None = None,
    root: Path | None = None,
    detail: str = "planner model call completed",
    extra: list[str] | None = None,
) -> tuple[int, dict[str, Any] | None, str]:
    argv = [
        "--workflow",
        "cm-prd",
        "--event",
        event,
        "--runtime",
        "codex",
        "--detail",
        detail,
        "--data-json",
        data if isinstance(data, str) else json.dumps(data),
        *(extra or []),
    ]
    if phase is not None:
        argv += ["--phase", phase]
    if run_id is not None:
        argv += ["--run-id", run_id]
    if specs is not None:
        argv += ["--specs-dir", str(specs)]
    if root is not None:
        argv += ["--project-root", str(root)]
    code, out, err = log_event(argv)
    return code, (json.loads(out) if out.strip() else None), err


def claim(data: dict[str, Any], **kw: Any) -> tuple[int, Any, str]:
    return write(data, event="model_call", phase="claimed", detail="planner model call claimed", **kw)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    path = tmp_path / "proj" / "specs"
    path.mkdir(parents=True)
    return path


# ---------------------------------------------------------------- envelope, files, dedup


def test_envelope_global_log_index_and_stdout_shape() -> None:
    code, out, err = write(USAGE)
    assert code == 0 and err == ""
    assert out is not None
    assert list(out) == [
        "event_id",
        "run_id",
        "project_log",
        "global_log",
        "global_written",
        "pointer_written",
        "deduplicated",
        "degraded",
    ]
    assert out["project_log"] is None and out["pointer_written"] is None and out["global_written"] is True
    log = Path(out["global_log"])
    assert log.parent.parent == home() / "runs" and log.name == f"{RUN}.jsonl"
    (row,) = lines(log)
    assert {
        "schema_version",
        "event_id",
        "run_id",
        "at",
        "workflow",
        "event",
        "phase",
        "runtime",
        "project",
        "detail",
    } <= set(row)
    assert row["schema_version"] == 1 and row["input_tokens"] == 1200 and row["cache_read_tokens"] == 800
    assert row["project"] == "unscoped"
    # event id: UUIDv5 of the canonical event without at and event_id
    identity = {k: v for k, v in row.items() if k not in ("at", "event_id")}
    text = json.dumps(identity, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert row["event_id"] == str(uuid.uuid5(uuid.NAMESPACE_URL, text)) == out["event_id"]
    UsageEvent.model_validate(row)
    (index,) = lines(home() / "index.jsonl")
    assert index["status"] == "running" and index["log_file"] == str(log.relative_to(home()))
    # the mirror is private
    assert stat.S_IMODE(log.stat().st_mode) == 0o600 and stat.S_IMODE(home().stat().st_mode) == 0o700
    assert stat.S_IMODE((home() / "index.jsonl").stat().st_mode) == 0o600


def test_exact_retry_deduplicates_changed_payload_refused() -> None:
    first = write(USAGE, extra=["--at", "2026-08-06T10:00:00+00:00"])
    retry = write(USAGE, extra=["--at", "2026-08-06T10:05:00+00:00"])  # `at` is not identity
    assert first[1] and retry[1]
    assert (first[1]["deduplicated"], retry[1]["deduplicated"]) == (False, True)
    assert first[1]["event_id"] == retry[1]["event_id"]
    log = Path(first[1]["global_log"])
    assert len(lines(log)) == 1
    changed = write({**USAGE, "output_tokens": 301})
    assert changed[0] == 2 and "call_id already used with different payload" in changed[2]
    assert len(lines(log)) == 1


def test_project_log_pointer_and_run_reuse(specs: Path) -> None:
    root = specs.parent
    code, out, _ = write(
        {},
        event="run_start",
        phase="start",
        run_id=None,
        specs=specs,
        root=root,
        detail="run started",
    )
    assert code == 0 and out is not None
    run_id = out["run_id"]
    pointer = json.loads((specs / ".cm-run.json").read_text(encoding="utf-8"))
    assert pointer["run_id"] == run_id and pointer["status"] == "running"
    assert not Path(pointer["global_log"]).is_absolute()  # no home path in the specs dir
    # later events without --run-id join the running run
    code, out2, _ = claim(CLAIM, run_id=None, specs=specs, root=root)
    assert code == 0 and out2 is not None and out2["run_id"] == run_id
    project = lines(specs / "运行日志.jsonl")
    assert [r["event"] for r in project] == ["run_start", "model_call"]
    assert all("project_path" not in r and "specs_path" not in r for r in project)
    assert project[0]["project"] == "proj"
    assert lines(Path(out2["global_log"])) == project  # the mirror holds the same rows
    code, out3, _ = write(
        {}, event="run_done", phase=None, run_id=None, specs=specs, root=root, detail="run done"
    )
    assert out3 is not None and out3["run_id"] == run_id
    assert json.loads((specs / ".cm-run.json").read_text(encoding="utf-8"))["status"] == "done"
    assert [r["status"] for r in lines(home() / "index.jsonl")] == ["running", "done"]
    code, out4, _ = write(
        {}, event="run_start", phase="start", run_id=None, specs=specs, root=root, detail="next run"
    )
    assert out4 is not None and out4["run_id"] != run_id


# ---------------------------------------------------------------- identity rules (exit 2)


def test_lifecycle_refusals() -> None:
    assert write(USAGE)[0] == 0
    late = claim(CLAIM)
    assert late[0] == 2 and "call_id already completed" in late[2]
    other = {**CLAIM, "call_id": "planner-identity-mismatch"}
    assert claim(other)[0] == 0
    again = claim(other)
    assert again[0] == 0 and again[1] and again[1]["deduplicated"] is True  # exact retry of the claim
    changed = claim({**other, "requested_model": "other-model"})
    assert changed[0] == 2 and "already claimed" in changed[2]
    mismatch = write(
        {
            **other,
            "stage": "other_stage",
            "role": "analyst",
            "adapter": "other-api",
            "usage_state": "observed",
            "input_tokens": 1,
            "output_tokens": 1,
            "outcome": "success",
            "purpose": "cm-prd:other_stage",
        },
    )
    assert mismatch[0] == 2 and "identity does not match model_call claim" in mismatch[2]
    runtime_mismatch = log_event(
        [
            "--workflow",
            "cm-prd",
            "--event",
            "model_usage",
            "--phase",
            "complete",
            "--runtime",
            "claude",
            "--run-id",
            RUN,
            "--detail",
            "d",
            "--data-json",
            json.dumps({**other, "usage_state": "unavailable", "outcome": "error"}),
        ]
    ).exit_code
    assert runtime_mismatch == 2  # runtime is part of the identity
    managed = write(
        {
            **CLAIM,
            "call_id": "managed-without-claim",
            "adapter": "openai-compatible",
            "usage_state": "observed",
            "input_tokens": 999,
            "output_tokens": 111,
            "outcome": "success",
        },
    )
    assert managed[0] == 2 and "requires a prior model_call claim" in managed[2]
    matching = write({**other, "usage_state": "unavailable", "duration_ms": 700, "outcome": "success"})
    assert matching[0] == 0


SECRET_VALUE = "must-not-log-8e1f"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({**USAGE, "input_tokens": -1}, "non-negative integer"),
        ({**USAGE, "duration_ms": 1.5}, "non-negative integer"),
        ({**USAGE, "input_tokens": True}, "non-negative integer"),
        ({**USAGE, "access_token": SECRET_VALUE}, "sensitive log field"),
        ({**USAGE, "prompt": SECRET_VALUE}, "unsupported fields"),
        ({**USAGE, "usage_state": "unavailable"}, "cannot contain token counts"),
        ({k: v for k, v in USAGE.items() if k != "output_tokens"}, "requires output_tokens"),
        ({**USAGE, "usage_state": "guessed"}, "observed or unavailable"),
        ({**USAGE, "outcome": "maybe"}, "outcome must be"),
        ({**USAGE, "attempt": 0}, "positive integer"),
        ({**USAGE, "stage": "two\nlines"}, "one line"),
        ({**USAGE, "effective_model": "m" * 161}, "at most 160"),
        ({**USAGE, "stage": "  "}, "non-empty stage"),
        ({**USAGE, "call_id": "bad/id"}, "valid call_id"),
        ({**USAGE, "role": "9role"}, "valid role"),
        ({**USAGE, "run_id": "x"}, "reserved fields"),
        ({**USAGE, "event_id": "x"}, "reserved fields"),
        ('{"a": NaN}', "JSON object"),
        ("[1, 2]", "JSON object"),
        ("{not json", "JSON object"),
        (json.dumps({"x": "y" * 9000}), "8192"),
        ("[" * 3000 + "]" * 3000, "JSON object"),
    ],
)
def test_usage_refusals(data: Any, needle: str) -> None:
    code, out, err = write(data)
    assert code == 2 and out is None and needle in err
    assert SECRET_VALUE not in err
    assert not (home() / "runs").exists()


def test_claim_refusals() -> None:
    incomplete = claim({"call_id": "planner-incomplete-claim", "role": "planner"})
    assert incomplete[0] == 2 and "requires a non-empty stage" in incomplete[2]
    extra = claim({**CLAIM, "usage_state": "observed"})
    assert extra[0] == 2 and "unsupported fields" in extra[2]
    phase = write(CLAIM, event="model_call", phase="complete")
    assert phase[0] == 2 and "phase claimed" in phase[2]


def test_nested_sensitive_key_and_generic_events() -> None:
    nested = write({"outer": [{"Authorization": SECRET_VALUE}]}, event="note", phase=None)
    assert nested[0] == 2 and "sensitive" in nested[2] and SECRET_VALUE not in nested[2]
    token_key = write({"input_tokens": 5}, event="note", phase=None)
    assert token_key[0] == 2  # the token-count exemption is for model_usage only
    ok = write({"route": {"mode": "local"}, "count": 3}, event="route", phase="decided")
    assert ok[0] == 0


@pytest.mark.parametrize(
    "argv_patch",
    [
        ["--workflow", "9bad"],
        ["--event", "bad event"],
        ["--runtime", ""],
        ["--detail", ""],
        ["--detail", "two\nlines"],
        ["--detail", "x" * 501],
        ["--at", "2026-13-01T00:00:00Z"],
        ["--at", "2026-01-01T00:00:00"],
        ["--run-id", "short"],
        ["--project-root", "/nonexistent/dir"],
        ["--specs-dir", "/nonexistent/specs"],
        ["--project", "a\nb"],
    ],
)
def test_envelope_refusals(argv_patch: list[str]) -> None:
    argv = {"--workflow": "cm-prd", "--event": "note", "--runtime": "codex", "--detail": "d", "--run-id": RUN}
    argv[argv_patch[0]] = argv_patch[1]
    code, out, err = log_event([x for pair in argv.items() for x in pair])
    assert code == 2
    assert out == "" and "Traceback" not in err
    assert not (home() / "runs").exists()


def test_missing_argument_is_exit_2() -> None:
    assert log_event(["--workflow", "cm-prd"]).exit_code == 2


# ---------------------------------------------------------------- failures: degrade, exit 1


def test_global_mirror_failure_degrades_with_project_log(
    specs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("CM_WORKFLOW_LOG_HOME", str(blocker / "logs"))
    code, out, err = claim(CLAIM, specs=specs)
    assert code == 0 and out is not None
    assert out["degraded"] is True and out["global_written"] is False
    assert "global mirror unavailable" in err
    rows = lines(specs / "运行日志.jsonl")
    assert [r["event"] for r in rows] == ["model_call", "degrade"]
    assert rows[1]["phase"] == "global_log" and rows[1]["error_type"]


def test_global_only_failure_is_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("CM_WORKFLOW_LOG_HOME", str(blocker / "logs"))
    code, out, err = write(USAGE)
    assert code == 1 and out is None and "lock failed" in err


def test_authoritative_write_failure_is_exit_1(specs: Path) -> None:
    (specs / "运行日志.jsonl").mkdir()  # unwritable even for root
    code, out, _ = claim(CLAIM, specs=specs)
    assert code == 1 and out is None


def test_pointer_failure_degrades(specs: Path) -> None:
    (specs / ".cm-run.json").mkdir()  # the atomic rename onto a directory fails
    code, out, err = claim(CLAIM, specs=specs)
    assert code == 0 and out is not None and out["pointer_written"] is False and out["degraded"] is True
    assert [r["phase"] for r in lines(specs / "运行日志.jsonl")] == ["claimed", "run_pointer"]
    assert "pointer unavailable" in err


def test_torn_last_line_never_corrupts_later_appends(specs: Path) -> None:
    log = specs / "运行日志.jsonl"
    log.write_bytes(b'{"schema_version":1,"run_id":"' + RUN.encode() + b'","event":"model_us')
    assert claim(CLAIM, specs=specs)[0] == 0
    assert write({**CLAIM, "usage_state": "unavailable", "outcome": "error"}, specs=specs)[0] == 0
    raw = log.read_bytes().split(b"\n")
    assert raw[0].endswith(b"model_us") and raw[-1] == b""
    assert [json.loads(x)["event"] for x in raw[1:-1]] == ["model_call", "model_usage"]


# ---------------------------------------------------------------- real processes racing


def test_concurrent_writers_one_claim_and_intact_lines(specs: Path) -> None:
    def run(i: int) -> subprocess.CompletedProcess[str]:
        data = CLAIM if i < 8 else {**CLAIM, "call_id": f"other-call-{i}"}
        cmd = [
            sys.executable,
            "-m",
            "toolkit.cm.events",
            "--workflow",
            "cm-prd",
            "--event",
            "model_call",
            "--phase",
            "claimed",
            "--runtime",
            "codex",
            "--run-id",
            RUN,
            "--specs-dir",
            str(specs),
            "--detail",
            "planner model call claimed",
            "--data-json",
            json.dumps(data),
        ]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)

    with ThreadPoolExecutor(max_workers=12) as pool:
        procs = list(pool.map(run, range(12)))
    assert all(p.returncode == 0 for p in procs), [p.stderr for p in procs]
    same = [json.loads(p.stdout)["deduplicated"] for p in procs[:8]]
    assert same.count(False) == 1 and same.count(True) == 7
    rows = lines(specs / "运行日志.jsonl")
    assert len(rows) == 5 and len({r["event_id"] for r in rows}) == 5
    mirror = next((home() / "runs").glob(f"*/{RUN}.jsonl"))
    assert len(lines(mirror)) == 5


# ---------------------------------------------------------------- hypothesis


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_data_json_fuzz_text(raw: str) -> None:
    """Any --data-json text is either accepted as an object or refused with EventError."""
    for event in ("model_usage", "note"):
        try:
            value = data_json.parse_data(raw, event)
        except event_error.EventError:
            continue
        assert isinstance(value, dict)
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # always writable


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=12), kids, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=16), _json, max_size=5))
def test_data_json_fuzz_objects(value: dict[str, Any]) -> None:
    """Structured objects: no crash, no credential-like key survives, numbers stay finite."""
    raw = json.dumps(value)
    try:
        parsed = data_json.parse_data(raw, "note")
    except event_error.EventError:
        return
    assert not any(data_json.SENSITIVE_KEY.search(k) for k in _all_keys(parsed))
    json.dumps(parsed, allow_nan=False)  # raises if a non-finite number got through


def _all_keys(value: Any) -> list[str]:
    keys: list[str] = []
    stack = [value]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            keys += list(cur)
            stack += list(cur.values())
        elif isinstance(cur, list):
            stack += cur
    return keys


_field_values = {
    "stage": st.sampled_from(["design_generation", "", " ", "a\nb", "x" * 161, 5]),
    "role": st.sampled_from(["planner", "9x", "", None]),
    "call_id": st.sampled_from(["call-1", "bad/id", "", 7]),
    "usage_state": st.sampled_from(["observed", "unavailable", "other"]),
    "outcome": st.sampled_from(["success", "error", "blocked", "cancelled", "x"]),
    "input_tokens": st.sampled_from([0, 5, -1, True, 1.0, "5"]),
    "output_tokens": st.sampled_from([0, 7, -3, False]),
    "cache_read_tokens": st.sampled_from([0, 9, -1]),
    "duration_ms": st.sampled_from([0, 10, -5, 2.5]),
    "attempt": st.sampled_from([1, 2, 0, True]),
    "effective_model": st.sampled_from(["m-1", "", "x" * 161]),
    "prompt": st.just("never"),
}


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({}, optional=_field_values), st.booleans())
def test_writer_and_model_agree(changes: dict[str, Any], claim_event: bool) -> None:
    """The stdlib writer accepts a model event exactly when the pydantic format model does."""
    data: dict[str, Any] = (
        dict(CLAIM) if claim_event else {**CLAIM, "usage_state": "unavailable", "outcome": "success"}
    )
    data.update(changes)
    if claim_event:
        data = {k: v for k, v in data.items() if k in usage_format.CALL_FIELDS or k in changes}
    event, phase = ("model_call", "claimed") if claim_event else ("model_usage", "complete")
    try:
        model_event_rules.validate_model_event(event, phase, data_json.parse_data(json.dumps(data), event))
        writer_ok = True
    except event_error.EventError:
        writer_ok = False
    row = {
        "schema_version": 1,
        "event_id": "e",
        "run_id": RUN,
        "at": "2026-08-06T10:00:00+00:00",
        "workflow": "cm-prd",
        "runtime": "codex",
        "project": "p",
        "detail": "d",
        "event": event,
        "phase": phase,
        **data,
    }
    try:
        UsageEvent.model_validate(row)
        model_ok = True
    except ValidationError:
        model_ok = False
    assert writer_ok == model_ok, data


@pytest.mark.parametrize(
    ("detail", "data", "category"),
    [
        # built by concatenation so this file itself carries no literal home path or address
        ("copied from /ho" + "me/alice/project/notes.txt", {}, "path"),
        ("contact alice.smith" + "@acme-corp.io", {}, "email"),
        # workgroup: allow high-entropy-string
        (
            "run note",
            {"note": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O50Zb5Hm"},
            "secret",
        ),  # checksum-valid, synthetic
        # workgroup: allow provider-session-id
        ("run note", {"session_id": "sess-3f9a"}, "identifier"),
    ],
)
def test_privacy_engine_guards_event_text(detail: str, data: dict[str, Any], category: str) -> None:
    code, out, err = write(data, event="note", phase=None, detail=detail)
    assert code == 2 and out is None
    assert "private content" in err and category in err
    for value in (detail, *map(str, data.values())):
        if value != "run note":
            assert value not in err
    assert not (home() / "runs").exists()
