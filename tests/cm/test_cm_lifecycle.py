"""CM run lifecycle: the rules of toolkit/cm/lifecycle.py, then each one through cm-log-event.

Requirement numbers are those of the CM drop-in parity issue (1-10). Every rule has an accepted
and a refused case; the writer cases check the exit code, the message and that nothing was
written when a write is refused.
"""

from __future__ import annotations

import json
import os
import secrets
import string
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from support.harness import cli

from toolkit.cm import lifecycle
from toolkit.cm.lifecycle import Invocations, Refused, Resources, RunLifecycle, Unverifiable
from toolkit.models.cm_event import UsageEvent

RUN = "lifecycle-run-0001"
BOUND = {
    "node": "N6",
    "repository_id": "fixture",
    "feature": "1.work",
    "task": "T-001",
    "package_digest": "a" * 64,
    "qa_decision_id": "qa-decision",
    "operation_id": "qa-round-1",
    "attempt": 1,
    "mode": "commands",
    "case_count": 2,
}
ENV_FAILURE = {
    "previous_test_run_id": "qa-round-1",
    "reason": "declared_environment_failure",
    "failed_cases": ["probe"],
    "blocked_cases": ["TC-001"],
    "expected_environment": None,
    "environment_failure_reason": "simulator runtime was missing",
}


def qa_row(phase: str, **data: Any) -> dict[str, Any]:
    return {"run_id": RUN, "workflow": "cm-ai", "event": "test_run", "phase": phase, **BOUND, **data}


def res_row(phase: str, rid: str = "profile-1", kind: str = "test_profile", **data: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run_id": RUN,
        "event": "resource",
        "phase": phase,
        "resource_id": rid,
        "resource_kind": kind,
    }
    if phase == "acquired":
        row["cleanup_required"] = True
    return {**row, **data}


def jsonl(*rows: dict[str, Any]) -> list[bytes]:
    return [json.dumps(row).encode() + b"\n" for row in rows]


# ---------------------------------------------------------------- rule 1: resource shape


SHAPES = [
    # (phase, data, accepted?, message part) - one row per input rule of a resource event
    ("acquired", {"resource_id": "p-1", "resource_kind": "process", "cleanup_required": True}, True, ""),
    (
        "acquired",
        {"resource_id": "9f5d70a2-9831", "resource_kind": "process", "cleanup_required": True},
        True,
        "",
    ),
    ("released", {"resource_id": "p-1", "resource_kind": "process"}, True, ""),
    ("cleanup_failed", {"resource_id": "p-1", "resource_kind": "process"}, True, ""),
    ("freed", {"resource_id": "p-1", "resource_kind": "process"}, False, "require phase acquired"),
    (None, {"resource_id": "p-1", "resource_kind": "process"}, False, "require phase acquired"),
    (
        "acquired",
        {"resource_kind": "process", "cleanup_required": True},
        False,
        "require a valid resource_id",
    ),
    ("acquired", {"resource_id": "-x", "resource_kind": "p", "cleanup_required": True}, False, "resource_id"),
    (
        "acquired",
        {"resource_id": "x" * 129, "resource_kind": "p", "cleanup_required": True},
        False,
        "resource_id",
    ),
    ("acquired", {"resource_id": 7, "resource_kind": "p", "cleanup_required": True}, False, "resource_id"),
    ("acquired", {"resource_id": "p-1", "cleanup_required": True}, False, "require a valid resource_kind"),
    ("acquired", {"resource_id": "p-1", "resource_kind": "9kind", "cleanup_required": True}, False, "kind"),
    ("acquired", {"resource_id": "p-1", "resource_kind": "process"}, False, "cleanup_required: true"),
    ("acquired", {"resource_id": "p-1", "resource_kind": "process", "cleanup_required": 1}, False, "cleanup"),
]


@pytest.mark.parametrize(("phase", "data", "ok", "needle"), SHAPES)
def test_resource_event_shape(phase: str | None, data: dict[str, Any], ok: bool, needle: str) -> None:
    if ok:
        lifecycle.check_event("resource", phase, data)
    else:
        with pytest.raises(Refused, match=needle):
            lifecycle.check_event("resource", phase, data)


def test_test_run_event_shape() -> None:
    lifecycle.check_event("test_run", None, {})  # a legacy test_run without a phase is not tracked
    lifecycle.check_event("test_run", "case_start", {"case_id": "TC-1"})
    with pytest.raises(Refused, match="test_run phase"):
        lifecycle.check_event("test_run", "finished", {})
    with pytest.raises(Refused, match="valid case_id"):
        lifecycle.check_event("test_run", "case_complete", {"case_id": ""})


# ---------------------------------------------------------------- rule 1: resource transitions


