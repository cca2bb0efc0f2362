"""Efficiency events: namespaces, allowlist projection, privacy and accounting refusals (CEO-12, CEO-19)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import cli, runtime_call

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.protocol import RuntimeContext, execute
from toolkit.runtime.telemetry import BILLED_KEYS, LOGICAL, OUTCOME, normalize_event

BASE: dict[str, Any] = {
    "event": "worker_usage",
    "observed_at": "2026-07-30T12:00:00Z",
    "task_corpus_id": "anon-0123456789abcdef",
    "provider": "claude",
    "runtime": "cli",
    "model": "sonnet",
    "profile": "balanced",
    "mode": "fresh-capsule",
    "reason_codes": ["INDEPENDENT_CAPSULE"],
    "logical": {"estimated_context_occupancy": 0.4, "prompt_bytes": 2048, "capsule_bytes": 900},
    "billed": {"uncached_input_tokens": 1200, "output_tokens": 300, "accounting_source": "provider-reported"},
    "outcome": {"verify_passed": 3, "verify_total": 3, "audit_score": 92.5, "accepted_workgroup": True},
}


def _event(**changes: Any) -> dict[str, Any]:
    event = copy.deepcopy(BASE)
    event.update(changes)
    return event


def _code(event: Any) -> str:
    with pytest.raises(RuntimeOpError) as info:
        normalize_event(event)
    return info.value.code


def test_namespaces_kept_apart_and_missing_counters_null() -> None:
    event, dropped = normalize_event(_event())
    assert event["schema"] == "knowzcode.efficiency-event/v1"
    assert set(event["logical"]) == set(LOGICAL)
    assert set(event["billed"]) == set(BILLED_KEYS)
    assert set(event["outcome"]) == set(OUTCOME)
    assert event["logical"]["compaction_count"] is None
    assert event["billed"]["cache_read_input_tokens"] is None
    assert event["outcome"]["elapsed_ms"] is None
    # a logical size never leaks into billed counters, nor the reverse
    assert event["billed"]["uncached_input_tokens"] == 1200 and event["logical"]["prompt_bytes"] == 2048
    assert dropped == []


def test_unknown_keys_dropped_and_reported() -> None:
    raw = _event(colour="blue", logical={**BASE["logical"], "tokens_guess": 5}, outcome={"bonus": 1})
    event, dropped = normalize_event(raw)
    assert "colour" not in event and "tokens_guess" not in event["logical"]
    assert dropped == ["colour", "logical.tokens_guess", "outcome.bonus"]
    # the op keeps the reference's result shape unless the caller asks for the report
    frame = execute("telemetry", {"event": raw}, RuntimeContext())
    assert frame["result"] == event
    frame = execute("telemetry", {"event": raw, "report_dropped": True}, RuntimeContext())
    assert frame["result"] == {"event": event, "dropped_keys": dropped}


def test_reason_codes_deduplicated_in_router_order() -> None:
    event, _ = normalize_event(
        _event(reason_codes=["CAPABILITY_FALLBACK", "INDEPENDENT_CAPSULE", "CAPABILITY_FALLBACK"])
    )
    assert event["reason_codes"] == ["INDEPENDENT_CAPSULE", "CAPABILITY_FALLBACK"]


def test_integral_floats_become_integers() -> None:
    event, _ = normalize_event(_event(billed={"output_tokens": 300.0, "accounting_source": "authoritative"}))
    assert event["billed"]["output_tokens"] == 300 and isinstance(event["billed"]["output_tokens"], int)


@pytest.mark.parametrize(
    "key",
    [
        "prompt",
        "raw_prompt",
        "prompt_body",
        "source_code",
        "log",
        "secret",
        "password",
        "api_key",
        "access_token",
        "platform_handle",
        "provider_session_id",
        "session_id",
        "thread_id",
        "agent_id",
        "repository",
        "repo",
        "file_path",
        "email",
        "account_id",
        "user_id",
        "org_id",
        "tenant_id",
        "subscription_id",
        "Session_ID",
    ],
)
def test_private_keys_refused_anywhere(key: str) -> None:
    assert _code(_event(**{key: "x"})) == "PRIVATE_TELEMETRY"
    assert _code(_event(outcome={key: 1})) == "PRIVATE_TELEMETRY"
    assert _code(_event(extra=[{"nested": {key: None}}])) == "PRIVATE_TELEMETRY"


def test_prompt_bytes_is_exempt() -> None:
    assert normalize_event(_event())[0]["logical"]["prompt_bytes"] == 2048


@pytest.mark.parametrize(
    "value",
    [
        "Bearer abcdefghijkl",
        "sk-live_abcdefgh12345678",
        "ghp_abcdefghijklmnop",
        "AKIAABCDEFGHIJKLMNOP",
        "-----BEGIN RSA PRIVATE KEY-----",
        "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlMTIz",
        "password = hunter22",
        "session-abcdefgh1234",
        "thread_0123456789",
        "see https://example.com/x",
        "/home/alice/project",
        "/Users/bob/src",
        "C:\\work\\repo",
        "./src/app.py",
        "../secret.txt",
        "dev@example.com",
        "repo-acme-web",
        "project_skunkworks",
    ],
)
def test_private_values_refused(value: str) -> None:
    # in a field the event keeps, before its own validation could name it invalid
    assert _code(_event(model=value)) == "PRIVATE_TELEMETRY"
    assert _code(_event(reason_codes=[value])) == "PRIVATE_TELEMETRY"
    assert _code(_event(billed={"currency": value})) == "PRIVATE_TELEMETRY"
    # the raw event is scanned before the projection drops a field (the reference's order)
    assert _code(_event(note=value)) == "PRIVATE_TELEMETRY"
    assert _code(_event(extra={"deep": [{"text": f"see {value} here"}]})) == "PRIVATE_TELEMETRY"


def test_a_clean_dropped_note_is_dropped_and_reported() -> None:
    event, dropped = normalize_event(_event(note="build parser", extra={"why": "thread-safe-queue"}))
    assert "note" not in event and dropped == ["extra", "note"] and "parser" not in json.dumps(event)


def test_a_large_dropped_note_is_scanned_in_linear_time() -> None:
    import sys
    import time

    slow = 3 if sys.gettrace() is not None else 1  # a tracer slows it ~3x
    start = time.process_time()
    event, dropped = normalize_event(_event(note="a" * 500_000, extra={"blob": "Zx9" * 100_000}))
    assert dropped == ["extra", "note"] and time.process_time() - start < 0.8 * slow  # 1 s per MB at most
    start = time.process_time()
    assert _code(_event(note="raw " * 200_000 + "dev@example.com")) == "PRIVATE_TELEMETRY"
    assert time.process_time() - start < 0.8 * slow
    assert _code(_event(model="m" * 5000)) == "EFFICIENCY_EVENT_INVALID"  # kept values are short


def test_secret_is_never_echoed_by_the_protocol() -> None:
    code, frame = runtime_call("telemetry", {"event": _event(model="ghp_abcdefghijklmnopqrst")})
    assert code == 1 and frame["code"] == "PRIVATE_TELEMETRY"
    assert "ghp_" not in frame["message"]


@pytest.mark.parametrize("source", [None, "estimated", "unknown"])
@pytest.mark.parametrize(
    "field",
    [
        "uncached_input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
        "amount",
        "units",
    ],
)
def test_billed_values_need_authoritative_source(field: str, source: str | None) -> None:
    billed: dict[str, Any] = {field: 1}
    if source is not None:
        billed["accounting_source"] = source
    assert _code(_event(billed=billed)) == "ACCOUNTING_SOURCE_REQUIRED"


@pytest.mark.parametrize("source", ["authoritative", "provider-reported"])
def test_billed_values_accepted_with_source(source: str) -> None:
    event, _ = normalize_event(
        _event(billed={"amount": 1.25, "currency": "USD", "accounting_source": source})
    )
    assert event["billed"]["amount"] == 1.25 and event["billed"]["accounting_source"] == source


def test_no_billed_values_default_source_unknown() -> None:
    event, _ = normalize_event(_event(billed={"currency": "USD"}))
    assert event["billed"]["accounting_source"] == "unknown"


@pytest.mark.parametrize(
    "changes",
    [
        {"event": "dispatch_decision", "mode": None},  # dispatch decision needs a mode
        {"event": "dispatch_decision", "reason_codes": []},  # ... and a reason
        {"outcome": {"verify_passed": 4, "verify_total": 3}},
        {"outcome": {"audit_score": 100.5}},
        {"event": "coffee_break"},
        {"provider": "acme"},
        {"provider": None},
        {"runtime": "browser"},
        {"model": "gpt-4"},
        {"model": "anon-model-xyz"},
        {"profile": "turbo"},
        {"mode": "teleport"},
        {"reason_codes": ["MADE_UP"]},
        {"reason_codes": "LOCAL_CHEAPER"},
        {"task_corpus_id": "customer-7"},
        {"observed_at": "2026-02-31T00:00:00Z"},  # no Feb 31
        {"observed_at": "2026-01-01T00:00:00"},  # offset required
        {"logical": {"compaction_count": -1}},
        {"logical": {"compaction_count": 1.5}},
        {"logical": {"capsule_bytes": True}},
        {"logical": 7},
        {"outcome": {"accepted_workgroup": "yes"}},
        {"billed": {"currency": "usd"}},
    ],
)
def test_event_rules(changes: dict[str, Any]) -> None:
    assert _code(_event(**changes)) == "EFFICIENCY_EVENT_INVALID"


def test_event_rule_boundaries_pass() -> None:
    event, _ = normalize_event(_event(outcome={"verify_passed": 3, "verify_total": 3, "audit_score": 100}))
    assert event["outcome"]["audit_score"] == 100
    event, _ = normalize_event(_event(model="anon-model-0123456789abcdef"))
    assert event["model"] == "anon-model-0123456789abcdef"


def test_non_object_event_is_invalid_request() -> None:
    assert execute("telemetry", {"event": [1]}, RuntimeContext())["code"] == "INVALID_REQUEST"
    assert execute("telemetry", {}, RuntimeContext())["code"] == "INVALID_REQUEST"


_scalars = (
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=False) | st.text(max_size=24)
)
_json = st.recursive(
    _scalars,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=12), c, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    overrides=st.dictionaries(
        st.sampled_from([*BASE, "note", "colour"]),
        _json,
        max_size=4,
    ),
)
def test_fuzz_telemetry_op(overrides: dict[str, Any]) -> None:
    frame = execute("telemetry", {"event": _event(**overrides)}, RuntimeContext())
    if frame["ok"]:
        result = frame["result"]
        assert set(result) == {
            "schema",
            "event",
            "observed_at",
            "task_corpus_id",
            "provider",
            "runtime",
            "model",
            "profile",
            "mode",
            "reason_codes",
            "logical",
            "billed",
            "outcome",
        }
        billed = result["billed"]
        if any(billed[k] is not None for k in ("uncached_input_tokens", "output_tokens", "amount", "units")):
            assert billed["accounting_source"] in ("authoritative", "provider-reported")
    else:
        assert frame["code"] in {
            "PRIVATE_TELEMETRY",
            "ACCOUNTING_SOURCE_REQUIRED",
            "EFFICIENCY_EVENT_INVALID",
        }


def test_shared_privacy_engine_adds_families_the_reference_misses() -> None:
    # Stripe's sk_live_ keys pass the reference's value rules; the shared engine refuses them.
    from toolkit.runtime.telemetry import _PRIVATE_VALUE

    value = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    assert not _PRIVATE_VALUE.search(value)
    assert _code(_event(model=value)) == "PRIVATE_TELEMETRY"


# --- `workgroup telemetry record` -------------------------------------------------------------------


def _record(repo_path: Any, event: Any, *extra: str) -> tuple[int, str, str]:
    import json

    (repo_path / "event.json").write_text(json.dumps(event), encoding="utf-8")
    return cli("telemetry", "record", "event.json", *extra)


def _log(repo_path: Any) -> Any:
    return repo_path / ".git" / "workgroup" / "telemetry.jsonl"


def test_record_appends_normalized_event_when_local(git_repo: Any) -> None:
    import json

    code, out, err = _record(git_repo.path, _event(colour="blue"), "--json")
    assert code == 0
    assert json.loads(out)["dropped_keys"] == ["colour"] and "colour" in err
    lines = _log(git_repo.path).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == normalize_event(_event())[0]


def test_record_writes_nothing_when_off(git_repo: Any) -> None:
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  telemetry: off\n")
    code, _, err = _record(git_repo.path, _event())
    assert code == 0 and "nothing recorded" in err
    assert not _log(git_repo.path).exists()


def test_record_refusals_write_nothing(git_repo: Any) -> None:
    code, _, err = _record(git_repo.path, _event(model="ghp_abcdefghijklmnopqrst"))
    assert code == 1 and "PRIVATE_TELEMETRY" in err and "ghp_" not in err
    code, _, err = _record(git_repo.path, _event(billed={"output_tokens": 3}))
    assert code == 2 and "ACCOUNTING_SOURCE_REQUIRED" in err
    code, _, err = _record(git_repo.path, _event(event="nope"))
    assert code == 2 and "EFFICIENCY_EVENT_INVALID" in err
    assert not _log(git_repo.path).exists()
