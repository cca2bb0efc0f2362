"""``.workgroup/config.yml``: the seed's ``context_efficiency:`` block plus toolkit settings.

Every key has a consumer (DESIGN.md, "Orchestration details"); request values always win over
config, config only fills absent fields:

* ``enabled: false``: ``workgroup route``/``dispatch`` answer ``local`` with
  ``CAPABILITY_FALLBACK`` and write nothing.
* ``rollout``: the stage ``workgroup dispatch`` uses when the request gives none.
* ``canary_percent``: the canary share filled into a canary rollout that names none.
* ``max_active_inherited``, ``max_nesting_depth``: filled into routing facts that omit them.
* ``warm_lease_minutes``: lease length of the active-writer registry (``workgroup owners``).
* ``mcp_health_ttl_minutes``: how long a healthy ``workgroup probe`` result is reused.
* ``disk_handoff_threshold``: result policy (``material``: handoffs for material, writer,
  partial, resumable or cross-phase results; ``always``: for every result that may write).
* ``telemetry``: ``off`` records nothing, ``local`` the local log, ``provider`` also provider data,
  ``otlp`` the local log plus live OpenTelemetry export (``toolkit.otel.live``: runtime decisions,
  ``dispatch``, efficiency events and CM model calls spooled for a detached OTLP/HTTP flusher).
* ``profile``: the fan-out profile (``workgroup profile``, ``workgroup fanout check``).
* ``workgroup.artifact_boundary``: the runtime-owned artifact root for externalized evidence.
* ``privacy.artifact_paths``: globs of the team's own workflow artifacts (every privacy rule).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from toolkit.core.errors import InvalidInput
from toolkit.core.globs import validate_globs

RolloutStage = Literal["off", "observe", "shadow", "canary", "on"]
Profile = Literal["quality", "balanced", "economy", "latency"]
TelemetryMode = Literal["off", "local", "provider", "otlp"]
HandoffThreshold = Literal["material", "always"]

# YAML 1.1 (PyYAML) reads a bare ``off``/``on`` as a boolean; the seed's own block writes
# ``rollout: off``, so booleans are read back as the words the user typed.
_YAML_BOOL_WORDS = {False: "off", True: "on"}


def _yaml_word(value: Any) -> Any:
    return _YAML_BOOL_WORDS[value] if isinstance(value, bool) else value


class ContextEfficiency(BaseModel):
    """The seed's ``context_efficiency:`` block, with the seed's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    enabled: bool = True
    rollout: RolloutStage = "off"
    profile: Profile = "balanced"
    max_active_inherited: Annotated[int, Field(ge=1, le=64)] = 2
    max_nesting_depth: Annotated[int, Field(ge=1, le=16)] = 2
    warm_lease_minutes: Annotated[int, Field(ge=1, le=1440)] = 20
    mcp_health_ttl_minutes: Annotated[int, Field(ge=0, le=1440)] = 15
    disk_handoff_threshold: HandoffThreshold = "material"
    telemetry: TelemetryMode = "local"
    canary_percent: Annotated[float, Field(ge=0, le=100, strict=False)] = 10

    @field_validator("rollout", "telemetry", mode="before")
    @classmethod
    def _words(cls, value: Any) -> Any:
        return _yaml_word(value)

    @field_validator("canary_percent", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("canary_percent must be a number")
        return value


class ToolkitSettings(BaseModel):
    """Settings of this toolkit that the seed does not define."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    artifact_boundary: Annotated[
        str, StringConstraints(min_length=1, max_length=512, pattern=r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$")
    ] = "knowzcode/artifacts"

    @field_validator("artifact_boundary")
    @classmethod
    def _repository_relative(cls, value: str) -> str:
        if any(segment in (".", "..") for segment in value.split("/")) or value.split("/")[0] == ".git":
            raise ValueError("artifact_boundary must be a repository-relative path outside .git")
        return value


class PrivacySettings(BaseModel):
    """``privacy:``: ``artifact_paths``, globs of the team's own workflow artifacts (session notes,
    agent logs) that get every privacy rule; the hooks read it without pydantic
    (``toolkit.privacy.artifacts.configured_globs``), with the same validation."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    artifact_paths: list[str] = Field(default_factory=list)

    @field_validator("artifact_paths")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:

        try:
            return list(validate_globs(value, "privacy.artifact_paths"))
        except InvalidInput as exc:
            raise ValueError(exc.message) from None


class WorkgroupConfig(BaseModel):
    """The whole ``.workgroup/config.yml``."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    context_efficiency: ContextEfficiency = Field(default_factory=ContextEfficiency)
    workgroup: ToolkitSettings = Field(default_factory=ToolkitSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