TRANSITIONS = [
    # (earlier steps, next step, refusal or None) - steps are (id, kind, phase)
    ([], ("r", "k", "acquired"), None),
    ([("r", "k", "acquired")], ("r", "k", "released"), None),
    ([("r", "k", "acquired")], ("r", "k", "cleanup_failed"), None),
    ([("r", "k", "acquired"), ("r", "k", "cleanup_failed")], ("r", "k", "released"), None),  # retry cleanup
    ([("r", "k", "acquired"), ("r", "k", "cleanup_failed")], ("r", "k", "cleanup_failed"), None),
    ([("r", "k", "acquired")], ("r", "k", "acquired"), "active resource_id already has an acquisition"),
    ([("r", "k", "acquired")], ("r", "other", "released"), "resource_kind does not match"),
    (
        [("r", "k", "acquired"), ("r", "k", "released")],
        ("r", "k", "acquired"),
        "resource_id cannot be reused",
    ),
    ([("r", "k", "acquired"), ("r", "k", "cleanup_failed")], ("r", "k", "acquired"), "cannot be reused"),
    ([("r", "k", "acquired"), ("r", "k", "released")], ("r", "k", "cleanup_failed"), "cannot fail cleanup"),
    ([], ("r", "k", "released"), "has no acquisition"),
    ([("r", "k", "acquired")], ("s", "k", "acquired"), None),  # another id is independent
]


@pytest.mark.parametrize(("before", "step", "refusal"), TRANSITIONS)
def test_resource_transitions(
    before: list[tuple[str, str, str]], step: tuple[str, str, str], refusal: str | None
) -> None:
    resources = Resources()
    for earlier in before:
        resources.apply(*earlier)
    assert isinstance(resources.states, dict)  # the in-memory states (the index keeps its own)
    snapshot = dict(resources.states)
    if refusal is None:
        resources.apply(*step)
        assert resources.states[step[0]] == (step[2], step[1])
    else:
        with pytest.raises(Refused, match=refusal):
            resources.apply(*step)
        assert resources.states == snapshot  # a refused step changes nothing


def test_unclosed_lists_acquired_and_cleanup_failed_sorted() -> None:
    resources = Resources()
    for rid in ("c", "a", "b"):
        resources.apply(rid, "k", "acquired")
    resources.apply("b", "k", "released")
    resources.apply("c", "k", "cleanup_failed")
    assert resources.unclosed() == ["a", "c"]


# ---------------------------------------------------------------- rule 2: completion guard


@pytest.mark.parametrize("completion", sorted(lifecycle.COMPLETION_EVENTS))
def test_completion_refused_while_a_resource_is_open(completion: str) -> None:
    state = lifecycle.replay(jsonl(res_row("acquired"), res_row("acquired", "p-2")), RUN, "new-id")
    with pytest.raises(Refused, match="completion blocked by unclosed resources: p-2, profile-1"):
        lifecycle.decide(state, {"event": completion})
    state = lifecycle.replay(jsonl(res_row("acquired"), res_row("released")), RUN, "new-id")
    lifecycle.decide(state, {"event": completion})  # all closed: allowed


def test_cleanup_failed_still_blocks_completion() -> None:
    state = lifecycle.replay(jsonl(res_row("acquired"), res_row("cleanup_failed")), RUN, "x")
    with pytest.raises(Refused, match="unclosed resources: profile-1"):
        lifecycle.decide(state, {"event": "run_done"})


def test_other_runs_and_other_events_do_not_count() -> None:
    other = {**res_row("acquired"), "run_id": "another-run-01"}
    state = lifecycle.replay(jsonl(other, {"run_id": RUN, "event": "progress"}), RUN, "x")
    lifecycle.decide(state, {"event": "done"})


UNVERIFIABLE = [
    # (log lines, which rule of "cannot be replayed" it checks)
    (jsonl(res_row("released")), "a release with no acquisition"),
    (jsonl(res_row("acquired"), res_row("acquired")), "an impossible second acquisition"),
    (jsonl({**res_row("acquired"), "resource_id": "bad id"}), "a malformed resource row"),
    (jsonl({k: v for k, v in res_row("acquired").items() if k != "cleanup_required"}), "no cleanup_required"),
    ([f'{{"run_id":"{RUN}","event":"resource",'.encode()], "a torn row of the run"),
    ([f'["{RUN}"]'.encode()], "a row of the run that is not an object"),
    ([b'{"run_id":"' + RUN.encode() + b'","x":' + b"[" * 100 + b"]" * 100 + b"}"], "a hostile deep row"),
    ([b'{"run_id":"' + RUN.encode() + b'","x":"' + b"a" * 300_000 + b'"}'], "an oversized row"),
    (jsonl(qa_row("case_start", case_id="TC-1")), "a case outside an invocation"),
]


