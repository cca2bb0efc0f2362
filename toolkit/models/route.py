"""The ``route`` request: ``{input: {...}}``, the routing facts of one delegation.

The runtime validates with the standard library (``toolkit.runtime.router``); this model
documents the facts it reads and exports ``schemas/route-request.schema.json``. Decision inputs
ignore unknown fields (as the reference does), so ``RouteInput`` ignores extras instead of
forbidding them; the outer request is closed. Flags the router reads with JavaScript truthiness
(``trivial``, ``blocking``, ``recent_*``, ``full_supported``) are typed as booleans here: that is
what callers should send.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

OwnedPath = str


class _Facts(BaseModel):
    # unknown fields are ignored in decision inputs (DESIGN.md, Decisions)
    model_config = ConfigDict(extra="ignore", frozen=True)


class Scope(_Facts):
    """A writer scope (an active writer, or one scope of a requested team)."""

    lineage_id: str | None = None
    is_writer: bool | None = Field(default=None, description="false: a read-only team scope, not a writer.")
    owned_files: list[OwnedPath] | None = Field(default=None, description="Repository-relative owned paths.")
    resolved_owned_files: list[OwnedPath] | None = Field(
        default=None, description="Paths the scope resolved to (count toward the inherited-writer cap)."
    )


class Lineage(_Facts):
    lineage_id: str | None = None
    role: str | None = None
    compatible: bool | None = None
    resumable: bool | None = None
    owned_files: list[OwnedPath] | None = None
    resolved_owned_files: list[OwnedPath] | None = None


class Inheritance(_Facts):
    affinity: Literal["high", "medium", "low"] | None = None
    safe: bool | None = None
    within_budget: bool | None = None
    recent_sufficient: bool | None = None
    recent_supported: bool | None = None
    full_supported: bool | None = None


class Team(_Facts):
    coordination_required: bool | None = None
    peers: int | None = Field(default=None, ge=0)
    provider_supported: bool | None = None
    safe: bool | None = None
    sensitivity_approved: bool | None = None
    within_budget: bool | None = None
    latency_ratio: float | None = Field(
        default=None, allow_inf_nan=False, description="Must be in [0, 0.75]."
    )
    scopes: list[Scope] | None = None


class RouteInput(_Facts):
    """The facts the router reads; every one is optional."""

    task_id: str | None = None
    phase: str | None = None
    role: str | None = None
    is_writer: bool | None = None
    lineage_id: str | None = None
    owned_files: list[OwnedPath] | None = None
    resolved_owned_files: list[OwnedPath] | None = None
    owned_globs: list[str] | None = Field(
        default=None, description="Gitignore-style globs (no '!'), expanded against the tracked files."
    )
    workspace_root: str | None = Field(default=None, description="Default: the current directory.")
    active_writers: list[Scope] | None = Field(
        default=None, description="Absent (with active_writer_scopes): the persistent registry is used."
    )
    active_writer_scopes: list[Scope] | None = None
    nesting_depth: int | None = Field(default=None, ge=0)
    max_nesting_depth: int | None = Field(default=None, ge=1)
    active_inherited_writers: int | None = Field(default=None, ge=0)
    max_active_inherited: int | None = Field(default=None, ge=1)
    trivial: bool | None = None
    blocking: bool | None = None
    coupling: Literal["tight", "moderate", "independent"] | None = None
    independent_reviewer: bool | None = None
    sensitivity: Literal["normal", "restricted", "isolated"] | None = None
    capsule_sufficient: bool | None = None
    lineage: Lineage | None = None
    inheritance: Inheritance | None = None
    team: Team | None = None


class RouteRequest(BaseModel):
    """``workgroup runtime route`` stdin."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: RouteInput
