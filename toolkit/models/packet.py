"""The role packet: exactly the stdin of ``cm-openai-compatible-call`` (``{stable_prefix, dynamic_packet}``).

This model documents the format and exports ``schemas/role-packet.schema.json``. The runtime
check is ``toolkit.cm.packet.validate_adapter_input`` (standard library, shared with the adapter);
a test keeps the two in agreement.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from toolkit.core.jsontypes import JsonObject

_TEXT = r"\S"  # non-empty after stripping: at least one non-space character


class StablePrefix(BaseModel):
    """The five sections, joined in this fixed order as ``[key]`` blocks into the system message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    safety: str = Field(pattern=_TEXT, description="Safety and authorization boundary.")
    workflow: str = Field(pattern=_TEXT, description="CM workflow and stage boundary.")
    project_rules: str = Field(pattern=_TEXT, description="Only the applicable stable project rules.")
    role: str = Field(pattern=_TEXT, description="The current role contract.")
    output_schema: str = Field(pattern=_TEXT, description="The role's compact output schema.")


class DynamicPacket(BaseModel):
    """Everything that changes per call; sent as compact, key-sorted JSON after the prefix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workflow: str = Field(pattern=_TEXT, description="Must equal --workflow.")
    stage: str = Field(pattern=_TEXT, description="Must equal --stage.")
    role: str = Field(pattern=_TEXT, description="Must equal --role.")
    objective: str = Field(pattern=_TEXT, description="The current objective.")
    identifiers: JsonObject = Field(description="Current identifiers (task, attempt, run, ...).")
    constraints: list[Annotated[str, Field(pattern=_TEXT)]] = Field(
        description="Constraints, each a non-empty string."
    )
    context: JsonObject = Field(
        default_factory=dict,
        description="Role items under fixed snake_case keys, artifact_refs, an optional escalation.",
    )
    expected_output: str = Field(pattern=_TEXT, description="The expected compact output shape.")


class AdapterInput(BaseModel):
    """The whole packet: exactly these two keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stable_prefix: StablePrefix
    dynamic_packet: DynamicPacket