@pytest.mark.parametrize(("lines", "why"), UNVERIFIABLE, ids=[u[1] for u in UNVERIFIABLE])
def test_unverifiable_history(lines: list[bytes], why: str) -> None:
    with pytest.raises(Unverifiable, match="resource state cannot be verified"):
        lifecycle.replay(lines, RUN, "new-id")


NEEDS = [
    # (event, phase, histories it is judged against)
    ("run_done", None, {"resource", "test_run"}),
    ("task_done", None, {"resource", "test_run"}),
    ("resource", "acquired", {"resource"}),
    ("test_run", "start", {"test_run"}),
    ("test_run", "abandoned", {"resource", "test_run"}),  # abandonment needs closed resources
    ("test_run", None, set()),  # a legacy test_run without phase is not tracked
    ("progress", "execute", set()),
]


@pytest.mark.parametrize(("event", "phase", "kinds"), NEEDS)
def test_each_event_replays_only_what_it_is_judged_against(
    event: str, phase: str | None, kinds: set[str]
) -> None:
    assert lifecycle.needs(event, phase) == kinds


def test_a_damaged_history_of_one_kind_does_not_block_the_other() -> None:
    orphan = jsonl(res_row("released"))  # resource history cannot be replayed
    qa = lifecycle.replay(orphan, RUN, "x", lifecycle.needs("test_run", "start"))
    lifecycle.decide(qa, qa_row("start"))
    with pytest.raises(Unverifiable):
        lifecycle.replay(orphan, RUN, "x", lifecycle.needs("run_done", None))
    bad_case = jsonl(qa_row("case_start", case_id="TC-1"))  # a case outside an invocation
    res = lifecycle.replay(bad_case, RUN, "x", lifecycle.needs("resource", "acquired"))
    lifecycle.decide(res, {"event": "resource", **res_row("acquired")})
    with pytest.raises(Unverifiable):
        lifecycle.replay(bad_case, RUN, "x", lifecycle.needs("test_run", "abandoned"))


def test_torn_rows_of_other_runs_are_not_this_runs_history() -> None:
    state = lifecycle.replay([b'{"run_id":"someone-else",', *jsonl(res_row("acquired"))], RUN, "x")
    assert state.resources.unclosed() == ["profile-1"]


def test_replay_finds_the_exact_retry() -> None:
    row = {**res_row("acquired"), "event_id": "evt-1"}
    assert lifecycle.replay(jsonl(row), RUN, "evt-1").duplicate == row
    assert lifecycle.replay(jsonl(row), RUN, "evt-2").duplicate is None


# ---------------------------------------------------------------- rule 3: QA invocations


def invocations(*rows: dict[str, Any]) -> Invocations:
    state = lifecycle.replay(jsonl(*rows), RUN, "new-id")
    return state.invocations


def test_invocation_lifecycle_and_completion_blockers() -> None:
    start, case = qa_row("start"), qa_row("case_start", case_id="TC-1")
    assert invocations(start).blockers() == ["active invocation"]
    assert invocations(start, case).blockers() == ["active invocation", "open cases: TC-1"]
    closed = qa_row("case_complete", case_id="TC-1", result="PASS")
    assert invocations(start, case, closed).blockers() == ["active invocation"]
    done = qa_row("complete", result="PASS", passed=1, failed=0, blocked=0)
    assert invocations(start, case, closed, done).blockers() == []
    state = RunLifecycle(invocations=invocations(start, case))
    with pytest.raises(Refused, match="completion blocked by incomplete test_run: active invocation; open"):
        lifecycle.decide(state, {"event": "task_done"})


INVOCATION_REFUSALS = [
    # (earlier rows, next row, refusal) - one row per transition rule
    ([qa_row("start")], qa_row("start"), "while an invocation is active"),
    ([], qa_row("case_start", case_id="TC-1"), "no active invocation"),
    (
        [qa_row("start"), qa_row("case_start", case_id="TC-1")],
        qa_row("case_start", case_id="TC-1"),
        "already",
    ),
    ([qa_row("start")], qa_row("case_blocked", case_id="TC-9"), "has no case_start"),
    ([qa_row("start"), qa_row("case_start", case_id="TC-1")], qa_row("complete"), "unfinished cases"),
]


@pytest.mark.parametrize(("before", "row", "refusal"), INVOCATION_REFUSALS)
def test_invocation_refusals(before: list[dict[str, Any]], row: dict[str, Any], refusal: str) -> None:
    state = RunLifecycle(invocations=invocations(*before))
    with pytest.raises(Refused, match=refusal):
        lifecycle.decide(state, row)


