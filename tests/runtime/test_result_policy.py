"""Result policy (VERIFY CEO-09, CEO-18; reference contract tests 25 and 26)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import runtime_call

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.protocol import RuntimeContext, execute
from toolkit.runtime.result_policy import RESULT_MODES, WRITE_KINDS, resolve_result_policy


def writes(**on: bool) -> dict[str, bool]:
    return {kind: on.get(kind, False) for kind in WRITE_KINDS}


NONE = writes()

CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    # a tiny read-only side check returns a bounded result directly
    ({}, {"mode": "ephemeral", "write_prohibited": False, "writes": NONE}),
    # write-prohibited wins over every fact and every authorization
    (
        {
            "write_prohibited": True,
            "material": True,
            "large_raw_output": True,
            "requested_mode": "durable",
            "authorize_vault_write": True,
            "authorize_settings_write": True,
            "authorize_workgroup_write": True,
            "authorize_handoff": True,
            "authorize_artifact": True,
        },
        {"mode": "ephemeral", "write_prohibited": True, "writes": NONE},
    ),
    # write-prohibited also wins over refused authorizations (no error: nothing is needed)
    (
        {"write_prohibited": True, "material": True, "authorize_handoff": False},
        {"mode": "ephemeral", "write_prohibited": True, "writes": NONE},
    ),
    # large raw output is artifact-backed
    (
        {"large_raw_output": True},
        {"mode": "artifact", "write_prohibited": False, "writes": writes(artifact=True)},
    ),
    # large raw output overrides a requested ephemeral mode
    (
        {"large_raw_output": True, "requested_mode": "ephemeral"},
        {"mode": "artifact", "write_prohibited": False, "writes": writes(artifact=True)},
    ),
    # material + large: artifact, and the handoff still stays
    (
        {"requested_mode": "ephemeral", "material": True, "large_raw_output": True},
        {"mode": "artifact", "write_prohibited": False, "writes": writes(handoff=True, artifact=True)},
    ),
    # a requested durable mode keeps its handoff next to the artifact
    (
        {"requested_mode": "durable", "large_raw_output": True},
        {"mode": "artifact", "write_prohibited": False, "writes": writes(handoff=True, artifact=True)},
    ),
    # requested artifact mode without large output is honoured
    (
        {"requested_mode": "artifact"},
        {"mode": "artifact", "write_prohibited": False, "writes": writes(artifact=True)},
    ),
    # requested durable mode needs its handoff
    (
        {"requested_mode": "durable"},
        {"mode": "durable", "write_prohibited": False, "writes": writes(handoff=True)},
    ),
    # vault, settings and workgroup writes only on an explicit true
    (
        {"authorize_vault_write": True},
        {"mode": "ephemeral", "write_prohibited": False, "writes": writes(vault=True)},
    ),
    (
        {"authorize_settings_write": True},
        {"mode": "ephemeral", "write_prohibited": False, "writes": writes(settings=True)},
    ),
    (
        {"authorize_workgroup_write": True},
        {"mode": "ephemeral", "write_prohibited": False, "writes": writes(workgroup=True)},
    ),
    # truthy non-booleans are not authorization (strict === true)
    (
        {"authorize_vault_write": "yes", "authorize_settings_write": 1, "authorize_workgroup_write": [1]},
        {"mode": "ephemeral", "write_prohibited": False, "writes": NONE},
    ),
    # write_prohibited must be exactly true
    (
        {"write_prohibited": "true", "material": True},
        {"mode": "durable", "write_prohibited": False, "writes": writes(handoff=True)},
    ),
    # unknown fields are ignored
    ({"unexpected": {"x": 1}}, {"mode": "ephemeral", "write_prohibited": False, "writes": NONE}),
]


@pytest.mark.parametrize(("facts", "expected"), CASES)
def test_result_policy_table(facts: dict[str, Any], expected: dict[str, Any]) -> None:
    assert resolve_result_policy(facts) == expected


@pytest.mark.parametrize("fact", ["material", "writer", "partial", "resumable", "crosses_phase"])
@pytest.mark.parametrize("requested", [None, "ephemeral", "durable"])
def test_durable_work_cannot_request_away_its_handoff(fact: str, requested: str | None) -> None:
    facts: dict[str, Any] = {fact: True}
    if requested is not None:
        facts["requested_mode"] = requested
    assert resolve_result_policy(facts) == {
        "mode": "durable",
        "write_prohibited": False,
        "writes": writes(handoff=True),
    }


@pytest.mark.parametrize(
    "facts",
    [
        {"material": True, "authorize_handoff": False},
        {"writer": True, "requested_mode": "ephemeral", "authorize_handoff": False},
        {"requested_mode": "durable", "authorize_handoff": False},
        {"crosses_phase": True, "large_raw_output": True, "authorize_handoff": False},
    ],
)
def test_refused_handoff_is_an_error(facts: dict[str, Any]) -> None:
    with pytest.raises(RuntimeOpError) as info:
        resolve_result_policy(facts)
    assert info.value.code == "RESULT_HANDOFF_NOT_AUTHORIZED"


@pytest.mark.parametrize(
    "facts",
    [
        {"large_raw_output": True, "authorize_artifact": False},
        {"requested_mode": "artifact", "authorize_artifact": False},
        {"material": True, "large_raw_output": True, "authorize_artifact": False},
    ],
)
def test_refused_artifact_is_an_error(facts: dict[str, Any]) -> None:
    with pytest.raises(RuntimeOpError) as info:
        resolve_result_policy(facts)
    assert info.value.code == "RESULT_ARTIFACT_NOT_AUTHORIZED"


def test_refusals_that_are_not_needed_are_fine() -> None:
    # authorize_* false on a write the result does not need is not an error
    assert (
        resolve_result_policy({"authorize_handoff": False, "authorize_artifact": False})["mode"]
        == "ephemeral"
    )


@pytest.mark.parametrize("mode", ["", "EPHEMERAL", "disk", 3, True, ["durable"]])
def test_unknown_requested_mode_is_invalid(mode: object) -> None:
    with pytest.raises(RuntimeOpError) as info:
        resolve_result_policy({"requested_mode": mode})
    assert info.value.code == "INVALID_REQUEST"


def test_vocabularies_exact() -> None:
    assert RESULT_MODES == ("ephemeral", "durable", "artifact")
    assert WRITE_KINDS == ("handoff", "artifact", "vault", "settings", "workgroup")


def test_protocol_frames_end_to_end() -> None:
    code, frame = runtime_call("result-policy", {"input": {"material": True}})
    assert code == 0
    assert frame == {
        "ok": True,
        "operation": "result-policy",
        "result": {"mode": "durable", "write_prohibited": False, "writes": writes(handoff=True)},
    }
    code, frame = runtime_call(
        "result-policy",
        {"input": {"large_raw_output": True, "authorize_artifact": False, "note": "secret-value-xyz"}},
    )
    assert code == 1
    assert frame["code"] == "RESULT_ARTIFACT_NOT_AUTHORIZED"
    assert "secret-value-xyz" not in frame["message"]


@pytest.mark.parametrize("request_", [{}, {"input": None}, {"input": []}, {"input": "x"}])
def test_request_shape(request_: dict[str, Any]) -> None:
    frame = execute("result-policy", request_, RuntimeContext())
    assert frame["ok"] is False and frame["code"] == "INVALID_REQUEST"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_facts = st.dictionaries(
    st.sampled_from(
        [
            "write_prohibited",
            "large_raw_output",
            "material",
            "writer",
            "partial",
            "resumable",
            "crosses_phase",
            "requested_mode",
            "authorize_handoff",
            "authorize_artifact",
            "authorize_vault_write",
            "authorize_settings_write",
            "authorize_workgroup_write",
            "other",
        ]
    ),
    st.booleans() | st.sampled_from([None, "ephemeral", "durable", "artifact"]) | _json,
)


@settings(max_examples=200, deadline=None)
@given(_facts)
def test_policy_invariants(facts: dict[str, Any]) -> None:
    frame = execute("result-policy", {"input": facts}, RuntimeContext())
    if not frame["ok"]:
        assert frame["code"] in {
            "INVALID_REQUEST",
            "RESULT_HANDOFF_NOT_AUTHORIZED",
            "RESULT_ARTIFACT_NOT_AUTHORIZED",
        }
        return
    result = frame["result"]
    assert set(result) == {"mode", "write_prohibited", "writes"}
    assert result["mode"] in RESULT_MODES
    if facts.get("write_prohibited") is True:
        assert result == {"mode": "ephemeral", "write_prohibited": True, "writes": NONE}
        return
    if facts.get("large_raw_output") is True:
        assert result["mode"] == "artifact" and result["writes"]["artifact"] is True
    if any(facts.get(k) is True for k in ("material", "writer", "partial", "resumable", "crosses_phase")):
        assert result["writes"]["handoff"] is True
    for kind, key in (
        ("vault", "authorize_vault_write"),
        ("settings", "authorize_settings_write"),
        ("workgroup", "authorize_workgroup_write"),
    ):
        assert result["writes"][kind] is (facts.get(key) is True)
