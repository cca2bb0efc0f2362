"""The JSON shapes the CM tools build (answers, pointer and index rows, packets, the report), each
declared once. For annotations only: import under ``if TYPE_CHECKING:`` (a ``TypedDict`` is a
plain dict at run time, so no output changes, and ``cm-log-event`` does not import this module).

A model-call row's fields are declared by ``toolkit.core.cm_usage_format``, not here. A value
copied from a row the log already holds (the first write of an exact retry) keeps the type
``object``: the log is read, not trusted.
"""

from __future__ import annotations

from typing import TypedDict


class WriteAnswer(TypedDict):
    """``cm-log-event``'s stdout object (the reference writer's keys, in its order)."""

    event_id: str
    run_id: str
    project_log: str | None
    global_log: str
    global_written: bool
    pointer_written: bool | None
    deduplicated: bool
    degraded: bool


class RunPointer(TypedDict):
    """The active-run pointer the writer keeps beside the project log."""

    schema_version: int
    run_id: object  # the written row's (the first write's, for an exact retry)
    workflow: str
    status: str
    global_log: str
    global_written: bool
    updated_at: object  # the written row's ``at``


class _IndexRowBase(TypedDict):
    schema_version: int
    at: object  # the written row's ``at``
    run_id: str
    status: str
    workflow: str
    runtime: str
    project: str


class IndexRow(_IndexRowBase, total=False):
    """One row of the global run index (``index.jsonl``): a run registered running, then done."""

    project_path: str | None  # the running row only
    specs_path: str | None  # the running row only
    log_file: str


class DegradeRow(TypedDict):
    """A ``degrade`` event: a mirror or pointer write that failed while the project log stands."""

    schema_version: object  # the envelope of the written row, copied
    run_id: object
    at: object
    workflow: object
    runtime: object
    project: object
    event: str
    phase: str
    detail: str
    error_type: str
    event_id: str


class InvocationsValue(TypedDict):
    """A run's replayed QA invocations as the log index stores them (``logindex``; JSON in SQLite)."""

    active: bool
    open_cases: list[str]
    start: dict[str, object] | None  # the invocation's start row, as the log holds it
    complete: dict[str, object] | None  # its complete row
    non_pass: bool
    passed_cases: list[str]
    ended: str | None