def test_legacy_complete_without_invocation_is_ignored() -> None:
    legacy = {"run_id": RUN, "event": "test_run", "phase": "complete", "detail": "before phases"}
    state = lifecycle.replay(jsonl(legacy), RUN, "x")
    assert state.invocations.blockers() == []
    lifecycle.decide(state, {"event": "run_done"})


def test_abandoned_and_superseded_block_completion_until_a_new_invocation() -> None:
    start, fail = qa_row("start"), qa_row("complete", result="FAIL", passed=0, failed=1, blocked=1)
    superseded = qa_row("superseded", **ENV_FAILURE)
    assert invocations(start, fail, superseded).blockers() == ["last invocation superseded"]
    retry = qa_row("start", operation_id="qa-round-2", attempt=2, previous_test_run_id="qa-round-1")
    again = qa_row(
        "complete", operation_id="qa-round-2", attempt=2, result="PASS", passed=2, failed=0, blocked=0
    )
    assert invocations(start, fail, superseded, retry, again).blockers() == []
    abandon = qa_row("abandoned", reason="host_terminated", previous_test_run_id="qa-round-1")
    assert invocations(start, abandon).blockers() == ["last invocation abandoned"]


# ---------------------------------------------------------------- rule 4: supersession


FAIL_DONE = [qa_row("start"), qa_row("complete", result="FAIL", passed=0, failed=1, blocked=1, report="r.md")]
SUPERSEDE_REFUSALS = [
    # (change to a valid declared_environment_failure, the rule it breaks)
    ({"failed_cases": []}, "failed_cases count must equal failed"),
    ({"blocked_cases": []}, "blocked_cases count must equal blocked"),
    ({"failed_cases": ["probe", "probe"]}, "case ids unique"),
    ({"failed_cases": ["bad id"]}, "case ids valid"),
    ({"environment_failure_reason": " "}, "reason not blank"),
    ({"environment_failure_reason": "two\nlines"}, "reason one line"),
    ({"environment_failure_reason": "x" * 501}, "reason at most 500 bytes"),
    ({"environment_failure_reason": "é" * 251}, "500 bytes, not characters"),
    ({"previous_test_run_id": "other"}, "names the completed start"),
    ({"reason": "host_evidence_problem"}, "host evidence needs a BLOCKED complete"),
    ({"reason": "qa_configuration_revision"}, "any other reason"),
    ({"workflow": "cm-fix"}, "workflow cm-ai only"),
    ({"node": "N5"}, "node N6 only"),
    ({"feature": "2.other"}, "binding field differs"),
    ({"attempt": True}, "binding field of another JSON type"),
]


@pytest.mark.parametrize(("change", "rule"), SUPERSEDE_REFUSALS, ids=[r[1] for r in SUPERSEDE_REFUSALS])
def test_environment_failure_supersession_refusals(change: dict[str, Any], rule: str) -> None:
    state = RunLifecycle(invocations=invocations(*FAIL_DONE))
    with pytest.raises(Refused, match="QA .*supersession|QA superseded"):
        lifecycle.decide(state, {**qa_row("superseded", **ENV_FAILURE), **change})


def test_environment_failure_supersession_accepted_once() -> None:
    state = RunLifecycle(invocations=invocations(*FAIL_DONE))
    lifecycle.decide(state, qa_row("superseded", **ENV_FAILURE))
    assert state.invocations.ended == "superseded"
    with pytest.raises(Refused):  # the invocation is already retired
        lifecycle.decide(state, qa_row("superseded", **ENV_FAILURE))


@pytest.mark.parametrize(
    ("complete", "ok"),
    [
        ({"result": "FAIL", "failed": 0, "blocked": 1}, False),  # a FAIL without failures
        ({"result": "PASS", "failed": 0, "blocked": 0}, False),
        ({"result": "FAIL", "failed": "1", "blocked": 1}, False),  # counts are integers
    ],
)
def test_environment_failure_needs_failures(complete: dict[str, Any], ok: bool) -> None:
    state = RunLifecycle(invocations=invocations(qa_row("start"), qa_row("complete", **complete)))
    with pytest.raises(Refused):
        lifecycle.decide(state, qa_row("superseded", **ENV_FAILURE))


def test_supersession_needs_a_completed_invocation_under_the_attempt_limit() -> None:
    active = RunLifecycle(invocations=invocations(qa_row("start")))
    with pytest.raises(Refused):
        lifecycle.decide(active, qa_row("superseded", **ENV_FAILURE))
    third = [qa_row("start", attempt=3), qa_row("complete", attempt=3, result="FAIL", failed=1, blocked=1)]
    limit = RunLifecycle(invocations=invocations(*third))
    with pytest.raises(Refused):
        lifecycle.decide(limit, qa_row("superseded", **{**ENV_FAILURE, "attempt": 3}))


