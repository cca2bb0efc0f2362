"""The validated ``.workgroup/config.yml`` as ``load_config`` returns it (the models' dump), and the
defaults it fills into requests. Standard library only; import it under ``TYPE_CHECKING``."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from toolkit.models.config import HandoffThreshold, Profile, RolloutStage, TelemetryMode


class ContextEfficiencyBlock(TypedDict):
    """``context_efficiency`` (``toolkit.models.config.ContextEfficiency``), in its field order."""

    enabled: bool
    rollout: RolloutStage
    profile: Profile
    max_active_inherited: int
    max_nesting_depth: int
    warm_lease_minutes: int
    mcp_health_ttl_minutes: int
    disk_handoff_threshold: HandoffThreshold
    telemetry: TelemetryMode
    canary_percent: float


class ToolkitBlock(TypedDict):
    """``workgroup`` (``ToolkitSettings``)."""

    artifact_boundary: str


class PrivacyBlock(TypedDict):
    """``privacy`` (``PrivacySettings``)."""

    artifact_paths: list[str]


class LoadedConfig(TypedDict):
    """The whole config (``WorkgroupConfig.model_dump()``): every key present, defaults filled in."""

    context_efficiency: ContextEfficiencyBlock
    workgroup: ToolkitBlock
    privacy: PrivacyBlock


class RoutingDefaults(TypedDict):
    """The routing facts the config fills into a request that omits them."""

    max_active_inherited: int
    max_nesting_depth: int


class RolloutDefaults(TypedDict):
    """The rollout stage and canary share the config fills into a request that omits them."""

    rollout: RolloutStage
    canary_percent: float
