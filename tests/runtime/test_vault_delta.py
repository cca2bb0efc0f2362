"""Vault delta decisions (VERIFY CEO-11, CEO-20; reference contract test 24)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import runtime_call

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.op_types import VaultDeltaDecision
from toolkit.runtime.protocol import RuntimeContext, execute
from toolkit.runtime.vault_delta import (
    ACTIONS,
    REASONS,
    SEVERITIES,
    delta_hash,
    evaluate_vault_delta,
    normalize_text,
)

BASE = {"category": "pattern", "title": "Retry budget", "content": "Use three retries with jitter."}


def decide(delta: dict[str, Any] | None, **facts: Any) -> VaultDeltaDecision:
    return evaluate_vault_delta({"delta": delta, **facts})


def code_of(delta: dict[str, Any] | None, **facts: Any) -> str:
    with pytest.raises(RuntimeOpError) as info:
        decide(delta, **facts)
    return info.value.code


def test_vocabularies_exact() -> None:
    assert SEVERITIES == ("LOW", "MEDIUM", "HIGH", "CRITICAL")
    assert ACTIONS == ("skip", "amend", "update", "flush", "batch")
    assert "EMPTY_DELTA" in REASONS and "NORMAL_DELTA" in REASONS and len(REASONS) == 9


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  Retry—Budget!! ", "retry budget"),  # punctuation runs become one space, trimmed
        ("ＲＥＴＲＹ", "retry"),  # NFKC folds full-width letters
        ("ﬁle", "file"),  # NFKC ligature
        ("Ünïcode_keys", "ünïcode keys"),  # underscore is punctuation, letters of every script stay
        ("数据 ２", "数据 2"),  # CJK letters and full-width digits
        ("\t\n", ""),
        (None, ""),
    ],
)
def test_normalization(raw: str | None, expected: str) -> None:
    assert normalize_text(raw) == expected


def test_hash_matches_reference_bytes() -> None:
    # sha256 over sorted, compact JSON of the normalized identity, nulls kept
    expected_bytes = json.dumps(
        {
            "category": "pattern",
            "content": "use three retries with jitter",
            "semantic_key": None,
            "supersedes": None,
            "title": "retry budget",
        },
        separators=(",", ":"),
        sort_keys=True,
    ).encode()
    assert delta_hash(BASE) == hashlib.sha256(expected_bytes).hexdigest()


@pytest.mark.parametrize(
    "delta",
    [
        None,  # no delta at all
        {},
        {"title": "  ", "content": "!!!"},  # only punctuation normalizes away
        {"category": "pattern", "semantic_key": "k"},  # identity without any text is still empty
    ],
)
def test_empty_delta_skipped(delta: dict[str, Any] | None) -> None:
    assert decide(delta) == {"action": "skip", "reason": "EMPTY_DELTA"}


def test_supersedes_alone_is_not_empty() -> None:
    assert decide({"supersedes": "K-1"}) == {"action": "batch", "reason": "NORMAL_DELTA"}


def test_exact_duplicate_by_prior_delta() -> None:
    prior = [{"category": "Pattern", "title": "retry   budget", "content": "Use three retries, with jitter!"}]
    assert decide(BASE, previous_deltas=prior) == {"action": "skip", "reason": "SEMANTIC_DUPLICATE"}


def test_exact_duplicate_by_previous_hash() -> None:
    assert decide(BASE, previous_hashes=[delta_hash(BASE)]) == {
        "action": "skip",
        "reason": "SEMANTIC_DUPLICATE",
    }


def test_same_content_under_other_identity_is_duplicate() -> None:
    prior = [{**BASE, "semantic_key": "other-key", "KnowledgeId": "K-9"}]
    assert (
        decide({**BASE, "semantic_key": "new-key"}, previous_deltas=prior)["reason"] == "SEMANTIC_DUPLICATE"
    )


def test_source_hash_is_not_identity() -> None:
    prior = [{**BASE, "source_hash": "abc"}]
    assert decide({**BASE, "source_hash": "def"}, previous_deltas=prior)["reason"] == "SEMANTIC_DUPLICATE"


@pytest.mark.parametrize("id_field", ["KnowledgeId", "knowledgeId", "knowledge_id"])
def test_amend_returns_the_stable_identifier(id_field: str) -> None:
    prior = [{**BASE, "semantic_key": "Retry-Budget", id_field: " K-1 "}]
    changed = {**BASE, "content": "Use five retries.", "semantic_key": "retry budget"}
    assert decide(changed, previous_deltas=prior) == {
        "action": "amend",
        "reason": "SEMANTIC_IDENTITY_CHANGED",
        "KnowledgeId": "K-1",
    }


def test_amend_without_identifier_fails_closed() -> None:
    prior = [{**BASE, "semantic_key": "k"}]
    assert (
        code_of({**BASE, "content": "changed", "semantic_key": "k"}, previous_deltas=prior)
        == "VAULT_TARGET_REQUIRED"
    )


def test_amend_with_two_matching_records_is_ambiguous() -> None:
    prior = [
        {**BASE, "semantic_key": "k", "KnowledgeId": "K-1"},
        {**BASE, "content": "other", "semantic_key": "k", "KnowledgeId": "K-1"},
    ]
    # even the same identifier twice: exactly one prior record is required
    assert (
        code_of({**BASE, "content": "changed", "semantic_key": "k"}, previous_deltas=prior)
        == "VAULT_TARGET_AMBIGUOUS"
    )


def test_amend_with_two_identifier_fields_is_ambiguous() -> None:
    prior = [{**BASE, "semantic_key": "k", "KnowledgeId": "K-1", "knowledge_id": "K-2"}]
    assert (
        code_of({**BASE, "content": "changed", "semantic_key": "k"}, previous_deltas=prior)
        == "VAULT_TARGET_AMBIGUOUS"
    )


def test_update_by_directly_superseded_knowledge_id() -> None:
    prior = [{**BASE, "knowledgeId": "K-7"}]
    new = {"category": "pattern", "title": "Retry budget v2", "content": "Two retries.", "supersedes": "K-7"}
    assert decide(new, previous_deltas=prior) == {
        "action": "update",
        "reason": "SUPERSESSION_CHANGED",
        "KnowledgeId": "K-7",
    }


def test_update_by_same_supersedes_and_category() -> None:
    prior = [{**BASE, "supersedes": "K-1", "knowledge_id": "K-2"}]
    new = {**BASE, "content": "Changed text.", "supersedes": "K-1"}
    assert decide(new, previous_deltas=prior)["KnowledgeId"] == "K-2"
    # another category is another record: no update, a normal batch
    assert decide({**new, "category": "decision"}, previous_deltas=prior) == {
        "action": "batch",
        "reason": "NORMAL_DELTA",
    }


def test_supersedes_identity_is_case_sensitive() -> None:
    prior = [{**BASE, "KnowledgeId": "K-7"}]
    assert decide({"title": "x", "supersedes": "k-7"}, previous_deltas=prior)["action"] == "batch"


def test_update_without_identifier_fails_closed() -> None:
    prior = [{**BASE, "supersedes": "K-1"}]
    assert (
        code_of({**BASE, "content": "changed", "supersedes": "K-1"}, previous_deltas=prior)
        == "VAULT_TARGET_REQUIRED"
    )


@pytest.mark.parametrize(
    ("facts", "delta", "reason"),
    [
        ({"explicit_save": True}, BASE, "EXPLICIT_SAVE"),
        ({"interruption_sensitive": True}, BASE, "INTERRUPTION_SENSITIVE"),
        ({"severity": " high "}, BASE, "HIGH_RISK"),  # trimmed and upper-cased
        ({"severity": "Critical"}, BASE, "HIGH_RISK"),
        ({}, {**BASE, "category": "Correction"}, "DURABILITY_REQUIRED"),
        ({}, {**BASE, "category": "deprecation!"}, "DURABILITY_REQUIRED"),
        # precedence: explicit save before interruption before severity
        ({"explicit_save": True, "interruption_sensitive": True, "severity": "HIGH"}, BASE, "EXPLICIT_SAVE"),
        ({"interruption_sensitive": True, "severity": "HIGH"}, BASE, "INTERRUPTION_SENSITIVE"),
    ],
)
def test_flush_reasons(facts: dict[str, Any], delta: dict[str, Any], reason: str) -> None:
    assert decide(delta, **facts) == {"action": "flush", "reason": reason}


@pytest.mark.parametrize("severity", ["low", "MEDIUM", None])
def test_normal_delta_batches(severity: str | None) -> None:
    assert decide(BASE, severity=severity) == {"action": "batch", "reason": "NORMAL_DELTA"}


@pytest.mark.parametrize("severity", ["", "SEVERE", "hi gh", 3, True, ["HIGH"]])
def test_invalid_severity(severity: object) -> None:
    assert code_of(BASE, severity=severity) == "INVALID_SEVERITY"


def test_severity_checked_before_empty() -> None:
    assert code_of(None, severity="urgent") == "INVALID_SEVERITY"


@pytest.mark.parametrize(
    "facts",
    [
        {"delta": "text"},
        {"delta": {"title": 5}},
        {"delta": BASE, "previous_deltas": {"a": 1}},
        {"delta": BASE, "previous_deltas": ["x"]},
        {"delta": BASE, "previous_hashes": [1]},
        {"delta": BASE, "explicit_save": "yes"},
    ],
)
def test_malformed_input(facts: dict[str, Any]) -> None:
    with pytest.raises(RuntimeOpError) as info:
        evaluate_vault_delta(facts)
    assert info.value.code == "INVALID_REQUEST"


def test_protocol_end_to_end() -> None:
    code, frame = runtime_call("vault-delta", {"input": {"delta": BASE, "severity": "bogus-secret-123"}})
    assert code == 1 and frame["code"] == "INVALID_SEVERITY" and "bogus-secret-123" not in frame["message"]
    code, frame = runtime_call("vault-delta", {"input": {"delta": BASE}})
    assert (code, frame["result"]) == (0, {"action": "batch", "reason": "NORMAL_DELTA"})


_text = st.one_of(st.none(), st.text(max_size=12))
_delta = st.fixed_dictionaries(
    {},
    optional={
        "category": _text,
        "title": _text,
        "content": _text,
        "semantic_key": _text,
        "supersedes": _text,
        "KnowledgeId": _text,
        "knowledge_id": _text,
    },
)


@settings(max_examples=200, deadline=None)
@given(
    _delta,
    st.lists(_delta, max_size=4),
    st.sampled_from([None, "low", "HIGH", "x", 1]),
    st.booleans(),
    st.booleans(),
)
def test_decisions_are_total_and_closed(
    delta: dict[str, Any], prior: list[dict[str, Any]], severity: Any, explicit: bool, interrupt: bool
) -> None:
    request = {
        "input": {
            "delta": delta,
            "previous_deltas": prior,
            "severity": severity,
            "explicit_save": explicit,
            "interruption_sensitive": interrupt,
        }
    }
    frame = execute("vault-delta", request, RuntimeContext())
    if not frame["ok"]:
        assert frame["code"] in {"INVALID_SEVERITY", "VAULT_TARGET_REQUIRED", "VAULT_TARGET_AMBIGUOUS"}
        return
    result = frame["result"]
    assert result["action"] in ACTIONS and result["reason"] in REASONS
    assert ("KnowledgeId" in result) == (result["action"] in ("amend", "update"))
    # a delta is always a duplicate of itself
    again = execute(
        "vault-delta", {"input": {"delta": delta, "previous_deltas": [*prior, delta]}}, RuntimeContext()
    )
    if again["ok"] and result["reason"] != "EMPTY_DELTA":
        assert again["result"] == {"action": "skip", "reason": "SEMANTIC_DUPLICATE"}


def _slow_normalize(value: str) -> str:
    import unicodedata

    folded = unicodedata.normalize("NFKC", value).lower()
    kept = "".join(c if unicodedata.category(c)[0] in "LN" else " " for c in folded)
    return " ".join(kept.split())


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40) | st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_fast_normalization_matches_the_definition(text: str) -> None:
    # the ASCII fast path and the per-character path agree with the rule as written
    assert normalize_text(text) == _slow_normalize(text)


# one input per reason: the vocabulary is walked exhaustively, so a reason that can no longer be
# produced (or a new one without a case) fails here
REASON_CASES: dict[str, dict[str, Any]] = {
    "EMPTY_DELTA": {"delta": {}},
    "SEMANTIC_DUPLICATE": {"delta": BASE, "previous_deltas": [BASE]},
    "SEMANTIC_IDENTITY_CHANGED": {
        "delta": {**BASE, "semantic_key": "k"},
        "previous_deltas": [{"title": "t", "semantic_key": "k", "KnowledgeId": "K"}],
    },
    "SUPERSESSION_CHANGED": {
        "delta": {**BASE, "supersedes": "K"},
        "previous_deltas": [{"title": "t", "KnowledgeId": "K"}],
    },
    "EXPLICIT_SAVE": {"delta": BASE, "explicit_save": True},
    "INTERRUPTION_SENSITIVE": {"delta": BASE, "interruption_sensitive": True},
    "HIGH_RISK": {"delta": BASE, "severity": "HIGH"},
    "DURABILITY_REQUIRED": {"delta": {**BASE, "category": "correction"}},
    "NORMAL_DELTA": {"delta": BASE},
}


@pytest.mark.parametrize("reason", REASONS)
def test_every_reason_is_reachable(reason: str) -> None:
    assert evaluate_vault_delta(REASON_CASES[reason])["reason"] == reason
    assert set(REASON_CASES) == set(REASONS)


def test_runtime_modules_stay_stdlib_only() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolkit.runtime.result_policy, toolkit.runtime.vault_delta, toolkit.runtime.budget,"
        " toolkit.runtime.verification;"
        "heavy = [m for m in ('typer', 'pydantic', 'pygit2', 'yaml', 'click') if m in sys.modules];"
        "sys.exit(1 if heavy else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        # supersedes may select exactly one prior stable id directly, whatever the category
        (
            {
                "delta": {
                    "category": "Correction",
                    "title": "Retry rule",
                    "content": "New policy",
                    "supersedes": "K-1",
                },
                "previous_deltas": [
                    {
                        "category": "Decision",
                        "title": "Retry rule",
                        "content": "Old policy",
                        "KnowledgeId": "K-1",
                    }
                ],
            },
            {"action": "update", "reason": "SUPERSESSION_CHANGED", "KnowledgeId": "K-1"},
        ),
        # the correction category flushes when nothing prior is superseded
        (
            {
                "delta": {
                    "category": "Correction",
                    "title": "Old guidance",
                    "content": "Superseded.",
                    "supersedes": "K-1",
                }
            },
            {"action": "flush", "reason": "DURABILITY_REQUIRED"},
        ),
    ],
)
def test_reference_cases(facts: dict[str, Any], expected: dict[str, Any]) -> None:
    assert evaluate_vault_delta(facts) == expected


@pytest.mark.parametrize(
    "facts",
    [
        # the new delta's own identifier is never a target: only a prior record's counts
        {
            "delta": {
                "title": "Retry",
                "content": "New",
                "semantic_key": "retry",
                "KnowledgeId": "attacker-target",
            },
            "previous_deltas": [{"title": "Retry", "content": "Old", "semantic_key": "retry"}],
        },
        {
            "delta": {
                "category": "Correction",
                "title": "Retry",
                "content": "New",
                "supersedes": "attacker-target",
            },
            "previous_deltas": [
                {
                    "category": "Correction",
                    "title": "Retry",
                    "content": "Old",
                    "supersedes": "attacker-target",
                }
            ],
        },
    ],
)
def test_own_identifier_is_not_a_target(facts: dict[str, Any]) -> None:
    with pytest.raises(RuntimeOpError) as info:
        evaluate_vault_delta(facts)
    assert info.value.code == "VAULT_TARGET_REQUIRED"
