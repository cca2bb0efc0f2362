"""Fan-out plans checked against the active profile (seed: Leases, fan-out, and budgets)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.harness import run_workgroup

from toolkit.workflow.fanout import FANOUT_CODES, PlanError, check_plan

GOOD_STAGE0 = {"stage": "0", "indexed": True, "workers": [{"role": "analyst", "scope": "."}]}


def rules(plan: dict[str, Any], profile: str = "balanced") -> list[str]:
    return sorted(f.rule for f in check_plan(plan, {"profile": profile})[1])


def test_good_stage0_plan() -> None:
    assert rules(GOOD_STAGE0) == []


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        ({"stage": "0", "indexed": True, "workers": []}, ["STAGE0_ONE_ANALYST"]),
        ({"stage": "0", "workers": [{"role": "analyst"}]}, ["STAGE0_INDEX_FIRST"]),
        (
            {
                "stage": "0",
                "indexed": True,
                "workers": [{"role": "analyst"}, {"role": "scanner", "scope": "src"}],
            },
            ["SCANNER_UNJUSTIFIED"],
        ),
        ({"stage": "1A", "workers": [{"role": "architect"}]}, ["ARCHITECT_BEFORE_CHANGE_SET"]),
        (
            {"stage": "1A", "workers": [{"role": "security"}], "active_controls": []},
            ["SPECIALIST_UNREQUIRED"],
        ),
        (
            {
                "stage": "1A",
                "workers": [
                    {"role": "discovery", "scope": "src", "read_only": True, "independently_useful": True},
                    {
                        "role": "discovery",
                        "scope": "src/api",
                        "read_only": True,
                        "independently_useful": True,
                    },
                ],
            },
            ["DISCOVERY_SCOPE_OVERLAP"],
        ),
        (
            {"stage": "1A", "workers": [{"role": "discovery", "scope": "src"}]},
            ["DISCOVERY_NOT_READ_ONLY", "DISCOVERY_SCOPE_NOT_USEFUL"],
        ),
        (
            {"stage": "2A", "workers": [{"role": "builder", "writer": True, "context": "resume"}] * 3},
            ["INHERITED_WRITER_CAP"],
        ),
    ],
)
def test_each_rule_fails(plan: dict[str, Any], expected: list[str]) -> None:
    assert rules(plan) == expected


def test_justified_workers_pass() -> None:
    plan = {
        "stage": "1A",
        "change_set_approved": True,
        "active_controls": ["security"],
        "workers": [
            {"role": "architect"},
            {"role": "security", "required_by": ["security"]},
            {"role": "scanner", "independent_slice": True},
            {"role": "discovery", "scope": "src/api", "read_only": True, "independently_useful": True},
        ],
    }
    assert rules(plan) == []
    assert rules({**plan, "change_set_approved": False, "architecture_ambiguous": True}) == []


def test_profile_limits() -> None:
    scanners = {
        "stage": "0",
        "indexed": True,
        "workers": [{"role": "analyst"}] + [{"role": "scanner", "material_uncertainty": True}] * 2,
    }
    assert rules(scanners, "balanced") == []
    assert rules(scanners, "economy") == ["SCANNER_LIMIT", "WORKER_LIMIT"]
    assert rules(
        {"stage": "2A", "workers": [{"role": "builder", "writer": True, "context": "resume"}] * 2}, "economy"
    ) == ["INHERITED_WRITER_CAP"]


# one plan that breaks every rule (economy profile: every limit is exceeded too)
EVERY_RULE_BROKEN = {
    "stage": "0",
    "workers": [
        {"role": "scanner"},
        {"role": "architect"},
        {"role": "security"},
        {"role": "test"},
        {"role": "discovery", "scope": "src"},
        {"role": "discovery", "scope": "src/api", "read_only": True},
        {"role": "builder", "writer": True, "context": "resume"},
        {"role": "scanner", "independent_slice": True},
        {"role": "discovery", "scope": "lib", "read_only": True, "independently_useful": True},
        {"role": "builder", "writer": True, "context": "inherit-full"},
    ],
}


def test_findings_come_rule_by_rule_in_a_fixed_order() -> None:
    found = [(f.rule, f.worker) for f in check_plan(EVERY_RULE_BROKEN, {"profile": "economy"})[1]]
    assert found == [
        ("STAGE0_ONE_ANALYST", None),
        ("STAGE0_INDEX_FIRST", None),
        ("SCANNER_UNJUSTIFIED", 0),
        ("SCANNER_LIMIT", None),
        ("ARCHITECT_BEFORE_CHANGE_SET", 1),
        ("SPECIALIST_UNREQUIRED", 2),
        ("SPECIALIST_UNREQUIRED", 3),
        ("SPECIALIST_LIMIT", None),
        # discovery worker by worker: each worker's findings together
        ("DISCOVERY_NOT_READ_ONLY", 4),
        ("DISCOVERY_SCOPE_NOT_USEFUL", 4),
        ("DISCOVERY_SCOPE_NOT_USEFUL", 5),
        ("DISCOVERY_SCOPE_OVERLAP", 5),
        ("DISCOVERY_LIMIT", None),
        ("WORKER_LIMIT", None),
        ("INHERITED_WRITER_CAP", None),
    ]
    assert {code for code, _ in found} == set(FANOUT_CODES)


def test_each_named_rule_reports_its_own_codes() -> None:
    from toolkit.workflow.fanout import RULES, _read_plan

    facts = _read_plan(EVERY_RULE_BROKEN, {"profile": "economy"})
    codes = {rule.__name__: sorted({f.rule for f in rule(facts)}) for rule in RULES}
    assert codes == {
        "stage0_one_analyst": ["STAGE0_ONE_ANALYST"],
        "stage0_index_first": ["STAGE0_INDEX_FIRST"],
        "scanner_justified": ["SCANNER_UNJUSTIFIED"],
        "scanner_limit": ["SCANNER_LIMIT"],
        "architect_after_change_set": ["ARCHITECT_BEFORE_CHANGE_SET"],
        "specialist_required": ["SPECIALIST_UNREQUIRED"],
        "specialist_limit": ["SPECIALIST_LIMIT"],
        "discovery_workers": [
            "DISCOVERY_NOT_READ_ONLY",
            "DISCOVERY_SCOPE_NOT_USEFUL",
            "DISCOVERY_SCOPE_OVERLAP",
        ],
        "discovery_limit": ["DISCOVERY_LIMIT"],
        "worker_limit": ["WORKER_LIMIT"],
        "inherited_writer_cap": ["INHERITED_WRITER_CAP"],
    }


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"stage": "9", "workers": []},
        {"stage": "0", "workers": "x"},
        {"stage": "0", "workers": [{"scope": "a"}]},
        {"stage": "0", "workers": [], "active_controls": 5},
        {"stage": "0", "workers": [], "active_controls": "security"},
    ],
)
def test_invalid_plans(bad: object) -> None:
    with pytest.raises(PlanError):
        check_plan(bad)


def test_cli(git_repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "plan.yml"
    good.write_text("stage: '0'\nindexed: true\nworkers:\n  - role: analyst\n")
    assert run_workgroup("fanout", "check", str(good)).returncode == 0
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"stage": "0", "indexed": True, "workers": [{"role": "analyst"}, {"role": "analyst"}]})
    )
    out = run_workgroup("fanout", "check", str(bad), "--json")
    doc = json.loads(out.stdout)
    assert out.returncode == 1 and doc["findings"][0]["code"] == "STAGE0_ONE_ANALYST"
    assert doc["tool"] == "fanout" and doc["summary"]["verdict"] == "refused"
    text = run_workgroup("fanout", "check", str(bad))
    assert text.stdout.decode().startswith(f"{bad}:0:0: STAGE0_ONE_ANALYST ")
    assert b"fan-out plan refused" in text.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{not: [valid")
    res = run_workgroup("fanout", "check", str(broken))
    assert res.returncode == 2 and b"INVALID_PLAN" in res.stderr and b"Traceback" not in res.stderr


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("max_parallel_workers: six", "max_parallel_workers"),
        ("max_parallel_workers: 2.5", "max_parallel_workers"),
        ("max_parallel_workers: true", "max_parallel_workers"),
        ("max_parallel_workers: [1]", "max_parallel_workers"),
        ("max_parallel_workers: -1", "max_parallel_workers"),
        ("max_scanners: x", "max_scanners"),
        ("max_specialists: 1.0", "max_specialists"),
        ("max_read_only_discovery: false", "max_read_only_discovery"),
        ("max_inherited_context_tokens: lots", "max_inherited_context_tokens"),
        ("prefer_recent_inheritance: maybe", "prefer_recent_inheritance"),
        ("worker_model: 3", "worker_model"),
    ],
)
def test_wrong_typed_profile_limit_in_config_is_refused(git_repo, tmp_path, line: str, key: str) -> None:  # type: ignore[no-untyped-def]
    """A profile setting in .workgroup/config.yml of another type than the profile's own (a
    string, float or bool where the rules compare a count) is a coded refusal naming the key
    (exit 2), never a TypeError; nothing is written."""
    config = f"context_efficiency:\n  profile: balanced\n  {line}\n"
    git_repo.write(".workgroup/config.yml", config)
    plan = tmp_path / "plan.yml"
    plan.write_text("stage: '0'\nindexed: true\nworkers:\n  - role: analyst\n  - role: scanner\n")
    before = sorted(p.relative_to(git_repo.path) for p in git_repo.path.rglob("*"))
    res = run_workgroup("fanout", "check", str(plan))
    assert res.returncode == 2, res.stderr
    assert b"Traceback" not in res.stderr
    assert f"error[INVALID_PLAN]: {key} must be".encode() in res.stderr
    assert (git_repo.path / ".workgroup/config.yml").read_text() == config
    assert sorted(p.relative_to(git_repo.path) for p in git_repo.path.rglob("*")) == before
    shown = run_workgroup("profile", "show")
    assert shown.returncode == 2 and f"error[INVALID_PROFILE]: {key} must be".encode() in shown.stderr


def test_plan_with_non_list_controls_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = tmp_path / "plan.yml"
    plan.write_text("stage: '0'\nindexed: true\nactive_controls: 5\nworkers:\n  - role: analyst\n")
    res = run_workgroup("fanout", "check", str(plan))
    assert res.returncode == 2 and b"error[INVALID_PLAN]: 'active_controls' must be a list" in res.stderr
    assert b"Traceback" not in res.stderr


def test_unreadable_config_is_refused_not_replaced_by_the_defaults(git_repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A .workgroup/config.yml that is not valid YAML is CONFIG_INVALID (exit 2): the plan is not
    checked against the default profile in place of the team's limits."""
    config = "context_efficiency: [unclosed\n"
    git_repo.write(".workgroup/config.yml", config)
    plan = tmp_path / "plan.yml"
    plan.write_text("stage: '0'\nindexed: true\nworkers:\n  - role: analyst\n")
    res = run_workgroup("fanout", "check", str(plan))
    assert res.returncode == 2 and b"error[CONFIG_INVALID]" in res.stderr
    assert b"Traceback" not in res.stderr and b"accepted" not in res.stderr
    assert (git_repo.path / ".workgroup/config.yml").read_text() == config
    outside = run_workgroup("fanout", "check", str(plan), cwd=tmp_path)  # no repository: the defaults
    assert outside.returncode == 0, outside.stderr


