"""``workgroup usage``: verified token usage and context-reload analysis from Claude Code and Codex logs.

The readers (``claude``, ``codex``) decode only allowlisted fields with typed ``msgspec`` structs;
message content, summaries, instructions and tool output are skipped by the JSON scanner and never
become Python objects. ``fold`` deduplicates, splits sessions into context threads, computes carried
history and groups; ``render``, ``cost``, ``events`` and ``html`` present the folded result.
"""

__all__ = [
    "claude",
    "codex",
    "cost",
    "dedup",
    "events",
    "fold",
    "html",
    "model",
    "render",
    "report",
    "session",
    "sources",
]
