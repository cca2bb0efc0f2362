"""The CM model-call events (``model_call/claimed`` and ``model_usage/complete``) as one format.

``schemas/usage-event.schema.json`` is generated from ``UsageEvent``. The writer
(``toolkit.cm.events``) stays standard-library for start-up speed; a test checks that every row
it writes validates here and that this model refuses what the writer refuses.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, StrictInt, model_validator

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")]
CallId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]
RunId = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{7,127}$")]
# one line, not blank, at most 160 characters
ShortText = Annotated[str, Field(max_length=160, pattern=r"^(?=[^\n\r\x00]*\S)[^\n\r\x00]+$")]
Count = Annotated[StrictInt, Field(ge=0)]


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, regex_engine="python-re")

    schema_version: Literal[1] = Field(description="Event format version.")
    event_id: str = Field(description="UUIDv5 of the event without `at` and `event_id`; a retry keeps it.")
    run_id: RunId
    at: str = Field(description="RFC 3339 time of the first write.")
    workflow: Identifier
    runtime: Identifier
    project: Annotated[str, Field(max_length=120)]
    detail: Annotated[str, Field(min_length=1, max_length=500, pattern=r"^[^\n\r\x00]+$")]
    project_path: str | None = Field(default=None, description="Reference writers only; ours omit it.")
    specs_path: str | None = Field(default=None, description="Reference writers only; ours omit it.")
    call_id: CallId
    stage: ShortText
    role: Identifier
    adapter: ShortText
    requested_model: ShortText
    source: ShortText
    purpose: ShortText


class ModelCallEvent(_Envelope):
    """The claim written before any HTTP request."""

    event: Literal["model_call"]
    phase: Literal["claimed"]


class ModelUsageEvent(_Envelope):
    """The one completion row at the response boundary. Token counts are never cost."""

    event: Literal["model_usage"]
    phase: Literal["complete"]
    usage_state: Literal["observed", "unavailable"]
    outcome: Literal["success", "error", "blocked", "cancelled"]
    effective_model: ShortText | None = None
    provider: ShortText | None = None
    node: ShortText | None = None
    feature: ShortText | None = None
    task: ShortText | None = None
    duration_ms: Count | None = None
    attempt: Annotated[StrictInt, Field(ge=1)] | None = None
    input_tokens: Count | None = None
    output_tokens: Count | None = None
    cache_read_tokens: Count | None = None
    cache_write_tokens: Count | None = None
    reasoning_tokens: Count | None = Field(
        default=None, description="Reasoning tokens, a subset of output_tokens (never added to it)."
    )

    @model_validator(mode="after")
    def _counts_match_state(self) -> ModelUsageEvent:
        problem = _token_count_problem(self)
        if problem is not None:
            raise ValueError(problem)
        return self


def _token_count_problem(row: ModelUsageEvent) -> str | None:
    """How a usage row's token counts contradict its usage state, or None: unavailable usage has
    no counts, observed usage has input and output, reasoning is a part of output."""
    counts = (
        row.input_tokens,
        row.output_tokens,
        row.cache_read_tokens,
        row.cache_write_tokens,
        row.reasoning_tokens,
    )
    if row.usage_state == "unavailable" and any(c is not None for c in counts):
        return "unavailable usage carries no token counts"
    if row.usage_state == "observed" and (row.input_tokens is None or row.output_tokens is None):
        return "observed usage requires input_tokens and output_tokens"
    if row.reasoning_tokens is not None and row.reasoning_tokens > (row.output_tokens or 0):
        return "reasoning_tokens must be a subset of output_tokens"
    return None


class UsageEvent(RootModel[Annotated[ModelCallEvent | ModelUsageEvent, Field(discriminator="event")]]):
    """A CM model-call event row of the project log or the global mirror."""
