"""cm-usage-report: logs with duplicates, late claims, identity mismatches, unresolved claims, torn lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import CliResult, cli

from toolkit.cm import report


def usage_report(argv: list[str]) -> CliResult:
    """``cm-usage-report ARGV`` in-process, through the suite's one CLI helper."""
    return cli(*argv, script="cm-usage-report")


RUN1 = "usage-fixture-0001"
RUN2 = "usage-fixture-0002"


def write_jsonl(path: Path, rows: list[dict[str, Any]], tail: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows) + tail)


def golden_home(tmp_path: Path) -> Path:
    """An equivalent of the reference's fixture, plus a torn last line; built partly by our writer."""
    home = tmp_path / "logs"
    os.environ["CM_WORKFLOW_LOG_HOME"] = str(home)
    code, out, _ = cli(
        *[
            "--workflow",
            "cm-prd",
            "--event",
            "model_usage",
            "--phase",
            "complete",
            "--runtime",
            "codex",
            "--run-id",
            RUN1,
            "--detail",
            "planner model call completed",
            "--data-json",
            json.dumps(
                {
                    "call_id": "planner-call-0001",
                    "stage": "design_generation",
                    "role": "planner",
                    "adapter": "company-api",
                    "requested_model": "planner-default",
                    "effective_model": "provider-model-v2",
                    "source": "api",
                    "purpose": "cm-prd:design_generation",
                    "usage_state": "observed",
                    "input_tokens": 1200,
                    "output_tokens": 300,
                    "cache_read_tokens": 800,
                    "cache_write_tokens": 100,
                    "duration_ms": 2500,
                    "outcome": "success",
                }
            ),
        ],
        script="cm-log-event",
    )
    assert code == 0
    run_log = Path(json.loads(out)["global_log"])
    (event,) = [json.loads(x) for x in run_log.read_text(encoding="utf-8").splitlines()]
    conflicting_duplicate = {**event, "event_id": "conflicting-call-event", "output_tokens": 301}
    unavailable = {
        "schema_version": 1,
        "event_id": "unavailable-event",
        "run_id": RUN2,
        "at": "2026-08-06T11:00:00+00:00",
        "workflow": "cm-ai",
        "event": "model_usage",
        "phase": "complete",
        "runtime": "codex",
        "project": "fixture",
        "detail": "usage unavailable",
        "call_id": "coder-call-0001",
        "stage": "task_execution",
        "role": "coder",
        "adapter": "subscription-runtime",
        "requested_model": "coder-default",
        "source": "subscription",
        "purpose": "cm-ai:task_execution",
        "usage_state": "unavailable",
        "duration_ms": 700,
        "outcome": "success",
    }
    failed_unavailable = {
        **unavailable,
        "event_id": "unavailable-error-event",
        "call_id": "coder-call-0002",
        "duration_ms": 400,
        "outcome": "error",
    }
    unresolved = {
        "schema_version": 1,
        "event_id": "unresolved-claim-event",
        "run_id": RUN2,
        "at": "2026-08-06T11:00:45+00:00",
        "workflow": "cm-ai",
        "event": "model_call",
        "phase": "claimed",
        "runtime": "codex",
        "project": "fixture",
        "detail": "reviewer call claimed",
        "call_id": "reviewer-call-unresolved",
        "stage": "task_review",
        "role": "reviewer",
        "adapter": "openai-compatible",
        "requested_model": "reviewer-default",
        "source": "api",
        "purpose": "cm-ai:task_review",
    }
    base = {
        "schema_version": 1,
        "run_id": RUN2,
        "at": "2026-08-06T11:01:00+00:00",
        "workflow": "cm-ai",
        "event": "model_usage",
        "phase": "complete",
        "runtime": "codex",
        "project": "fixture",
        "detail": "malformed fixture",
        "stage": "task_execution",
        "role": "coder",
        "adapter": "company-api",
        "requested_model": "coder-default",
        "source": "api",
        "purpose": "cm-ai:task_execution",
        "usage_state": "observed",
        "outcome": "success",
    }
    malformed = [
        {**base, "event_id": "malformed-missing-input", "call_id": "malformed-call-0001", "output_tokens": 4},
        {
            **base,
            "event_id": "malformed-bool-input",
            "call_id": "malformed-call-0002",
            "input_tokens": True,
            "output_tokens": 4,
        },
        {
            **base,
            "event_id": "malformed-negative-output",
            "call_id": "malformed-call-0003",
            "input_tokens": 4,
            "output_tokens": -1,
        },
    ]
    mismatched_claim = {**unresolved, "event_id": "mismatched-claim-event", "call_id": "mismatched-call-0001"}
    mismatched_usage = {
        **base,
        "event_id": "mismatched-usage-event",
        "call_id": "mismatched-call-0001",
        "workflow": "cm-prd",
        "stage": "design_generation",
        "role": "planner",
        "adapter": "other-api",
        "requested_model": "planner-default",
        "purpose": "cm-prd:design_generation",
        "input_tokens": 10,
        "output_tokens": 2,
    }
    conflict_one = {**unresolved, "event_id": "conflicting-claim-one", "call_id": "conflicting-call-0001"}
    conflict_two = {
        **conflict_one,
        "event_id": "conflicting-claim-two",
        "stage": "design_generation",
        "role": "planner",
        "requested_model": "planner-default",
        "purpose": "cm-ai:design_generation",
    }
    conflict_usage = {
        **base,
        "event_id": "conflicting-usage-event",
        "call_id": "conflicting-call-0001",
        "stage": "task_review",
        "role": "reviewer",
        "adapter": "openai-compatible",
        "requested_model": "reviewer-default",
        "source": "api",
        "purpose": "cm-ai:task_review",
        "input_tokens": 10,
        "output_tokens": 2,
    }
    usage_before_claim = {
        **conflict_usage,
        "event_id": "usage-before-claim-event",
        "call_id": "usage-before-claim-0001",
    }
    claim_after_usage = {
        **conflict_one,
        "event_id": "claim-after-usage-event",
        "call_id": "usage-before-claim-0001",
    }
    managed_without_claim = {
        **conflict_usage,
        "event_id": "managed-without-claim-event",
        "call_id": "managed-without-claim-0002",
    }
    write_jsonl(
        home / "index.jsonl",
        [
            {
                "schema_version": 1,
                "at": "2026-08-06T10:00:00+00:00",
                "run_id": RUN1,
                "status": "done",
                "workflow": "cm-prd",
                "runtime": "codex",
                "project": "fixture",
                "log_file": str(run_log.relative_to(home)),
            },
            {
                "schema_version": 1,
                "at": "2026-08-06T11:00:00+00:00",
                "run_id": RUN2,
                "status": "done",
                "workflow": "cm-ai",
                "runtime": "codex",
                "project": "fixture",
                "log_file": f"runs/2026-08/{RUN2}.jsonl",
            },
        ],
    )
    write_jsonl(run_log, [event, dict(event), conflicting_duplicate])
    write_jsonl(
        home / f"runs/2026-08/{RUN2}.jsonl",
        [
            unavailable,
            failed_unavailable,
            unresolved,
            mismatched_claim,
            mismatched_usage,
            conflict_one,
            conflict_two,
            conflict_usage,
            usage_before_claim,
            claim_after_usage,
            managed_without_claim,
            *malformed,
        ],
        tail=b'{"schema_version":1,"run_id":"' + RUN2.encode() + b'","event":"model_usage","input_tok',
    )
    return home


