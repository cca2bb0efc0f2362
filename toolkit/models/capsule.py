"""``knowzcode.context-capsule/v1``: the sealed capsule file format (closed, as the reference).

Built from the one declaration of the format, ``toolkit.core.capsule_schema`` (standard library,
which the runtime's checks in ``toolkit.runtime.capsule_rules`` are derived from too): no field,
limit or description is spelled here. This model is the source of
``schemas/context-capsule.schema.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, StringConstraints, create_model
from pydantic.fields import FieldInfo

from toolkit.core.capsule_schema import (
    CAPSULE,
    Choice,
    Const,
    Nullable,
    Objects,
    Pattern,
    Shape,
    Text,
    TextList,
)
from toolkit.core.capsule_schema import Field as FieldSpec
from toolkit.core.jscompat import utf16_len
from toolkit.core.ownership import hidden_character

if TYPE_CHECKING:
    from toolkit.core.capsule_schema import Rule

# Required in a sealed capsule (the reference's schema), never asked of the user: readOnly marks
# what the owning tool manages (JSON Schema validation vocabulary, "readOnly").
FILLED_IN = "Filled in by `workgroup capsule seal`: {what}. Leave it out of the input."


def _unique(items: list[str]) -> list[str]:
    if len(set(items)) != len(items):
        raise ValueError("items must be unique")
    return items


def _at_most_units(hi: int) -> Callable[[str], str]:
    def check(text: str) -> str:
        if utf16_len(text) > hi:
            raise ValueError(f"must be at most {hi} UTF-16 code units")
        return text

    return check


def _visible(text: str) -> str:
    if hidden_character(text) is not None:
        raise ValueError("must not hold an invisible character")
    return text


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)


def _annotation(rule: Rule) -> Any:
    """The pydantic type of a rule of the declaration."""
    if isinstance(rule, Text):
        text: Any = Annotated[str, StringConstraints(min_length=rule.lo, max_length=rule.hi)]
        if rule.hi is not None:  # pydantic counts code points; the format counts UTF-16 units
            text = Annotated[text, AfterValidator(_at_most_units(rule.hi))]
        return Annotated[text, AfterValidator(_visible)] if rule.visible else text
    if isinstance(rule, Pattern):
        return Annotated[str, StringConstraints(pattern=rule.regex)]
    if isinstance(rule, Const):
        return Literal[rule.value]
    if isinstance(rule, Choice):
        return Literal.__getitem__(rule.values)
    if isinstance(rule, Nullable):
        return _annotation(rule.inner) | None
    if isinstance(rule, TextList):
        items = list.__class_getitem__(_annotation(rule.item))
        return Annotated[items, AfterValidator(_unique)] if rule.unique else items
    return list.__class_getitem__(_model(rule.shape))


def _field(spec: FieldSpec) -> tuple[Any, FieldInfo]:
    """``(type, FieldInfo)`` of one field: bounds on lists, defaults of optional fields, readOnly."""
    rule = spec.rule
    extra: dict[str, JsonValue] | None = None
    if spec.filled_in:
        extra = {"readOnly": True}
    elif isinstance(rule, TextList) and rule.unique:
        extra = {"uniqueItems": True}
    most = rule.most if isinstance(rule, TextList | Objects) else None
    description = FILLED_IN.format(what=spec.filled_in) if spec.filled_in else None
    alias = spec.name if hasattr(BaseModel, spec.name) else None  # "schema" shadows BaseModel.schema
    if not spec.optional:
        info = Field(max_length=most, json_schema_extra=extra, description=description, alias=alias)
    elif isinstance(rule, Nullable):  # left out: null
        info = Field(None, max_length=most, json_schema_extra=extra, description=description, alias=alias)
    else:  # a list left out: empty
        info = Field(
            default_factory=list,
            max_length=most,
            json_schema_extra=extra,
            description=description,
            alias=alias,
        )
    return _annotation(rule), info


def _python_name(name: str) -> str:
    return f"{name}_" if hasattr(BaseModel, name) else name


def _model(shape: Shape) -> type[BaseModel]:
    fields: dict[str, Any] = {_python_name(spec.name): _field(spec) for spec in shape.fields}
    return create_model(shape.name, __base__=_Closed, __doc__=shape.doc, __module__=__name__, **fields)


ContextCapsule = _model(CAPSULE)
