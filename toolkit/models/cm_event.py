"""The CM model-call events (``model_call/claimed`` and ``model_usage/complete``) as a pydantic model.

Built from the one declaration of the format, ``toolkit.core.cm_usage_format`` (standard library: the
``cm-*`` scripts never import pydantic); ``schemas/usage-event.schema.json`` is generated from
``UsageEvent``. Nothing about a field is restated here: each field kind maps to one constrained
type, and the token-count rules across fields are the declaration's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, RootModel, StrictInt, create_model, model_validator

from toolkit.core import cm_usage_format as fmt
from toolkit.core.cm_usage_format import FieldSpec

# one line, not blank, at most MAX_TEXT characters
_ONE_LINE_TEXT = r"^(?=[^\n\r\x00]*\S)[^\n\r\x00]+$"
_KIND_TYPES: dict[str, object] = {  # field kind -> the type form of its annotation
    fmt.VERSION: Literal[fmt.SCHEMA_VERSION],
    fmt.STRING: str,
    fmt.RUN_ID: Annotated[str, Field(pattern=fmt.RUN_ID_PATTERN)],
    fmt.IDENTIFIER: Annotated[str, Field(pattern=fmt.IDENTIFIER_PATTERN)],
    fmt.CALL_ID: Annotated[str, Field(pattern=fmt.CALL_ID_PATTERN)],
    fmt.PROJECT: Annotated[str, Field(max_length=fmt.MAX_PROJECT)],
    fmt.DETAIL: Annotated[str, Field(min_length=1, max_length=fmt.MAX_DETAIL, pattern=r"^[^\n\r\x00]+$")],
    fmt.TEXT: Annotated[str, Field(max_length=fmt.MAX_TEXT, pattern=_ONE_LINE_TEXT)],
    fmt.COUNT: Annotated[StrictInt, Field(ge=0)],
    fmt.POSITIVE: Annotated[StrictInt, Field(ge=1)],
}


def _field(spec: FieldSpec, event: str) -> tuple[object, object]:
    """(annotation, default) of one declared field in ``event``'s model (a type form and a
    FieldInfo: create_model is handed them untyped)."""
    if spec.kind == fmt.EVENT:
        kind: Any = Literal[event]
    elif spec.kind == fmt.PHASE:
        kind = Literal[fmt.EVENTS[event][0]]
    elif spec.kind == fmt.CHOICE:
        kind = Literal[spec.choices]
    else:
        kind = _KIND_TYPES[spec.kind]
    described = spec.description or None
    if spec.required:
        return kind, Field(description=described)
    return kind | None, Field(default=None, description=described)


def _model_name(event: str) -> str:
    return "".join(part.capitalize() for part in event.split("_")) + "Event"  # ModelCallEvent


def token_count_problem(row: BaseModel) -> str | None:
    """How a usage row's token counts contradict its usage state, or None: unavailable usage has
    no counts, observed usage has the counts it requires, a subset count is at most its whole."""
    counts = {name: getattr(row, name) for name in fmt.TOKEN_FIELDS}
    state = getattr(row, "usage_state", None)
    if state == "unavailable" and any(c is not None for c in counts.values()):
        return "unavailable usage carries no token counts"
    if state == "observed" and any(counts[name] is None for name in fmt.OBSERVED_REQUIRES):
        return "observed usage requires " + " and ".join(fmt.OBSERVED_REQUIRES)
    part, whole = fmt.SUBSET_OF
    if counts[part] is not None and counts[part] > (counts[whole] or 0):
        return f"{part} must be a subset of {whole}"
    return None


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, regex_engine="python-re")

    @model_validator(mode="after")
    def _counts_match_state(self) -> _Row:
        if "usage_state" in type(self).model_fields:
            problem = token_count_problem(self)
            if problem is not None:
                raise ValueError(problem)
        return self


def _event_model(event: str) -> type[BaseModel]:
    _phase, fields, doc = fmt.EVENTS[event]
    # the envelope, the claim, then the event's name and phase, then what usage adds (the order of
    # the schema's ``required`` lists)
    tagged = [spec for spec in fmt.ENVELOPE if spec.kind in (fmt.EVENT, fmt.PHASE)]
    rest = [spec for spec in fmt.ENVELOPE if spec not in tagged]
    ordered = (*rest, *fields[: len(fmt.CLAIM)], *tagged, *fields[len(fmt.CLAIM) :])
    declared = {spec.name: _field(spec, event) for spec in ordered}
    build: Any = create_model  # field definitions built at run time, not written as a class
    return cast(type[BaseModel], build(_model_name(event), __base__=_Row, __doc__=doc, **declared))


ModelCallEvent = _event_model("model_call")
ModelUsageEvent = _event_model("model_usage")
_ROW: Any = Annotated[ModelCallEvent | ModelUsageEvent, Field(discriminator="event")]


class UsageEvent(RootModel[_ROW]):
    """A CM model-call event row of the project log or the global mirror."""