@pytest.mark.parametrize(
    "config",
    ["context_efficiency: 5\n", "context_efficiency: [balanced]\n", "- context_efficiency\n", "just text\n"],
    ids=["block-scalar", "block-list", "config-list", "config-scalar"],
)
def test_config_whose_block_is_not_a_mapping_is_refused(git_repo, tmp_path, config) -> None:  # type: ignore[no-untyped-def]
    """A context_efficiency block (or a whole config) that is there but not a mapping is
    CONFIG_INVALID for `fanout check` and `profile show`: read as absent, the team's limits were
    replaced by the default profile's and the plan passed against them."""
    git_repo.write(".workgroup/config.yml", config)
    plan = tmp_path / "plan.yml"
    plan.write_text("stage: '0'\nindexed: true\nworkers:\n  - role: analyst\n")
    res = run_workgroup("fanout", "check", str(plan))
    assert res.returncode == 2 and b"error[CONFIG_INVALID]" in res.stderr, res.stderr
    assert b"Traceback" not in res.stderr and b"accepted" not in res.stderr
    shown = run_workgroup("profile", "show")
    assert shown.returncode == 2 and b"error[CONFIG_INVALID]" in shown.stderr, shown.stderr
    assert (git_repo.path / ".workgroup/config.yml").read_text() == config
