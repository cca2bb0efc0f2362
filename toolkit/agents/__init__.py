"""``workgroup agent-hook``: the KC and CM contracts inside Claude Code and the Codex CLI hooks.

One entry point (``main``) reads the agent's JSON payload and answers the agent's way; the
concerns live apart: ``payload`` (parsing into typed records), ``answers`` (exit codes and JSON),
``prewrite`` (the privacy and ownership gate before a write), ``session_start`` (handoff, capsule,
lineage), ``pre_compact`` (the capsule sealed before compaction), ``stop`` (verdict, handoff,
efficiency event) and ``state`` (what they read from the repository). ``statusline`` is
``workgroup statusline``, Claude Code's status line.
"""

__all__ = [
    "answers",
    "main",
    "payload",
    "pre_compact",
    "prewrite",
    "session_start",
    "state",
    "statusline",
    "stop",
]
