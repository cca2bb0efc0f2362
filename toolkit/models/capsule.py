"""``knowzcode.context-capsule/v1``: the sealed capsule file format (closed, as the reference).

The runtime validates capsules with the stdlib mirror in ``toolkit.runtime.capsule_rules`` (the
runtime may not import pydantic); ``tests/models/test_capsule_model.py`` keeps the two in agreement.
This model is the source of ``schemas/context-capsule.schema.json``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

Phase = Literal["1A", "1B", "2A", "2B", "3"]
EvidenceKind = Literal["file", "test", "log", "vault", "user"]


# Non-empty strings with the reference schema's length bounds (spelled out so type checkers see aliases).
Id128 = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Path512 = Annotated[str, StringConstraints(min_length=1, max_length=512)]
Text1024 = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
Text2048 = Annotated[str, StringConstraints(min_length=1, max_length=2048)]
Text4096 = Annotated[str, StringConstraints(min_length=1, max_length=4096)]


def _unique(items: list[str]) -> list[str]:
    if len(set(items)) != len(items):
        raise ValueError("items must be unique")
    return items


UNIQUE: dict[str, Any] = {"uniqueItems": True}


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class SpecRef(_Closed):
    """A spec the task must satisfy, with the verification ids that prove it."""

    path: Path512
    verify_ids: Annotated[list[Id128], AfterValidator(_unique)] = Field(
        max_length=128, json_schema_extra=UNIQUE
    )


class Failure(_Closed):
    """A failed command with a bounded summary and, optionally, an artifact reference."""

    command: Text1024
    summary: Text2048
    artifact: Path512 | None


class Evidence(_Closed):
    """Optional evidence; the only part of a capsule that overflow may move into an artifact."""

    kind: EvidenceKind
    summary: Text2048
    artifact: Path512 | None = None


# Required in a sealed capsule (the reference's schema), never asked of the user: readOnly marks
# what the owning tool manages (JSON Schema validation vocabulary, "readOnly").
FILLED_IN = "Filled in by `workgroup capsule seal`: {what}. Leave it out of the input."


class ContextCapsule(_Closed):
    """A short, deterministic context capsule bound to a checkpoint and sealed by ``capsule_hash``."""

    schema_: Literal["knowzcode.context-capsule/v1"] = Field(alias="schema")
    task_id: Id128
    workgroup_id: Id128
    phase: Phase
    objective: Text4096
    node_ids: Annotated[list[Id128], AfterValidator(_unique)] = Field(max_length=64, json_schema_extra=UNIQUE)
    owned_files: Annotated[list[Path512], AfterValidator(_unique)] = Field(
        max_length=64, json_schema_extra=UNIQUE
    )
    read_files: Annotated[list[Path512], AfterValidator(_unique)] = Field(
        max_length=128, json_schema_extra=UNIQUE
    )
    specs: list[SpecRef] = Field(max_length=64)
    approved_decisions: list[Text2048] = Field(max_length=128)
    checkpoint_sha: Annotated[str, StringConstraints(min_length=7)] | None = Field(
        description=FILLED_IN.format(what="the commit the capsule is bound to (--checkpoint, default HEAD)"),
        json_schema_extra={"readOnly": True},
    )
    failures: list[Failure] = Field(max_length=64)
    risks: list[Text2048] = Field(max_length=128)
    constraints: list[Text2048] = Field(max_length=128)
    next_action: Text2048
    evidence: list[Evidence] = Field(default_factory=list, max_length=128)
    artifact_refs: Annotated[list[Path512], AfterValidator(_unique)] = Field(
        default_factory=list, max_length=128, json_schema_extra=UNIQUE
    )
    capsule_hash: Annotated[str, StringConstraints(pattern=r"^sha256:[a-f0-9]{64}$")] = Field(
        description=FILLED_IN.format(what="the seal over the capsule's canonical bytes"),
        json_schema_extra={"readOnly": True},
    )

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)
