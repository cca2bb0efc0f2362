"""The hook's answer, the agents' way: an exit code, at most one JSON object on stdout, a reason on stderr.

Both agents read the same shapes (the Claude Code hooks reference; Codex's hook output schemas
accept the same keys and refuse unknown ones, so only documented keys are written):

* go on: exit 0 and nothing on stdout (a pre-tool call that writes nothing we gate);
* deny a tool call: exit 2 with the reason on stderr (what both agents show the model when a hook
  blocks), plus ``hookSpecificOutput.permissionDecision: "deny"`` and its reason on stdout for a
  reader of the JSON;
* add context (session start): exit 0, ``hookSpecificOutput.additionalContext``;
* block a stop or a prompt: exit 0, ``{"decision": "block", "reason": ...}``;
* tell the user: exit 0, ``systemMessage``;
* an error: ``error[CODE]: ...`` on stderr; a pre-tool call is denied (exit 2, the gate fails
  closed), a prompt is held back (exit 2), any other event goes on (exit 1: a stop that blocked on
  our error would loop the agent).

Reasons and messages are ours: they name rules, lines and paths, never a matched value.
"""

from __future__ import annotations

import json

from toolkit.core.display import shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from toolkit.agents.shapes import BlockAnswer, ContextAnswer, DenyAnswer, HookAnswer, MessageAnswer

MAX_CONTEXT_CHARS = 9_000  # Claude Code caps injected context at 10,000 characters
MAX_MESSAGE_CHARS = 2_000


class Answer:
    """What the process answers: ``code``, ``data`` (stdout JSON or None), ``note`` (stderr)."""

    __slots__ = ("code", "data", "note")

    def __init__(self, code: int = 0, data: HookAnswer | None = None, note: str | None = None) -> None:
        self.code = code
        self.data = data
        self.note = note

    def write(self, out: TextIO, err: TextIO) -> int:
        if self.data is not None:
            out.write(json.dumps(self.data, ensure_ascii=False, separators=(",", ":")) + "\n")
            out.flush()
        if self.note:
            err.write(self.note if self.note.endswith("\n") else self.note + "\n")
            err.flush()
        return self.code

    def __repr__(self) -> str:
        return f"Answer(code={self.code}, data={self.data!r}, note={self.note!r})"


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 15].rstrip() + "\n[... clipped]"


def allow() -> Answer:
    return Answer()


def deny(reason: str) -> Answer:
    reason = clip(reason, MAX_MESSAGE_CHARS)
    data: DenyAnswer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
    return Answer(2, data, reason)


def context(event_name: str, text: str, message: str | None = None) -> Answer:
    data: ContextAnswer = {
        "hookSpecificOutput": {
            "hookEventName": event_name,
            "additionalContext": clip(text, MAX_CONTEXT_CHARS),
        }
    }
    if message:
        data["systemMessage"] = clip(message, MAX_MESSAGE_CHARS)
    return Answer(0, data)


def block(reason: str) -> Answer:
    data: BlockAnswer = {"decision": "block", "reason": clip(reason, MAX_MESSAGE_CHARS)}
    return Answer(0, data)


def message(text: str) -> Answer:
    data: MessageAnswer = {"systemMessage": clip(text, MAX_MESSAGE_CHARS)}
    return Answer(0, data)


BLOCKING_EVENTS = ("pre-tool-use", "user-prompt-submit")


def error(code: str, text: str, event: str | None) -> Answer:
    """A coded failure. Where failing open is not allowed (a tool call, a prompt, or an event we
    could not even name) the agent is made to block: exit 2; elsewhere (a stop that blocked on our
    error would loop the agent) exit 1, which the agents show the user and go on."""
    line = f"error[{code}]: {shown(text)}"
    if event == "pre-tool-use":
        return deny(f"workgroup could not check this call ({line}); it is denied until the check can run")
    if event is None or event in BLOCKING_EVENTS:
        return Answer(2, None, line)
    return Answer(1, None, line)
