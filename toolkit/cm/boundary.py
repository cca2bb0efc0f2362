"""Session-boundary verdicts of the CM contract: a pure decision plus its fixed-text rendering.

Decide only at a workflow's boundary (cm-ai single task ``run_done`` or ``batch_done``; cm-prd
``review_stop``; cm-fix ``run_done``). ``mid_run`` and a ``run_done`` inside a batch give no
verdict. At a boundary the ordered table is worked top to bottom and the first match wins:
1 same-unit discussion not on disk -> continue; 2 declined / host cannot open -> stay (compact
only when the context must shrink, naming the next unit); 3 anything else -> fresh session.
The command printed is the caller's documented next entry, or the original command marked as
such; this module never composes or completes a command.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import assert_never

from toolkit.core.errors import InvalidInput
from toolkit.infra.resources import template_text

TYPE_CHECKING = False  # type checkers read True
if TYPE_CHECKING:
    from toolkit.cm.shapes import BoundaryDecision


class Workflow(StrEnum):
    CM_AI = "cm-ai"
    CM_PRD = "cm-prd"
    CM_FIX = "cm-fix"


class Event(StrEnum):
    RUN_DONE = "run_done"
    BATCH_DONE = "batch_done"
    REVIEW_STOP = "review_stop"
    MID_RUN = "mid_run"


class Verdict(StrEnum):
    CONTINUE = "continue"
    STAY = "stay"
    FRESH = "fresh"


class Order(int, Enum):
    """The row of the ordered table that matched."""

    SAME_UNIT = 1
    CANNOT_SWITCH = 2
    DEFAULT = 3


class NoVerdict(StrEnum):
    """Why an event that is not a boundary gives no verdict."""

    MID_RUN = "mid_run"
    INSIDE_BATCH = "inside_batch"


# The boundaries each workflow decides at (mid_run is accepted everywhere and decides nothing).
BOUNDARIES: dict[Workflow, frozenset[Event]] = {
    Workflow.CM_AI: frozenset({Event.RUN_DONE, Event.BATCH_DONE}),
    Workflow.CM_PRD: frozenset({Event.REVIEW_STOP}),
    Workflow.CM_FIX: frozenset({Event.RUN_DONE}),
}
MAX_TEXT = 500


@dataclass(frozen=True)
class Facts:
    """The facts of the ordered table plus the command candidates, as given by the caller."""

    workflow: Workflow
    event: Event
    same_unit_discussion: bool = False
    declined: bool = False
    host_cannot_open: bool = False
    must_shrink: bool = False
    in_batch: bool = False
    next_command: str | None = None
    original_command: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Decision:
    """A verdict (or the reason there is none) and whether this boundary writes the handoff."""

    workflow: Workflow
    event: Event
    verdict: Verdict | None
    order: Order | None
    no_verdict: NoVerdict | None
    compact: bool
    command: str | None
    command_known: bool
    reason: str | None
    writes_handoff: bool

    def as_dict(self) -> BoundaryDecision:
        return {
            "workflow": self.workflow.value,
            "event": self.event.value,
            "boundary": self.verdict is not None,
            "verdict": self.verdict.value if self.verdict else None,
            "order": self.order.value if self.order else None,
            "no_verdict": self.no_verdict.value if self.no_verdict else None,
            "compact": self.compact,
            "command": self.command,
            "command_known": self.command_known,
            "reason": self.reason,
            "writes_handoff": self.writes_handoff,
        }


def _one_line(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    if not value.strip() or "\n" in value or "\r" in value or len(value) > MAX_TEXT:
        raise InvalidInput("INVALID_TEXT", f"{what} must be one non-empty line of at most {MAX_TEXT} chars")
    return value.strip()


def _check_event(facts: Facts) -> None:
    if facts.event is not Event.MID_RUN and facts.event not in BOUNDARIES[facts.workflow]:
        raise InvalidInput("NOT_A_BOUNDARY", "this event is not a session boundary of this workflow")
    batch_event = facts.event in (Event.RUN_DONE, Event.MID_RUN)
    if facts.in_batch and not (facts.workflow is Workflow.CM_AI and batch_event):
        raise InvalidInput("NOT_IN_BATCH", "--in-batch applies only to a cm-ai run_done inside a batch")


def _match(facts: Facts) -> tuple[Verdict, Order]:
    """The ordered table, top to bottom; the first match wins."""
    if facts.same_unit_discussion:
        return Verdict.CONTINUE, Order.SAME_UNIT
    if facts.declined or facts.host_cannot_open:
        return Verdict.STAY, Order.CANNOT_SWITCH
    return Verdict.FRESH, Order.DEFAULT


def decide(facts: Facts) -> Decision:
    """The boundary decision for ``facts``; raises InvalidInput for impossible combinations."""
    _check_event(facts)
    next_command = _one_line(facts.next_command, "--next-command")
    original = _one_line(facts.original_command, "--original-command")
    reason = _one_line(facts.reason, "--reason")
    blank = Decision(facts.workflow, facts.event, None, None, None, False, None, False, None, False)
    if facts.event is Event.MID_RUN:
        return _replace_no_verdict(blank, NoVerdict.MID_RUN)
    if facts.in_batch:
        return _replace_no_verdict(blank, NoVerdict.INSIDE_BATCH)
    verdict, order = _match(facts)
    compact = verdict is Verdict.STAY and facts.must_shrink
    needs_command = verdict is Verdict.FRESH or compact
    command, known = next_command, next_command is not None
    if command is None:
        command = original
    if needs_command and command is None:
        raise InvalidInput(
            "MISSING_COMMAND", "give --next-command, or --original-command when the next entry is unknown"
        )
    # A single run's closing boundary writes the handoff whatever the verdict; batches and cm-prd never do.
    writes = facts.event is Event.RUN_DONE and facts.workflow in (Workflow.CM_AI, Workflow.CM_FIX)
    return Decision(
        facts.workflow,
        facts.event,
        verdict,
        order,
        None,
        compact,
        command,
        known,
        reason,
        writes,
    )


def _replace_no_verdict(blank: Decision, why: NoVerdict) -> Decision:
    return Decision(blank.workflow, blank.event, None, None, why, False, None, False, None, False)


def default_reason_key(decision: Decision, facts: Facts) -> str:
    """The template key of the reason used when the caller gave none."""
    match decision.order:
        case Order.SAME_UNIT:
            return "reason_same_unit"
        case Order.CANNOT_SWITCH:
            return "reason_declined" if facts.declined else "reason_host_cannot_open"
        case Order.DEFAULT:
            return "reason_new_unit"
        case None:
            raise ValueError("no verdict, no reason")
        case _:
            assert_never(decision.order)


def reason_text(decision: Decision, facts: Facts, texts: dict[str, str]) -> str | None:
    """The caller's reason, or the fixed default of the matched row; None without a verdict."""
    if decision.verdict is None:
        return None
    return decision.reason or texts[default_reason_key(decision, facts)]


