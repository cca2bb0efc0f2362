"""toolkit.cm.packet: the one validator shared by `packet check` and the adapter."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import cli

from toolkit.cm.packet import (
    DYNAMIC_REQUIRED,
    MAX_JSON_DEPTH,
    STABLE_PREFIX_KEYS,
    PacketError,
    json_depth_exceeds,
    parse_packet_bytes,
    prefix_digest,
    system_message,
    user_message,
    validate_adapter_input,
)

ID = {"workflow": "cm-prd", "stage": "design_generation", "role": "planner"}


def good() -> dict[str, Any]:
    return {
        "stable_prefix": {key: f"{key} text" for key in reversed(STABLE_PREFIX_KEYS)},
        "dynamic_packet": {
            **ID,
            "objective": "plan the change",
            "identifiers": {"task": "T1"},
            "constraints": ["no new deps"],
            "context": {"requirement": "r"},
            "expected_output": "compact plan",
        },
    }


def test_valid_packet_returns_prefix_in_fixed_order() -> None:
    stable, dynamic = validate_adapter_input(good(), **ID)
    assert tuple(stable) == STABLE_PREFIX_KEYS
    assert dynamic["objective"] == "plan the change"


def test_system_message_sections_and_order_do_not_depend_on_key_order() -> None:
    stable, _ = validate_adapter_input(good(), **ID)
    message = system_message(stable)
    assert message == "\n\n".join(f"[{k}]\n{k} text" for k in STABLE_PREFIX_KEYS)
    shuffled = dict(reversed(list(stable.items())))
    assert system_message(shuffled) == message
    assert prefix_digest(shuffled) == prefix_digest(stable)
    assert prefix_digest(stable).startswith("sha256:") and len(prefix_digest(stable)) == 71


def test_user_message_is_compact_sorted_json() -> None:
    _, dynamic = validate_adapter_input(good(), **ID)
    text = user_message(dynamic)
    assert text == json.dumps(dynamic, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    stripped = text.replace("plan the change", "").replace("no new deps", "").replace("compact plan", "")
    assert " " not in stripped


def _mutate(path: tuple[str, ...], value: Any, delete: bool = False) -> dict[str, Any]:
    packet = good()
    target: Any = packet
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return packet


BAD_CASES: list[tuple[str, Callable[[], object], str]] = [
    # each row: one rule of the adapter's stdin contract
    ("top-level extra key", lambda: {**good(), "extra": 1}, "exactly stable_prefix"),
    ("top-level not an object", lambda: [good()], "exactly stable_prefix"),
    ("prefix missing a key", lambda: _mutate(("stable_prefix", "safety"), None, True), "requires"),
    ("prefix extra key", lambda: _mutate(("stable_prefix", "extra"), "x"), "stable_prefix requires"),
    ("prefix blank value", lambda: _mutate(("stable_prefix", "role"), "  "), "stable_prefix.role"),
    ("prefix non-string", lambda: _mutate(("stable_prefix", "workflow"), 3), "stable_prefix.workflow"),
    ("dynamic not object", lambda: _mutate(("dynamic_packet",), []), "must be a JSON object"),
    ("dynamic missing objective", lambda: _mutate(("dynamic_packet", "objective"), None, True), "objective"),
    # the CM suite's wording for an incomplete packet: "dynamic_packet requires ..."
    ("dynamic empty", lambda: _mutate(("dynamic_packet",), {}), "dynamic_packet requires: workflow, stage"),
    ("dynamic unknown field", lambda: _mutate(("dynamic_packet", "secret_field"), 1), "unsupported fields"),
    ("workflow mismatch", lambda: _mutate(("dynamic_packet", "workflow"), "cm-ai"), "must match --workflow"),
    ("stage mismatch", lambda: _mutate(("dynamic_packet", "stage"), "other"), "must match --stage"),
    ("role mismatch", lambda: _mutate(("dynamic_packet", "role"), "coder"), "must match --role"),
    ("identifiers not object", lambda: _mutate(("dynamic_packet", "identifiers"), []), "identifiers"),
    ("constraints not list", lambda: _mutate(("dynamic_packet", "constraints"), "x"), "constraints"),
    ("constraints blank item", lambda: _mutate(("dynamic_packet", "constraints"), [""]), "list of strings"),
    ("constraints non-string", lambda: _mutate(("dynamic_packet", "constraints"), [1]), "list of strings"),
    ("context not object", lambda: _mutate(("dynamic_packet", "context"), "x"), "context"),
    ("blank expected_output", lambda: _mutate(("dynamic_packet", "expected_output"), ""), "expected_output"),
    ("NaN number", lambda: _mutate(("dynamic_packet", "identifiers"), {"x": float("nan")}), "strict JSON"),
]


@pytest.mark.parametrize(("name", "make", "needle"), BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_packets_are_refused(name: str, make: Any, needle: str) -> None:
    with pytest.raises(PacketError) as info:
        validate_adapter_input(make(), **ID)
    assert needle in info.value.reason


def test_unknown_field_name_is_not_echoed() -> None:
    packet = _mutate(("dynamic_packet", "sk-live-LEAKED"), 1)
    with pytest.raises(PacketError) as info:
        validate_adapter_input(packet, **ID)
    assert "LEAKED" not in str(info.value)


def test_deep_tree_refused() -> None:
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    with pytest.raises(PacketError, match="depth"):
        validate_adapter_input(_mutate(("dynamic_packet", "context"), {"d": deep}), **ID)


def test_deep_tree_names_the_input() -> None:
    deep: Any = "x"
    for _ in range(MAX_JSON_DEPTH + 2):
        deep = [deep]
    with pytest.raises(PacketError) as info:
        validate_adapter_input(_mutate(("dynamic_packet", "context"), {"d": deep}), **ID, label="stdin")
    assert info.value.reason == "stdin exceeds the maximum JSON nesting depth"


DEPTH_CASES = [
    # each row: (JSON bytes, limit, exceeds?) for the pre-parse byte scan
    (b"[" * 3 + b"]" * 3, 3, False),  # exactly at the limit
    (b"[" * 4 + b"]" * 4, 3, True),  # one over
    (b'{"a":{"b":{"c":{}}}}', 3, True),  # objects count like arrays
    (b'["[[[[[[", "{{{{{"]', 3, False),  # brackets inside strings do not count
    (b'["\\\\", [[[]]]]', 3, True),  # an escaped backslash ends before the quote that closes
    (b'["\\"[[[[", 1]', 3, False),  # an escaped quote keeps the string open
    (b"[]" * 50, 3, False),  # many siblings, no depth
]


@pytest.mark.parametrize(("raw", "limit", "exceeds"), DEPTH_CASES)
def test_json_depth_exceeds(raw: bytes, limit: int, exceeds: bool) -> None:
    assert json_depth_exceeds(raw, limit) is exceeds


def test_hostile_depth_refused_before_parsing() -> None:
    """100,000 nested arrays: refused with the depth reason, no RecursionError, no slow parse."""
    with pytest.raises(PacketError) as info:
        parse_packet_bytes(b"[" * 100_000 + b"]" * 100_000, "stdin")
    assert info.value.reason == "stdin exceeds the maximum JSON nesting depth"


def test_parse_packet_bytes_limits() -> None:
    with pytest.raises(PacketError, match="1 MiB"):
        parse_packet_bytes(b" " * (1024 * 1024 + 1))
    with pytest.raises(PacketError, match="strict"):
        parse_packet_bytes(b'{"a": NaN}')
    with pytest.raises(PacketError, match="strict"):
        parse_packet_bytes(b"\xff")
    assert parse_packet_bytes(json.dumps(good()).encode()) == good()


def test_module_is_stdlib_only() -> None:
    code = (
        "import sys, toolkit.cm.packet;"
        "bad=[m for m in ('typer','pydantic','pygit2','yaml','click') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=8))
json_values = st.recursive(
    json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_fuzz_arbitrary_values_only_raise_packet_error(value: Any) -> None:
    try:
        validate_adapter_input(value, **ID)
    except PacketError as exc:
        assert exc.reason


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(("stable_prefix", "dynamic_packet")),
    field=st.text(min_size=1, max_size=12),
    value=json_values,
)
def test_fuzz_mutated_packets(key: str, field: str, value: Any) -> None:
    packet = copy.deepcopy(good())
    packet[key][field] = value
    try:
        stable, dynamic = validate_adapter_input(packet, **ID)
    except PacketError:
        return
    # Whatever passes must satisfy every rule the adapter relies on.
    assert set(stable) == set(STABLE_PREFIX_KEYS)
    assert set(DYNAMIC_REQUIRED) <= set(dynamic) <= set(DYNAMIC_REQUIRED) | {"context"}
    assert user_message(dynamic)


# --- packet build / check / check-output through the CLI (in-process) ---

from pathlib import Path  # noqa: E402

from toolkit.cm.answer_schemas import ROLES, check_output  # noqa: E402
from toolkit.cm.packet import ROLE_ITEMS, missing_items  # noqa: E402


def base(role: str) -> list[str]:
    return [
        "packet",
        "build",
        role,
        "--workflow",
        "cm-ai",
        "--stage",
        "s1",
        "--objective",
        "o",
        "--id",
        "task=T1",
        "--ref",
        "specs/tasks.md",
    ]


def all_items(role: str) -> list[str]:
    return [arg for key in ROLE_ITEMS[role] for arg in ("--item", f"{key}=value of {key}")]


@pytest.mark.parametrize("role", ROLES)
def test_each_role_builds_with_its_items_and_reports_each_missing_one(
    role: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(*base(role), *all_items(role))
    assert code == 0, err
    packet = json.loads(out)
    validate_adapter_input(packet, workflow="cm-ai", stage="s1", role=role)
    assert set(packet["dynamic_packet"]["context"]) == {"artifact_refs", *ROLE_ITEMS[role]}
    for key in ROLE_ITEMS[role]:
        items = [a for k in ROLE_ITEMS[role] if k != key for a in ("--item", f"{k}=v")]
        code, out, err = cli(*base(role), *items)
        assert (code, out) == (1, "")
        assert f"error[MISSING_ITEMS]: missing required items: {key}" in err


def test_missing_common_fields_are_listed_not_filled() -> None:
    code, out, err = cli("packet", "build", "analyst", "--workflow", "cm-prd", "--stage", "s")
    assert (code, out) == (1, "")
    assert (
        "missing required items: objective, identifiers, artifact_refs, current_requirement, "
        "business_map_slice, known_constraints, unresolved_questions"
    ) in err


def test_explicitly_empty_items_count_as_stated() -> None:
    items = [a for k in ROLE_ITEMS["analyst"] for a in ("--item-json", f"{k}=[]")]
    code, out, _ = cli(*base("analyst"), *items)
    assert code == 0 and json.loads(out)["dynamic_packet"]["context"]["unresolved_questions"] == []


def test_tester_retry_needs_failure_evidence() -> None:
    args = [*base("tester"), *all_items("tester"), "--id", "attempt=2"]
    code, _, err = cli(*args)
    assert code == 1 and "missing required items: failure_evidence" in err
    code, out, _ = cli(*args, "--item", "failure_evidence=exit 1: test_login AssertionError; log.txt")
    assert code == 0 and "failure_evidence" in json.loads(out)["dynamic_packet"]["context"]


def test_escalation_records_reason_and_added_scope() -> None:
    args = [*base("coder"), *all_items("coder")]
    code, out, _ = cli(
        *args,
        "--escalate",
        "shared_contract_change",
        "--escalation-reason",
        "api schema changed",
        "--added-scope",
        "src/api.py",
        "--added-scope",
        "docs/api.md",
    )
    assert code == 0
    assert json.loads(out)["dynamic_packet"]["context"]["escalation"] == {
        "trigger": "shared_contract_change",
        "reason": "api schema changed",
        "added_scope": ["src/api.py", "docs/api.md"],
    }
    for bad in (
        ["--escalate", "curiosity", "--escalation-reason", "r", "--added-scope", "x"],
        ["--escalate", "dependency", "--added-scope", "x"],
        ["--escalate", "dependency", "--escalation-reason", "r"],
    ):
        code, out, err = cli(*args, *bad)
        assert (code, out) == (2, "") and "escalation" in err


def test_bad_build_options(tmp_path: Path) -> None:
    items = all_items("coder")
    assert cli(*base("poet"))[0] == 2
    assert cli(*base("coder"), *items, "--item", "UPPER-case=x")[0] == 2
    assert cli(*base("coder"), *items, "--item-json", "x=NaN")[0] == 2
    assert cli(*base("coder"), *items, "--item", "novel_key=x")[0] == 2
    assert cli(*base("coder"), *items, "--ref", "../outside")[0] == 2
    assert cli(*base("coder"), *items, "--ref", "/etc/hosts")[0] == 2
    assert cli(*base("coder"), *items, "--prefix-file", "banner=x")[0] == 2


def test_packet_check(tmp_path: Path) -> None:
    code, out, _ = cli(*base("reviewer"), *all_items("reviewer"))
    path = tmp_path / "p.json"
    path.write_text(out, encoding="utf-8")
    code, out, err = cli("packet", "check", str(path), "--json")
    data = json.loads(out)
    assert (
        code == 0
        and data["ok"]
        and data["prefix_digest"] == prefix_digest(json.loads(path.read_text())["stable_prefix"])
    )
    assert cli("packet", "check", str(path), "--role", "coder")[0] == 2  # identity must match
    packet = json.loads(path.read_text())
    del packet["dynamic_packet"]["context"]["task_diff"]
    path.write_text(json.dumps(packet), encoding="utf-8")
    code, out, err = cli("packet", "check", str(path), "--json")
    assert code == 1 and json.loads(out)["missing"] == ["task_diff"]
    path.write_text("{not json", encoding="utf-8")
    assert cli("packet", "check", str(path))[0] == 2
    assert cli("packet", "check", str(tmp_path / "absent.json"))[0] == 2


def test_missing_items_counts_only_absent_keys() -> None:
    dyn: Any = {"identifiers": {}, "context": {"artifact_refs": [], "task": ""}}  # only what it reads
    assert missing_items("coder", dyn)[0] == "mapped_acs"


def test_pydantic_model_agrees_with_the_validator() -> None:
    from pydantic import ValidationError

    from toolkit.models.packet import AdapterInput

    AdapterInput.model_validate(good())
    # Identity against the CLI and strict-JSON numbers are the adapter's checks, not the file format's.
    skip = {"workflow mismatch", "stage mismatch", "role mismatch", "NaN number"}
    for name, make, _ in BAD_CASES:
        if name in skip:
            continue
        with pytest.raises(ValidationError):
            AdapterInput.model_validate(make())


# --- compact output ---

GOOD_ANSWERS: dict[str, dict[str, Any]] = {
    "analyst": {
        "deltas": ["d"],
        "decisions": ["x"],
        "open_questions": [],
        "mappings": [{"ac": "AC1", "task": "T1"}],
    },
    "coder": {
        "changed_paths": ["src/a.py"],
        "verification": [
            {"command": "pytest -q", "exit_code": 0},
            {
                "command": "ruff check",
                "exit_code": 1,
                "first_error": "E501 a.py:3",
                "evidence_path": ".reviews/ruff.txt",
            },
        ],
        "blockers": [],
        "scope_deviation": None,
    },
    "tester": {
        "case_verdicts": [{"case": "C1", "verdict": "pass"}, {"case": "C2", "verdict": "fail"}],
        "counts": {"passed": 1, "failed": 1, "blocked": 0, "skipped": 0},
        "failing_ids": ["C2"],
        "evidence_paths": [".reviews/t.log"],
        "failures": [
            {"case": "C2", "exit_code": 1, "first_error": "AssertionError", "evidence_path": "t.log"}
        ],
    },
    "reviewer": {
        "findings": [{"severity": "high", "blocking": True, "summary": "missing check", "path": "src/a.py"}],
        "verdict": "request_changes",
        "blocking_count": 1,
        "reviewed_scope": ["src/a.py"],
    },
}
GOOD_ANSWERS["planner"] = GOOD_ANSWERS["analyst"]
GOOD_ANSWERS["browser_qa"] = GOOD_ANSWERS["tester"]


@pytest.mark.parametrize("role", ROLES)
def test_good_compact_answers_pass(role: str) -> None:
    assert check_output(role, copy.deepcopy(GOOD_ANSWERS[role])) == []


def _broken(role: str, change: Any) -> dict[str, Any]:
    answer = copy.deepcopy(GOOD_ANSWERS[role])
    change(answer)
    return answer


BROKEN = [
    # (role, mutation, expected rule) -- each row one rule of the compact-output contract
    ("coder", lambda a: a.update(narration="I thought about..."), "closed"),
    ("coder", lambda a: a["verification"][1].pop("first_error"), "failure_rule"),
    ("coder", lambda a: a["verification"][1].pop("evidence_path"), "failure_rule"),
    ("coder", lambda a: a["verification"][1].pop("command"), "failure_rule"),
    ("coder", lambda a: a["verification"][0].update(output="1 passed"), "compact"),
    ("coder", lambda a: a.pop("blockers"), "missing"),
    ("tester", lambda a: a["failures"][0].pop("exit_code"), "type"),
    ("tester", lambda a: a.update(failures=[]), "failure_rule"),
    ("tester", lambda a: a["counts"].update(failed=3), "consistency"),
    ("tester", lambda a: a.update(failing_ids=[]), "consistency"),
    ("browser_qa", lambda a: a["case_verdicts"][0].update(verdict="ok"), "type"),
    ("reviewer", lambda a: a.update(blocking_count=0), "consistency"),
    ("reviewer", lambda a: a.update(verdict="approve"), "consistency"),
    ("analyst", lambda a: a.update(mappings=[{"ac": "AC1"}]), "type"),
    ("planner", lambda a: a.update(deltas=["x" * 2001]), "compact"),
]


@pytest.mark.parametrize(("role", "change", "rule"), BROKEN)
def test_broken_compact_answers_name_the_rule(role: str, change: Any, rule: str) -> None:
    findings = check_output(role, _broken(role, change))
    assert rule in {f.rule for f in findings}


def test_reviewer_findings_first_via_cli(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    answer = GOOD_ANSWERS["reviewer"]
    path.write_text(json.dumps(answer), encoding="utf-8")
    assert cli("packet", "check-output", "reviewer", str(path))[0] == 0
    reordered = {"verdict": answer["verdict"], **{k: v for k, v in answer.items() if k != "verdict"}}
    path.write_text(json.dumps(reordered), encoding="utf-8")
    code, out, err = cli("packet", "check-output", "reviewer", str(path), "--json")
    assert code == 1 and json.loads(out)["findings"][0]["rule"] == "order"
    path.write_text(json.dumps({"secret": "sk-proj-Zk3pQ9rT5vW8yB2dF6hJ1mN4sX7cL0aE"}), encoding="utf-8")
    code, out, err = cli("packet", "check-output", "coder", str(path))
    assert code == 1 and "sk-proj" not in err + out
    path.write_text("[]", encoding="utf-8")
    assert cli("packet", "check-output", "coder", str(path))[0] == 1
    assert cli("packet", "check-output", "poet", str(path))[0] == 2


@settings(max_examples=200, deadline=None)
@given(role=st.sampled_from(ROLES), value=json_values)
def test_fuzz_check_output_never_crashes(role: str, value: Any) -> None:
    for finding in check_output(role, value):
        assert finding.rule and finding.message


def test_build_out_writes_the_file_atomically(tmp_path: Path) -> None:
    target = tmp_path / "packets" / "coder.json"
    code, out, err = cli(*base("coder"), *all_items("coder"), "--out", str(target))
    assert (code, out) == (0, "") and err.startswith("prefix sha256:")
    packet = json.loads(target.read_text(encoding="utf-8"))
    assert list(packet) == ["stable_prefix", "dynamic_packet"]
    assert list(packet["stable_prefix"]) == list(STABLE_PREFIX_KEYS)
    assert os.listdir(target.parent) == ["coder.json"]


# --- packet build|check refuse private content (issue 15): PACKET_PRIVATE, exit 1, nothing out ---

LEAK = "sk-proj-" + "Qw1Er2Ty3Ui4Op5As6Df7Gh8Jk9Lz0Xc1Vb2N"


def test_packet_build_refuses_a_credential_and_prints_nothing(tmp_path: Path) -> None:
    args = [*base("planner"), *all_items("planner")]
    code, out, err = cli(*args)
    assert code == 0 and out, err  # the clean packet builds
    target = tmp_path / "p.json"
    key = ROLE_ITEMS["planner"][0]  # the credential rides in one of the role's own items
    leaking = [a if a != f"{key}=value of {key}" else f"{key}=token {LEAK}" for a in args]
    code, out, err = cli(*leaking, "--out", str(target))
    assert code == 1 and "PACKET_PRIVATE" in err
    assert out == "" and not target.exists()  # nothing printed, nothing written
    assert LEAK not in err


def test_packet_check_refuses_private_content(tmp_path: Path) -> None:
    clean = good()
    path = tmp_path / "p.json"
    path.write_text(json.dumps(clean), encoding="utf-8")
    code, _, _ = cli("packet", "check", str(path))
    assert code in (0, 1)  # the fixture's role items decide; privacy is what is tested next
    leaky = good()
    leaky["dynamic_packet"]["objective"] = f"email bob.builder@acme-corp.io with {LEAK}"
    path.write_text(json.dumps(leaky), encoding="utf-8")
    code, out, err = cli("packet", "check", str(path), "--json")
    assert code == 1 and "PACKET_PRIVATE" in err
    assert LEAK not in err + out and "bob.builder" not in err + out
