"""cm package."""

__all__ = [
    "adapter",
    "assemble",
    "boundary",
    "compact",
    "events",
    "handoff",
    "lifecycle",
    "logindex",
    "packet",
    "prefix",
    "report",
    "runptr",
    "session_boundary",
]