def test_host_evidence_problem_after_blocked() -> None:
    blocked = {**BOUND, "operation_id": "qa-round-2", "attempt": 2}
    rows = [
        qa_row("start", **blocked),
        qa_row("complete", **blocked, result="BLOCKED", passed=1, failed=0, blocked=1, report="r.md"),
    ]
    refused = {**blocked, **ENV_FAILURE, "previous_test_run_id": "qa-round-2", "failed_cases": []}
    with pytest.raises(Refused, match="environment-failure"):
        lifecycle.decide(RunLifecycle(invocations=invocations(*rows)), qa_row("superseded", **refused))
    wrong_count = {**blocked, "previous_test_run_id": "qa-round-2", "reason": "host_evidence_problem"}
    with pytest.raises(Refused, match="BLOCKED"):
        lifecycle.decide(
            RunLifecycle(invocations=invocations(*rows)),
            qa_row("superseded", **wrong_count, blocked_cases=["TC-001", "TC-002"]),
        )
    state = RunLifecycle(invocations=invocations(*rows))
    lifecycle.decide(state, qa_row("superseded", **wrong_count, blocked_cases=["TC-001"]))
    assert state.invocations.ended == "superseded"
    restart = {**BOUND, "operation_id": "qa-round-3", "attempt": 2}
    lifecycle.decide(state, qa_row("start", **restart))  # a new start after a supersession
    assert state.invocations.active


def test_abandonment_rules() -> None:
    start = qa_row("start")
    passed = [qa_row("case_start", case_id="TC-1"), qa_row("case_complete", case_id="TC-1", result="PASS")]
    ok = qa_row(
        "abandoned", reason="host_terminated", previous_test_run_id="qa-round-1", partial_pass_cases=["TC-1"]
    )
    state = RunLifecycle(invocations=invocations(start, *passed))
    lifecycle.decide(state, ok)
    assert not state.invocations.active
    changes: list[dict[str, Any]] = [
        {"reason": "other"},
        {"partial_pass_cases": []},
        {"previous_test_run_id": "x"},
    ]
    for change in changes:
        with pytest.raises(Refused, match="abandonment"):
            lifecycle.decide(RunLifecycle(invocations=invocations(start, *passed)), {**ok, **change})
    failed = [qa_row("case_start", case_id="TC-1"), qa_row("case_complete", case_id="TC-1", result="FAIL")]
    with pytest.raises(Refused, match="abandonment"):
        lifecycle.decide(
            RunLifecycle(invocations=invocations(start, *failed)), {**ok, "partial_pass_cases": []}
        )
    with_resource = lifecycle.replay(jsonl(start, *passed, res_row("acquired")), RUN, "x")
    with pytest.raises(Refused, match="abandonment blocked by unclosed resources"):
        lifecycle.decide(with_resource, ok)


# ---------------------------------------------------------------- through cm-log-event


def log_event(
    event: str,
    *,
    specs: Path | None,
    phase: str | None = None,
    data: dict[str, Any] | None = None,
    run_id: str | None = None,
    detail: str | None = None,
    at: str | None = None,
    workflow: str = "cm-ai",
) -> tuple[int, dict[str, Any] | None, str]:
    argv = ["--workflow", workflow, "--event", event, "--runtime", "codex", "--detail", detail or event]
    for flag, value in (("--phase", phase), ("--run-id", run_id), ("--at", at)):
        if value is not None:
            argv += [flag, value]
    if specs is not None:
        argv += ["--specs-dir", str(specs)]
    if data is not None:
        argv += ["--data-json", json.dumps(data)]
    code, out, err = cli(*argv, script="cm-log-event")
    return code, (json.loads(out) if out.strip() else None), err


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    path = tmp_path / "proj" / "specs"
    path.mkdir(parents=True)
    return path


ACQUIRE = {"resource_id": "profile-1", "resource_kind": "test_profile", "cleanup_required": True}
RELEASE = {"resource_id": "profile-1", "resource_kind": "test_profile"}