def render(decision: Decision, facts: Facts, texts: dict[str, str]) -> list[str]:
    """The verdict lines (without the handoff line), in the contract's shape."""
    reason = reason_text(decision, facts, texts)
    if decision.verdict is None or reason is None:
        return []
    command = decision.command or ""
    match decision.verdict:
        case Verdict.CONTINUE:
            return [texts["continue"], texts["reason"].format(reason=reason)]
        case Verdict.STAY:
            lines = [texts["stay"].format(reason=reason.rstrip("。.").rstrip())]
            if decision.compact:
                key = "compact" if decision.command_known else "compact_unknown"
                lines.append(texts[key].format(command=command))
            return lines
        case Verdict.FRESH:
            key = "command" if decision.command_known else "command_unknown"
            return [texts["fresh"], texts[key].format(command=command), texts["reason"].format(reason=reason)]
        case _:
            assert_never(decision.verdict)


class Lang(StrEnum):
    ZH = "zh"
    EN = "en"


def parse_texts(text: str) -> dict[str, str]:
    """``key = text`` lines; ``#`` comments and blank lines skipped."""
    texts: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(" = ")
        if not sep:
            raise ValueError("malformed verdict template line")
        texts[key.strip()] = value
    return texts


def verdict_texts(lang: Lang) -> dict[str, str]:
    """The shipped verdict texts of one language (templates/verdict.<lang>.txt)."""

    return parse_texts(template_text(f"verdict.{lang.value}.txt"))
