"""Runtime error frames: for every code, the message is the reference runtime's message for that code.

Callers compare the whole ``{"ok":false,"code","message"}`` frame across runtimes, so the text is part
of the contract. Three layers keep it so:

* a static table of the reference's messages (``safeFailure`` in ``context_efficiency_runtime.mjs``)
  checked against ours, and every code of ours either in that table or declared ours alone;
* one request per code, answered by our protocol end to end (the code is really reachable and its
  frame carries the table's message);
* with ``KNOWZCODE_RUNTIME`` set to a copy of the reference, the same requests through ``node`` and
  through ``workgroup runtime`` as processes: identical frames and exit codes.
"""

from __future__ import annotations

import copy
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.harness import cli
from support.lineage_fixtures import HOT_NOW, hot_current, hot_lineage
from test_runtime_fuzz import CAPSULE  # one valid capsule for the runtime tests

from toolkit.runtime.codes import MESSAGES, OWN_CODES
from toolkit.runtime.protocol import RuntimeContext, run_single

# The reference runtime's message table, code -> text, as it answers on stdout.
REFERENCE_MESSAGES: dict[str, str] = {
    "ACCOUNTING_SOURCE_REQUIRED": "Billed telemetry requires an accounting source.",
    "CAPSULE_ARTIFACT_REF_INVALID": "Capsule rejected an unsafe file reference.",
    "CAPSULE_ARTIFACT_REF_UNAUTHORIZED": "Capsule artifact path is not authorized.",
    "CAPSULE_MANDATORY_OVERFLOW": "Mandatory capsule content exceeds the configured limit.",
    "CAPSULE_PRIVATE_CONTENT": "Capsule rejected private or unbounded content.",
    "CAPSULE_SCHEMA_INVALID": "Capsule does not satisfy its schema.",
    "CAPSULE_STRING_TOO_LONG": "Capsule contains an overlong string.",
    "DISPATCH_FACT_MISMATCH": "Dispatch routing facts conflict with evaluated lineage facts.",
    "EFFICIENCY_EVENT_INVALID": "Efficiency event does not satisfy its schema or allowlists.",
    "INVALID_DATE_TIME": "Date-time must use strict RFC 3339 syntax.",
    "INVALID_OWNERSHIP_PATH": "Writer ownership paths are malformed.",
    "INVALID_REQUEST": "Request must be one valid JSON object for the selected operation.",
    "INVALID_SEVERITY": "Severity must use an allowed level.",
    "PRIVATE_TELEMETRY": "Efficiency event rejected private or repository-identifying content.",
    "REQUEST_TOO_LARGE": "Request exceeds the one-megabyte stdin limit.",
    "RESULT_HANDOFF_NOT_AUTHORIZED": "Durable result handoff is not authorized.",
    "RESULT_ARTIFACT_NOT_AUTHORIZED": "Artifact result persistence is not authorized.",
    "ROLLOUT_RECOMMENDATION_REQUIRED": "Executable rollout requires a recommendation.",
    "UNSUPPORTED_OPERATION": "Unsupported context-efficiency operation.",
    "VAULT_TARGET_AMBIGUOUS": "Vault mutation target is ambiguous.",
    "VAULT_TARGET_REQUIRED": "Vault mutation requires a stable KnowledgeId.",
    "WRITER_SCOPE_REQUIRED": "Writer routing requires an explicit owned path.",
}

EVENT: dict[str, Any] = {"event": "worker_usage", "observed_at": HOT_NOW, "provider": "claude"}


def capsule(**changes: Any) -> dict[str, Any]:
    value = copy.deepcopy(CAPSULE)
    value.update(changes)
    return value


def delta(**fields: Any) -> dict[str, Any]:
    return {"category": "decision", "title": "Token refresh", "content": "Use rotation", **fields}


