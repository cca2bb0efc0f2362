"""Session-boundary verdicts: the ordered table per workflow, golden zh/en lines, mid-run and batches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.harness import cli

from toolkit.cm.boundary import (
    BOUNDARIES,
    Decision,
    Event,
    Facts,
    Lang,
    NoVerdict,
    Order,
    Verdict,
    Workflow,
    decide,
    parse_texts,
    render,
    verdict_texts,
)
from toolkit.core.errors import InvalidInput
from toolkit.infra.resources import template_text

BOUNDARY_CASES = [(wf, ev) for wf, events in BOUNDARIES.items() for ev in sorted(events)]

# Each row of the ordered table (first match wins), as (facts, expected verdict, expected order).
TABLE_ROWS: list[tuple[str, dict[str, Any], Verdict, Order]] = [
    ("1 same-unit discussion", {"same_unit_discussion": True}, Verdict.CONTINUE, Order.SAME_UNIT),
    ("1 wins over 2", {"same_unit_discussion": True, "declined": True}, Verdict.CONTINUE, Order.SAME_UNIT),
    ("2 declined", {"declined": True}, Verdict.STAY, Order.CANNOT_SWITCH),
    ("2 host cannot open", {"host_cannot_open": True}, Verdict.STAY, Order.CANNOT_SWITCH),
    ("2 must shrink", {"declined": True, "must_shrink": True}, Verdict.STAY, Order.CANNOT_SWITCH),
    ("3 default", {}, Verdict.FRESH, Order.DEFAULT),
    ("3 must-shrink alone is no row-2 fact", {"must_shrink": True}, Verdict.FRESH, Order.DEFAULT),
]


@pytest.mark.parametrize(("workflow", "event"), BOUNDARY_CASES)
@pytest.mark.parametrize(("name", "flags", "verdict", "order"), TABLE_ROWS, ids=[r[0] for r in TABLE_ROWS])
def test_ordered_table_each_row_each_workflow(
    workflow: Workflow, event: Event, name: str, flags: dict[str, Any], verdict: Verdict, order: Order
) -> None:
    facts = Facts(workflow, event, next_command="/next", **flags)
    decision = decide(facts)
    assert (decision.verdict, decision.order) == (verdict, order)
    assert decision.compact == (verdict is Verdict.STAY and bool(flags.get("must_shrink")))
    # The handoff is due at a single run's closing boundary whatever the verdict; never for batches or cm-prd.
    assert decision.writes_handoff == (event is Event.RUN_DONE)


@pytest.mark.parametrize("workflow", list(Workflow))
def test_mid_run_gives_no_verdict(workflow: Workflow) -> None:
    decision = decide(Facts(workflow, Event.MID_RUN, declined=True, must_shrink=True))
    assert decision.verdict is None and decision.no_verdict is NoVerdict.MID_RUN
    assert not decision.compact and not decision.writes_handoff
    assert render(decision, Facts(workflow, Event.MID_RUN), verdict_texts(Lang.ZH)) == []


def test_run_done_inside_a_batch_gives_no_verdict_and_no_handoff() -> None:
    decision = decide(Facts(Workflow.CM_AI, Event.RUN_DONE, in_batch=True))
    assert decision.verdict is None and decision.no_verdict is NoVerdict.INSIDE_BATCH
    assert not decision.writes_handoff
    after = decide(Facts(Workflow.CM_AI, Event.BATCH_DONE, original_command="/cm-ai batch"))
    assert after.verdict is Verdict.FRESH and not after.writes_handoff


@pytest.mark.parametrize(
    ("workflow", "event", "in_batch"),
    [
        (Workflow.CM_PRD, Event.RUN_DONE, False),  # cm-prd decides only at its review stop
        (Workflow.CM_PRD, Event.BATCH_DONE, False),
        (Workflow.CM_AI, Event.REVIEW_STOP, False),  # review_stop belongs to cm-prd
        (Workflow.CM_FIX, Event.BATCH_DONE, False),  # cm-fix has no batches
        (Workflow.CM_FIX, Event.RUN_DONE, True),  # --in-batch is cm-ai only
        (Workflow.CM_AI, Event.BATCH_DONE, True),  # batch_done is not inside the batch
    ],
)
def test_events_that_are_not_boundaries_are_refused(workflow: Workflow, event: Event, in_batch: bool) -> None:
    with pytest.raises(InvalidInput):
        decide(Facts(workflow, event, in_batch=in_batch, next_command="/x"))


def test_fresh_needs_a_command_and_never_invents_one() -> None:
    with pytest.raises(InvalidInput) as info:
        decide(Facts(Workflow.CM_FIX, Event.RUN_DONE))
    assert info.value.code == "MISSING_COMMAND"
    with pytest.raises(InvalidInput):
        decide(Facts(Workflow.CM_AI, Event.RUN_DONE, declined=True, must_shrink=True))
    # continue and plain stay print no command line, so none is needed
    assert decide(Facts(Workflow.CM_AI, Event.RUN_DONE, declined=True)).verdict is Verdict.STAY
    known = decide(Facts(Workflow.CM_AI, Event.RUN_DONE, next_command="/a", original_command="/b"))
    assert (known.command, known.command_known) == ("/a", True)
    unknown = decide(Facts(Workflow.CM_AI, Event.RUN_DONE, original_command="/b --x 1"))
    assert (unknown.command, unknown.command_known) == ("/b --x 1", False)


@pytest.mark.parametrize("bad", ["", "two\nlines", "x" * 501, "cr\rhere"])
def test_texts_must_be_one_line(bad: str) -> None:
    with pytest.raises(InvalidInput):
        decide(Facts(Workflow.CM_AI, Event.RUN_DONE, next_command="/x", reason=bad))


def test_templates_have_the_same_keys_and_one_line_each() -> None:
    zh, en = verdict_texts(Lang.ZH), verdict_texts(Lang.EN)
    assert zh.keys() == en.keys()
    assert all("\n" not in v for v in [*zh.values(), *en.values()])
    with pytest.raises(ValueError):
        parse_texts("no separator here")


def test_every_verdict_renders() -> None:
    """Exhaustive: each Verdict member has lines in both languages."""
    cases = {
        Verdict.CONTINUE: Facts(Workflow.CM_AI, Event.RUN_DONE, same_unit_discussion=True),
        Verdict.STAY: Facts(Workflow.CM_AI, Event.RUN_DONE, host_cannot_open=True),
        Verdict.FRESH: Facts(Workflow.CM_AI, Event.RUN_DONE, next_command="/n"),
    }
    assert set(cases) == set(Verdict)
    for lang in Lang:
        for facts in cases.values():
            assert render(decide(facts), facts, verdict_texts(lang))


# Golden outputs: exact stderr bytes of `workgroup boundary` (no handoff: cm-prd / batch_done).
GOLDEN = [
    (
        ["cm-prd", "--at", "review_stop", "--next-command", "/cm-prd implement --feature login"],
        "会话边界：换新会话。\n新会话里运行：/cm-prd implement --feature login\n"
        "原因：这一单元已结束，下一单元的输入都在磁盘上（tasks.md、specs、.reviews/、运行日志）。\n",
        "Session boundary: start a fresh session.\n"
        "Run in the new session: /cm-prd implement --feature login\n"
        "Reason: This unit is finished and the next unit's inputs are all on disk "
        "(tasks.md, specs, .reviews/, run log).\n",
    ),
    (
        ["cm-ai", "--at", "batch_done", "--original-command", "/cm-ai batch", "--reason", "批次结束。"],
        "会话边界：换新会话。\n"
        "新会话里运行：/cm-ai batch（下一单元的入口无法确定，这是原命令）\n原因：批次结束。\n",
        "Session boundary: start a fresh session.\n"
        "Run in the new session: /cm-ai batch (the next unit's entry "
        "cannot be determined; this is the original command)\nReason: 批次结束。\n",
    ),
    (
        ["cm-prd", "--at", "review_stop", "--same-unit-discussion"],
        "会话边界：继续本会话。\n原因：下一步仍是同一单元，要用到本会话里尚未落盘的讨论。\n",
        "Session boundary: continue in this session.\n"
        "Reason: The next step continues the same unit and needs "
        "discussion from this session that is not on disk.\n",
    ),
    (
        ["cm-prd", "--at", "review_stop", "--declined"],
        "会话边界：留在本会话（用户不换新会话）。\n",
        "Session boundary: stay in this session (the user declined a fresh session).\n",
    ),
    (
        [
            "cm-ai",
            "--at",
            "batch_done",
            "--host-cannot-open",
            "--must-shrink",
            "--next-command",
            "/cm-ai next",
        ],
        "会话边界：留在本会话（宿主无法打开新会话）。\n压缩上下文，压缩指令写明下一单元：/cm-ai next\n",
        "Session boundary: stay in this session (the host cannot open a fresh session).\n"
        "Compact the context with an instruction naming the next unit: /cm-ai next\n",
    ),
]


@pytest.mark.parametrize(
    ("args", "zh", "en"), GOLDEN, ids=["fresh", "fresh-unknown", "continue", "stay", "compact"]
)
def test_golden_zh_and_en(args: list[str], zh: str, en: str) -> None:
    code, out, err = cli("boundary", *args)
    assert (code, out, err) == (0, "", zh)
    code, out, err = cli("boundary", *args, "--lang", "en")
    assert (code, out, err) == (0, "", en)


def test_golden_bytes_through_a_real_process(tmp_path: Path) -> None:
    from support.harness import run_workgroup

    proc = run_workgroup("boundary", *GOLDEN[0][0], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == b""
    assert proc.stderr == GOLDEN[0][1].encode("utf-8")


def test_json_is_the_same_decision() -> None:
    code, out, err = cli(
        "boundary",
        "cm-prd",
        "--at",
        "review_stop",
        "--declined",
        "--must-shrink",
        "--original-command",
        "/cm-prd run",
        "--json",
    )
    data = json.loads(out)
    assert code == 0
    assert data["verdict"] == "stay" and data["order"] == 2 and data["compact"] is True
    assert data["command"] == "/cm-prd run" and data["command_known"] is False
    assert data["lines"] == err.splitlines() and data["handoff"] is None
    assert data["reason"] == "用户不换新会话"


def test_mid_run_cli_prints_nothing() -> None:
    assert cli("boundary", "cm-fix", "--at", "mid_run") == (0, "", "")
    code, out, _ = cli("boundary", "cm-ai", "--at", "run_done", "--in-batch", "--json")
    data = json.loads(out)
    assert code == 0 and data["boundary"] is False and data["no_verdict"] == "inside_batch"


@pytest.mark.parametrize(
    "args",
    [
        ["cm-xx", "--at", "run_done"],
        ["cm-ai", "--at", "later"],
        ["cm-ai", "--at", "run_done", "--lang", "fr", "--next-command", "/x"],
        ["cm-prd", "--at", "run_done", "--next-command", "/x"],
        ["cm-fix", "--at", "run_done"],
        ["cm-ai", "--at", "run_done", "--next-command", "/x", "--specs-dir", "a", "--archive-dir", "b"],
    ],
)
def test_bad_cli_input_exits_2_without_traceback(args: list[str]) -> None:
    code, out, err = cli("boundary", *args)
    assert code == 2 and out == ""
    assert "Traceback" not in err and "error[" in err


def test_decision_dict_keys_are_stable() -> None:
    decision: Decision = decide(Facts(Workflow.CM_FIX, Event.MID_RUN))
    assert set(decision.as_dict()) == {
        "workflow",
        "event",
        "boundary",
        "verdict",
        "order",
        "no_verdict",
        "compact",
        "command",
        "command_known",
        "reason",
        "writes_handoff",
    }
    assert "{" in template_text("handoff.md")


@settings(max_examples=200, deadline=None)
@given(
    workflow=st.sampled_from(list(Workflow)),
    event=st.sampled_from(list(Event)),
    flags=st.fixed_dictionaries(
        {
            k: st.booleans()
            for k in ("same_unit_discussion", "declined", "host_cannot_open", "must_shrink", "in_batch")
        }
    ),
    next_command=st.none() | st.text(max_size=40),
    original_command=st.none() | st.text(max_size=40),
    reason=st.none() | st.text(max_size=40),
    lang=st.sampled_from(list(Lang)),
)
def test_fuzz_decide_and_render(
    workflow: Workflow,
    event: Event,
    flags: dict[str, bool],
    next_command: str | None,
    original_command: str | None,
    reason: str | None,
    lang: Lang,
) -> None:
    facts = Facts(
        workflow, event, next_command=next_command, original_command=original_command, reason=reason, **flags
    )
    try:
        decision = decide(facts)
    except InvalidInput as exc:
        assert exc.code in {"NOT_A_BOUNDARY", "NOT_IN_BATCH", "MISSING_COMMAND", "INVALID_TEXT"}
        return
    lines = render(decision, facts, verdict_texts(lang))
    if decision.verdict is None:
        assert lines == [] and (event is Event.MID_RUN or flags["in_batch"])
        return
    assert all("\n" not in line for line in lines)
    assert (
        len(lines)
        == {Verdict.CONTINUE: 2, Verdict.STAY: 1 + decision.compact, Verdict.FRESH: 3}[decision.verdict]
    )
    if decision.verdict is Verdict.FRESH:
        # the printed command is exactly the caller's: never invented, never completed
        assert decision.command in (
            next_command.strip() if next_command else None,
            original_command.strip() if original_command else None,
        )
