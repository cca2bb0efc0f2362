"""Every private-content rule of the reference runtime's capsule and telemetry checks (CEO-03,
CEO-12), one test each: the phrase, key or value the rule names is refused, and the look-alikes
next to it still pass. Capsules through ``workgroup runtime capsule`` and ``workgroup capsule
seal``; efficiency events through ``workgroup runtime telemetry`` (in a kept field and in a field
the projection drops: the raw event is scanned first) and ``workgroup telemetry record``.

The rules are ours, written from the reference's documented behaviour; where the reference refuses
plain prose (its own weaknesses: "Run the full test suite and attach the log", "thread-safe-queue",
"run-integration-tests", "the Codex agent handles retries"), that prose is a look-alike here.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.harness import GitRepo, cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "records"))
from test_capsule_support import valid_capsule  # noqa: E402

# ---------------------------------------------------------------- capsules

# rule -> (refused, look-alikes that pass)
CAPSULE_VALUE_RULES: dict[str, tuple[list[str], list[str]]] = {
    "bearer": (
        ["call it with Bearer abcdefgh.ijkl", "Bearer x9"],
        ["the bearer of bad news", "Bearer Authentication"],
    ),
    "authorization-header": (
        ["Authorization: Basic dXNlcjpwYXNz", "authorization: Token 9f8e7d6c5b4a"],
        ["Authorization is checked in the middleware"],
    ),
    "npm-token": (["npm_" + "a1B2c3D4e5F6g7H8i9J0k1"], ["set npm_config_cache first"]),
    "url-credentials": (
        ["clone https://deploy:hunter22@example.invalid/repo.git"],
        ["clone https://example.invalid/repo.git"],
    ),
    "jdbc-password": (["jdbc:postgresql://db/app?user=a&password=s3cr3tpw"], ["jdbc:postgresql://db/app"]),
    "sk-rk-pk-key": (
        ["use sk-live_abcdefgh1234", "rk-abcdef123456", "pk-test_12345678"],
        ["disk-usage-report"],
    ),
    "github-token": (["ghp_abcdefghijklmnop1234"], ["ghp_ is the prefix of a personal token"]),
    "gitlab-token": (["glpat-abcdefghijklmnop"], ["glpat- tokens expire"]),
    "slack-token": (["xoxb-1234567890-abcdef"], ["xoxo from the team"]),
    "aws-access-key": (["AKIAABCDEFGHIJKLMNOP"], ["AKIA keys are rotated monthly"]),
    "private-key": (["-----BEGIN RSA PRIVATE KEY-----"], ["-----BEGIN PUBLIC KEY-----"]),
    "jwt": (["eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2Q"], ["eyJ is base64 for a JSON brace"]),
    "secret-assignment": (
        ["password = hunter22", "api_key: abcd1234", "refresh-token=Zx9Qw8Er7"],
        ["password: required", "api_key = os.environ['API_KEY']"],
    ),
    "raw-bulk-content": (
        [
            "chat history kept verbatim",
            "a full system prompt to paste",
            "tool output pasted verbatim",
            "paste the raw transcript below",
            "verbatim chat log",
            "attach the logs in full",
            "the full prior conversation",
            "ambient output copied raw",
        ],
        [
            "Run the full test suite and attach the log",
            "full test log",
            "the log is full of noise",
            "Log raw timings to the artifact",
            "prompt the user for the full path",
        ],
    ),
    "provider-identifier": (
        ["Claude session id: claude-session-1a2b3c4d5e6f", "codex thread 019a2b3c4d5e6f7a"],
        ["the Codex agent handles retries"],
    ),
    "labelled-identifier": (
        ["session: abcdef123456", "run id = 20261204abcd"],
        ["run: pytest", "session: closed"],
    ),
    "prefixed-identifier": (
        ["run_abcdef123456", "sess_9f8e7d6c5b4a3"],
        ["thread-safe-queue", "run-integration-tests"],
    ),
}

# the reference's capsule field-name rule, every name of it (raw_ prefix and _ parts included)
CAPSULE_KEYS = [
    "transcript",
    "raw_transcript",
    "prompt",
    "rawprompt",
    "chat",
    "conversation",
    "log",
    "logs",
    "tool_output",
    "ambient_output",
    "session",
    "session_id",
    "thread_id",
    "agent_id",
    "run_id",
    "platform_handle",
    "provider_handle",
    "credential",
    "credentials",
    "password",
    "passwd",
    "api_key",
    "access_token",
    "refresh_token",
    "auth_token",
    "x_prompt_y",
    "Session_ID",
]


def _runtime(op: str, request: Any) -> tuple[int, dict[str, Any]]:
    result = cli("runtime", op, stdin=json.dumps(request))
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result
    return result.exit_code, json.loads(lines[0])


def _capsule_with(text: str, field: str) -> dict[str, Any]:
    capsule = valid_capsule()
    capsule[field] = [text] if isinstance(capsule[field], list) else text
    return capsule


@pytest.mark.parametrize("rule", sorted(CAPSULE_VALUE_RULES))
def test_capsule_value_rule(rule: str) -> None:
    refused, alike = CAPSULE_VALUE_RULES[rule]
    for text in refused:
        for field in ("objective", "risks", "next_action"):
            code, frame = _runtime("capsule", {"capsule": _capsule_with(text, field)})
            assert code == 1 and frame["code"] == "CAPSULE_PRIVATE_CONTENT", (rule, text, field)
            assert text not in json.dumps(frame)
    for text in alike:
        code, frame = _runtime("capsule", {"capsule": _capsule_with(text, "objective")})
        assert code == 0 and frame["result"]["objective"] == text, (rule, text, frame)


@pytest.mark.parametrize("key", CAPSULE_KEYS)
def test_capsule_key_rule(key: str) -> None:
    from toolkit.runtime.capsule_privacy import engine_findings

    assert engine_findings({key: "x"}), key  # the engine's capsule context names it private
    capsule = valid_capsule()
    capsule[key] = "x"  # the closed schema refuses it first, as in the reference
    code, frame = _runtime("capsule", {"capsule": capsule})
    assert code == 1 and frame["code"] in ("CAPSULE_SCHEMA_INVALID", "CAPSULE_PRIVATE_CONTENT")
    for alike in ("catalog", "dialogue", "verify_ids", "summary", "artifact_refs"):
        assert not engine_findings({alike: "x"}), alike


def test_the_sealing_path_applies_every_capsule_rule(git_repo: GitRepo) -> None:
    git_repo.commit("initial", {"src/app.py": "print('hi')\n"})
    for rule, (refused, alike) in sorted(CAPSULE_VALUE_RULES.items()):
        for text in refused:
            git_repo.write("input/capsule.json", json.dumps(_capsule_with(text, "next_action")))
            code, out, err = cli("capsule", "seal", "input/capsule.json")
            assert code != 0 and "CAPSULE_PRIVATE_CONTENT" in err, (rule, text, err)
            assert text not in out + err
        for text in alike:
            git_repo.write("input/capsule.json", json.dumps(_capsule_with(text, "next_action")))
            code, out, err = cli("capsule", "seal", "input/capsule.json")
            assert code == 0 and json.loads(out)["next_action"] == text, (rule, text, err)


# ---------------------------------------------------------------- telemetry

BASE: dict[str, Any] = {
    "event": "worker_usage",
    "observed_at": "2026-07-30T12:00:00Z",
    "task_corpus_id": "anon-0123456789abcdef",
    "provider": "claude",
    "runtime": "cli",
    "model": "sonnet",
    "logical": {"prompt_bytes": 2048, "tool_output_bytes": 10, "capsule_bytes": 900},
    "billed": {"output_tokens": 300, "accounting_source": "provider-reported"},
}

# the reference's telemetry field-name rule: `(^|_)name($|_)`, any case, prompt_bytes alone exempt
TELEMETRY_KEYS = [
    "prompt",
    "prompt_body",
    "raw_prompt",
    "prompt_text",
    "prompt_tokens",
    "prompt_hash",
    "promptTemplate",
    "source_body",
    "source_code",
    "log",
    "log_body",
    "secret",
    "credential",
    "credentials",
    "password",
    "passwd",
    "api_key",
    "access_token",
    "refresh_token",
    "auth_token",
    "platform_handle",
    "provider_handle",
    "provider_session_id",
    "session_id",
    "session_id_hash",
    "thread_id",
    "agent_id",
    "repository",
    "repository_path",
    "repo",
    "repo_name",
    "file_path",
    "email",
    "owner_email",
    "account_id",
    "account_email",
    "user_id",
    "org_id",
    "organization_id",
    "tenant_id",
    "subscription_id",
    "PROMPT_BYTES_TOTAL",
]
TELEMETRY_KEY_ALIKES = ["catalog", "login_count", "dialog", "promptness", "colour", "messages_count"]

TELEMETRY_VALUE_RULES: dict[str, tuple[list[str], list[str]]] = {
    "bearer": (["Bearer Ab3", "bearer tokens.x"], ["the bearer of", "Bearer authentication"]),
    "provider-keys": (
        ["sk-live_abcdefgh1234", "ghp_abcdefghijklmnop", "glpat-abcdefghijklmnop", "xoxb-1234567890-abcdef"],
        ["disk-usage-report", "xoxo"],
    ),
    "aws-access-key": (["AKIAABCDEFGHIJKLMNOP"], ["AKIA keys"]),
    "private-key": (["-----BEGIN OPENSSH PRIVATE KEY-----"], ["-----BEGIN PUBLIC KEY-----"]),
    "jwt": (["eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlMTIz"], ["eyJ"]),
    "secret-assignment": (["password = hunter22", "secret: Zx9Qw8Er7"], ["password: required"]),
    "session-like-id": (
        ["thread_0123456789", "session-abcdefgh1234", "sess_9f8e7d6c5b4a", "run-20261204-abcd"],
        ["thread-safe-queue", "run-integration-tests"],
    ),
    "url": (["see https://example.com/x", "http://build.internal:8080/job"], ["https is required"]),
    "path": (
        ["/home/alice/project", "/Users/bob/src", "C:\\work\\repo", "./src/app.py", "../secret.txt"],
        ["and/or", "gpt-5.6-sol", "v1.2.3"],
    ),
    "email": (["dev@example.com", "jane.doe@corp-mail.net"], ["at sign @ alone", "user@"]),
    "repository-name": (
        ["repo-acme-web", "project_skunkworks", "repository-payments"],
        ["project plan", "repo"],
    ),
}
# prose the reference refuses in capsules that is no private value in an event either
PROSE = [
    "Run the full test suite and attach the log",
    "thread-safe-queue",
    "run-integration-tests",
    "the Codex agent handles retries",
    "build parser",
]


def _event(**changes: Any) -> dict[str, Any]:
    event = copy.deepcopy(BASE)
    event.update(changes)
    return event


def _telemetry(event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return _runtime("telemetry", {"event": event, "report_dropped": True})


@pytest.mark.parametrize("key", TELEMETRY_KEYS)
def test_telemetry_key_rule(key: str) -> None:
    for event in (
        _event(**{key: 1}),
        _event(logical={**BASE["logical"], key: 1}),
        _event(x=[{"y": {key: None}}]),
    ):
        code, frame = _telemetry(event)
        assert code == 1 and frame["code"] == "PRIVATE_TELEMETRY", (key, event)


def test_telemetry_key_look_alikes_pass() -> None:
    for key in TELEMETRY_KEY_ALIKES:
        code, frame = _telemetry(_event(**{key: 1}))
        assert code == 0 and frame["result"]["dropped_keys"] == [key], (key, frame)
    code, frame = _telemetry(_event())
    assert code == 0 and frame["result"]["event"]["logical"]["prompt_bytes"] == 2048  # the exempt counter


@pytest.mark.parametrize("rule", sorted(TELEMETRY_VALUE_RULES))
def test_telemetry_value_rule(rule: str) -> None:
    refused, alike = TELEMETRY_VALUE_RULES[rule]
    for value in refused:
        # a kept field, a dropped field, a value nested deep in a dropped field
        for event in (_event(model=value), _event(note=value), _event(extra={"a": [{"b": f"x {value} y"}]})):
            code, frame = _telemetry(event)
            assert code == 1 and frame["code"] == "PRIVATE_TELEMETRY", (rule, value, event)
            assert value not in json.dumps(frame)
    for value in [*alike, *PROSE]:
        code, frame = _telemetry(_event(note=value))
        assert code == 0 and frame["result"]["dropped_keys"] == ["note"], (rule, value, frame)


def test_telemetry_record_applies_the_raw_event_rules(git_repo: GitRepo) -> None:
    log = git_repo.path / ".git" / "workgroup" / "telemetry.jsonl"

    def record(event: dict[str, Any]) -> tuple[int, str, str]:
        (git_repo.path / "event.json").write_text(json.dumps(event), encoding="utf-8")
        result = cli("telemetry", "record", "event.json")
        return result.exit_code, result.stdout, result.stderr

    for event in (
        _event(note="dev@example.com"),  # a private value in a field the projection drops
        _event(prompt_tokens=12),  # a prompt* field name
        _event(extra={"transcript_ref": "chat history kept verbatim"}),
    ):
        code, out, err = record(event)
        assert code == 1 and "PRIVATE_TELEMETRY" in err, (event, err)
        assert "example.com" not in out + err
    assert not log.exists()  # nothing recorded
    code, _, err = record(_event(note="build parser"))
    assert code == 0, err
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1
