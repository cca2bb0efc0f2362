"""cm package."""

__all__ = [
    "adapter",
    "answer_schemas",
    "assemble",
    "boundary",
    "data_json",
    "event_error",
    "event_input",
    "event_write",
    "events",
    "handoff",
    "lifecycle",
    "log_facts",
    "logindex",
    "model_event_rules",
    "packet",
    "prefix",
    "report",
    "run_logs",
    "session_boundary",
]
