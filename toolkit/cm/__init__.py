"""cm package."""

__all__ = [
    "adapter",
    "answer_schemas",
    "assemble",
    "boundary",
    "events",
    "handoff",
    "lifecycle",
    "logindex",
    "packet",
    "prefix",
    "report",
    "run_logs",
    "session_boundary",
]
