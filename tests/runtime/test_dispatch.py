"""Combined dispatch: lineage first, fact mismatch refused, compatibility only from HOT (CEO-05, CEO-21)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support.harness import cli, runtime_call
from support.lineage_fixtures import HOT_NOW, hot_current, hot_lineage

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.dispatch import check_facts, dispatch, reconcile_routing_input
from toolkit.runtime.protocol import RuntimeContext, execute


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RuntimeContext:
    # outside any repository: no persistent writer registry, paths resolve under tmp_path
    monkeypatch.chdir(tmp_path)
    return RuntimeContext(cwd=str(tmp_path))


def run(ctx: RuntimeContext, request: dict[str, Any]) -> Mapping[str, Any]:  # read as JSON
    return dispatch(request, ctx)


def test_reference_case_invalid_lineage_forces_capsule_and_binds_rollout(ctx: RuntimeContext) -> None:
    # reference contract test 28: a caller's compatible/resumable and rollout modes are ignored
    result = run(
        ctx,
        {
            "routing": {
                "input": {
                    "role": "builder",
                    "owned_files": ["src/dispatch-builder.js"],
                    "lineage": {"compatible": True, "resumable": True, "role": "builder"},
                }
            },
            "lineage": {
                "lineage": hot_lineage(),
                "current": hot_current(checkpoint_sha="different-checkpoint"),
                "now": HOT_NOW,
            },
            "rollout": {
                "input": {
                    "rollout": "on",
                    "actual_mode": "local",
                    "recommended_mode": "inherit-full",
                    "recommendation": {"mode": "inherit-recent"},
                }
            },
        },
    )
    assert result["lineage"] == {"state": "INVALID", "invalidations": ["CHECKPOINT_MISMATCH"]}
    assert result["routing"]["mode"] == "fresh-capsule"
    assert (
        result["rollout"]["selected_mode"] == "fresh-capsule"
        and result["rollout"]["execute_recommendation"] is True
    )
    assert result["result_policy"] is None


def test_hot_lineage_resumes(ctx: RuntimeContext) -> None:
    result = run(
        ctx,
        {
            "routing": {"input": {"role": "builder", "owned_files": ["src/a.py"]}},
            "lineage": {"lineage": hot_lineage(), "current": hot_current(), "now": HOT_NOW},
            "rollout": {"input": {"rollout": "off"}},
        },
    )
    assert result["lineage"]["state"] == "HOT"
    assert result["routing"] == {"mode": "resume", "reason_codes": ["RESUME_COMPATIBLE"]}
    assert result["rollout"]["selected_mode"] == "resume"


@pytest.mark.parametrize(
    "current,now",
    [
        (hot_current(), "2026-07-30T09:00:00Z"),  # COLD_VALID: lease passed
        (hot_current(reconcile_required=True), HOT_NOW),  # RECONCILE_REQUIRED
        (hot_current(capsule_hash=None), HOT_NOW),  # changed capsule
        (hot_current(final_gate=True), HOT_NOW),  # INVALID FINAL_GATE
    ],
)
def test_resume_only_when_hot(ctx: RuntimeContext, current: dict[str, Any], now: str) -> None:
    result = run(
        ctx,
        {
            "routing": {
                "input": {
                    "role": "builder",
                    "owned_files": ["src/a.py"],
                    "lineage": {"compatible": True, "resumable": True},
                }
            },
            "lineage": {"lineage": hot_lineage(), "current": current, "now": now},
            "rollout": {"input": {"rollout": "off"}},
        },
    )
    assert result["lineage"]["state"] != "HOT"
    assert result["routing"]["mode"] == "fresh-capsule"


def test_reviewer_flag_from_current_is_ored_and_isolates(ctx: RuntimeContext) -> None:
    lin = hot_lineage(role="reviewer")
    result = run(
        ctx,
        {
            "routing": {"input": {"role": "reviewer"}},
            "lineage": {
                "lineage": lin,
                "current": hot_current(role="reviewer", independent_reviewer=True),
                "now": HOT_NOW,
            },
            "rollout": {"input": {"rollout": "observe"}},
        },
    )
    assert result["routing"]["mode"] == "fresh-capsule"
    assert "REVIEW_INDEPENDENCE" in result["routing"]["reason_codes"]


def test_restricted_sensitivity_from_lineage_isolates_even_when_hot(ctx: RuntimeContext) -> None:
    result = run(
        ctx,
        {
            "routing": {
                "input": {
                    "role": "reviewer",
                    "lineage": {"compatible": True, "resumable": True, "role": "reviewer"},
                }
            },
            "lineage": {
                "lineage": hot_lineage(role="reviewer", sensitivity="restricted"),
                "current": hot_current(role="reviewer", sensitivity="restricted"),
                "now": HOT_NOW,
            },
            "rollout": {"input": {"rollout": "off", "actual_mode": "local"}},
        },
    )
    assert result["lineage"]["state"] == "HOT"
    assert (
        result["routing"]["mode"] == "fresh-capsule"
        and "SENSITIVITY_ISOLATION" in result["routing"]["reason_codes"]
    )


@pytest.mark.parametrize(
    "routing,current",
    [
        ({"role": "builder", "sensitivity": "restricted"}, {"role": "reviewer", "sensitivity": "public"}),
        ({"role": "builder"}, {"role": "reviewer"}),
        ({"sensitivity": "restricted"}, {"sensitivity": "normal"}),
        ({"sensitivity": None}, {"sensitivity": "normal"}),  # null is a stated fact, unlike an absent key
        ({"role": {"x": 1}}, {"role": {"x": 1}}),  # objects are never identical (===)
        ({"role": True}, {"role": 1}),
    ],
)
def test_conflicting_facts_are_refused(
    ctx: RuntimeContext, routing: dict[str, Any], current: dict[str, Any]
) -> None:
    with pytest.raises(RuntimeOpError) as info:
        run(
            ctx,
            {
                "routing": {"input": routing},
                "lineage": {"lineage": hot_lineage(), "current": hot_current(**current)},
                "rollout": {"input": {"rollout": "off"}},
            },
        )
    assert info.value.code == "DISPATCH_FACT_MISMATCH"


def test_fact_check_needs_both_sides() -> None:
    check_facts({"role": "builder"}, {"sensitivity": "normal"})
    check_facts({}, {"role": "x", "sensitivity": "y"})
    check_facts({"role": 1}, {"role": 1.0})


def test_fact_mismatch_checked_before_time(ctx: RuntimeContext) -> None:
    with pytest.raises(RuntimeOpError) as info:
        run(
            ctx,
            {
                "routing": {"role": "a"},
                "lineage": {
                    "lineage": hot_lineage(),
                    "current": hot_current(role="b"),
                    "now": "2026-02-31T00:00:00Z",
                },
                "rollout": {"rollout": "off"},
            },
        )
    assert info.value.code == "DISPATCH_FACT_MISMATCH"


def test_incomplete_current_is_unknown_provenance_and_keeps_routing_facts(ctx: RuntimeContext) -> None:
    result = run(
        ctx,
        {
            "routing": {"input": {"role": "reviewer", "sensitivity": "restricted"}},
            "lineage": {"lineage": hot_lineage(), "current": {"role": "reviewer"}, "now": HOT_NOW},
            "rollout": {"input": {"rollout": "off", "actual_mode": "local"}},
        },
    )
    assert result["lineage"] == {"state": "INVALID", "invalidations": ["UNKNOWN_PROVENANCE"]}
    assert (
        result["routing"]["mode"] == "fresh-capsule"
        and "SENSITIVITY_ISOLATION" in result["routing"]["reason_codes"]
    )


def test_reconciled_input_shape() -> None:
    reconciled = reconcile_routing_input(
        {"role": "x", "sensitivity": "normal", "lineage": {"owned_files": ["a"], "compatible": True}},
        hot_lineage(),
        hot_current(role=None, sensitivity="isolated"),
        {"state": "COLD_VALID"},
    )
    assert reconciled["role"] == "x"  # null current role falls back to the routing role
    assert reconciled["sensitivity"] == "isolated" and reconciled["independent_reviewer"] is False
    assert reconciled["lineage"] == {
        "owned_files": ["a"],
        "lineage_id": "lineage-builder-auth",
        "role": "builder",
        "compatible": False,
        "resumable": False,
    }


def test_without_lineage_routing_is_used_as_given(ctx: RuntimeContext) -> None:
    # as the reference: no lineage request, no evaluation (lineage result null)
    result = run(
        ctx,
        {
            "routing": {"independent_reviewer": True},
            "rollout": {"rollout": "on", "recommended_mode": "inherit-full"},
        },
    )
    assert result["lineage"] is None and result["routing"]["mode"] == "fresh-capsule"
    assert result["rollout"]["selected_mode"] == "fresh-capsule"


def test_out_of_canary_still_selects_router_mode(ctx: RuntimeContext) -> None:
    result = run(
        ctx,
        {
            "routing": {"input": {"independent_reviewer": True}},
            "rollout": {
                "input": {
                    "rollout": "canary",
                    "canary_percent": 0,
                    "task_corpus_id": "anon-0000000000000000",
                    "actual_mode": "resume",
                }
            },
        },
    )
    assert (
        result["rollout"]["execute_recommendation"] is False
        and result["rollout"]["selected_mode"] == "fresh-capsule"
    )


def test_result_policy_included(ctx: RuntimeContext) -> None:
    result = run(
        ctx,
        {
            "routing": {"trivial": True},
            "rollout": {"rollout": "off"},
            "result_policy": {"input": {"write_prohibited": True}},
        },
    )
    assert result["routing"]["mode"] == "local" and result["result_policy"]["mode"] == "ephemeral"
    same = run(
        ctx,
        {
            "routing": {"trivial": True},
            "rollout": {"rollout": "off"},
            "result_policy": {"write_prohibited": True},
        },
    )
    assert same["result_policy"] == result["result_policy"]


@pytest.mark.parametrize(
    "request_value,code",
    [
        ({"rollout": {"rollout": "off"}}, "INVALID_REQUEST"),  # routing required
        ({"routing": {"trivial": True}}, "INVALID_REQUEST"),  # rollout required
        ({"routing": [], "rollout": {}}, "INVALID_REQUEST"),
        ({"routing": {}, "rollout": {}, "lineage": "x"}, "INVALID_REQUEST"),  # lineage.current missing
        (
            {"routing": {}, "rollout": {}, "lineage": {"lineage": None, "current": {}, "now": "bad"}},
            "INVALID_DATE_TIME",
        ),
        ({"routing": {}, "rollout": {}, "result_policy": 3}, "INVALID_REQUEST"),
        ({"routing": {}, "rollout": {"rollout": "sideways"}}, "INVALID_REQUEST"),
        (
            {
                "routing": {},
                "rollout": {"rollout": "on"},
                "lineage": {"lineage": None, "current": {}, "now": "2026-07-30T00:00:00Z"},
            },
            None,
        ),
    ],
)
def test_request_errors(ctx: RuntimeContext, request_value: dict[str, Any], code: str | None) -> None:
    frame = execute("dispatch", request_value, ctx)
    assert frame.get("code") == code


def test_rollout_recommendation_bound_so_on_never_needs_caller_recommendation(ctx: RuntimeContext) -> None:
    result = run(ctx, {"routing": {}, "rollout": {"rollout": "on"}})
    assert result["rollout"]["selected_mode"] == result["routing"]["mode"] == "fresh-capsule"


def test_subprocess_frame(tmp_path: Path) -> None:
    code, frame = runtime_call(
        "dispatch",
        {
            "routing": {"input": {"role": "builder", "owned_files": ["src/a.py"]}},
            "lineage": {"lineage": hot_lineage(), "current": hot_current(), "now": HOT_NOW},
            "rollout": {"input": {"rollout": "shadow"}},
        },
        cwd=tmp_path,
    )
    assert code == 0 and list(frame["result"]) == ["routing", "rollout", "lineage", "result_policy"]
    assert frame["result"]["routing"]["mode"] == "resume"
    code, frame = runtime_call(
        "dispatch",
        {
            "routing": {"role": "a"},
            "rollout": {},
            "lineage": {"lineage": hot_lineage(), "current": hot_current(role="b")},
        },
        cwd=tmp_path,
    )
    assert code == 1 and frame["code"] == "DISPATCH_FACT_MISMATCH" and "builder" not in json.dumps(frame)


# ---------------------------------------------------------------- the CLI ---------------


DISPATCH_REQUEST: dict[str, Any] = {
    "routing": {"input": {"role": "builder", "owned_files": ["src/api.py"], "task_id": "t-1", "phase": "2A"}},
    "lineage": {"lineage": hot_lineage(), "current": hot_current(), "now": HOT_NOW},
}


def telemetry_rows(repo: Any) -> list[dict[str, Any]]:
    log = repo.path / ".git" / "workgroup" / "telemetry.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_cli_fills_rollout_stage_from_config(git_repo: Any) -> None:
    git_repo.commit(
        "init", {"src/api.py": "x = 1\n", ".workgroup/config.yml": "context_efficiency:\n  rollout: shadow\n"}
    )
    result = cli("dispatch", "--json", stdin=json.dumps(DISPATCH_REQUEST))
    assert result.exit_code == 0, result.stderr
    decided = json.loads(result.stdout)
    assert decided["rollout"]["rollout"] == "shadow" and decided["rollout"]["record_recommendation"] is True
    assert decided["routing"]["mode"] == "resume" and decided["lineage"]["state"] == "HOT"
    # the request's own stage wins over config
    explicit = {**DISPATCH_REQUEST, "rollout": {"input": {"rollout": "observe"}}}
    assert (
        json.loads(cli("dispatch", "--json", stdin=json.dumps(explicit)).stdout)["rollout"]["rollout"]
        == "observe"
    )


def test_cli_config_fills_routing_limits(git_repo: Any) -> None:
    git_repo.commit("init", {".workgroup/config.yml": "context_efficiency:\n  max_nesting_depth: 1\n"})
    request = {"routing": {"nesting_depth": 1}}
    decided = json.loads(cli("dispatch", "--json", stdin=json.dumps(request)).stdout)
    assert decided["routing"] == {"mode": "local", "reason_codes": ["NESTING_LIMIT"]}
    request = {"routing": {"nesting_depth": 1, "max_nesting_depth": 3}}  # the request wins
    assert (
        json.loads(cli("dispatch", "--json", stdin=json.dumps(request)).stdout)["routing"]["mode"] != "local"
    )


def test_cli_disabled_answers_local_and_records_nothing(git_repo: Any) -> None:
    git_repo.commit(
        "init", {".workgroup/config.yml": "context_efficiency:\n  enabled: false\n  rollout: on\n"}
    )
    request = {**DISPATCH_REQUEST, "result_policy": {"write_prohibited": True}}
    result = cli("dispatch", "--json", "--record", stdin=json.dumps(request))
    assert result.exit_code == 0, result.stderr
    decided = json.loads(result.stdout)
    assert decided["routing"] == {"mode": "local", "reason_codes": ["CAPABILITY_FALLBACK"]}
    assert decided["rollout"]["rollout"] == "off" and decided["rollout"]["selected_mode"] == "local"
    assert decided["result_policy"]["write_prohibited"] is True and decided["lineage"]["state"] == "HOT"
    assert telemetry_rows(git_repo) == [] and not (git_repo.path / ".git" / "workgroup").exists()
    # isolation still fails closed when disabled
    bad = {**DISPATCH_REQUEST, "routing": {"role": "reviewer"}}
    assert cli("dispatch", stdin=json.dumps(bad)).exit_code == 1


def test_cli_record_appends_evidence_with_lineage_result(git_repo: Any) -> None:
    git_repo.commit("init", {"src/api.py": "x = 1\n"})
    request = {
        **DISPATCH_REQUEST,
        "lineage": {**DISPATCH_REQUEST["lineage"], "current": hot_current(checkpoint_sha="1234567abcdef")},
    }
    result = cli("dispatch", "--record", stdin=json.dumps(request))
    assert result.exit_code == 0, result.stderr
    assert "lineage: INVALID  (CHECKPOINT_MISMATCH)" in result.stdout
    rows = telemetry_rows(git_repo)
    assert len(rows) == 1
    row = rows[0]
    assert row["mode"] == "fresh-capsule" and row["task_id"] == "t-1" and row["owned_files"] == ["src/api.py"]
    assert row["lineage_candidate"] == "lineage-builder-auth"
    assert row["invalidation_result"] == {"state": "INVALID", "invalidations": ["CHECKPOINT_MISMATCH"]}


def test_cli_record_respects_telemetry_off(git_repo: Any) -> None:
    git_repo.commit("init", {".workgroup/config.yml": "context_efficiency:\n  telemetry: off\n"})
    result = cli("dispatch", "--record", stdin=json.dumps(DISPATCH_REQUEST))
    assert result.exit_code == 0 and telemetry_rows(git_repo) == []


def test_cli_errors_and_exit_codes(git_repo: Any, tmp_path: Path) -> None:
    git_repo.commit("init", {"README.md": "x\n"})
    mismatch = {**DISPATCH_REQUEST, "routing": {"role": "reviewer"}}
    result = cli("dispatch", stdin=json.dumps(mismatch))
    assert result.exit_code == 1 and "DISPATCH_FACT_MISMATCH" in result.stderr
    assert cli("dispatch", stdin="[1]").exit_code == 2
    assert cli("dispatch", stdin="{nope").exit_code == 2
    assert cli("dispatch", stdin=json.dumps({"rollout": {}})).exit_code == 2
    request_file = tmp_path / "req.json"
    request_file.write_text(json.dumps(DISPATCH_REQUEST), encoding="utf-8")
    assert cli("dispatch", str(request_file)).exit_code == 0
    assert cli("dispatch", str(tmp_path / "missing.json")).exit_code == 2
    (git_repo.path / ".workgroup").mkdir()
    (git_repo.path / ".workgroup" / "config.yml").write_text("context_efficiency: [", encoding="utf-8")
    assert cli("dispatch", stdin=json.dumps(DISPATCH_REQUEST)).exit_code == 2


def test_cli_record_outside_repository_is_environment_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("dispatch", "--record", stdin=json.dumps(DISPATCH_REQUEST))
    assert result.exit_code == 3 and "Traceback" not in result.stderr
    result = cli("dispatch", "--json", stdin=json.dumps(DISPATCH_REQUEST))
    assert result.exit_code == 0 and json.loads(result.stdout)["routing"]["mode"] == "resume"


def test_cli_config_canary_share_fills_a_canary_rollout(git_repo: Any) -> None:
    config = "context_efficiency:\n  rollout: canary\n  canary_percent: 100\n"
    git_repo.commit("init", {".workgroup/config.yml": config})
    request: dict[str, Any] = {
        "routing": {"trivial": True},
        "rollout": {"input": {"task_corpus_id": "anon-0123456789abcdef"}},
    }
    decided = json.loads(cli("dispatch", "--json", stdin=json.dumps(request)).stdout)
    assert decided["rollout"]["rollout"] == "canary" and decided["rollout"]["execute_recommendation"] is True
    assert round(decided["rollout"]["canary_bucket"], 2) == 31.48  # the reference's fixed bucket
    request["rollout"]["input"]["canary_percent"] = 10  # the request's share wins
    decided = json.loads(cli("dispatch", "--json", stdin=json.dumps(request)).stdout)
    assert decided["rollout"]["execute_recommendation"] is False
    assert decided["rollout"]["selected_mode"] == decided["routing"]["mode"] == "local"
