"""The answer shapes of toolkit.runtime.op_types (#25) against what the operations print, and the
runtime path free of them: they are annotations only, never imported by ``workgroup runtime``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.harness import declared_keys, runtime_call, runtime_loads
from support.lineage_fixtures import HOT_NOW, hot_current, hot_lineage
from test_capsule_support import overflow_capsule, valid_capsule

from toolkit.core.capsule_schema import CAPSULE, EVIDENCE, FAILURE, SPEC_REF, Shape
from toolkit.runtime.op_types import (
    ContextCapsule,
    DispatchDecision,
    Evidence,
    Failure,
    LineageDecision,
    ResultPolicyDecision,
    ResultWrites,
    RolloutDecision,
    SemanticDelta,
    SpecRef,
    VaultDeltaDecision,
)
from toolkit.runtime.result_policy import WRITE_KINDS
from toolkit.runtime.route_types import RouteDecision
from toolkit.runtime.vault_delta import TEXT_FIELDS, semantic_delta


def answer(op: str, request: dict[str, Any]) -> dict[str, Any]:
    code, frame = runtime_call(op, request)
    assert code == 0, frame
    result: dict[str, Any] = frame["result"]
    return result


@pytest.mark.parametrize(
    "facts",
    [
        {"write_prohibited": True},  # the early answer: every write false
        {"material": True, "authorize_vault_write": True},
        {"large_raw_output": True},
    ],
)
def test_result_policy_answers_in_its_shape(facts: dict[str, Any]) -> None:
    result = answer("result-policy", {"input": facts})
    assert list(result) == declared_keys(ResultPolicyDecision)
    assert list(result["writes"]) == declared_keys(ResultWrites) == list(WRITE_KINDS)


@pytest.mark.parametrize(
    "facts",
    [
        {"rollout": "off"},
        {"rollout": "on", "recommended_mode": "local"},
        {"rollout": "canary", "task_corpus_id": "anon-0123456789abcdef", "recommended_mode": "resume"},
    ],
)
def test_rollout_answers_in_its_shape(facts: dict[str, Any]) -> None:
    assert list(answer("rollout", {"input": facts})) == declared_keys(RolloutDecision)


def test_lineage_answers_in_its_shape() -> None:
    for lineage in (hot_lineage(), None):
        result = answer("lineage", {"lineage": lineage, "current": hot_current(), "now": HOT_NOW})
        assert list(result) == declared_keys(LineageDecision)


@pytest.mark.parametrize("with_optional_parts", [False, True])
def test_dispatch_answers_in_its_shape(tmp_path: Path, with_optional_parts: bool) -> None:
    request: dict[str, Any] = {
        "routing": {"input": {"role": "builder", "owned_files": ["src/a.py"]}},
        "rollout": {"input": {"rollout": "canary", "task_corpus_id": "anon-0123456789abcdef"}},
    }
    if with_optional_parts:  # lineage and result policy answer objects, else null
        request["lineage"] = {"lineage": hot_lineage(), "current": hot_current(), "now": HOT_NOW}
        request["result_policy"] = {"input": {"material": True}}
    code, frame = runtime_call("dispatch", request, cwd=tmp_path)  # outside a repository
    assert code == 0, frame
    result = frame["result"]
    assert list(result) == declared_keys(DispatchDecision)
    assert list(result["routing"]) == declared_keys(RouteDecision)
    assert list(result["rollout"]) == declared_keys(RolloutDecision)
    if with_optional_parts:
        assert list(result["lineage"]) == declared_keys(LineageDecision)
        assert list(result["result_policy"]) == declared_keys(ResultPolicyDecision)
        assert list(result["result_policy"]["writes"]) == declared_keys(ResultWrites)
    else:
        assert result["lineage"] is None and result["result_policy"] is None


@pytest.mark.parametrize(
    ("shape", "declared"),
    [(ContextCapsule, CAPSULE), (SpecRef, SPEC_REF), (Failure, FAILURE), (Evidence, EVIDENCE)],
)
def test_the_capsule_shapes_are_the_closed_schema(shape: Any, declared: Shape) -> None:
    # the fields in the schema's order, and the same ones that may be left out
    assert declared_keys(shape) == [field.name for field in declared.fields]
    # op_types' annotations are postponed (forward references), so NotRequired is read off their text
    hints = {name: getattr(hint, "__forward_arg__", hint) for name, hint in shape.__annotations__.items()}
    optional = [name for name, hint in hints.items() if str(hint).startswith("NotRequired[")]
    assert optional == list(declared.optional)


@pytest.mark.parametrize("capsule", [valid_capsule(), overflow_capsule()])
def test_capsule_answers_in_its_shape(capsule: dict[str, Any]) -> None:
    request: dict[str, Any] = {"capsule": capsule}
    if capsule["evidence"]:  # moved out to a content-addressed artifact (evidence left empty)
        request |= {"max_bytes": 1450, "artifact_path": "knowzcode/artifacts/e.json"}
        request["artifact_roots"] = ["knowzcode/artifacts"]
    sealed = answer("capsule", request)
    assert set(sealed) == set(declared_keys(ContextCapsule))
    assert list(sealed)[-1] == "capsule_hash"  # sealing puts the seal last; the rest keep their order
    assert list(sealed)[:-1] == [key for key in capsule if key != "capsule_hash"]


def test_vault_delta_answers_in_its_shape() -> None:
    delta = {
        "category": "pattern",
        "title": "Retry budget",
        "content": "Use three retries.",
        "semantic_key": "k",
    }
    plain = answer("vault-delta", {"input": {"delta": delta}})
    assert list(plain) == declared_keys(VaultDeltaDecision)[:2]  # KnowledgeId only for amend and update
    prior = {**delta, "content": "Use two retries.", "KnowledgeId": "kb-1"}
    amend = answer("vault-delta", {"input": {"delta": delta, "previous_deltas": [prior]}})
    assert amend["action"] == "amend"
    assert list(amend) == declared_keys(VaultDeltaDecision)


def test_the_semantic_view_has_the_text_fields() -> None:
    assert declared_keys(SemanticDelta) == list(TEXT_FIELDS)
    assert list(semantic_delta({})) == list(TEXT_FIELDS)


@pytest.mark.parametrize(
    ("op", "request_"),
    [
        ("rollout", {"input": {"rollout": "off"}}),
        ("result-policy", {"input": {}}),
        ("vault-delta", {"input": {"delta": {"title": "t"}}}),
        ("lineage", {"lineage": None, "current": {}, "now": HOT_NOW}),
        ("capsule", {"capsule": []}),
        ("capsule", {"capsule": valid_capsule()}),  # sealed: schema, privacy and path checks all ran
        ("telemetry", {"event": {}}),
        (
            "dispatch",
            {"routing": {}, "rollout": {}, "lineage": {"lineage": None, "current": {}, "now": HOT_NOW}},
        ),
    ],
)
@pytest.mark.usefixtures("without_coverage")  # what the child imports is the subject
def test_the_runtime_path_imports_no_annotation_module(op: str, request_: dict[str, Any]) -> None:
    annotations_only = (
        "typing",
        "toolkit.runtime.op_types",
        "toolkit.runtime.route_types",
        "toolkit.core.jsontypes",
    )
    assert runtime_loads(op, request_, annotations_only) == []