def run_report(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolkit.cm.report", "--log-home", str(home), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def test_golden_totals_json(tmp_path: Path) -> None:
    home = golden_home(tmp_path)
    proc = run_report(home, "--last", "2", "--json")
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert list(out)[:8] == [
        "schema_version",
        "source",
        "missing_usage_policy",
        "unresolved_claim_policy",
        "summary",
        "groups",
        "unavailable_groups",
        "unresolved_groups",
    ]
    assert (
        out["schema_version"],
        out["source"],
        out["missing_usage_policy"],
        out["unresolved_claim_policy"],
    ) == (1, "cm-global-log-mirror", "unavailable-not-guessed", "reported-not-counted")
    s = out["summary"]
    assert (
        s["runs"],
        s["observed_calls"],
        s["unavailable_calls"],
        s["unresolved_claims"],
        s["invalid_calls"],
    ) == (2, 1, 2, 4, 8)
    assert s["outcomes"] == {"success": 2, "error": 1, "blocked": 0, "cancelled": 0}
    assert [s[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")] == [
        1200,
        300,
        800,
        100,
    ]
    assert (s["duration_ms"], s["duration_observed_calls"]) == (3600, 3)
    (group,) = out["groups"]
    assert (group["model"], group["model_source"], group["outcome"], group["calls"]) == (
        "provider-model-v2",
        "effective",
        "success",
        1,
    )
    assert {g["outcome"] for g in out["unavailable_groups"]} == {"success", "error"}
    assert sum(g["duration_ms"] for g in out["unavailable_groups"]) == 1100
    assert out["unresolved_groups"] == [
        {
            "workflow": "cm-ai",
            "stage": "task_review",
            "role": "reviewer",
            "adapter": "openai-compatible",
            "requested_model": "reviewer-default",
            "source": "api",
            "claims": 4,
        }
    ]
    # every invalid row is explained, by reason and on stderr
    assert out["invalid_reasons"] == {
        "ambiguous claim": 1,
        "duplicate call_id": 1,
        "identity mismatch": 1,
        "invalid input count": 2,
        "invalid output count": 1,
        "managed usage without claim": 1,
        "usage before claim": 1,
    }
    assert out["unreadable_lines"] == 1
    for needle in (
        "ignored malformed model_usage",
        "conflicting model_call identity",
        "mismatched claim identity",
        "duplicate model_usage call_id",
        "without prior claim",
        "torn last line",
    ):
        assert needle in proc.stderr
    assert str(tmp_path) not in proc.stderr  # locations are relative to the log home


def test_golden_text(tmp_path: Path) -> None:
    home = golden_home(tmp_path)
    proc = run_report(home, "--last", "2")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        "CM API Usage（最近 2 次运行）",
        "- calls: observed 1 | unavailable 2 | unresolved claims 4 | invalid 8",
        "- tokens: input 1200 | output 300 | cache read 800 | cache write 100",
        "- outcomes: success 2 | error 1 | blocked 0 | cancelled 0",
        "- observed duration: 3600 ms across 3 calls",
        "- cm-prd/design_generation | planner | company-api | provider-model-v2 (effective) | success | "
        "calls 1, "
        "in 1200, out 300, cache-read 800, cache-write 100",
        "- unavailable: cm-ai/task_execution | coder | error | calls 1",
        "- unavailable: cm-ai/task_execution | coder | success | calls 1",
        "- unresolved: cm-ai/task_review | reviewer | openai-compatible | reviewer-default | claims 4",
        report.DISCLAIMER,
    ]
    assert "未推测缺失用量，也未换算费用" in proc.stdout


def test_last_selects_newest_runs(tmp_path: Path) -> None:
    home = golden_home(tmp_path)
    out = json.loads(run_report(home, "--last", "1", "--json").stdout)
    s = out["summary"]
    assert (s["runs"], s["observed_calls"], s["unavailable_calls"], s["invalid_calls"]) == (1, 0, 2, 7)


def test_in_process_matches_subprocess(tmp_path: Path) -> None:
    home = golden_home(tmp_path)
    code, out, _ = usage_report(["--log-home", str(home), "--json"])
    assert code == 0
    inproc = json.loads(out)
    assert inproc == json.loads(run_report(home, "--json").stdout)


def test_index_rules_and_unsafe_paths(tmp_path: Path) -> None:
    home = tmp_path / "logs"
    row = {
        "schema_version": 1,
        "run_id": "run-escape-01",
        "status": "running",
        "at": "2026-08-06T12:00:00Z",
        "log_file": "../../outside.jsonl",
    }
    write_jsonl(
        home / "index.jsonl",
        [
            row,
            {**row, "run_id": "run-missing-01", "log_file": "runs/2026-08/run-missing-01.jsonl"},
            {**row, "run_id": "run-noat-0001", "at": "yesterday"},
            {"not": "a run"},
        ],
        tail=b"{torn",
    )
    (tmp_path / "outside.jsonl").write_text("{}\n", encoding="utf-8")
    code, out, err = usage_report(["--log-home", str(home), "--json"])
    assert code == 0
    assert json.loads(out)["summary"]["runs"] == 2  # the row without a valid time is skipped
    assert "outside log home" in err and "missing run log for run-missing-01" in err
    assert "invalid JSON at index.jsonl:5" in err


def test_empty_home_and_bad_arguments(tmp_path: Path) -> None:
    code, out, _ = usage_report(["--log-home", str(tmp_path / "none")])
    assert code == 0
    assert "CM API Usage（最近 0 次运行）" in out
    for bad in (["--last", "0"], ["--last", "x"], ["--bogus"]):
        assert usage_report(bad).exit_code == 2


def test_done_status_is_sticky_and_latest_time_wins(tmp_path: Path) -> None:
    home = tmp_path / "logs"
    base = {"run_id": "run-order-0001", "log_file": "runs/2026-08/run-order-0001.jsonl"}
    write_jsonl(
        home / "index.jsonl",
        [
            {**base, "status": "running", "at": "2026-08-06T10:00:00+00:00"},
            {**base, "status": "done", "at": "2026-08-06T09:00:00+00:00"},
            {
                "run_id": "run-order-0002",
                "log_file": "x.jsonl",
                "status": "running",
                "at": "2026-08-06T11:00:00Z",
            },
        ],
    )
    refs = report.load_run_refs(home, sys.stderr)
    assert [r.run_id for r in refs] == ["run-order-0002", "run-order-0001"]
    assert refs[1].status == "done"


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"call_id": "x/y"}, "invalid call_id"),
        ({"phase": "claimed"}, "invalid phase"),
        ({"runtime": ""}, "invalid runtime"),
        ({"outcome": "won"}, "invalid outcome"),
        ({"duration_ms": -1}, "invalid duration"),
        ({"cache_read_tokens": "9"}, "invalid cache count"),
        ({"reasoning_tokens": -1}, "invalid cache count"),
        ({"reasoning_tokens": 10_000}, "invalid reasoning subset"),  # reasoning is a subset of output
        ({"usage_state": "unavailable"}, "unavailable row contains token counts"),
        ({"usage_state": "estimated"}, "invalid usage state"),
    ],
)
def test_usage_row_errors(row: dict[str, Any], reason: str) -> None:
    good = {
        "call_id": "c-1",
        "phase": "complete",
        "workflow": "w",
        "runtime": "codex",
        "stage": "s",
        "role": "r",
        "adapter": "a",
        "requested_model": "m",
        "source": "api",
        "purpose": "w:s",
        "outcome": "success",
        "usage_state": "observed",
        "input_tokens": 1,
        "output_tokens": 1,
    }
    assert report.usage_row_error(good) is None
    assert report.usage_row_error({**good, **row}) == reason


