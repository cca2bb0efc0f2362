"""The stable prefix: fixed order, byte-stable while sources are unchanged, nothing dynamic inside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.harness import cli

from toolkit.cm.answer_schemas import ROLES
from toolkit.cm.packet import STABLE_PREFIX_KEYS, prefix_digest, system_message
from toolkit.cm.prefix import build_prefix


@pytest.mark.parametrize("role", ROLES)
def test_five_sections_in_the_fixed_order(role: str) -> None:
    prefix = build_prefix(role, "cm-ai", "implement")
    assert tuple(prefix) == STABLE_PREFIX_KEYS
    message = system_message(prefix)
    positions = [message.index(f"[{key}]\n") for key in STABLE_PREFIX_KEYS]
    assert positions == sorted(positions) and positions[0] == 0
    assert all(prefix[key].strip() for key in STABLE_PREFIX_KEYS)


def test_byte_identical_while_sources_are_unchanged() -> None:
    first = system_message(build_prefix("coder", "cm-ai", "implement", {"project_rules": "R1"}))
    second = system_message(build_prefix("coder", "cm-ai", "implement", {"project_rules": "R1"}))
    assert first.encode() == second.encode()


def test_digest_changes_when_a_source_changes() -> None:
    base = prefix_digest(build_prefix("coder", "cm-ai", "implement", {"project_rules": "R1"}))
    assert prefix_digest(build_prefix("coder", "cm-ai", "implement", {"project_rules": "R2"})) != base
    assert prefix_digest(build_prefix("tester", "cm-ai", "implement", {"project_rules": "R1"})) != base
    assert prefix_digest(build_prefix("coder", "cm-ai", "verify", {"project_rules": "R1"})) != base


def test_unknown_sections_and_roles_are_refused() -> None:
    with pytest.raises(ValueError):
        build_prefix("coder", "cm-ai", "s", {"timestamp": "x"})
    with pytest.raises(ValueError):
        build_prefix("poet", "cm-ai", "s")


def coder_args(attempt: str, task: str) -> list[str]:
    return [
        "packet",
        "build",
        "coder",
        "--workflow",
        "cm-ai",
        "--stage",
        "implement",
        "--objective",
        f"do {task}",
        "--id",
        f"task={task}",
        "--id",
        f"attempt={attempt}",
        "--ref",
        "specs/tasks.md",
        "--rules",
        "rules.md",
        "--item",
        f"task={task} text",
        "--item-json",
        'mapped_acs=["AC1"]',
        "--item",
        "design_contracts=api v2",
        "--item-json",
        'allowed_files=["src/api.py"]',
        "--item-json",
        'verification_commands=["pytest -q"]',
        "--item",
        f"current_attempt={attempt}",
        "--constraint",
        "no new dependencies",
    ]


def test_cli_prefix_is_stable_across_a_run_and_dynamic_goes_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules.md").write_text("Use ruff.\n", encoding="utf-8")
    code, out1, err1 = cli(*coder_args("1", "T1"))
    assert code == 0, err1
    code, out2, err2 = cli(*coder_args("2", "T2"))
    assert code == 0, err2
    p1, p2 = json.loads(out1), json.loads(out2)
    # the prefix stays byte-identical although attempt ids and task text changed
    assert system_message(p1["stable_prefix"]) == system_message(p2["stable_prefix"])
    assert err1.splitlines()[-1] == err2.splitlines()[-1] == f"prefix {prefix_digest(p1['stable_prefix'])}"
    assert p1["dynamic_packet"] != p2["dynamic_packet"]
    prefix_text = system_message(p1["stable_prefix"])
    for dynamic in ("T1", "do T1", "attempt", "AC1", "src/api.py"):
        assert dynamic not in prefix_text
    # a changed source changes the digest
    (tmp_path / "rules.md").write_text("Use ruff and mypy.\n", encoding="utf-8")
    code, out3, _ = cli(*coder_args("1", "T1"))
    assert code == 0
    assert prefix_digest(json.loads(out3)["stable_prefix"]) != prefix_digest(p1["stable_prefix"])
    assert json.loads(out3)["dynamic_packet"] == p1["dynamic_packet"]


def test_packet_prefix_command_prints_the_digest() -> None:
    code, out, _ = cli("packet", "prefix", "reviewer", "--workflow", "cm-prd", "--stage", "review")
    assert code == 0
    assert out.strip() == prefix_digest(build_prefix("reviewer", "cm-prd", "review"))
    code, out, err = cli(
        "packet", "prefix", "reviewer", "--workflow", "cm-prd", "--stage", "review", "--show"
    )
    assert out == system_message(build_prefix("reviewer", "cm-prd", "review")) + "\n"
    assert err.strip().startswith("sha256:")
    assert cli("packet", "prefix", "bard", "--workflow", "cm-prd", "--stage", "review")[0] == 2
