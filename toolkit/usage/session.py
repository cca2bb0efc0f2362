"""``workgroup usage session ID``: one session call by call, with its boundary points judged.

Subagent calls are folded under the main-thread call they followed. At each compaction or resume
point the CM contract's boundary table is applied with the facts a log can show (none of the
"same-unit discussion", "declined" or "host cannot open" facts are in a log, so they are false),
and the carried history re-read after that point is what a fresh session with a capsule would
not have re-read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from toolkit.cm.boundary import Event, Facts, Workflow, decide
from toolkit.core.display import shown
from toolkit.core.errors import InvalidInput, Refused
from toolkit.usage.fold import Ledger, LocalDays, total
from toolkit.usage.model import Call
from toolkit.usage.render import cell, table

if TYPE_CHECKING:
    from toolkit.usage.shapes import (
        BoundaryPoint,
        BoundaryVerdict,
        CallRow,
        SessionView,
        SubagentEntry,
        SubagentsRow,
    )

_CLOSING_EVENT = {"cm-ai": "run_done", "cm-prd": "review_stop", "cm-fix": "run_done"}


MIN_PREFIX = 4  # a shorter prefix would name too many sessions to be meant


def named(wanted: str) -> Callable[[str], bool]:
    """Whether a session id is one ``wanted`` can name (itself, or a prefix of 4 or more characters)."""
    if len(wanted) >= MIN_PREFIX:
        return lambda name: name.startswith(wanted)
    return lambda name: name == wanted


def find_session(ledger: Ledger, wanted: str) -> str:
    names = {c.session for c in ledger.calls}
    if wanted in names:
        return wanted
    if len(wanted) < MIN_PREFIX:
        # not an id of the logs read, and too short to be taken as a prefix
        raise InvalidInput(
            "USAGE_SHORT_PREFIX",
            f"a session id prefix needs at least {MIN_PREFIX} characters (this one has {len(wanted)}): "
            "give more of the id",
        )
    matches = sorted(n for n in names if n.startswith(wanted))
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise InvalidInput("USAGE_AMBIGUOUS_SESSION", "more than one session starts with that prefix")
    raise Refused("USAGE_NO_SESSION", "no session with that id in the logs read")


def _verdict(workflow: str, kind: str) -> BoundaryVerdict:
    try:
        flow = Workflow(workflow)
    except ValueError:
        raise InvalidInput("USAGE_BAD_WORKFLOW", "--workflow must be cm-ai, cm-prd or cm-fix") from None
    facts = Facts(
        workflow=flow,
        event=Event(_CLOSING_EVENT[flow.value]),
        must_shrink=kind == "compaction",
        original_command="continue this session",
    )
    decision = decide(facts)
    return {
        "verdict": decision.verdict.value if decision.verdict else None,
        "order": decision.order.value if decision.order else None,
        "facts_from_log": {"same_unit_discussion": False, "declined": False, "host_cannot_open": False},
    }


def _row(call: Call, zone: tzinfo) -> CallRow:
    """A main-thread call's row (its subagents are folded in later)."""
    moment = datetime.fromisoformat(call.ts.replace("Z", "+00:00")).astimezone(zone)
    return {
        "time": moment.isoformat(timespec="seconds"),
        "model": call.model,
        "input": call.input,
        "cache_write": call.cache_write,
        "cache_read": call.cache_read,
        "output": call.output,
        "reasoning": call.reasoning,
        "carried_history": call.carried,
        "compactions_before": call.compactions,
        "compactions_after": call.compactions_after,
        "resume": call.resume,
        "final_usage": call.final,
        "subagents": [],
    }


def session_view(ledger: Ledger, name: str, days: LocalDays, zone: tzinfo, workflow: str) -> SessionView:
    calls = [c for c in ledger.calls if c.session == name]
    main = [c for c in calls if not c.subagent]
    subs = [c for c in calls if c.subagent]
    rows: list[CallRow | SubagentsRow] = []
    boundaries: list[BoundaryPoint] = []
    for index, call in enumerate(main):
        row = _row(call, zone)
        rows.append(row)
        boundaries.extend(_boundaries_at(main, index, row["time"], workflow))
    _fold_subagents(rows, main, subs, zone)
    source = calls[0].source if calls else None
    return {
        "schema": "workgroup.usage-session/v1",
        "session": name,
        "source": source,
        "project": calls[0].project if calls else None,
        "workflow": workflow,
        "calls": rows,
        "boundaries": boundaries,
        "totals": total(calls).as_dict(),
        "resumed_from": ledger.resumed_from.get(name),
    }


