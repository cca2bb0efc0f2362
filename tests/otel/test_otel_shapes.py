"""Issue #25: what the OTLP export builds as JSON is a TypedDict (``toolkit.otel.shapes``); these tests
hold the emitted JSON to the declared keys, in the declared order: the normalized efficiency event and
``telemetry record --json``, the records live mode spools, the flusher's ``status.json`` (written with
sorted keys) and the summary of ``telemetry export --otlp --json`` (dry run and sent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.harness import GitRepo, cli, declared_keys, runtime_loads

from toolkit.otel import live
from toolkit.otel.shapes import (
    BilledPart,
    DecisionProjection,
    EfficiencyEvent,
    ExportSummary,
    FlusherStatus,
    LastError,
    NotSentSignal,
    RecordAnswer,
    SignalReport,
    SpooledDecision,
    SpooledEfficiency,
    StatusSignals,
    TracesStatus,
)

RAW_EVENT = {
    "event": "worker_usage",
    "observed_at": "2026-07-30T12:00:00Z",
    "provider": "claude",
    "model": "sonnet",
    "mode": "fresh-capsule",
    "reason_codes": ["INDEPENDENT_CAPSULE"],
    "logical": {"prompt_bytes": 2048},
    "billed": {"output_tokens": 300, "accounting_source": "provider-reported"},
    "outcome": {"elapsed_ms": 4000},
}


def without(shape: type, *optional: str) -> list[str]:
    """The declared keys of ``shape`` less the optional ones a given output leaves out."""
    required: frozenset[str] = getattr(shape, "__required_keys__")  # noqa: B009 - not declared on `type`
    assert set(optional) <= set(declared_keys(shape)) - required
    return [key for key in declared_keys(shape) if key not in optional]


def test_the_normalized_event_has_the_declared_keys_in_order() -> None:
    """``normalize_event`` builds what EfficiencyEvent declares (spans and the CLI read it typed)."""
    from toolkit.runtime.telemetry import normalize_event

    event, _dropped = normalize_event({"schema": "knowzcode.efficiency-event/v1", **RAW_EVENT})
    assert list(event) == declared_keys(EfficiencyEvent)
    assert list(event["billed"]) == declared_keys(BilledPart)


def test_telemetry_record_json_prints_the_declared_answer(git_repo: GitRepo, tmp_path: Path) -> None:
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(RAW_EVENT), encoding="utf-8")
    code, out, err = cli("telemetry", "record", str(event_file), "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert list(answer) == declared_keys(RecordAnswer)
    assert list(answer["event"]) == declared_keys(EfficiencyEvent)
    assert list(answer["event"]["billed"]) == declared_keys(BilledPart)


def test_decision_projection_and_spooled_records_follow_the_declared_keys() -> None:
    from toolkit.otel.spans import decision_projection

    dispatch = {
        "routing": {"mode": "local", "reason_codes": ["LOCAL_CHEAPER"]},
        "rollout": {"rollout": "shadow"},
    }
    with_rollout = live.decision_record("dispatch", dispatch, 1.5)
    assert with_rollout is not None and list(with_rollout) == declared_keys(SpooledDecision)
    route = live.decision_record("route", {"mode": "local", "reason_codes": ["LOCAL_CHEAPER"]}, 0.25)
    assert route is not None and list(route) == without(SpooledDecision, "rollout")
    projected = decision_projection(with_rollout)
    assert projected is not None and list(projected) == declared_keys(DecisionProjection)

    from toolkit.commands.telemetry import normalize_or_raise

    event, _dropped = normalize_or_raise(RAW_EVENT)
    spooled = live.efficiency_record(event, "k#0")
    assert list(spooled) == declared_keys(SpooledEfficiency)
    assert spooled["event"] == event and spooled["event"] is not event  # a copy is spooled


def test_flusher_status_json_follows_the_declared_keys(tmp_path: Path) -> None:
    """status.json is written with sorted keys: the shapes declare that order. A failed delivery
    (every optional key), an earlier flusher's error carried over, then a success."""
    from toolkit.otel.flusher import Flusher
    from toolkit.otel.sdk import Delivery

    otel_dir = tmp_path / "otel"
    otel_dir.mkdir()
    (otel_dir / "batch-00000000000000000001.jsonl").write_text("{}\n", encoding="utf-8")
    refused = Delivery(
        "traces", "http://127.0.0.1:4318/v1/traces", ok=False, attempts=2, http_status=503, reason="HTTP 503"
    )
    Flusher(otel_dir).report("COLLECTOR_UNAVAILABLE", refused.reason, refused)
    status = json.loads((otel_dir / "status.json").read_text(encoding="utf-8"))
    assert list(status) == declared_keys(FlusherStatus)
    assert list(status["signals"]) == declared_keys(StatusSignals)
    assert list(status["signals"]["metrics"]) == declared_keys(NotSentSignal)
    traces = status["signals"]["traces"]
    assert list(traces) == declared_keys(TracesStatus)
    assert list(traces["last_error"]) == declared_keys(LastError)

    later = Flusher(otel_dir)  # a new flusher that fails before any send: no endpoint, no attempts
    later.report("OTLP_ENDPOINT_INVALID", "bad endpoint")
    status = json.loads((otel_dir / "status.json").read_text(encoding="utf-8"))
    traces = status["signals"]["traces"]
    assert list(traces) == without(TracesStatus, "endpoint")
    assert list(traces["last_error"]) == without(LastError, "attempts", "http_status")

    (otel_dir / "batch-00000000000000000001.jsonl").unlink()
    Flusher(otel_dir).report()  # delivered: the earlier flusher's last error is carried as it was
    status = json.loads((otel_dir / "status.json").read_text(encoding="utf-8"))
    assert list(status) == without(FlusherStatus, "error", "message")
    traces = status["signals"]["traces"]
    assert list(traces) == without(TracesStatus, "endpoint") and traces["state"] == "ok"
    assert traces["last_error"]["code"] == "OTLP_ENDPOINT_INVALID"
    assert list(traces["last_error"]) == without(LastError, "attempts", "http_status")


