"""The CM model-call rows (``model_call/claimed`` and ``model_usage/complete``): their format, declared once.

Standard library only: ``cm-log-event`` imports it on every event. Everything else that knows the
format is derived from the tables below, never restated:

* the writer's checks: the closed field lists and value rules of ``toolkit.cm.model_event_rules``,
  the reserved envelope and the token-count names of ``toolkit.cm.data_json``;
* the report's constants (``toolkit.cm.report``: identity, outcomes, token fields, the call id);
* the pydantic model ``toolkit.models.cm_event.UsageEvent`` and so ``schemas/usage-event.schema.json``;
* the OTel lists: what a live spool keeps (``EXPORTED``) and the span attribute names
  (``OTEL_ATTRIBUTES``, ``toolkit.otel.spans.CM_ATTRIBUTES``).

``tests/cm/test_cm_usage_format.py`` fails when a derived form drifts from this declaration.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.core.identifiers import CM_RUN_ID

IDENTIFIER_PATTERN = r"^[A-Za-z][A-Za-z0-9._-]{0,63}$"
CALL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
RUN_ID_PATTERN = CM_RUN_ID.pattern
MAX_TEXT = 160  # a short text field: one line, not blank
MAX_PROJECT = 120
MAX_DETAIL = 500
SCHEMA_VERSION = 1

# The kinds of value a field holds (the writer, the model and the report read them the same way):
VERSION = "version"  # the format version, the integer SCHEMA_VERSION
STRING = "string"  # any string (ids and times the writer derives)
RUN_ID = "run_id"  # RUN_ID_PATTERN
IDENTIFIER = "identifier"  # IDENTIFIER_PATTERN
CALL_ID = "call_id"  # CALL_ID_PATTERN
PROJECT = "project"  # at most MAX_PROJECT characters
DETAIL = "detail"  # one line, 1 to MAX_DETAIL characters
TEXT = "text"  # one line, not blank, at most MAX_TEXT characters
COUNT = "count"  # an integer >= 0 (never a boolean)
POSITIVE = "positive"  # an integer >= 1 (never a boolean)
CHOICE = "choice"  # one of ``choices``
EVENT = "event"  # the event name (``EVENTS``)
PHASE = "phase"  # the event's phase (``EVENTS``)


@dataclass(frozen=True)
class FieldSpec:
    """One field of a model-call row."""

    name: str
    kind: str
    required: bool = True
    choices: tuple[str, ...] = ()
    exported: bool = True  # may leave the machine (the live OTLP spool); never free content
    otel: str | None = None  # the span attribute it is exported under, if any
    token: bool = False  # a token count (its name contains "token"; never a credential)
    description: str = ""


# The envelope of every CM row (not only model calls): the writer composes these, ``--data-json``
# never overrides them.
ENVELOPE: tuple[FieldSpec, ...] = (
    FieldSpec("schema_version", VERSION, description="Event format version."),
    FieldSpec(
        "event_id",
        STRING,
        description="UUIDv5 of the event without `at` and `event_id`; a retry keeps it.",
    ),
    FieldSpec("run_id", RUN_ID, otel="workgroup.run.id"),
    FieldSpec("at", STRING, description="RFC 3339 time of the first write."),
    FieldSpec("workflow", IDENTIFIER, otel="workgroup.cm.workflow"),
    FieldSpec("event", EVENT),
    FieldSpec("phase", PHASE),
    FieldSpec("runtime", IDENTIFIER, otel="workgroup.cm.runtime"),
    FieldSpec("project", PROJECT, exported=False),
    FieldSpec("detail", DETAIL, exported=False),
    FieldSpec(
        "project_path",
        STRING,
        required=False,
        exported=False,
        description="Reference writers only; ours omit it.",
    ),
    FieldSpec(
        "specs_path",
        STRING,
        required=False,
        exported=False,
        description="Reference writers only; ours omit it.",
    ),
)

# The claim: what ``model_call/claimed`` carries in ``--data-json``, and the start of a usage row.
CLAIM: tuple[FieldSpec, ...] = (
    FieldSpec("call_id", CALL_ID, otel="workgroup.cm.call_id"),
    FieldSpec("stage", TEXT, otel="workgroup.cm.stage"),
    FieldSpec("role", IDENTIFIER, otel="workgroup.cm.role"),
    FieldSpec("adapter", TEXT, otel="workgroup.cm.adapter"),
    FieldSpec("requested_model", TEXT, otel="gen_ai.request.model"),
    FieldSpec("source", TEXT, otel="workgroup.cm.source"),
    FieldSpec("purpose", TEXT, otel="workgroup.cm.purpose"),
)

USAGE_STATES = ("observed", "unavailable")
OUTCOMES = ("success", "error", "blocked", "cancelled")

# What ``model_usage/complete`` adds to the claim. Token counts are never cost.
USAGE: tuple[FieldSpec, ...] = (
    FieldSpec("usage_state", CHOICE, choices=USAGE_STATES, otel="workgroup.cm.usage_state"),
    FieldSpec("outcome", CHOICE, choices=OUTCOMES, otel="workgroup.cm.outcome"),
    FieldSpec("attempt", POSITIVE, required=False, otel="workgroup.cm.attempt"),
    FieldSpec("input_tokens", COUNT, required=False, token=True, otel="gen_ai.usage.input_tokens"),
    FieldSpec("output_tokens", COUNT, required=False, token=True, otel="gen_ai.usage.output_tokens"),
    FieldSpec(
        "cache_read_tokens",
        COUNT,
        required=False,
        token=True,
        otel="gen_ai.usage.cache_read.input_tokens",
    ),
    FieldSpec(
        "cache_write_tokens",
        COUNT,
        required=False,
        token=True,
        otel="gen_ai.usage.cache_creation.input_tokens",
    ),
    FieldSpec(
        "reasoning_tokens",
        COUNT,
        required=False,
        token=True,
        description="Reasoning tokens, a subset of output_tokens (never added to it).",
    ),
    FieldSpec("duration_ms", COUNT, required=False),
    FieldSpec("effective_model", TEXT, required=False, otel="gen_ai.response.model"),
    FieldSpec("provider", TEXT, required=False),
    FieldSpec("node", TEXT, required=False, otel="workgroup.cm.node"),
    FieldSpec("feature", TEXT, required=False, otel="workgroup.cm.feature"),
    FieldSpec("task", TEXT, required=False, otel="workgroup.cm.task"),
)

# event -> (its phase, its --data-json fields, the model's docstring)
EVENTS: dict[str, tuple[str, tuple[FieldSpec, ...], str]] = {
    "model_call": ("claimed", CLAIM, "The claim written before any HTTP request."),
    "model_usage": (
        "complete",
        CLAIM + USAGE,
        "The one completion row at the response boundary. Token counts are never cost.",
    ),
}

# Rules across fields of a usage row, by usage state: observed usage has these counts, unavailable
# usage has no token count at all; reasoning is a part of the output.
OBSERVED_REQUIRES = ("input_tokens", "output_tokens")
SUBSET_OF = ("reasoning_tokens", "output_tokens")  # (part, whole)

# A claim and its usage must agree on these (the envelope's workflow and runtime, then the claim's).
IDENTITY_FIELDS = ("workflow", "runtime", "stage", "role", "adapter", "requested_model", "source", "purpose")
# Usage from these must follow its own claim (the adapter's, or a native CLI's).
MANAGED_ADAPTER = "openai-compatible"
MANAGED_SOURCE = "native-cli-terminal"
# The reference writer checks a usage row's required texts in this order (stage last): a row with
# several bad fields is refused naming the first.
USAGE_TEXT_ORDER = ("adapter", "requested_model", "source", "purpose", "stage")

# --- derived lists (never edited by hand) ------------------------------------------------------
ALL_FIELDS: tuple[FieldSpec, ...] = ENVELOPE + CLAIM + USAGE
RESERVED_FIELDS = frozenset(f.name for f in ENVELOPE)
CALL_FIELDS = tuple(f.name for f in CLAIM)
TOKEN_FIELDS = tuple(f.name for f in USAGE if f.token)  # input, output, cache read/write, reasoning
# the counts a report totals: reasoning is a part of the output, never added to it
TOTALLED_TOKEN_FIELDS = tuple(name for name in TOKEN_FIELDS if name != SUBSET_OF[0])
FIELDS_OF = {event: frozenset(f.name for f in fields) for event, (_p, fields, _d) in EVENTS.items()}
EXPORTED = frozenset(f.name for f in ALL_FIELDS if f.exported)
OTEL_ATTRIBUTES = {f.name: f.otel for f in ALL_FIELDS if f.otel is not None}


def required_texts(event: str) -> tuple[str, ...]:
    """The required one-line texts of ``event``'s data, in the order the writer checks them."""
    names = tuple(f.name for f in EVENTS[event][1] if f.kind == TEXT and f.required)
    return USAGE_TEXT_ORDER if event == "model_usage" else names


def choice_words(choices: tuple[str, ...]) -> str:
    """``a or b``; ``a, b, c, or d``: the values a message lists."""
    if len(choices) < 3:
        return " or ".join(choices)
    return ", ".join(choices[:-1]) + ", or " + choices[-1]
