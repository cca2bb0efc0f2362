"""The engine API: scan_text / scan_value, contexts, masking, dedupe, inline suppression."""

from __future__ import annotations

import dataclasses

import pytest

from toolkit.privacy import Category, Context, Finding, scan_text, scan_value

# Synthetic, non-working values built from pieces so no literal key sits in the source.
STRIPE = "sk_" + "live_" + "4eC39HqLyjWD4rjtT1zdp7dcFAKE"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"


@pytest.mark.parametrize(
    "text",
    [
        "Run the full test suite and attach the log",  # reference flags raw|full near log
        "thread-safe-queue",  # reference flags thread- + 8 chars
        "run-integration-tests",  # reference flags run- + 8 chars
        "the Codex agent handles retries",  # reference flags provider + agent
    ],
)
def test_harmless_prose_of_the_issue_is_clean(text: str) -> None:
    assert scan_text(text) == []
    assert scan_text(text, Context.CAPSULE) == []


@pytest.mark.parametrize(("text", "rule"), [(STRIPE, "stripe-secret-key"), (GOOGLE, "google-api-key")])
def test_keys_the_reference_misses_are_found(text: str, rule: str) -> None:
    found = scan_text(f'config = "{text}"')
    assert [f.rule for f in found] == [rule]
    assert found[0].category is Category.SECRET


def test_finding_shape_and_masking() -> None:
    text = f"first line\n  key: {STRIPE}\n"
    (finding,) = scan_text(text)
    assert isinstance(finding, Finding)
    assert dataclasses.is_dataclass(finding)
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.line = 3  # type: ignore[misc]
    assert (finding.line, finding.start, finding.end) == (2, 7, 7 + len(STRIPE))
    assert finding.category == "secret"
    assert STRIPE not in finding.masked and STRIPE[4:] not in finding.masked
    assert finding.masked.startswith("sk_l")


def test_columns_are_code_points() -> None:
    text = f"密钥 ✓ {STRIPE}"
    (finding,) = scan_text(text)
    assert text[finding.start : finding.end] == STRIPE


def test_overlapping_rules_keep_the_most_specific() -> None:
    found = scan_text(f'api_key = "{STRIPE}"')
    assert [f.rule for f in found] == ["stripe-secret-key"]


def test_inline_allow_same_line_and_line_above() -> None:
    assert scan_text(f"{STRIPE}  # workgroup: allow stripe-secret-key") == []
    assert scan_text(f"# workgroup: allow secret\n{STRIPE}") == []
    # an allow for another rule does not hide this one
    assert [f.rule for f in scan_text(f"{STRIPE}  # workgroup: allow email-address")] == ["stripe-secret-key"]
    # an allow two lines above does not reach
    assert len(scan_text(f"# workgroup: allow secret\n\n{STRIPE}")) == 1


def test_scan_value_walks_keys_values_and_lists() -> None:
    value = {"objective": "fix", "evidence": [{"summary": f"saw {STRIPE}"}], f"{GOOGLE}": 1}
    found = scan_value(value, Context.CAPSULE)
    assert {(f.pointer, f.rule) for f in found} == {
        ("/evidence/0/summary", "stripe-secret-key"),
        (f"/{GOOGLE}", "google-api-key"),
    }


def test_private_field_names_depend_on_context() -> None:
    record = {"run_id": "cm-ai-20260806-0001", "call_id": "planner-20260806-0001", "event_id": "e-1"}
    assert scan_value(record, Context.EVENT_LOG) == []
    assert scan_value(record, Context.GENERIC) == []
    capsule_hits = scan_value(record, Context.CAPSULE)
    assert [(f.pointer, f.rule) for f in capsule_hits] == [("/run_id", "private-field-session")]
    session = {"session_id": None, "rawPrompt": "x", "prompt_bytes": 12}
    rules = {(f.pointer, f.rule) for f in scan_value(session, Context.TELEMETRY)}
    assert rules == {("/session_id", "private-field-session"), ("/rawPrompt", "private-field-transcript")}


def test_every_context_member_is_accepted() -> None:
    for context in Context:
        assert scan_text(STRIPE, context)[0].rule == "stripe-secret-key"


@pytest.mark.usefixtures("without_coverage")  # the child must import only what the engine imports
def test_engine_and_hook_import_only_the_standard_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import toolkit.privacy, toolkit.hooks.privacy, toolkit.privacy.gate;"
        "heavy = {'typer', 'pydantic', 'pygit2', 'yaml', 'typing_extensions', 'hashlib', 'argparse'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_vocabularies_are_covered() -> None:
    from toolkit.privacy.engine import LINE_RULES, RULE_IDS, RULES
    from toolkit.privacy.keys import KEY_RULES, KeyRule
    from toolkit.privacy.rules import LineRule, Rule

    every: tuple[Rule | LineRule | KeyRule, ...] = (*RULES, *LINE_RULES, *KEY_RULES)
    categories = {r.category for r in every}
    # every category has detectors, but UNREADABLE, which the file reader reports (files.unreadable)
    assert categories == set(Category) - {Category.UNREADABLE}
    contexts = {c for r in RULES for c in r.contexts} | {c for r in KEY_RULES for c in r.contexts}
    assert contexts == set(Context)  # every context selects something
    assert {r.id for r in every} == RULE_IDS