def test_writer_resource_lifecycle_with_specs_dir(specs: Path) -> None:
    log = specs / "运行日志.jsonl"
    assert log_event("resource", specs=specs, phase="acquired", data=ACQUIRE)[0] == 0
    retry = log_event("resource", specs=specs, phase="acquired", data=ACQUIRE)
    assert retry[0] == 0 and retry[1] and retry[1]["deduplicated"] is True
    second = {**ACQUIRE, "operation_id": "second-live"}
    live = log_event("resource", specs=specs, phase="acquired", data=second)
    assert live[0] == 2 and "active resource_id already has an acquisition" in live[2]
    blocked = log_event("task_done", specs=specs)
    assert blocked[0] == 2 and "completion blocked by unclosed resources: profile-1" in blocked[2]
    wrong = log_event("resource", specs=specs, phase="released", data={**RELEASE, "resource_kind": "p"})
    assert wrong[0] == 2 and "resource_kind does not match" in wrong[2]
    assert len(rows(log)) == 1  # every refusal left the log as it was
    assert log_event("resource", specs=specs, phase="released", data=RELEASE)[0] == 0
    assert log_event("task_done", specs=specs)[0] == 0
    reuse = log_event("resource", specs=specs, phase="acquired", data=second)
    assert reuse[0] == 2 and "resource_id cannot be reused" in reuse[2]
    other = {**ACQUIRE, "resource_id": "profile-2"}
    assert log_event("resource", specs=specs, phase="acquired", data=other)[0] == 0
    late = log_event("task_done", specs=specs)  # an exact retry of the earlier completion
    assert late[0] == 0 and late[1] and late[1]["deduplicated"] is True
    refused = log_event("run_done", specs=specs, detail="new completion")
    assert refused[0] == 2 and "unclosed resources: profile-2" in refused[2]
    assert [(r["event"], r.get("phase")) for r in rows(log)] == [
        ("resource", "acquired"),
        ("resource", "released"),
        ("task_done", None),
        ("resource", "acquired"),
    ]


def test_writer_resource_shape_refused_before_anything_is_written(tmp_path: Path) -> None:
    home = Path(os.environ["CM_WORKFLOW_LOG_HOME"])
    bad = {"resource_kind": "process", "cleanup_required": True}
    code, _, err = log_event("resource", specs=None, phase="acquired", data=bad, run_id=RUN)
    assert code == 2 and "require a valid resource_id" in err
    assert not home.exists()


def test_writer_global_only_run_with_run_id() -> None:
    kw: dict[str, Any] = {"specs": None, "run_id": RUN, "workflow": "external-expert"}
    assert log_event("run_start", **kw)[0] == 0
    assert log_event("resource", phase="acquired", data=ACQUIRE, **kw)[0] == 0
    blocked = log_event("run_done", **kw)
    assert blocked[0] == 2 and "completion blocked by unclosed resources" in blocked[2]
    assert log_event("resource", phase="released", data=RELEASE, **kw)[0] == 0
    code, result, _ = log_event("run_done", **kw)
    assert code == 0 and result is not None
    assert [r["event"] for r in rows(Path(result["global_log"]))] == [
        "run_start",
        "resource",
        "resource",
        "run_done",
    ]


def test_writer_unverifiable_history_is_exit_2(specs: Path) -> None:
    log = specs / "运行日志.jsonl"
    orphan = {"run_id": "20260729T120000Z-orphan01", "event": "resource", "phase": "released", **RELEASE}
    log.write_text(json.dumps(orphan) + "\n", encoding="utf-8")
    code, _, err = log_event("run_done", specs=specs)
    assert code == 2 and "resource state cannot be verified" in err
    assert rows(log) == [orphan]
    code, _, err = log_event("resource", specs=specs, phase="acquired", data=ACQUIRE)
    assert code == 2 and "resource state cannot be verified" in err


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_writer_unreadable_log_is_exit_2(specs: Path) -> None:
    assert log_event("resource", specs=specs, phase="acquired", data=ACQUIRE)[0] == 0
    log = specs / "运行日志.jsonl"
    log.chmod(0o200)
    try:
        code, _, err = log_event("run_done", specs=specs)
    finally:
        log.chmod(0o600)
    assert code == 2 and "resource state cannot be verified" in err


def test_writer_unreadable_log_as_another_user() -> None:
    """The same rule when the tests run as root: the writer runs as an unprivileged user."""
    if os.name == "nt" or os.geteuid() != 0 or not _can_drop_privileges():
        pytest.skip("needs root and setpriv to run the writer as another user")
    with tempfile.TemporaryDirectory(prefix="cm-lifecycle-") as tmp:  # outside root-only folders
        root = Path(tmp)
        os.chmod(root, 0o755)
        specs = root / "specs"
        specs.mkdir()
        os.chown(specs, 65534, 65534)
        env = {**os.environ, "CM_WORKFLOW_LOG_HOME": str(specs / "logs"), "HOME": str(specs)}

        def run(*argv: str) -> subprocess.CompletedProcess[str]:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c"]
            code = "import sys; from toolkit.cm.events import main; raise SystemExit(main(sys.argv[1:]))"
            base = ["--workflow", "cm-ai", "--runtime", "codex", "--specs-dir", str(specs), *argv]
            return subprocess.run([*cmd, code, *base], env=env, capture_output=True, text=True, check=False)

        data = json.dumps(ACQUIRE)
        acquired = run("--event", "resource", "--phase", "acquired", "--detail", "d", "--data-json", data)
        assert acquired.returncode == 0, acquired.stderr
        (specs / "运行日志.jsonl").chmod(0o200)
        done = run("--event", "run_done", "--detail", "done")
        assert done.returncode == 2 and "resource state cannot be verified" in done.stderr, done.stderr


