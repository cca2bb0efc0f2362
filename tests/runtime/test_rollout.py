"""Rollout selection: stages, recommendation requirement, reference-compatible canary buckets."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import cli, runtime_call

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.protocol import RuntimeContext, execute
from toolkit.runtime.rollout import MODES, ROLLOUT_STATES, canary_bucket, select_rollout


def _code(data: dict[str, Any]) -> str:
    with pytest.raises(RuntimeOpError) as info:
        select_rollout(data)
    return info.value.code


@pytest.mark.parametrize(
    ("task_id", "bucket"),
    [
        ("anon-0123456789abcdef", 31.48),  # the reference's published check value
        ("anon-0000000000000000", 93.69),  # second check value of the brief
    ],
)
def test_canary_bucket_matches_reference(task_id: str, bucket: float) -> None:
    assert round(canary_bucket(task_id), 2) == bucket
    result = select_rollout({"rollout": "canary", "task_corpus_id": task_id, "recommended_mode": "resume"})
    assert result["canary_bucket"] is not None
    assert round(result["canary_bucket"], 2) == bucket


@pytest.mark.parametrize(
    ("percent", "executes"),
    [
        (10, False),  # default share: 31.48 is outside 10 %
        (31.48, False),  # just below the bucket: not executed
        (31.49, True),  # just above: executed (strict <)
        (50, True),
        (0, False),
        (100, True),
    ],
)
def test_canary_threshold_is_strict(percent: float, executes: bool) -> None:
    result = select_rollout(
        {
            "rollout": "canary",
            "task_corpus_id": "anon-0123456789abcdef",
            "canary_percent": percent,
            "actual_mode": "local",
            "recommended_mode": "fresh-capsule",
        }
    )
    assert result["execute_recommendation"] is executes
    assert result["selected_mode"] == ("fresh-capsule" if executes else "local")


@pytest.mark.parametrize(
    ("stage", "record_actual", "record_recommendation", "execute"),
    [
        ("off", False, False, False),
        ("observe", True, False, False),
        ("shadow", True, True, False),
        ("on", True, True, True),
    ],
)
def test_stage_table(stage: str, record_actual: bool, record_recommendation: bool, execute: bool) -> None:
    result = select_rollout({"rollout": stage, "actual_mode": "local", "recommended_mode": "resume"})
    assert result == {
        "rollout": stage,
        "execute_recommendation": execute,
        "record_actual": record_actual,
        "record_recommendation": record_recommendation,
        "selected_mode": "resume" if execute else "local",
        "canary_bucket": None,
    }


def test_default_stage_is_off_and_unknown_keys_ignored() -> None:
    result = select_rollout({"actual_mode": "local", "something_else": 1})
    assert result["rollout"] == "off" and result["selected_mode"] == "local"


def test_recommendation_object_form() -> None:
    result = select_rollout({"rollout": "on", "recommendation": {"mode": "inherit-recent"}})
    assert result["selected_mode"] == "inherit-recent"


@pytest.mark.parametrize("stage", ["canary", "on"])
def test_executing_stage_requires_recommendation(stage: str) -> None:
    data = {"rollout": stage, "actual_mode": "local", "task_corpus_id": "anon-0123456789abcdef"}
    assert _code(data) == "ROLLOUT_RECOMMENDATION_REQUIRED"
    assert _code({**data, "recommendation": {"mode": None}}) == "ROLLOUT_RECOMMENDATION_REQUIRED"


@pytest.mark.parametrize("stage", ["off", "observe", "shadow"])
def test_non_executing_stage_needs_no_recommendation(stage: str) -> None:
    assert select_rollout({"rollout": stage})["selected_mode"] is None


@pytest.mark.parametrize(
    "data",
    [
        {"rollout": "beta"},  # unknown stage
        {"rollout": "on", "recommended_mode": "teleport"},  # unknown mode
        {"rollout": "off", "actual_mode": 3},
        {"rollout": "canary", "recommended_mode": "local"},  # canary without an id
        {
            "rollout": "canary",
            "recommended_mode": "local",
            "task_corpus_id": "customer-acme",
        },  # not anonymous
        {"rollout": "canary", "recommended_mode": "local", "task_corpus_id": "anon-0123"},  # too short
        {
            "rollout": "canary",
            "recommended_mode": "local",
            "task_corpus_id": "anon-0123456789abcdef",
            "canary_percent": 101,
        },
        {
            "rollout": "canary",
            "recommended_mode": "local",
            "task_corpus_id": "anon-0123456789abcdef",
            "canary_percent": -1,
        },
        {
            "rollout": "canary",
            "recommended_mode": "local",
            "task_corpus_id": "anon-0123456789abcdef",
            "canary_percent": True,
        },
        {
            "rollout": "canary",
            "recommended_mode": "local",
            "task_corpus_id": "anon-0123456789abcdef",
            "experiment_salt": "has space",
        },
    ],
)
def test_invalid_inputs_are_refused(data: dict[str, Any]) -> None:
    assert _code(data) == "INVALID_REQUEST"


def test_stratum_ids_are_anonymous_ids() -> None:
    result = select_rollout(
        {"rollout": "canary", "task_corpus_id": "ui-integration-03", "recommended_mode": "local"}
    )
    assert result["canary_bucket"] is not None
    assert 0 <= result["canary_bucket"] < 100


def test_experiment_salt_is_off_by_default_and_redraws_buckets() -> None:
    base = {"rollout": "canary", "task_corpus_id": "anon-0123456789abcdef", "recommended_mode": "resume"}
    unsalted = select_rollout(base)["canary_bucket"]
    salted = select_rollout({**base, "experiment_salt": "exp-2"})["canary_bucket"]
    assert unsalted == canary_bucket("anon-0123456789abcdef")
    assert salted != unsalted
    assert salted == select_rollout({**base, "experiment_salt": "exp-2"})["canary_bucket"]  # deterministic


def test_runtime_protocol_end_to_end() -> None:
    code, frame = runtime_call(
        "rollout",
        {
            "input": {
                "rollout": "canary",
                "task_corpus_id": "anon-0123456789abcdef",
                "canary_percent": 50,
                "actual_mode": "local",
                "recommended_mode": "resume",
            }
        },
    )
    assert code == 0
    assert frame["operation"] == "rollout"
    assert frame["result"]["selected_mode"] == "resume"
    code, frame = runtime_call("rollout", {"input": {"rollout": "on"}})
    assert code == 1 and frame["code"] == "ROLLOUT_RECOMMENDATION_REQUIRED"


def test_op_requires_input_object() -> None:
    frame = execute("rollout", {"input": [1]}, RuntimeContext())
    assert frame == {"ok": False, "code": "INVALID_REQUEST", "message": frame["message"]}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(
    stage=st.sampled_from(ROLLOUT_STATES) | st.text(max_size=8),
    actual=st.sampled_from(MODES) | st.none() | _json,
    recommended=st.sampled_from(MODES) | st.none() | _json,
    task_id=st.from_regex(r"\Aanon-[a-f0-9]{16,64}\Z") | st.text(max_size=30),
    percent=st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 105) | _json,
)
def test_fuzz_rollout_op_never_crashes(
    stage: Any, actual: Any, recommended: Any, task_id: Any, percent: Any
) -> None:
    request = {
        "input": {
            "rollout": stage,
            "actual_mode": actual,
            "recommended_mode": recommended,
            "task_corpus_id": task_id,
            "canary_percent": percent,
        }
    }
    frame = execute("rollout", request, RuntimeContext())
    if frame["ok"]:
        result = frame["result"]
        assert result["rollout"] in ROLLOUT_STATES
        assert result["selected_mode"] in (*MODES, None)
        if result["execute_recommendation"]:
            assert result["selected_mode"] == recommended
        if result["canary_bucket"] is not None:
            assert 0 <= result["canary_bucket"] < 100
    else:
        assert frame["code"] in {"INVALID_REQUEST", "ROLLOUT_RECOMMENDATION_REQUIRED"}


# --- `workgroup rollout advance`: checked progression -----------------------------------------------


def _cli(*args: str) -> tuple[int, str]:
    code, _, err = cli(*args)
    return code, err


def _climb(*steps: tuple[str, ...]) -> list[int]:
    return [_cli("rollout", "advance", *step)[0] for step in steps]


def test_advance_walks_the_ladder_one_step_at_a_time(git_repo: Any) -> None:
    from toolkit.infra.config import load_config

    steps = [
        ("--to", "observe"),
        ("--to", "shadow"),
        ("--to", "canary"),
        ("--to", "canary"),
        ("--to", "canary", "--percent", "50"),
    ]
    assert _climb(*[(*s, "--family", "routing") for s in steps]) == [0] * 5
    block = load_config(git_repo.path)["context_efficiency"]
    assert block["rollout"] == "canary" and block["canary_percent"] == 50


@pytest.mark.parametrize(
    ("before", "target", "code"),
    [
        ([], ("--to", "shadow"), "ROLLOUT_STAGE_SKIPPED"),  # off -> shadow skips observe
        ([("--to", "observe")], ("--to", "canary"), "ROLLOUT_STAGE_SKIPPED"),
        (
            [("--to", "observe"), ("--to", "shadow")],
            ("--to", "canary", "--percent", "25"),
            "ROLLOUT_STAGE_SKIPPED",
        ),
        (
            [("--to", "observe"), ("--to", "shadow"), ("--to", "canary")],
            ("--to", "on"),
            "ROLLOUT_STAGE_SKIPPED",
        ),
        (
            [("--to", "observe"), ("--to", "shadow")],
            ("--to", "canary", "--percent", "30"),
            "ROLLOUT_PERCENT_INVALID",
        ),
    ],
)
def test_advance_refuses_skips(
    git_repo: Any, before: list[tuple[str, ...]], target: tuple[str, ...], code: str
) -> None:
    assert _climb(*[(*s, "--family", "routing") for s in before]) == [0] * len(before)
    config = git_repo.path / ".workgroup" / "config.yml"
    snapshot = config.read_text(encoding="utf-8") if config.exists() else None
    exit_code, err = _cli("rollout", "advance", *target, "--family", "routing")
    assert exit_code in (1, 2) and code in err
    assert (config.read_text(encoding="utf-8") if config.exists() else None) == snapshot  # nothing written


def test_advance_refuses_more_than_one_family(git_repo: Any) -> None:
    code, err = _cli("rollout", "advance", "--to", "observe", "--family", "routing", "--family", "capsules")
    assert code == 1 and "ROLLOUT_MULTIPLE_FAMILIES" in err
    assert _climb(("--to", "observe", "--family", "routing")) == [0]
    code, err = _cli("rollout", "advance", "--to", "shadow", "--family", "capsules")
    assert code == 1 and "ROLLOUT_FAMILY_IN_PROGRESS" in err


def test_on_requires_a_recorded_promotion(git_repo: Any) -> None:
    import json

    ladder = [
        ("--to", "observe"),
        ("--to", "shadow"),
        ("--to", "canary"),
        ("--to", "canary"),
        ("--to", "canary"),
    ]
    assert _climb(*[(*s, "--family", "routing") for s in ladder]) == [0] * 5
    code, err = _cli("rollout", "advance", "--to", "on", "--family", "routing")
    assert code == 1 and "ROLLOUT_PROMOTION_REQUIRED" in err
    record = git_repo.path / ".workgroup" / "promotions" / "measurement-00000000000000ab.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"promote": False}), encoding="utf-8")
    args = (
        "rollout",
        "advance",
        "--to",
        "on",
        "--family",
        "routing",
        "--evidence",
        "measurement-00000000000000ab",
    )
    assert _cli(*args)[0] == 1  # a refused promotion is not evidence
    record.write_text(json.dumps({"promote": True}), encoding="utf-8")
    assert _cli(*args)[0] == 0


def test_rollback_is_always_allowed_and_check_writes_nothing(git_repo: Any) -> None:
    assert _climb(("--to", "observe", "--family", "routing"), ("--to", "shadow", "--family", "routing")) == [
        0,
        0,
    ]
    config = (git_repo.path / ".workgroup" / "config.yml").read_text(encoding="utf-8")
    assert _cli("rollout", "advance", "--to", "off", "--family", "routing", "--check")[0] == 0
    assert (git_repo.path / ".workgroup" / "config.yml").read_text(encoding="utf-8") == config
    assert _cli("rollout", "advance", "--to", "off", "--family", "routing")[0] == 0


_STEP: dict[str, object] = {
    "at": "2026-03-01T10:00:00Z",
    "family": "routing",
    "from": "off",
    "to": "observe",
    "rollback": False,
    "evidence": None,
}
_HISTORY = {"schema": "workgroup.rollout-history/v1", "active_family": "routing", "steps": [_STEP]}


@pytest.mark.parametrize(
    "history",
    [
        {k: v for k, v in _HISTORY.items() if k != "active_family"},
        {**_HISTORY, "active_family": 7},
        {**_HISTORY, "active_family": ["routing"]},
        {**_HISTORY, "steps": [1]},
        {**_HISTORY, "steps": [{"at": _STEP["at"]}]},
        {**_HISTORY, "steps": [{**_STEP, "family": None}]},
        {**_HISTORY, "steps": [{**_STEP, "to": 3}]},
        {**_HISTORY, "steps": [{k: v for k, v in _STEP.items() if k != "rollback"}]},
        {**_HISTORY, "steps": [{**_STEP, "evidence": {"run": 1}}]},
    ],
)
def test_hand_edited_history_is_refused_and_left_alone(git_repo: Any, history: dict[str, Any]) -> None:
    """A .workgroup/rollout.json with a key missing or wrong-typed (active_family, a step or one of
    its fields) is ROLLOUT_HISTORY_INVALID (exit 2) for status, status --json and advance: no
    KeyError or TypeError traceback, and neither file is rewritten."""
    import json

    text = json.dumps(history)
    git_repo.write(".workgroup/rollout.json", text)
    git_repo.write(".workgroup/config.yml", "context_efficiency:\n  rollout: observe\n")
    for args in (
        ("rollout", "status"),
        ("rollout", "status", "--json"),
        ("rollout", "advance", "--to", "shadow", "--family", "routing"),
    ):
        code, out, err = cli(*args)
        assert code == 2, (args, err)
        assert "error[ROLLOUT_HISTORY_INVALID]" in err and "Traceback" not in out + err
        assert (git_repo.path / ".workgroup" / "rollout.json").read_text(encoding="utf-8") == text
        config = (git_repo.path / ".workgroup" / "config.yml").read_text(encoding="utf-8")
        assert config == "context_efficiency:\n  rollout: observe\n"


def test_written_history_reads_back(git_repo: Any) -> None:
    assert _climb(("--to", "observe", "--family", "routing")) == [0]
    code, out, _ = cli("rollout", "status")
    assert code == 0 and out.startswith("stage: observe  active family: routing")


def test_config_edit_keeps_comments_and_other_keys() -> None:
    from toolkit.records.rollouts import set_config_keys

    text = "# team config\ncontext_efficiency:\n    enabled: true\n    rollout: off  # start here\nother: 1\n"
    out = set_config_keys(text, {"rollout": "observe", "canary_percent": "10"})
    assert out == (
        "# team config\ncontext_efficiency:\n    canary_percent: 10\n    enabled: true\n"
        "    rollout: observe  # start here\nother: 1\n"
    )
    assert set_config_keys("", {"rollout": "observe"}) == "context_efficiency:\n  rollout: observe\n"


def test_runtime_modules_stay_stdlib_at_import() -> None:
    """Rollout, telemetry and promotion run on every delegation: no heavy imports until needed."""
    import subprocess
    import sys

    code = (
        "import sys, toolkit.runtime.rollout, toolkit.runtime.telemetry, toolkit.runtime.promotion, "
        "toolkit.runtime.envelope\n"
        "names = ('pydantic', 'typer', 'yaml', 'pygit2', 'cryptography', 'rfc8785')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == ""
