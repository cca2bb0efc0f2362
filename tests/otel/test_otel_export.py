"""``workgroup telemetry export --otlp``: real records of a real repository, sent to a real OTLP/HTTP
receiver on loopback (tests/support/otlp_receiver.py decodes the protobuf payloads)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from support.harness import cli as workgroup
from support.harness import run_workgroup

from toolkit.cm import event_input, event_write

pytest.importorskip("opentelemetry.sdk", reason="needs the otel extra (pip install -e '.[otel]')")
pytest.importorskip("opentelemetry.proto", reason="needs the otel extra (pip install -e '.[otel]')")

from support.otlp_receiver import free_port, receiving  # noqa: E402

CANARY = "ghp_R8x2Kq9Lm4Tz7Vb1Nc6Wd3Yf5Hg0Js8Pa2Qe"  # a token the privacy engine knows

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


def cli(tmp_path: Path, *args: str, request: object = None) -> int:
    argv = list(args)
    if request is not None:
        path = tmp_path / f"req-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(request), encoding="utf-8")
        argv.insert(2 if args[0] == "telemetry" else 1, str(path))
    return workgroup(*argv).exit_code


def cm_call(
    call_id: str,
    *,
    run_id: str = "run-20260730-aaaa",
    inp: int = 1000,
    out: int = 200,
    root: Path | None = None,
    **extra: Any,
) -> None:
    identity = {
        "call_id": call_id,
        "stage": "build",
        "role": "coder",
        "adapter": "openai-compatible",
        "requested_model": "gpt-5",
        "source": "api",
        "purpose": "cm-ai:build",
    }
    # the project root ties the run to this repository in the shared global index
    common = {
        "workflow": "cm-ai",
        "runtime": "codex",
        "run_id": run_id,
        "project_root": str(root or Path.cwd()),
    }
    event_write.write_event(
        event_input.EventArgs(
            event="model_call",
            phase="claimed",
            detail="coder model call claimed",
            at="2026-07-30T12:00:00Z",
            data_json=json.dumps(identity),
            **common,
        ),
        environ=os.environ,
    )
    usage = {
        **identity,
        "usage_state": "observed",
        "outcome": "success",
        "duration_ms": 1500,
        "input_tokens": inp,
        "output_tokens": out,
        "cache_read_tokens": 400,
        "effective_model": "gpt-5-2026",
        **extra,
    }
    event_write.write_event(
        event_input.EventArgs(
            event="model_usage",
            phase="complete",
            detail="coder model call success",
            at="2026-07-30T12:00:05Z",
            data_json=json.dumps(usage),
            **common,
        ),
        environ=os.environ,
    )


@pytest.fixture
def records(git_repo, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """A repository with one efficiency event, one routing decision and two CM model calls."""
    git_repo.commit("init", {"src/api.py": "a"})
    assert cli(tmp_path, "telemetry", "record", request=EVENT) == 0
    assert cli(tmp_path, "route", "--record", request={"input": {"independent_reviewer": True}}) == 0
    cm_call("call-1")
    cm_call("call-2", inp=50, out=5)
    return git_repo.path  # type: ignore[no-any-return]


def export(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    proc = run_workgroup("telemetry", "export", "--otlp", "--json", *args, cwd=root, env=env, timeout=60)
    out = proc.stdout.decode()
    return proc.returncode, json.loads(out) if out.strip() else {}, proc.stderr.decode()


def by_name(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        span["name"]
        + ("" if span["name"] != "chat gpt-5" else span["attributes"]["workgroup.cm.call_id"]): span
        for span in spans
    }


def test_spans_carry_the_genai_conventions_and_resource(records: Path) -> None:
    with receiving() as rx:
        code, summary, err = export(records, rx.url, "--workgroup", "wg-1", "--run", "run-1")
        assert code == 0, err
        assert summary["exported"] is True
        assert summary["by_source"] == {"cm": 2, "decision": 1, "efficiency": 1}
        spans = by_name(rx.received.spans)
    call = spans["chat gpt-5call-1"]
    assert call["kind"] == 3  # SPAN_KIND_CLIENT
    attrs = call["attributes"]
    assert attrs["gen_ai.operation.name"] == "chat"
    assert attrs["gen_ai.request.model"] == "gpt-5"
    assert attrs["gen_ai.response.model"] == "gpt-5-2026"
    assert (attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"]) == (1000, 200)
    assert attrs["gen_ai.usage.cache_read.input_tokens"] == 400
    assert attrs["workgroup.cm.role"] == "coder" and attrs["workgroup.run.id"] == "run-20260730-aaaa"
    assert call["end"] - call["start"] == 1_500_000_000  # duration_ms before the completion time
    assert "detail" not in json.dumps(attrs) and "workgroup.cm.project" not in attrs
    efficiency = spans["workgroup.efficiency worker_usage"]
    eattrs = efficiency["attributes"]
    assert eattrs["gen_ai.provider.name"] == "anthropic"
    assert eattrs["gen_ai.request.model"] == "sonnet"
    assert eattrs["gen_ai.usage.input_tokens"] == 1200 + 800 + 100  # input includes cached input
    assert eattrs["gen_ai.usage.cache_read.input_tokens"] == 800
    assert eattrs["gen_ai.usage.cache_creation.input_tokens"] == 100
    assert eattrs["workgroup.reason_codes"] == ("INDEPENDENT_CAPSULE",)
    assert eattrs["workgroup.logical.prompt_bytes"] == 2048
    assert efficiency["end"] - efficiency["start"] == 4_000_000_000
    decision = spans["workgroup.decision route"]["attributes"]
    assert decision["workgroup.mode"] == "fresh-capsule"
    assert decision["workgroup.reason_codes"] == ("INDEPENDENT_CAPSULE", "REVIEW_INDEPENDENCE")
    assert set(decision) == {
        "workgroup.record",
        "workgroup.decision.op",
        "workgroup.mode",
        "workgroup.reason_codes",
    }
    resource = call["resource"]
    assert resource["service.name"] == "workgroup-toolkit"
    assert resource["workgroup.id"] == "wg-1" and resource["workgroup.run.id"] == "run-1"
    assert len(resource["workgroup.repository.id"]) == 32
    assert str(records) not in json.dumps(resource)


def test_metrics_are_cumulative_genai_histograms_and_sums(records: Path) -> None:
    with receiving() as rx:
        code, _summary, err = export(records, rx.url)
        assert code == 0, err
        points = rx.received.points
    usage = [p for p in points if p["name"] == "gen_ai.client.token.usage"]
    cm_input = [
        p
        for p in usage
        if p["attributes"]["gen_ai.token.type"] == "input" and p["attributes"]["workgroup.record"] == "cm"
    ]
    assert len(cm_input) == 1 and cm_input[0]["count"] == 2 and cm_input[0]["sum"] == 1050
    assert cm_input[0]["kind"] == "histogram" and cm_input[0]["temporality"] == 2  # CUMULATIVE
    sums = {
        (p["attributes"]["workgroup.record"], p["attributes"]["workgroup.token.type"]): p["value"]
        for p in points
        if p["name"] == "workgroup.gen_ai.tokens"
    }
    assert sums[("cm", "cache_read")] == 800 and sums[("efficiency", "cache_creation")] == 100
    duration = [p for p in points if p["name"] == "gen_ai.client.operation.duration"]
    assert duration[0]["unit"] == "s" and duration[0]["sum"] == pytest.approx(3.0)
    decisions = [p for p in points if p["name"] == "workgroup.decisions"]
    assert decisions[0]["value"] == 1 and decisions[0]["attributes"]["workgroup.mode"] == "fresh-capsule"


def test_reexport_sends_identical_ids_and_totals(records: Path) -> None:
    with receiving() as rx:
        assert export(records, rx.url)[0] == 0
        first_spans, first_points = list(rx.received.spans), list(rx.received.points)
        assert export(records, rx.url)[0] == 0
        second_spans = rx.received.spans[len(first_spans) :]
        second_points = rx.received.points[len(first_points) :]
    ids = sorted((s["trace_id"], s["span_id"]) for s in first_spans)
    assert ids == sorted((s["trace_id"], s["span_id"]) for s in second_spans)
    assert len(set(ids)) == 4 and all(int(t, 16) and int(s, 16) for t, s in ids)
    key = lambda p: (p["name"], json.dumps(p["attributes"], sort_keys=True))  # noqa: E731
    assert sorted(first_points, key=key) == sorted(second_points, key=key)  # same window, same totals
    calls = [s for s in first_spans if s["name"] == "chat gpt-5"]
    assert len({s["trace_id"] for s in calls}) == 1  # one CM run, one trace


def test_span_ids_survive_later_appends(records: Path, tmp_path: Path) -> None:
    with receiving() as rx:
        assert export(records, rx.url)[0] == 0
        before = {s["name"]: s["span_id"] for s in rx.received.spans if s["name"].startswith("workgroup.")}
        assert (
            cli(tmp_path, "telemetry", "record", request=EVENT) == 0
        )  # an identical event, later in the log
        assert export(records, rx.url)[0] == 0
        later = rx.received.spans[len(rx.received.spans) - 6 :]
    efficiency = [s["span_id"] for s in later if s["name"] == "workgroup.efficiency worker_usage"]
    assert len(efficiency) == 2 and before["workgroup.efficiency worker_usage"] in efficiency
    assert len(set(efficiency)) == 2  # equal lines get distinct ids by occurrence


def test_environment_variables_are_honoured(records: Path) -> None:
    with receiving() as rx:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": rx.url,
            "OTEL_SERVICE_NAME": "team-agents",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci,team=platform%20tools",
            "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
        }
        code, _summary, err = export(records, env=env)
        assert code == 0, err
        resource = rx.received.spans[0]["resource"]
    assert resource["service.name"] == "team-agents"
    assert resource["deployment.environment"] == "ci" and resource["team"] == "platform tools"


def test_since_filters_by_time(records: Path) -> None:
    with receiving() as rx:
        code, summary, _ = export(records, rx.url, "--since", "2026-07-30T12:00:03Z")
        assert code == 0
    assert summary["by_source"] == {"cm": 2, "decision": 1}  # the event ended at 12:00:00
    assert summary["older_than_since"] == 1
    code, summary, _ = export(records, "--dry-run", "--since", "1d")
    assert code == 0 and summary["by_source"] == {"decision": 1}  # only the decision is recent


def test_collector_down_is_an_environment_error(records: Path) -> None:
    started = time.monotonic()
    code, summary, err = export(records, f"http://127.0.0.1:{free_port()}", "--timeout", "1")
    assert code == 3 and summary["error"]["code"] == "COLLECTOR_UNAVAILABLE"  # the --json error object
    assert "COLLECTOR_UNAVAILABLE" in err and "Traceback" not in err
    assert time.monotonic() - started < 30


def test_slow_collector_times_out_then_a_retry_counts_once(records: Path) -> None:
    with receiving() as rx:
        rx.delay = 3.0
        code, _summary, err = export(records, rx.url, "--timeout", "1")
        assert code == 3, err
        rx.release_slow()
        assert rx.wait_idle()  # the slow handlers finished (they still store what they decoded)
        late = {(s["trace_id"], s["span_id"]) for s in rx.received.spans}
        assert export(records, rx.url)[0] == 0
        ids = [(s["trace_id"], s["span_id"]) for s in rx.received.spans]
    assert len(set(ids)) == 4 and late <= set(ids)  # the retry sent the same ids: nothing twice


def test_bad_input_is_refused_with_codes(records: Path) -> None:
    for args, code_name in (
        (("ftp://collector:4318",), "OTLP_ENDPOINT_INVALID"),
        (("http://user:pw@collector:4318",), "OTLP_ENDPOINT_INVALID"),
        (("--since", "yesterday"), "SINCE_INVALID"),
        (("--workgroup", "../x"), "UNSAFE_SEGMENT"),
    ):
        code, summary, err = export(records, *args)
        assert code == 2 and code_name in err and summary["error"]["code"] == code_name, (args, err)
        assert "pw@" not in err and "pw@" not in str(summary)
    proc = run_workgroup("telemetry", "export", cwd=records)
    assert proc.returncode == 2 and b"EXPORT_FORMAT_REQUIRED" in proc.stderr
    # a private resource attribute is not a refusal any more: it is withheld (a pseudonym is sent)
    code, summary, err = export(records, "--dry-run", env={"OTEL_RESOURCE_ATTRIBUTES": f"key={CANARY}"})
    assert code == 0 and summary["withheld"] == 1 and CANARY not in err + json.dumps(summary)


def test_canary_content_never_leaves(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"a.txt": "a"})
    assert cli(tmp_path, "telemetry", "record", request=EVENT) == 0
    # free text of the CM log (detail, project) is written locally but must never be exported
    args = event_input.EventArgs(
        workflow="cm-ai",
        event="model_usage",
        phase="complete",
        runtime="codex",
        run_id="run-20260730-bbbb",
        project_root=str(git_repo.path),
        detail="coder said CANARY-DETAIL-TEXT while fixing",
        project="CANARY-PROJECT-NAME",
        at="2026-07-30T12:00:05Z",
        data_json=json.dumps(
            {
                "call_id": "call-9",
                "stage": "build",
                "role": "coder",
                "adapter": "manual",
                "requested_model": "gpt-5",
                "source": "api",
                "purpose": "cm-ai:build",
                "usage_state": "observed",
                "outcome": "success",
                "input_tokens": 1,
                "output_tokens": 1,
            }
        ),
    )
    written = event_write.write_event(args, environ=os.environ).result
    run_log = Path(written["global_log"])
    row = json.loads(run_log.read_text(encoding="utf-8").splitlines()[-1])
    with open(run_log, "a", encoding="utf-8") as handle:  # a hand-edited CM line with a secret label
        handle.write(json.dumps({**row, "event_id": "edited-1", "call_id": "call-10", "task": CANARY}) + "\n")
    log = git_repo.path / ".git" / "workgroup" / "telemetry.jsonl"
    with open(log, "a", encoding="utf-8") as handle:  # a hand-edited line with a secret is skipped
        handle.write(json.dumps({**EVENT, "schema": "knowzcode.efficiency-event/v1", "model": CANARY}) + "\n")
    with receiving() as rx:
        code, summary, err = export(git_repo.path, rx.url)
        assert code == 0, err
        payload = b"".join(rx.received.raw)
    # the hand-edited CM label is sent withheld; the efficiency event with a secret is skipped
    assert summary["by_source"] == {"cm": 2, "efficiency": 1}
    assert summary["skipped"] == {"private content": 1} and summary["withheld"] == 1
    for canary in (CANARY, "CANARY-DETAIL-TEXT", "CANARY-PROJECT-NAME", str(git_repo.path)):
        assert canary.encode() not in payload


def test_no_repository_and_missing_port(tmp_path: Path) -> None:
    proc = run_workgroup("telemetry", "export", "--otlp", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 3 and b"Traceback" not in proc.stderr


def test_cm_runs_of_other_projects_stay_out(records: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    cm_call("call-other", run_id="run-20260730-9999", root=other)  # same machine, same log home
    code, summary, _ = export(records, "--dry-run")
    assert code == 0 and summary["by_source"]["cm"] == 2
    code, summary, _ = export(records, "--dry-run", "--all-cm-runs")
    assert code == 0 and summary["by_source"]["cm"] == 3


def test_agent_log_calls_become_genai_spans_without_content(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from support.usage_fixtures import CANARY as LOG_CANARY
    from support.usage_fixtures import build

    git_repo.commit("init", {"a.txt": "a"})
    env = build(tmp_path / "agent-logs")  # Claude Code and Codex logs of another project
    code, summary, _ = export(git_repo.path, "--dry-run", "--agent-logs", env=env)
    assert code == 0 and summary["by_source"] == {}  # none of them was made in this work tree
    with receiving() as rx:
        code, summary, err = export(git_repo.path, rx.url, "--agent-logs", "--all-agent-projects", env=env)
        assert code == 0, err
        payload = b"".join(rx.received.raw)
        spans, points = list(rx.received.spans), list(rx.received.points)
    assert summary["by_source"]["agent"] == len(spans) > 0
    sources = {s["attributes"]["workgroup.agent.source"] for s in spans}
    assert sources == {"claude", "codex"}
    claude = next(s for s in spans if s["attributes"]["workgroup.agent.source"] == "claude")
    attrs = claude["attributes"]
    assert claude["kind"] == 3 and attrs["gen_ai.provider.name"] == "anthropic"
    assert attrs["gen_ai.usage.input_tokens"] >= attrs["gen_ai.usage.cache_read.input_tokens"]
    assert attrs["workgroup.task_corpus_id"].startswith("anon-")
    assert any(
        p["name"] == "gen_ai.client.token.usage" and p["attributes"]["workgroup.record"] == "agent"
        for p in points
    )
    assert LOG_CANARY.encode() not in payload  # messages, paths, branches of the logs never leave
    with receiving() as rx:  # a second export sends the same ids
        assert export(git_repo.path, rx.url, "--agent-logs", "--all-agent-projects", env=env)[0] == 0
        again = {(s["trace_id"], s["span_id"]) for s in rx.received.spans}
    assert again == {(s["trace_id"], s["span_id"]) for s in spans} and len(again) == len(spans)