def test_workgroup_cm_reaches_the_same_mains(tmp_path: Path) -> None:
    """`workgroup cm usage-report|log-event|call` pass arguments and exit codes through unchanged."""
    from support.harness import run_workgroup

    home = golden_home(tmp_path)
    via_cli = run_workgroup("cm", "usage-report", "--log-home", str(home), "--json")
    assert via_cli.returncode == 0
    assert json.loads(via_cli.stdout) == json.loads(run_report(home, "--json").stdout)
    bad = run_workgroup("cm", "log-event", "--workflow", "cm-prd")
    assert bad.returncode == 2 and b"Traceback" not in bad.stderr
    refused = run_workgroup(
        "cm",
        "call",
        "--workflow",
        "cm-prd",
        "--stage",
        "s",
        "--role",
        "planner",
        "--runtime",
        "codex",
        "--requested-model",
        "m",
        "--call-id",
        "c-1",
        "--project-root",
        str(tmp_path),
        "--run-id",
        "cli-run-0001",
        stdin=b"{}",
    )
    assert refused.returncode == 2 and b"not explicitly enabled" in refused.stderr
    helped = run_workgroup("cm", "call", "--help")
    assert helped.returncode == 0 and b"--requested-model" in helped.stdout


def _spec_reason(row: dict[str, Any]) -> str | None:
    """The reference's rules for a malformed usage row, written plainly (slow, obviously right)."""

    def count(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    call_id = row.get("call_id")
    if not isinstance(call_id, str) or not report.CALL_ID.fullmatch(call_id):
        return "invalid call_id"
    if row.get("phase") != "complete":
        return "invalid phase"
    for name in report.IDENTITY_FIELDS:
        if not isinstance(row.get(name), str) or not row[name]:
            return f"invalid {name}"
    if row.get("outcome") not in report.OUTCOMES:
        return "invalid outcome"
    if row.get("duration_ms") is not None and not count(row["duration_ms"]):
        return "invalid duration"
    if row.get("usage_state") == "observed":
        if not count(row.get("input_tokens")):
            return "invalid input count"
        if not count(row.get("output_tokens")):
            return "invalid output count"
        if any(n in row and not count(row[n]) for n in ("cache_read_tokens", "cache_write_tokens")):
            return "invalid cache count"
        if "reasoning_tokens" in row and not count(row["reasoning_tokens"]):
            return "invalid cache count"
        if "reasoning_tokens" in row and row["reasoning_tokens"] > row["output_tokens"]:
            return "invalid reasoning subset"
        return None
    if row.get("usage_state") == "unavailable":
        counts = (*report.TOKEN_FIELDS, "reasoning_tokens")
        return "unavailable row contains token counts" if any(n in row for n in counts) else None
    return "invalid usage state"


_odd: st.SearchStrategy[object] = st.sampled_from([None, "", 0, -1, 1, True, 2.5, "x", [], {}])
_usage_fields = {
    "call_id": st.sampled_from(["c-1", "bad/id", ""]) | _odd,
    "phase": st.sampled_from(["complete", "claimed"]) | _odd,
    "workflow": st.sampled_from(["cm-ai"]) | _odd,
    "stage": st.sampled_from(["s"]) | _odd,
    "adapter": st.sampled_from(["a", "openai-compatible"]) | _odd,
    "outcome": st.sampled_from(list(report.OUTCOMES)) | _odd,
    "duration_ms": st.sampled_from([0, 5]) | _odd,
    "usage_state": st.sampled_from(["observed", "unavailable"]) | _odd,
    "input_tokens": st.sampled_from([0, 7]) | _odd,
    "output_tokens": st.sampled_from([0, 7]) | _odd,
    "cache_read_tokens": st.sampled_from([0, 7]) | _odd,
    "cache_write_tokens": st.sampled_from([0, 7]) | _odd,
    "reasoning_tokens": st.sampled_from([0, 7, 8]) | _odd,
    "effective_model": st.sampled_from(["m"]) | _odd,
}


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional=_usage_fields))
def test_fast_usage_check_matches_the_plain_rules(changes: dict[str, Any]) -> None:
    row = {
        "call_id": "c-1",
        "phase": "complete",
        "workflow": "w",
        "runtime": "codex",
        "stage": "s",
        "role": "r",
        "adapter": "a",
        "requested_model": "m",
        "source": "api",
        "purpose": "w:s",
        "outcome": "success",
        "usage_state": "observed",
        "input_tokens": 1,
        "output_tokens": 1,
    }
    row.update(changes)
    assert report.usage_row_error(row) == _spec_reason(row)
    compact = report.check_usage(row)
    if not isinstance(compact, str):
        assert compact[0] == row["call_id"] and compact[2] == row["usage_state"]


