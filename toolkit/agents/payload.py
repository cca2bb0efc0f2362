"""The agents' hook input, parsed at the edge into typed records.

Claude Code and the Codex CLI hand a hook one JSON object on stdin. Formats evolve, so parsing is
tolerant: unknown fields are ignored, a missing optional field is ``None``; only what a decision
needs is kept. The raw stdin is bounded (``MAX_STDIN_BYTES``): more is ``PAYLOAD_TOO_LARGE``.

The writes a pre-tool check gates are read from ``tool_input`` by ``toolkit.agents.writes``.

Standard library only, no typing at run time: this runs before every tool call.
"""

from __future__ import annotations

import json
import os

from toolkit.core.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from toolkit.core.jsontypes import JsonObject

MAX_STDIN_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64

AGENTS = ("claude", "codex")

# our event names (the CLI argument) -> the agents' own names
EVENTS: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "pre-compact": "PreCompact",
    "stop": "Stop",
    "subagent-stop": "SubagentStop",
    "session-end": "SessionEnd",
}
_BY_AGENT_NAME = {name.lower(): ours for ours, name in EVENTS.items()}


def event_name(given: str) -> str:
    """Our event name for ``given`` (``pre-tool-use``, ``PreToolUse`` or ``pre_tool_use``);
    ``UNKNOWN_EVENT`` (exit 2) otherwise."""
    if given in EVENTS:
        return given
    key = given.replace("-", "").replace("_", "").lower()
    found = _BY_AGENT_NAME.get(key)
    if found is None:
        raise InvalidInput(
            "UNKNOWN_EVENT",
            "the hook event must be one of: " + ", ".join(EVENTS) + " (or the agent's own name)",
        )
    return found


class HookInput:
    """The fields of one hook payload a decision uses (everything else is ignored)."""

    __slots__ = (
        "agent",
        "custom",
        "cwd",
        "event",
        "model",
        "prompt",
        "reason",
        "session_id",
        "source",
        "stop_hook_active",
        "tool_input",
        "tool_name",
        "transcript_path",
        "trigger",
    )

    def __init__(self, event: str, agent: str, fields: JsonObject) -> None:
        self.event = event
        self.agent = agent
        self.session_id = _text(fields.get("session_id"))
        self.transcript_path = _text(fields.get("transcript_path"))
        self.cwd = _text(fields.get("cwd"))
        self.model = _text(fields.get("model"))
        self.tool_name = _text(fields.get("tool_name"))
        tool_input = fields.get("tool_input")
        self.tool_input: JsonObject = tool_input if isinstance(tool_input, dict) else {}
        self.source = _text(fields.get("source"))
        self.trigger = _text(fields.get("trigger"))
        self.custom = _text(fields.get("custom_instructions"))
        self.reason = _text(fields.get("reason"))
        self.prompt = _text(fields.get("prompt"))
        self.stop_hook_active = fields.get("stop_hook_active") is True


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def read_stdin(stream: Any, limit: int = MAX_STDIN_BYTES) -> bytes:
    """At most ``limit`` bytes of ``stream``; ``PAYLOAD_TOO_LARGE`` when there is more."""
    chunks: list[bytes] = []
    got = 0
    while got <= limit:
        chunk = stream.read(min(1 << 20, limit + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    if got > limit:
        raise InvalidInput("PAYLOAD_TOO_LARGE", f"the hook input is larger than {limit} bytes")
    return b"".join(chunks)


def _depth_ok(value: object, depth: int = 0) -> bool:
    if depth > MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return all(_depth_ok(item, depth + 1) for item in value.values())
    if isinstance(value, list):
        return all(_depth_ok(item, depth + 1) for item in value)
    return True


def decode(raw: bytes) -> JsonObject:
    """The one JSON object in ``raw``; ``INVALID_PAYLOAD`` (exit 2) for anything else."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise InvalidInput("INVALID_PAYLOAD", "the hook input is not one JSON object (UTF-8)") from None
    if not isinstance(value, dict):
        raise InvalidInput("INVALID_PAYLOAD", "the hook input is not one JSON object")
    if not _depth_ok(value):
        raise InvalidInput("INVALID_PAYLOAD", f"the hook input nests deeper than {MAX_DEPTH} levels")
    return value


def detect_agent(fields: JsonObject, given: str | None) -> str:
    """``given`` (``--agent``), else from the payload: Codex sends ``turn_id`` or a ``model`` on
    every turn event and names its transcript a rollout; Claude Code sends neither."""
    if given is not None:
        if given not in AGENTS:
            raise InvalidInput("UNKNOWN_AGENT", "--agent must be claude or codex")
        return given
    transcript = fields.get("transcript_path")
    if "turn_id" in fields or (isinstance(transcript, str) and "/rollout-" in transcript):
        return "codex"
    return "claude"


def parse(raw: bytes, event: str, agent: str | None = None) -> HookInput:
    """``raw`` stdin as the record of ``event`` (our name). A payload naming another event in
    ``hook_event_name`` is ``EVENT_MISMATCH``: a settings file wired the wrong command."""
    fields = decode(raw)
    named = fields.get("hook_event_name")
    if isinstance(named, str) and named and event_name_or_none(named) not in (None, event):
        raise InvalidInput("EVENT_MISMATCH", "the hook input is for another event than the command names")
    return HookInput(event, detect_agent(fields, agent), fields)


def event_name_or_none(given: str) -> str | None:
    try:
        return event_name(given)
    except InvalidInput:
        return None


class Options:
    """The command line of one call (``workgroup agent-hook EVENT [OPTIONS]``): ``event`` (our
    name), ``agent`` (None: detected from the payload), ``lineage``, ``workflow``, ``lang``."""

    __slots__ = ("agent", "event", "lang", "lineage", "workflow")

    def __init__(self) -> None:
        self.event: str | None = None
        self.agent: str | None = None
        self.lineage: str | None = None
        self.workflow = "cm-ai"
        self.lang = "en"

    @property
    def lineage_id(self) -> str | None:
        """The lineage this session writes as: ``--lineage``, else ``WORKGROUP_LINEAGE_ID``, else None."""
        return self.lineage or os.environ.get("WORKGROUP_LINEAGE_ID") or None
