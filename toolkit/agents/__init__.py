"""``workgroup agent-hook``: the KC and CM contracts inside Claude Code and the Codex CLI hooks.

One entry point (``main``) reads the agent's JSON payload and imports the one module its event
names; the concerns live apart: ``payload`` (parsing into typed records), ``answers`` (exit codes
and JSON), ``writes`` (the writes of a tool call), ``prewrite`` (the privacy gate before a write),
``ownership`` (writer ownership, loaded only when a writer registry exists), ``paths`` (a path as
an answer names it), ``prompt`` (a prompt holding a secret), ``session_start`` (handoff, capsule,
lineage), ``pre_compact`` (the capsule sealed before compaction), ``stop`` (verdict, handoff,
efficiency event) and ``state`` (what the session hooks read from the repository). ``statusline``
is ``workgroup statusline``, Claude Code's status line.
"""

__all__ = [
    "answers",
    "main",
    "ownership",
    "paths",
    "payload",
    "pre_compact",
    "prewrite",
    "prompt",
    "session_start",
    "state",
    "statusline",
    "stop",
    "writes",
]