def test_parallel_fold_equals_sequential(tmp_path: Path) -> None:
    """--jobs 2 folds runs in worker processes; the JSON and the warnings are identical."""
    home = golden_home(tmp_path)
    sequential = run_report(home, "--json", "--jobs", "1")
    parallel = run_report(home, "--json", "--jobs", "2")
    assert parallel.returncode == sequential.returncode == 0
    assert json.loads(parallel.stdout) == json.loads(sequential.stdout)
    assert parallel.stderr == sequential.stderr
    assert usage_report(["--log-home", str(home), "--jobs", "-1"]).exit_code == 2


def test_native_cli_usage_needs_its_claim(tmp_path: Path) -> None:
    """``source: native-cli-terminal`` usage counts only after its claim, like the adapter's."""
    home = tmp_path / "logs"
    run = "native-fixture-run"
    common = {
        "schema_version": 1,
        "run_id": run,
        "at": "2026-08-06T10:00:00+00:00",
        "workflow": "cm-ai",
        "runtime": "codex",
        "project": "fixture",
        "detail": "d",
        "stage": "review",
        "role": "reviewer",
        "adapter": "codex-cli",
        "requested_model": "fixture",
        "source": "native-cli-terminal",
        "purpose": "workflow-execution",
    }
    usage = {"event": "model_usage", "phase": "complete", "usage_state": "observed", "outcome": "success"}
    counts = {"input_tokens": 100, "output_tokens": 20, "reasoning_tokens": 5}
    rows = [
        {**common, **usage, **counts, "event_id": "u-unclaimed", "call_id": "call-unclaimed"},
        {**common, "event": "model_call", "phase": "claimed", "event_id": "c-1", "call_id": "call-1"},
        {**common, **usage, **counts, "event_id": "u-1", "call_id": "call-1"},
    ]
    write_jsonl(home / "runs" / "2026-08" / f"{run}.jsonl", rows)
    index = {"schema_version": 1, "at": common["at"], "run_id": run, "status": "done"}
    write_jsonl(home / "index.jsonl", [{**index, "log_file": f"runs/2026-08/{run}.jsonl"}])
    proc = run_report(home, "--json")
    out = json.loads(proc.stdout)
    assert out["summary"]["observed_calls"] == 1 and out["summary"]["input_tokens"] == 100
    assert out["invalid_reasons"] == {"managed usage without claim": 1}
    assert "without prior claim" in proc.stderr