def _boundaries_at(main: list[Call], index: int, time: str, workflow: str) -> list[BoundaryPoint]:
    """The boundaries before the main call at ``index`` (a compaction, a resume), each with the
    ``workflow``'s verdict and what was carried over the calls up to the next boundary."""
    call = main[index]
    points: list[BoundaryPoint] = []
    for kind, present in (("compaction", call.compactions > 0), ("resume", call.resume)):
        # a compaction after the last call has no calls after it to judge
        if present:
            after = _until_next_boundary(main, index)
            points.append(
                {
                    "time": time,
                    "kind": kind,
                    **_verdict(workflow, kind),
                    "calls_after": len(after),
                    "carried_after": sum(c.carried for c in after),
                }
            )
    return points


def _until_next_boundary(main: list[Call], index: int) -> list[Call]:
    out = [main[index]]
    for call in main[index + 1 :]:
        if call.compactions or call.resume:
            break
        out.append(call)
    return out


def _fold_subagents(
    rows: list[CallRow | SubagentsRow], main: list[Call], subs: list[Call], zone: tzinfo
) -> None:
    """Each subagent thread becomes one folded entry under the last main call before its first call."""
    threads: dict[str, list[Call]] = {}
    for call in subs:
        threads.setdefault(call.thread, []).append(call)
    for number, (_thread, calls) in enumerate(sorted(threads.items(), key=lambda kv: kv[1][0].ts), start=1):
        first = calls[0].ts
        parent = 0
        for index, call in enumerate(main):
            if call.ts <= first:
                parent = index
        sums = total(calls).as_dict()
        entry: SubagentEntry = {"subagent": number, "first_time": _row(calls[0], zone)["time"], **sums}
        if rows:
            rows[parent]["subagents"].append(entry)
        else:
            rows.append({"time": entry["first_time"], "model": calls[0].model, "subagents": [entry]})


def session_table(view: SessionView) -> str:
    headers = ["time", "model", "input", "cache write", "cache read", "output", "carried", "marks"]
    body: list[list[str]] = []
    for row in view["calls"]:
        if "input" in row:
            body.append([row["time"], row["model"], *_token_cells(row), ", ".join(_marks(row))])
        for sub in row["subagents"]:
            body.append(
                [
                    f"  └ subagent {sub['subagent']}",
                    f"{sub['calls']} call" + ("" if sub["calls"] == 1 else "s"),
                    *_token_cells(sub),
                    "",
                ]
            )
    # the session id and project path come from the logs: ``shown`` escapes them
    out = [
        f"session {shown(view['session'])} ({shown(view['source'])}, project {shown(view['project'])})\n",
        table(headers, body, 2),
    ]
    if view["resumed_from"]:
        out.append(f"resumed from session {shown(view['resumed_from'])}\n")
    for point in view["boundaries"]:
        out.append(
            f"{point['time']} {point['kind']}: the {view['workflow']} boundary table gives "
            f"'{point['verdict']}' (row {point['order']}; no same-unit, declined or cannot-open fact "
            f"is in a log); {point['carried_after']:,} carried-history tokens re-read over the next "
            f"{point['calls_after']} call(s)\n"
        )
    return "".join(out)


# (row field, the mark its value gives, whether a true value gives it): in the order shown
_MARKS = (
    ("compactions_before", "compacted", True),
    ("resume", "resumed", True),
    ("compactions_after", "then compacted", True),
    ("final_usage", "no final usage", False),
)


def _marks(row: Mapping[str, object]) -> list[str]:
    """A call row's marks: compacted or resumed before it, compacted after it, no final usage."""
    return [mark for key, mark, when in _MARKS if bool(row[key]) is when]


def _token_cells(row: Mapping[str, object]) -> list[str]:
    """A call's or a subagent's token counts as table cells, in the table's column order."""
    return [cell(row[k]) for k in ("input", "cache_write", "cache_read", "output", "carried_history")]
