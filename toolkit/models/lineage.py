"""``knowzcode.agent-lineage/v1``: the 26-field lineage record (closed, as the reference's schema).

The runtime validates lineages by hand (``toolkit.runtime.lineage``, standard library only);
this model is the file format's single home for ``schemas/`` and for the CLI, and a test keeps
the two in agreement.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from toolkit.core.jscompat import utf16_len
from toolkit.core.timefmt import is_rfc3339

Sha256 = Annotated[str, StringConstraints(pattern=r"^sha256:[a-f0-9]{64}$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
Phase = Literal["1A", "1B", "2A", "2B", "3"]
Mode = Literal["local", "resume", "inherit-full", "inherit-recent", "fresh-capsule", "coordinated-team"]
Sensitivity = Literal["normal", "restricted", "isolated"]


def _strict_date_time(value: str) -> str:
    if not is_rfc3339(value):
        raise ValueError("not a strict RFC 3339 date-time")
    return value


def _utf16_bounds(low: int, high: int | None = None) -> AfterValidator:
    """Length bounds counted in UTF-16 units, as the reference's JavaScript validator counts them."""

    def check(value: str) -> str:
        size = utf16_len(value)
        if size < low or (high is not None and size > high):
            raise ValueError("string length out of bounds")
        return value

    return AfterValidator(check)


# Kept as the string it was written as (hashing and comparison use the exact text).
DateTime = Annotated[str, AfterValidator(_strict_date_time), Field(json_schema_extra={"format": "date-time"})]


class AgentLineage(BaseModel):
    """A reusable worker's lineage: what must still hold for it to be resumed."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    schema_: Literal["knowzcode.agent-lineage/v1"] = Field(alias="schema")
    lineage_id: NonEmpty
    workgroup_id: Annotated[str, StringConstraints(min_length=1, max_length=128), _utf16_bounds(1, 128)]
    platform: Literal["claude", "codex", "other"]
    platform_handle: NonEmpty | None
    parent_lineage_id: NonEmpty | None
    role: NonEmpty
    scope: NonEmpty
    phase: Phase
    fix_loop_id: Annotated[str, StringConstraints(min_length=1, max_length=128), _utf16_bounds(1, 128)] | None
    mode: Mode
    model: NonEmpty | None
    effort: NonEmpty | None
    runtime_prefix_hash: Sha256
    baseline_hash: Sha256 | None
    tools_hash: NonEmpty
    permissions_hash: NonEmpty
    spec_hash: NonEmpty
    scope_hash: NonEmpty
    # DESIGN.md, Decisions: never null in a lineage
    checkpoint_sha: Annotated[str, StringConstraints(min_length=7), _utf16_bounds(7)]
    capsule_hash: Sha256 | None
    sensitivity: Sensitivity
    created_at: DateTime
    last_used_at: DateTime
    resumable: bool
    lease_expires_at: DateTime | None