def _native_home(tmp_path: Path, usages: list[dict[str, Any]]) -> Path:
    """One run of native CLI calls, each claimed, each usage row written twice (same bytes)."""
    home, run = tmp_path / "logs", "native-fixture-run"
    common = {
        "run_id": run,
        "workflow": "cm-ai",
        "runtime": "codex",
        "stage": "review",
        "role": "reviewer",
        "adapter": "codex-cli",
        "requested_model": "fixture",
        "source": "native-cli-terminal",
        "purpose": "workflow-execution",
    }
    rows: list[dict[str, Any]] = []
    for n, usage in enumerate(usages):
        ids = {"call_id": f"call-{n}"}
        row = {**common, **ids, "event": "model_usage", "phase": "complete", "outcome": "success", **usage}
        rows += [{**common, **ids, "event": "model_call", "phase": "claimed", "event_id": f"c{n}"}, row, row]
    write_jsonl(home / "runs" / "2026-08" / f"{run}.jsonl", rows)
    index = {"at": "2026-08-06T10:00:00+00:00", "run_id": run, "status": "done"}
    write_jsonl(home / "index.jsonl", [{**index, "log_file": f"runs/2026-08/{run}.jsonl"}])
    return home


def test_native_components_are_per_field_and_never_guessed(tmp_path: Path) -> None:
    home = _native_home(
        tmp_path,
        [
            {"usage_state": "observed", "input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 70,
             "reasoning_tokens": 5},
            {"usage_state": "observed", "input_tokens": 10, "output_tokens": 2},
            {"usage_state": "unavailable"},
        ],
    )  # fmt: skip
    out = json.loads(run_report(home, "--json").stdout)
    summary = out["summary"]
    # reasoning is not added to output, cache is not added to input
    assert (summary["input_tokens"], summary["output_tokens"]) == (110, 22)
    assert (summary["observed_calls"], summary["unavailable_calls"]) == (2, 1)
    native = out["native_components"]
    assert native["calls"] == 3 and native["reasoning_is_output_subset"] is True
    fields = native["fields"]
    assert fields["reasoning_tokens"] == {"tokens": 5, "observed_calls": 1, "unavailable_calls": 2}
    assert fields["input_tokens"] == {"tokens": 110, "observed_calls": 2, "unavailable_calls": 1}
    assert fields["cache_write_tokens"] == {"tokens": None, "observed_calls": 0, "unavailable_calls": 3}
    text = run_report(home).stdout
    assert "- native reasoning_tokens: 5; observed 1, unavailable 2" in text
    assert "- native cache_write_tokens: unavailable; observed 0, unavailable 3" in text


def test_native_components_only_from_valid_rows(tmp_path: Path) -> None:
    home = _native_home(
        tmp_path,
        [
            {"usage_state": "observed", "input_tokens": 1, "output_tokens": 2, "reasoning_tokens": 3},
            {"usage_state": "unavailable", "reasoning_tokens": 0},
        ],
    )
    out = json.loads(run_report(home, "--json").stdout)
    assert out["summary"]["observed_calls"] == 0
    assert "native_components" not in out
    assert out["invalid_reasons"]["invalid reasoning subset"] == 2  # each copy (no event_id) is judged


def test_native_components_survive_the_parallel_fold(tmp_path: Path) -> None:
    home = _native_home(tmp_path, [{"usage_state": "observed", "input_tokens": 4, "output_tokens": 3}])
    sequential = json.loads(run_report(home, "--json", "--jobs", "1").stdout)
    parallel = json.loads(run_report(home, "--json", "--jobs", "2").stdout)
    assert sequential == parallel and sequential["native_components"]["calls"] == 1
