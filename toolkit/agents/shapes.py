"""The shapes the agent hooks and the status line build and print, for annotations only (#25).

Each answer and record is a ``TypedDict`` (a plain dict at run time), declared once, its keys in the
order the output prints them (tests/agents/test_agent_shapes.py holds them to it). The hooks and the
status line import this module only under ``if TYPE_CHECKING:`` (with ``from __future__ import
annotations``): they never load it, or ``typing`` for it, at run time. Its own annotations are
evaluated (no ``from __future__ import annotations``), so the optional keys are known at run time
too (``__required_keys__``).
"""

from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict

from toolkit.runtime.op_types import Failure, SpecRef

# -- the hook's answers (toolkit.agents.answers), as both agents read them ---------------------------


class PermissionOutput(TypedDict):
    """A denied tool call's ``hookSpecificOutput``."""

    hookEventName: Literal["PreToolUse"]
    permissionDecision: Literal["deny"]
    permissionDecisionReason: str


class DenyAnswer(TypedDict):
    """``answers.deny``: the tool call is denied (exit 2, the reason on stderr as well)."""

    hookSpecificOutput: PermissionOutput


class ContextOutput(TypedDict):
    """Added context's ``hookSpecificOutput`` (session start)."""

    hookEventName: str
    additionalContext: str


class ContextAnswer(TypedDict):
    """``answers.context``: context for the model, and a message for the user when there is one."""

    hookSpecificOutput: ContextOutput
    systemMessage: NotRequired[str]


class BlockAnswer(TypedDict):
    """``answers.block``: a stop or a prompt is blocked, with the reason."""

    decision: Literal["block"]
    reason: str


class MessageAnswer(TypedDict):
    """``answers.message``: a line for the user."""

    systemMessage: str


HookAnswer = DenyAnswer | ContextAnswer | BlockAnswer | MessageAnswer
"""What a hook prints on stdout (at most one of these, or nothing)."""


# -- the session capsule (toolkit.agents.pre_compact) ------------------------------------------------


class CarriedWork(TypedDict):
    """The work fields a session capsule carries from the session's previous capsule."""

    phase: str
    objective: str
    node_ids: list[str]
    read_files: list[str]
    specs: list[SpecRef]
    approved_decisions: list[str]
    failures: list[Failure]
    risks: list[str]


class SessionCapsule(TypedDict):
    """The unsealed capsule of a session's state, in the order it is written (sealing appends
    ``capsule_hash``)."""

    schema: str
    task_id: str
    workgroup_id: str
    phase: str
    objective: str
    node_ids: list[str]
    read_files: list[str]
    specs: list[SpecRef]
    approved_decisions: list[str]
    failures: list[Failure]
    risks: list[str]
    owned_files: list[str]
    checkpoint_sha: str
    constraints: list[str]
    next_action: str


# -- the status line's cache (toolkit.agents.statusline) ---------------------------------------------

SigEntry = tuple[str, int, int, int]
"""One file the status line was computed from: its name in the cache, inode, size, mtime (ns)."""


class LineCache(TypedDict):
    """The ``.line`` cache: the line, the files it was computed from (``sig``, as JSON lists) and
    per file the inode, offset and mark the counts were read up to (``at``)."""

    v: int
    sig: list[list[str | int]]
    line: str
    at: Mapping[str, object]
