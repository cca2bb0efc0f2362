"""A corpus scenario: one self-contained task with its input and oracle (``corpus/scenarios/*.json``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from toolkit.core.jsontypes import JsonObject

Stratum = Literal[
    "small-tier2", "backend-refactor", "ui-integration", "security-compliance", "recovery-invalidation"
]
# Repository-relative, portable: segments of safe characters, never "." or "..", no leading "/".
RelPath = Annotated[
    str,
    StringConstraints(
        min_length=1,
        max_length=512,
        pattern=r"^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$",
    ),
]


class VirtualFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: RelPath
    content: Annotated[str, StringConstraints(max_length=65_536)]


class VirtualRepository(BaseModel):
    """The small repository the scenario runs in (written to a temporary directory)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["knowzcode.virtual-repository/v2"] = Field(alias="schema")
    files: list[VirtualFile] = Field(min_length=1, max_length=16)


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    verify_id: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    rule: Annotated[str, StringConstraints(min_length=1, max_length=2048)]


class SuccessOracle(BaseModel):
    """The operation succeeds and its result contains ``match`` (objects compared as subsets)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["success"]
    match: JsonObject


class ErrorOracle(BaseModel):
    """The operation is refused with exactly this code."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["error"]
    code: Annotated[str, StringConstraints(pattern=r"^[A-Z0-9_]{3,64}$")]


class FixtureProvenance(BaseModel):
    """Scenarios are fixtures: never measured evidence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["fixture-only"]
    empirical: Literal[False]
    promotion_authorized: Literal[False]


class Scenario(BaseModel):
    """``workgroup.corpus-scenario/v1``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_: Literal["workgroup.corpus-scenario/v1"] = Field(alias="schema")
    id: Annotated[
        str,
        StringConstraints(
            pattern=r"^(small-tier2|backend-refactor|ui-integration|security-compliance|recovery-invalidation)-\d{2}$"
        ),
    ]
    stratum: Stratum
    category: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z-]{1,31}$")]
    description: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    operation: Literal[
        "route",
        "lineage",
        "capsule",
        "telemetry",
        "rollout",
        "result-policy",
        "vault-delta",
        "dispatch",
        "budget",
        "verification-plan",
        "promotion",
        "should-deep-query",
    ]
    repository: VirtualRepository
    spec: Spec
    owned_files: list[RelPath]
    input: JsonObject = Field(description="The runtime request, exactly as `workgroup runtime OP` reads it.")
    oracle: SuccessOracle | ErrorOracle = Field(discriminator="status")
    provenance: FixtureProvenance