def test_delivery_json_follows_the_declared_keys() -> None:
    from toolkit.otel.sdk import Delivery

    assert list(Delivery("metrics", "http://h:1/v1/metrics", items=3).as_json()) == without(
        SignalReport, "http_status", "reason"
    )
    failed = Delivery("traces", "http://h:1/v1/traces", ok=False, attempts=1, reason="timed out")
    assert list(failed.as_json()) == declared_keys(SignalReport)


def test_export_summary_follows_the_declared_keys(git_repo: GitRepo, tmp_path: Path) -> None:
    """``telemetry export --otlp --json``: the dry run's summary, then a real send's with its signals."""
    pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra (pip install -e '.[otel]')")
    pytest.importorskip("opentelemetry.proto", reason="needs the otel extra (pip install -e '.[otel]')")
    from support.otlp_receiver import receiving

    git_repo.commit("init", {"README.md": "x\n"})
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(RAW_EVENT), encoding="utf-8")
    assert cli("telemetry", "record", str(event_file)).exit_code == 0
    home = {"CM_WORKFLOW_LOG_HOME": str(tmp_path / "cm-home")}  # no CM runs: the event only
    code, out, err = cli("telemetry", "export", "--otlp", "--dry-run", "--json", env=home)
    assert code == 0, err
    dry = json.loads(out)
    assert dry["spans"] == 1 and list(dry) == without(ExportSummary, "signals")
    with receiving() as rx:
        code, out, err = cli("telemetry", "export", "--otlp", rx.url, "--json", env=home)
    assert code == 0, err
    sent = json.loads(out)
    assert sent["exported"] is True and list(sent) == declared_keys(ExportSummary)
    assert list(sent["signals"]) == ["traces", "metrics"]
    for signal in sent["signals"].values():
        assert list(signal) == without(SignalReport, "http_status", "reason")


def test_the_runtime_path_never_loads_the_shapes() -> None:
    """A route decision goes through ``toolkit.otel.live`` (the observer), which names its shapes only
    for the type checker."""
    names = ("toolkit.otel.live", "toolkit.otel.shapes", "toolkit.runtime.op_types")
    loaded = runtime_loads("route", {"input": {"independent_reviewer": True}}, names)
    assert loaded == ["toolkit.otel.live"]
