"""cm package."""

__all__ = [
    "adapter",
    "assemble",
    "boundary",
    "compact",
    "events",
    "handoff",
    "lifecycle",
    "packet",
    "prefix",
    "report",
    "runptr",
    "session_boundary",
]