def _can_drop_privileges() -> bool:
    probe = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        sys.executable,
        "-c",
        "import toolkit",
    ]
    try:
        return subprocess.run(probe, capture_output=True, check=False).returncode == 0
    except OSError:
        return False


def test_writer_qa_invocation_blocks_completion(specs: Path) -> None:
    assert log_event("run_start", specs=specs)[0] == 0
    assert log_event("test_run", specs=specs, phase="start")[0] == 0
    assert log_event("test_run", specs=specs, phase="case_start", data={"case_id": "TC-1"})[0] == 0
    open_case = log_event("run_done", specs=specs)
    assert open_case[0] == 2 and "completion blocked by incomplete test_run" in open_case[2]
    done_case = {"case_id": "TC-1", "result": "PASS"}
    assert log_event("test_run", specs=specs, phase="case_complete", data=done_case)[0] == 0
    active = log_event("run_done", specs=specs, detail="still active")
    assert active[0] == 2 and "active invocation" in active[2]
    assert log_event("test_run", specs=specs, phase="complete", data={"result": "PASS"})[0] == 0
    assert log_event("run_done", specs=specs, detail="closed")[0] == 0


def test_writer_environment_failure_supersession(specs: Path) -> None:
    def qa(phase: str, data: dict[str, Any]) -> int:
        return log_event("test_run", specs=specs, phase=phase, run_id=RUN, data={**BOUND, **data})[0]

    assert qa("start", {}) == 0
    assert qa("complete", {"result": "FAIL", "passed": 0, "failed": 1, "blocked": 1, "report": "r.md"}) == 0
    assert qa("superseded", {**ENV_FAILURE, "failed_cases": []}) == 2
    assert qa("superseded", ENV_FAILURE) == 0
    assert log_event("run_done", specs=specs, run_id=RUN)[0] == 2  # superseded, no new invocation


# ---------------------------------------------------------------- rules 5, 6, 8, 10 in the writer


def pointer_status(specs: Path) -> str:
    return str(json.loads((specs / ".cm-run.json").read_text(encoding="utf-8"))["status"])


def test_resume_and_pointer_status_from_the_log(specs: Path) -> None:
    run = "fixture-resume-run"
    for event in ("run_start", "run_done", "resume"):
        assert log_event(event, specs=specs, run_id=run, workflow="cm-fix")[0] == 0
    assert pointer_status(specs) == "running"
    old = log_event("run_done", specs=specs, run_id=run, workflow="cm-fix")  # an old completion retried
    assert old[1] and old[1]["deduplicated"] is True and pointer_status(specs) == "running"
    (specs / ".cm-run.json").unlink()
    picked = log_event("progress", specs=specs, workflow="cm-fix")
    assert picked[1] and picked[1]["run_id"] == run  # the log, not the pointer, says the run is open
    assert log_event("done", specs=specs, run_id=run, workflow="cm-fix")[0] == 0
    assert log_event("resume", specs=specs, run_id=run, workflow="cm-fix")[1]["deduplicated"] is True  # type: ignore[index]
    assert pointer_status(specs) == "done"


def test_retry_is_mirrored_in_the_original_month(specs: Path) -> None:
    home = Path(os.environ["CM_WORKFLOW_LOG_HOME"])
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("blocks the first mirror write", encoding="utf-8")
    data = {"operation_id": "mirror-recovery-1", "attempt": 1}
    first = log_event("progress", specs=specs, phase="checkpoint", data=data, at="2026-06-30T23:00:00-07:00")
    assert first[1] and first[1]["degraded"] is True and first[1]["global_written"] is False
    (specs / ".cm-run.json").unlink()
    home.unlink()
    home.mkdir()
    again = log_event("progress", specs=specs, phase="checkpoint", data=data, at="2026-07-31T23:00:00-07:00")
    assert again[1] and again[1]["deduplicated"] is True and again[1]["event_id"] == first[1]["event_id"]
    mirrored = Path(again[1]["global_log"])
    assert mirrored.parent.name == "2026-06"
    assert [r["at"] for r in rows(mirrored)] == ["2026-06-30T23:00:00-07:00"]


