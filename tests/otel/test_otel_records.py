"""The pure parts of the OTLP export: ids, keys, projections, resource and endpoint parsing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.cm_usage_format import EXPORTED
from toolkit.core.errors import InvalidInput
from toolkit.infra import livespool
from toolkit.otel import live
from toolkit.otel.export import parse_since
from toolkit.otel.resource import parse_resource_env, repository_id_from_roots, resource_attributes
from toolkit.otel.sdk import check_endpoint, resolve_endpoints
from toolkit.otel.spans import (
    CM_ATTRIBUTES,
    HistogramPoint,
    Occurrences,
    Skipped,
    cm_span,
    content_key,
    decision_projection,
    efficiency_key,
    efficiency_span,
    metrics_for,
    span_id_for,
    stable_id,
    to_ns,
    trace_id_for,
)

ROW: dict[str, Any] = {
    "event": "model_usage",
    "phase": "complete",
    "event_id": "e-1",
    "run_id": "run-20260730-aaaa",
    "at": "2026-07-30T12:00:05Z",
    "workflow": "cm-ai",
    "runtime": "codex",
    "stage": "build",
    "role": "coder",
    "adapter": "manual",
    "requested_model": "gpt-5",
    "source": "api",
    "purpose": "cm-ai:build",
    "call_id": "c-1",
    "usage_state": "observed",
    "outcome": "success",
    "duration_ms": 250,
    "input_tokens": 5,
    "output_tokens": 1,
    "detail": "free text never leaves",
    "project": "a project name",
}
EVENT: dict[str, Any] = {
    "schema": "knowzcode.efficiency-event/v1",
    "event": "worker_usage",
    "observed_at": "2026-07-30T12:00:00Z",
    "provider": "codex",
    "billed": {"output_tokens": 4, "accounting_source": "authoritative"},
}


def test_stable_ids_are_deterministic_non_zero_and_sized() -> None:
    assert trace_id_for("cm-run:r1") == trace_id_for("cm-run:r1")
    assert trace_id_for("cm-run:r1") != trace_id_for("cm-run:r2")
    assert 0 < trace_id_for("x") < 2**128 and 0 < span_id_for("x") < 2**64
    assert stable_id("span", "x", 64) != stable_id("trace", "x", 64)  # the kind is part of the key


def test_occurrences_number_equal_records_in_order() -> None:
    seen = Occurrences()
    assert [seen.key("a"), seen.key("b"), seen.key("a"), seen.key("a")] == ["a#0", "b#0", "a#1", "a#2"]


def test_efficiency_key_counts_equal_lines_including_neighbours() -> None:
    line = json.dumps(EVENT, separators=(",", ":")).encode()
    digest = content_key(EVENT)
    assert efficiency_key(b"", EVENT) == f"{digest}#0"
    assert efficiency_key(line + b"\n", EVENT) == f"{digest}#1"
    assert efficiency_key(line + b"\n" + line + b"\n", EVENT) == f"{digest}#2"  # consecutive equal lines
    assert efficiency_key(b'{"other":1}\n' + line + b"\n", EVENT) == f"{digest}#1"
    assert efficiency_key(line[:-1] + b',"x":1}\n', EVENT) == f"{digest}#0"  # a longer line is another event


def test_cm_span_keeps_the_allowlist_only() -> None:
    skipped = Skipped()
    span = cm_span(ROW, skipped)
    assert span is not None and skipped.total == 0
    assert span.client and span.end_ns - span.start_ns == 250_000_000
    assert span.span_id == span_id_for("cm:e-1") and span.trace_id == trace_id_for("cm-run:run-20260730-aaaa")
    text = json.dumps(span.attributes)
    assert "free text" not in text and "a project name" not in text
    assert set(span.attributes) <= {*CM_ATTRIBUTES.values(), "workgroup.record", "gen_ai.operation.name"}


@pytest.mark.parametrize(
    "change,reason",
    [
        ({"event_id": None}, "invalid model call"),  # no id: no stable span id
        ({"usage_state": "unavailable"}, "invalid model call"),  # unavailable with token counts
        ({"at": "yesterday"}, "invalid model call"),  # no RFC 3339 time
        ({"outcome": "maybe"}, "invalid model call"),  # outside the CM vocabulary
    ],
)
# private labels are no longer refused here: they are withheld when sent (tests/otel/test_otel_withheld.py)
def test_cm_span_refusals(change: dict[str, Any], reason: str) -> None:
    skipped = Skipped()
    assert cm_span({**ROW, **change}, skipped) is None
    assert skipped.reasons == {reason: 1}


def test_failed_call_carries_its_error_type() -> None:
    span = cm_span({**ROW, "outcome": "blocked"}, Skipped())
    assert span is not None and span.error == "blocked"


def test_efficiency_span_input_tokens_follow_the_conventions() -> None:
    span = efficiency_span(EVENT, "k#0", Skipped())
    assert span is not None
    assert span.attributes["gen_ai.provider.name"] == "openai"
    assert "gen_ai.usage.input_tokens" not in span.attributes  # no input counts reported: none invented
    assert span.attributes["gen_ai.usage.output_tokens"] == 4
    billed = {
        "uncached_input_tokens": 10,
        "cache_read_input_tokens": 90,
        "accounting_source": "authoritative",
    }
    with_cache = efficiency_span({**EVENT, "billed": billed}, "k#0", Skipped())
    assert with_cache is not None and with_cache.attributes["gen_ai.usage.input_tokens"] == 100


@pytest.mark.parametrize(
    "raw,ok",
    [
        ({"op": "route", "mode": "local", "reason_codes": ["LOCAL_CHEAPER"]}, True),  # a decision
        ({"mode": "local", "reason_codes": []}, True),  # routing evidence has no op: route
        ({"op": "dispatch", "mode": "local", "reason_codes": [], "rollout": "canary"}, True),  # with a stage
        ({"op": "capsule", "mode": "local", "reason_codes": []}, False),  # not a decision op
        ({"op": "route", "mode": "delegate-all", "reason_codes": []}, False),  # unknown mode
        ({"op": "route", "mode": "local", "reason_codes": ["see /home/x"]}, False),  # free text as a code
        ({"op": "route", "mode": "local", "reason_codes": [], "rollout": "half"}, False),  # unknown stage
    ],
)
def test_decision_projection(raw: dict[str, Any], ok: bool) -> None:
    assert (decision_projection(raw) is not None) is ok


def test_metrics_count_tokens_by_type_and_calls() -> None:
    spans = [cm_span({**ROW, "event_id": f"e-{n}"}, Skipped()) for n in range(3)]
    metrics = {m.name: m for m in metrics_for([s for s in spans if s is not None])}
    sums = {
        dict(key)["workgroup.token.type"]: value
        for key, value in metrics["workgroup.gen_ai.tokens"].points.items()
    }
    assert sums == {"input": 15, "output": 3}
    (point,) = metrics["gen_ai.client.operation.duration"].points.values()
    assert isinstance(point, HistogramPoint)  # a histogram's point (the sums hold numbers)
    assert point.count == 3 and point.total == pytest.approx(0.75)


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("", {}),  # unset
        ("team=platform", {"team": "platform"}),  # one pair
        ("a=1, b=x%20y ,", {"a": "1", "b": "x y"}),  # spaces around pairs, percent-decoding, trailing comma
        ("k=a=b", {"k": "a=b"}),  # the first '=' splits
    ],
)
def test_resource_env_parses(raw: str, expected: dict[str, str]) -> None:
    assert parse_resource_env(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "novalue",  # no '='
        "bad key=1",  # a space in the key
        "k=%ff",  # not UTF-8 after decoding
        "k=" + "x" * 300,  # too long
    ],
)
def test_resource_env_refused(raw: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_resource_env(raw)
    assert info.value.code == "RESOURCE_ATTRIBUTES_INVALID" and raw not in info.value.message


def test_resource_attributes_precedence() -> None:
    env = {
        "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attrs,workgroup.id=spoofed",
        "OTEL_SERVICE_NAME": "",
    }
    attrs = resource_attributes(env, repository="a" * 32, workgroup="wg")
    assert attrs["service.name"] == "from-attrs" and attrs["workgroup.id"] == "wg"
    assert resource_attributes({"OTEL_SERVICE_NAME": "svc"}, repository=None)["service.name"] == "svc"


def test_repository_id_is_order_free_and_hides_the_roots() -> None:
    roots = ["b" * 40, "a" * 40]
    assert repository_id_from_roots(roots) == repository_id_from_roots(sorted(roots))
    assert repository_id_from_roots([]) is None
    assert "a" * 40 not in (repository_id_from_roots(roots) or "")


@pytest.mark.parametrize(
    "url,ok",
    [
        ("http://collector:4318", True),  # plain
        ("https://otlp.example.invalid/otlp", True),  # TLS with a path prefix
        ("ftp://collector", False),  # not http(s)
        ("http://user:secret@collector:4318", False),  # credentials in the URL
        ("http://:4318", False),  # no host
        ("http://collector:99999", False),  # port out of range
        ("http://collector :4318", False),  # whitespace
    ],
)
def test_check_endpoint(url: str, ok: bool) -> None:
    if ok:
        assert check_endpoint(url) == url
    else:
        with pytest.raises(InvalidInput) as info:
            check_endpoint(url)
        assert "secret" not in info.value.message


def test_endpoint_precedence() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318/",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m:9/custom",
    }
    assert resolve_endpoints("http://arg:1", env).traces == "http://arg:1/v1/traces"
    resolved = resolve_endpoints(None, env)
    assert (resolved.traces, resolved.metrics) == ("http://base:4318/v1/traces", "http://m:9/custom")
    assert resolve_endpoints(None, {}).traces == "http://localhost:4318/v1/traces"


NOW = datetime(2026, 7, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "raw,expected",
    [
        (None, None),  # no filter
        ("30m", to_ns(datetime(2026, 7, 30, 11, 30, tzinfo=UTC))),  # minutes back
        ("7d", to_ns(datetime(2026, 7, 23, 12, 0, tzinfo=UTC))),  # days back
        ("2026-07-01T00:00:00+02:00", to_ns(datetime(2026, 6, 30, 22, 0, tzinfo=UTC))),  # an offset
    ],
)
def test_parse_since(raw: str | None, expected: int | None) -> None:
    assert parse_since(raw, NOW) == expected


@pytest.mark.parametrize("raw", ["yesterday", "2026-07-01", "5w", "-1d", "2026-02-30T00:00:00Z"])
def test_parse_since_refused(raw: str) -> None:
    with pytest.raises(InvalidInput):
        parse_since(raw, NOW)


def test_spooled_cm_fields_cover_the_mapping_and_leave_content_out() -> None:
    assert set(CM_ATTRIBUTES) <= EXPORTED
    assert not {"detail", "project", "project_path", "specs_path"} & EXPORTED


def test_dispatch_decision_record_keeps_vocabulary_only() -> None:
    result = {
        "routing": {"mode": "local", "reason_codes": ["LOCAL_CHEAPER"]},
        "rollout": {"rollout": "shadow", "selected_mode": "local"},
        "lineage": {"state": "HOT"},
    }
    record = live.decision_record("dispatch", result, 1.5)
    assert record is not None
    assert set(record) == {"kind", "id", "op", "mode", "reason_codes", "at", "duration_ms", "rollout"}
    assert record["rollout"] == "shadow" and decision_projection(record) is not None


def test_live_target_in_a_linked_worktree_uses_the_common_dir(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {".workgroup/config.yml": "context_efficiency:\n  telemetry: otlp\n"})
    linked = tmp_path / "linked"
    git_repo.raw.add_worktree("linked", str(linked))
    livespool.forget_targets()
    target = livespool.otel_target(str(linked / ".workgroup"))
    assert target == str((git_repo.path / ".git").resolve() / "workgroup" / "otel")
    livespool.forget_targets()
    assert livespool.otel_target(str(tmp_path)) is None  # not a repository


@pytest.mark.parametrize(
    "record,context",
    [
        ({k: v for k, v in ROW.items() if k in CM_ATTRIBUTES}, "event_log"),  # a clean CM projection
        ({"role": "ghp_R8x2Kq9Lm4Tz7Vb1Nc6Wd3Yf5Hg0Js8Pa2Qe"}, "event_log"),  # a token as a value
        ({"session_id": "abc"}, "telemetry"),  # a private field name
        ({"node": "see /home/jane/notes.txt", "n": 3}, "event_log"),  # a home path beside a number
        ({"op": "route", "reason_codes": ["LOCAL_CHEAPER"]}, "telemetry"),  # nested: the engine walks it
    ],
)
def test_private_free_is_the_engines_verdict(record: dict[str, Any], context: str) -> None:
    from toolkit.otel.spans import private_free
    from toolkit.privacy import Context, scan_value

    for _ in range(2):  # the second time from the per-string cache
        assert private_free(record, context) is (not scan_value(record, Context(context)))
