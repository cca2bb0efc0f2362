"""Fan-out plans checked against the active profile (seed: Leases, fan-out, and budgets)."""

from __future__ import annotations

import json

import pytest
from conftest import run_workgroup

from toolkit.workflow.fanout import PlanError, check_plan

GOOD_STAGE0 = {"stage": "0", "indexed": True, "workers": [{"role": "analyst", "scope": "."}]}


def rules(plan: dict, profile: str = "balanced") -> list[str]:
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
def test_each_rule_fails(plan: dict, expected: list[str]) -> None:
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


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"stage": "9", "workers": []},
        {"stage": "0", "workers": "x"},
        {"stage": "0", "workers": [{"scope": "a"}]},
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