USAGE = {
    "call_id": "native-call-1",
    "stage": "review",
    "role": "reviewer",
    "adapter": "codex-cli",
    "requested_model": "fixture",
    "source": "native-cli-terminal",
    "purpose": "workflow-execution",
    "usage_state": "observed",
    "input_tokens": 100,
    "output_tokens": 20,
    "outcome": "success",
}
CLAIM = {k: USAGE[k] for k in ("call_id", "stage", "role", "adapter", "requested_model", "source", "purpose")}


def test_native_usage_needs_a_claim_and_reasoning_tokens_are_an_output_subset(specs: Path) -> None:
    def usage(data: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str]:
        return log_event("model_usage", specs=specs, phase="complete", run_id=RUN, data=data)

    unclaimed = usage({**USAGE, "reasoning_tokens": 5})
    assert unclaimed[0] == 2 and "requires a prior model_call claim" in unclaimed[2]
    assert log_event("model_call", specs=specs, phase="claimed", run_id=RUN, data=CLAIM)[0] == 0
    too_many = usage({**USAGE, "reasoning_tokens": 21})
    assert too_many[0] == 2 and "output subset" in too_many[2]
    negative = usage({**USAGE, "reasoning_tokens": -1})
    assert negative[0] == 2 and "non-negative" in negative[2]
    unavailable = {k: v for k, v in USAGE.items() if not k.endswith("_tokens")}
    refused = usage({**unavailable, "usage_state": "unavailable", "reasoning_tokens": 0})
    assert refused[0] == 2 and "cannot contain token counts" in refused[2]
    code, _, err = usage({**USAGE, "reasoning_tokens": 5})
    assert code == 0, err
    written = rows(specs / "运行日志.jsonl")[-1]
    assert written["reasoning_tokens"] == 5
    UsageEvent.model_validate(written)  # the one format model agrees with the writer
    with pytest.raises(ValidationError):
        UsageEvent.model_validate({**written, "reasoning_tokens": 21})


def fake_key() -> str:
    alphabet = string.ascii_letters + string.digits
    return "sk-proj-" + "".join(secrets.choice(alphabet) for _ in range(48))


def test_secret_run_id_refused_and_nothing_written(specs: Path) -> None:
    key = fake_key()
    code, _, err = log_event("run_start", specs=specs, run_id=key)
    assert code == 2 and "private content (secret)" in err and key not in err
    home = Path(os.environ["CM_WORKFLOW_LOG_HOME"])
    assert list(specs.iterdir()) == [] and not home.exists()
    code, _, err = log_event("run_start", specs=specs, workflow="sk-" + key[8:])
    assert code == 2 and "secret" in err


def test_secret_run_id_refused_by_the_adapter(tmp_path: Path, specs: Path) -> None:
    key = fake_key()
    cmd = [
        sys.executable,
        "-m",
        "toolkit.cm.adapter",
        "--workflow",
        "cm-prd",
        "--stage",
        "s",
        "--role",
        "planner",
    ]
    cmd += [
        "--runtime",
        "codex",
        "--requested-model",
        "m",
        "--call-id",
        "c-1",
        "--project-root",
        str(tmp_path),
    ]
    cmd += ["--specs-dir", str(specs), "--run-id", key]
    env = {
        **os.environ,
        "CM_OPENAI_COMPATIBLE_ENABLED": "true",
        "CM_OPENAI_COMPATIBLE_BASE_URL": "http://127.0.0.1:9/v1",
        "CM_OPENAI_COMPATIBLE_API_KEY": "fixture-key",
    }
    proc = subprocess.run(cmd, input=b"{}", capture_output=True, env=env, timeout=60, check=False)
    assert proc.returncode == 2 and b"secret" in proc.stderr and key.encode() not in proc.stderr
    assert list(specs.iterdir()) == []


# ---------------------------------------------------------------- hostile files the writer reads


def test_hostile_pointer_and_rows_are_not_parsed(specs: Path) -> None:
    """A deep or huge pointer is treated as absent; deep or huge rows of other runs are skipped."""
    deep = b"[" * 100_000 + b"]" * 100_000
    (specs / ".cm-run.json").write_bytes(b'{"run_id":"pointed-run-01","status":"running","x":' + deep + b"}")
    log = specs / "运行日志.jsonl"
    log.write_bytes(b'{"run_id":"other-run-0001","x":' + deep + b"}\n" + b'{"x":"' + b"a" * 400_000 + b'"}\n')
    code, result, err = log_event("run_start", specs=specs)
    assert code == 0, err
    assert result is not None and result["run_id"] != "pointed-run-01"
    big = {"run_id": "pointed-run-01", "status": "running", "pad": "x" * 70_000}
    (specs / ".cm-run.json").write_text(json.dumps(big), encoding="utf-8")
    code, result, err = log_event("progress", specs=specs)
    assert code == 0 and result is not None and result["run_id"] != "pointed-run-01"