# code -> (operation, stdin bytes): one request that both runtimes refuse with exactly that code
CASES: dict[str, tuple[str, bytes]] = {
    code: (op, request if isinstance(request, bytes) else json.dumps(request).encode())
    for code, (op, request) in {
        "ACCOUNTING_SOURCE_REQUIRED": ("telemetry", {"event": {**EVENT, "billed": {"output_tokens": 5}}}),
        "CAPSULE_ARTIFACT_REF_INVALID": ("capsule", {"capsule": capsule(read_files=["../etc/passwd"])}),
        "CAPSULE_ARTIFACT_REF_UNAUTHORIZED": (
            "capsule",
            {"capsule": capsule(artifact_refs=["src/out.json"])},
        ),
        "CAPSULE_MANDATORY_OVERFLOW": ("capsule", {"capsule": capsule(), "max_bytes": 64}),
        "CAPSULE_PRIVATE_CONTENT": (
            "capsule",
            {"capsule": capsule(objective="paste the raw transcript here")},
        ),
        "CAPSULE_SCHEMA_INVALID": ("capsule", {"capsule": capsule(raw_prompt="x")}),
        "CAPSULE_STRING_TOO_LONG": ("capsule", {"capsule": capsule(objective="é" * 3000)}),
        "DISPATCH_FACT_MISMATCH": (
            "dispatch",
            {
                "routing": {"input": {"role": "reviewer"}},
                "lineage": {"lineage": hot_lineage(), "current": hot_current(), "now": HOT_NOW},
                "rollout": {"input": {"rollout": "off"}},
            },
        ),
        "EFFICIENCY_EVENT_INVALID": ("telemetry", {"event": {**EVENT, "event": "coffee_break"}}),
        "INVALID_DATE_TIME": (
            "lineage",
            {"lineage": hot_lineage(), "current": hot_current(), "now": "2026-02-31T00:00:00Z"},
        ),
        "INVALID_OWNERSHIP_PATH": ("route", {"input": {"is_writer": True, "owned_files": ["../outside.py"]}}),
        "INVALID_REQUEST": ("route", b"[1, 2]"),
        "INVALID_SEVERITY": ("vault-delta", {"input": {"delta": delta(), "severity": "apocalyptic"}}),
        "PRIVATE_TELEMETRY": ("telemetry", {"event": {**EVENT, "email": "dev@example.com"}}),
        "REQUEST_TOO_LARGE": ("route", b" " * (1_048_576 + 1)),
        "RESULT_HANDOFF_NOT_AUTHORIZED": (
            "result-policy",
            {"input": {"material": True, "authorize_handoff": False}},
        ),
        "RESULT_ARTIFACT_NOT_AUTHORIZED": (
            "result-policy",
            {"input": {"large_raw_output": True, "authorize_artifact": False}},
        ),
        "ROLLOUT_RECOMMENDATION_REQUIRED": ("rollout", {"input": {"rollout": "on", "actual_mode": "local"}}),
        "UNSUPPORTED_OPERATION": ("no-such-op", {"input": {}}),
        "VAULT_TARGET_AMBIGUOUS": (
            "vault-delta",
            {
                "input": {
                    "delta": delta(semantic_key="auth.refresh", content="Rotate every hour"),
                    "previous_deltas": [
                        delta(semantic_key="auth.refresh", KnowledgeId="k-1"),
                        delta(semantic_key="auth.refresh", content="Other", KnowledgeId="k-2"),
                    ],
                }
            },
        ),
        "VAULT_TARGET_REQUIRED": (
            "vault-delta",
            {
                "input": {
                    "delta": delta(semantic_key="auth.refresh", content="Rotate every hour"),
                    "previous_deltas": [delta(semantic_key="auth.refresh")],
                }
            },
        ),
        "WRITER_SCOPE_REQUIRED": ("route", {"input": {"is_writer": True}}),
    }.items()
}


def test_every_shared_code_carries_the_reference_message() -> None:
    assert {code: MESSAGES[code] for code in REFERENCE_MESSAGES} == REFERENCE_MESSAGES


def test_every_code_is_the_reference_s_or_declared_our_own() -> None:
    # a new code must either take the reference's message or be declared ours alone, on purpose
    assert set(MESSAGES) == set(REFERENCE_MESSAGES) | OWN_CODES
    assert not OWN_CODES & set(REFERENCE_MESSAGES)


def test_every_reference_code_has_a_request_here() -> None:
    assert set(CASES) == set(REFERENCE_MESSAGES)


def ours(op: str, stdin: bytes, cwd: Path) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    status = run_single(op, io.BytesIO(stdin), out, RuntimeContext(cwd=str(cwd), environ={}))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    return status, json.loads(lines[0])


@pytest.mark.parametrize("code", sorted(CASES))
def test_each_code_answers_the_reference_frame(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no repository: nothing read from a registry
    op, stdin = CASES[code]
    if code == "UNSUPPORTED_OPERATION":
        answer = cli("runtime", op, stdin=stdin)
        status, frame = answer.exit_code, json.loads(answer.stdout)
    else:
        status, frame = ours(op, stdin, tmp_path)
    assert status == 1
    assert frame == {"ok": False, "code": code, "message": REFERENCE_MESSAGES[code]}


REFERENCE = os.environ.get("KNOWZCODE_RUNTIME")


def _process(command: list[str], stdin: bytes, cwd: Path) -> tuple[int, Any]:
    proc = subprocess.run(command, input=stdin, capture_output=True, cwd=cwd, timeout=60, check=False)
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.skipif(
    not REFERENCE or shutil.which("node") is None,
    reason="set KNOWZCODE_RUNTIME to a copy of the reference context_efficiency_runtime.mjs",
)
@pytest.mark.parametrize("code", sorted(CASES))
def test_same_frame_as_the_reference_process(code: str, tmp_path: Path) -> None:
    op, stdin = CASES[code]
    theirs = _process(["node", str(REFERENCE), op], stdin, tmp_path)
    mine = _process([sys.executable, "-m", "toolkit", "runtime", op], stdin, tmp_path)
    assert theirs == (1, {"ok": False, "code": code, "message": REFERENCE_MESSAGES[code]})
    assert mine == theirs
