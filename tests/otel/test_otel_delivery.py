"""Per-signal delivery: one signal refused by a real loopback OTLP receiver (HTTP 503 on one path, or
nothing listening on the metrics URL) is named with its endpoint and reason, the other signal is still
sent and reported delivered; live mode's ``status.json`` follows every delivery attempt (a recovery
clears the error); a CM row held by both the project log and the global log is counted once."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from support.harness import run_workgroup
from support.sync import wait_until

from toolkit.cm import event_input, event_write

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra (pip install -e '.[otel]')")
pytest.importorskip("opentelemetry.proto", reason="needs the otel extra (pip install -e '.[otel]')")

import test_otel_export as export_tests  # noqa: E402
import test_otel_live as live_tests  # noqa: E402
from support.otlp_receiver import free_port, receiving  # noqa: E402
from test_otel_export import export  # noqa: E402
from test_otel_live import env_for, pending_lines, route, wait_for_flusher  # noqa: E402

records = export_tests.records  # the fixtures: a repository with records, one in live mode
live_repo = live_tests.live_repo

ATTEMPTS = r"after \d+ attempts?"


def _error(err: str) -> str:
    lines = [line for line in err.splitlines() if "COLLECTOR_UNAVAILABLE" in line]
    assert lines, err
    return lines[0]


def test_metrics_refused_spans_delivered_names_the_signal(records: Path) -> None:
    with receiving() as rx:
        rx.fail_paths["/v1/metrics"] = -1
        code, summary, err = export(records, rx.url, "--timeout", "1")
        spans, points = list(rx.received.spans), list(rx.received.points)
        refused = dict(rx.refused)
    # exit 3: the export is not complete while a signal is undelivered (a re-run is safe)
    assert code == 3 and summary["error"]["code"] == "COLLECTOR_UNAVAILABLE"
    message = summary["error"]["message"]
    assert re.search(
        rf"^metrics to {re.escape(rx.url)}/v1/metrics: HTTP 503 Service Unavailable {ATTEMPTS}; ", message
    )
    assert "traces delivered (4 spans)" in message and "run the export again" in message
    assert message in _error(err) and "Traceback" not in err
    assert len(spans) == 4 and points == [] and refused["/v1/metrics"] >= 1 and "/v1/traces" not in refused


def test_traces_refused_metrics_still_sent(records: Path) -> None:
    with receiving() as rx:
        rx.fail_paths["/v1/traces"] = -1
        code, summary, _err = export(records, rx.url, "--timeout", "1")
        spans, points = list(rx.received.spans), list(rx.received.points)
    assert code == 3
    message = summary["error"]["message"]
    assert re.search(
        rf"^traces to {re.escape(rx.url)}/v1/traces: HTTP 503 Service Unavailable {ATTEMPTS}; ", message
    )
    assert re.search(r"metrics delivered \(\d+ metric points\)", message)
    assert spans == [] and points  # the metrics went although the spans were refused


def test_metrics_endpoint_down_says_connection_refused(records: Path) -> None:
    port = free_port()
    with receiving() as rx:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": rx.url,
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"http://127.0.0.1:{port}/v1/metrics?key=SECRET-QUERY",
        }
        code, summary, err = export(records, "--timeout", "1", env=env)
    assert code == 3
    message = summary["error"]["message"]
    assert message.startswith(f"metrics to http://127.0.0.1:{port}/v1/metrics: connection refused after ")
    assert "traces delivered (4 spans)" in message
    assert "SECRET-QUERY" not in err + json.dumps(summary)  # a query string is never echoed


def test_both_delivered_reports_each_signal(records: Path) -> None:
    with receiving() as rx:
        code, summary, err = export(records, rx.url)
    assert code == 0, err
    assert summary["exported"] is True
    traces, metrics = summary["signals"]["traces"], summary["signals"]["metrics"]
    assert traces["state"] == "ok" and traces["items"] == 4 and traces["endpoint"] == rx.url + "/v1/traces"
    assert metrics["state"] == "ok" and metrics["items"] == summary["metric_points"]


# ------------------------------------------------------------------ live mode


def _status(otel_dir: Path) -> dict[str, Any]:
    return json.loads((otel_dir / "status.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_live_status_names_the_failure_and_clears_on_recovery(live_repo: Path) -> None:
    otel_dir = live_repo / ".git" / "workgroup" / "otel"
    with receiving() as rx:
        rx.fail_paths["/v1/traces"] = -1
        env = env_for(rx.url, OTEL_BSP_EXPORT_TIMEOUT="300")
        route(live_repo, env)
        assert wait_until((otel_dir / "status.json").exists, timeout=20)  # the flusher has tried
        assert wait_for_flusher(otel_dir)  # and gave up after OTEL_BSP_EXPORT_TIMEOUT of 503s
        failed = _status(otel_dir)
        assert len(pending_lines(otel_dir)) == 1
        rx.fail_paths.clear()
        route(live_repo, env)  # a new flusher sends the backlog and the new record
        rx.wait_for_spans(2)
        assert wait_for_flusher(otel_dir)
        recovered = _status(otel_dir)
    traces = failed["signals"]["traces"]
    assert failed["ok"] is False and failed["error"] == "COLLECTOR_UNAVAILABLE" and failed["pending"] == 1
    assert re.fullmatch(
        rf"COLLECTOR_UNAVAILABLE: traces to {re.escape(rx.url)}/v1/traces: HTTP 503 Service Unavailable "
        rf"{ATTEMPTS}; 1 batch kept for retry",
        failed["message"],
    ), failed["message"]
    assert traces["state"] == "failed" and traces["pending_batches"] == 1 and traces["last_success"] is None
    assert traces["last_error"]["http_status"] == 503 and traces["last_error"]["attempts"] >= 1
    assert failed["signals"]["metrics"]["state"] == "not_sent"  # live mode sends spans only
    # the recovery: every pending batch delivered, so the status is ok and the error is gone
    assert recovered["ok"] is True and recovered["pending"] == 0
    assert "error" not in recovered and "message" not in recovered
    again = recovered["signals"]["traces"]
    assert again["state"] == "ok" and again["pending_batches"] == 0 and isinstance(again["last_success"], str)
    assert again["last_error"]["reason"] == "HTTP 503 Service Unavailable"  # history, with its time
    assert pending_lines(otel_dir) == []


def test_live_status_says_connection_refused(live_repo: Path) -> None:
    otel_dir = live_repo / ".git" / "workgroup" / "otel"
    port = free_port()
    route(live_repo, env_for(f"http://127.0.0.1:{port}", OTEL_BSP_EXPORT_TIMEOUT="300"))
    assert wait_until((otel_dir / "status.json").exists, timeout=20)
    assert wait_for_flusher(otel_dir)
    status = _status(otel_dir)
    assert status["message"].startswith(
        f"COLLECTOR_UNAVAILABLE: traces to http://127.0.0.1:{port}/v1/traces: connection refused after "
    )
    assert status["signals"]["traces"]["last_error"]["reason"] == "connection refused"


# ------------------------------------------------------------------ skipped records counted once


def _usage_row(run_id: str, call_id: str) -> dict[str, Any]:
    return {
        "call_id": call_id,
        "stage": "build",
        "role": "coder",
        "adapter": "manual",
        "requested_model": "gpt-5",
        "source": "api",
        "purpose": "cm-ai:build",
        "usage_state": "observed",
        "outcome": "success",
        "input_tokens": 10,
        "output_tokens": 2,
    }


def test_rows_in_both_cm_logs_are_counted_once(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"specs/README.md": "specs"})
    specs = git_repo.path / "specs"
    written = event_write.write_event(
        event_input.EventArgs(
            workflow="cm-ai",
            event="model_usage",
            phase="complete",
            runtime="codex",
            detail="coder model call success",
            project_root=str(git_repo.path),
            specs_dir=str(specs),
            run_id="run-20260730-ffff",
            at="2026-07-30T12:00:05Z",
            data_json=json.dumps(_usage_row("run-20260730-ffff", "call-1")),
        ),
        environ=os.environ,
    ).result
    project_path, global_path = written["project_log"], written["global_log"]
    assert project_path is not None and global_path is not None  # it names both logs it wrote
    project_log, global_log = Path(project_path), Path(global_path)
    assert written["global_written"] and project_log != global_log
    valid = next(json.loads(line) for line in project_log.read_text(encoding="utf-8").splitlines() if line)
    bad = {**valid, "event_id": "0" * 8 + valid["event_id"][8:], "input_tokens": -5}  # refused by the check
    torn = b'{"event":"model_usage","event_id":"x' + b"\n"  # an unreadable line
    # a copy of the valid row, damaged in the global log (read first): the project log's valid copy
    # is sent, and the record is not counted as skipped
    damaged = (json.dumps({**valid, "output_tokens": "two"}) + "\n").encode()
    others = [
        line + b"\n"
        for line in global_log.read_bytes().splitlines()
        if line and json.loads(line).get("event_id") != valid["event_id"]
    ]
    global_log.write_bytes(damaged + b"".join(others) + (json.dumps(bad) + "\n").encode() + torn)
    with open(project_log, "ab") as handle:
        handle.write((json.dumps(bad) + "\n").encode() + torn)
    proc = run_workgroup(
        "telemetry", "export", "--otlp", "--dry-run", "--json", "--specs-dir", str(specs), cwd=git_repo.path
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["by_source"] == {"cm": 1}
    assert summary["skipped"] == {"invalid model call": 1, "unreadable line": 1}


def test_a_retry_past_the_deadline_keeps_the_last_answer_as_the_reason() -> None:
    # the exporter hands its session what is left of the deadline; at 0 the HTTP library refuses the
    # value (ValueError) before any request: the collector's 503 stays the reason, one attempt counted
    from toolkit.otel.sdk import _Probe, _recording_session

    probe = _Probe()
    session = _recording_session(probe)
    with receiving() as rx:
        rx.fail_paths["/v1/traces"] = -1
        url = rx.url + "/v1/traces"
        assert session.request("POST", url, data=b"x", timeout=1).status_code == 503
        with pytest.raises(ValueError):
            session.request("POST", url, data=b"x", timeout=0)
    assert (probe.attempts, probe.status, probe.reason) == (1, 503, "HTTP 503 Service Unavailable")
