"""Execution profiles: ``quality``, ``balanced``, ``economy``, ``latency``.

A profile tunes fan-out limits, inheritance thresholds and model choices. It only tightens the
seed's safety defaults (at most two active inherited writers, nesting depth two), never loosens
them. Precedence when settings are resolved: request values > explicit config values > the
active profile > built-in defaults, except that the seed's limits in the config
(``max_active_inherited``, ``max_nesting_depth``) are ceilings the profile can only tighten.

A profile change is recorded as its own ``workgroup.profile-change/v1`` record in the local state
(``profile-changes.jsonl``), never as an efficiency event or a rollout step, so cost changes
stay attributable to either the profile or a routing experiment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, TypeGuard

from toolkit.core.errors import InvalidInput

PROFILE_NAMES: tuple[str, ...] = ("quality", "balanced", "economy", "latency")
DEFAULT_PROFILE = "balanced"
PROFILE_CHANGE_SCHEMA = "workgroup.profile-change/v1"


class ProfileSettings(TypedDict):
    """One profile's settings, as in ``PROFILES`` (before config and request overrides)."""

    max_active_inherited: int
    max_nesting_depth: int
    max_parallel_workers: int
    max_scanners: int
    max_specialists: int
    max_read_only_discovery: int
    inherit_min_affinity: str
    prefer_recent_inheritance: bool
    max_inherited_context_tokens: int
    coordinator_model: str
    worker_model: str
    reviewer_model: str


class EffectiveSettings(ProfileSettings):
    """``effective_settings``: a profile's settings with config and request values applied (each
    of the profile's own type), then the config's ``profile`` as given (``profile show --json``)."""

    profile: object


class ProfileChange(TypedDict):
    """The ``workgroup.profile-change/v1`` record (appended to profile-changes.jsonl, printed)."""

    schema: str
    at: str
    from_profile: str
    to_profile: str
    changed_settings: dict[str, list[object]]
    reason: str | None


# Model choices are tiers; capabilities.MODEL_TIERS maps them to a provider's models (version-qualified).
PROFILES: dict[str, ProfileSettings] = {
    "quality": {
        "max_active_inherited": 2,
        "max_nesting_depth": 2,
        "max_parallel_workers": 6,
        "max_scanners": 3,
        "max_specialists": 4,
        "max_read_only_discovery": 3,
        "inherit_min_affinity": "medium",
        "prefer_recent_inheritance": False,
        "max_inherited_context_tokens": 120_000,
        "coordinator_model": "deep",
        "worker_model": "deep",
        "reviewer_model": "deep",
    },
    "balanced": {
        "max_active_inherited": 2,
        "max_nesting_depth": 2,
        "max_parallel_workers": 4,
        "max_scanners": 2,
        "max_specialists": 2,
        "max_read_only_discovery": 2,
        "inherit_min_affinity": "high",
        "prefer_recent_inheritance": True,
        "max_inherited_context_tokens": 60_000,
        "coordinator_model": "deep",
        "worker_model": "standard",
        "reviewer_model": "standard",
    },
    "economy": {
        "max_active_inherited": 1,
        "max_nesting_depth": 1,
        "max_parallel_workers": 2,
        "max_scanners": 1,
        "max_specialists": 1,
        "max_read_only_discovery": 1,
        "inherit_min_affinity": "high",
        "prefer_recent_inheritance": True,
        "max_inherited_context_tokens": 30_000,
        "coordinator_model": "standard",
        "worker_model": "fast",
        "reviewer_model": "standard",
    },
    "latency": {
        "max_active_inherited": 2,
        "max_nesting_depth": 2,
        "max_parallel_workers": 6,
        "max_scanners": 3,
        "max_specialists": 2,
        "max_read_only_discovery": 3,
        "inherit_min_affinity": "medium",
        "prefer_recent_inheritance": True,
        "max_inherited_context_tokens": 60_000,
        "coordinator_model": "standard",
        "worker_model": "fast",
        "reviewer_model": "standard",
    },
}

SETTING_DOCS: dict[str, str] = {
    "max_active_inherited": "active inherited or resumed writer contexts (router cap)",
    "max_nesting_depth": "delegation depth; at or above it work stays local",
    "max_parallel_workers": "workers running at once in one fan-out",
    "max_scanners": "Stage 0 scanners (each needs an independent slice or material uncertainty)",
    "max_specialists": "knowledge/security/test/design/compliance specialists (each required by scope "
    "or controls)",
    "max_read_only_discovery": "extra read-only discovery workers (each with an independently useful scope)",
    "inherit_min_affinity": "lowest expected context reuse that may inherit context (high|medium)",
    "prefer_recent_inheritance": "prefer bounded recent inheritance over a full fork when both are possible",
    "max_inherited_context_tokens": "largest inherited context a worker may start with",
    "coordinator_model": "model tier of the coordinator (deep|standard|fast)",
    "worker_model": "model tier of delegated workers",
    "reviewer_model": "model tier of independent reviewers",
}

SEED_CEILINGS = {"max_active_inherited": 2, "max_nesting_depth": 2}


class ProfileError(InvalidInput, ValueError):
    """An unknown profile name or a setting that would loosen a safety ceiling."""

    def __init__(self, message: str) -> None:
        super().__init__("INVALID_PROFILE", message)


def profile_settings(name: str) -> ProfileSettings:
    if name not in PROFILES:
        raise ProfileError("unknown profile (choose quality, balanced, economy or latency)")
    return PROFILES[name].copy()


def effective_settings(
    config_block: Mapping[str, object] | None, request: Mapping[str, object] | None = None
) -> EffectiveSettings:
    """Resolve settings: request > explicit config > profile > defaults; seed ceilings always hold."""
    block = dict(config_block or {})
    name = block.get("profile", DEFAULT_PROFILE)
    # Config and request values are unchecked until _check_ceilings and _check_types have seen them.
    settings = _apply_config(profile_settings(name if isinstance(name, str) else DEFAULT_PROFILE), block)
    for key, value in (request or {}).items():
        if key in settings and value is not None:
            settings[key] = value
    _check_ceilings(settings)
    if not _check_types(settings, PROFILES[DEFAULT_PROFILE]):
        raise AssertionError  # never: _check_types refuses a setting of the wrong type itself
    return {**settings, "profile": name}


def _apply_config(profile: ProfileSettings, block: Mapping[str, object]) -> dict[str, object]:
    """The explicit settings of the config block over the profile's. The seed's limits in config
    are the team's ceilings: there the smaller of the two applies."""
    ceilings = {
        "max_active_inherited": profile["max_active_inherited"],
        "max_nesting_depth": profile["max_nesting_depth"],
    }  # the profile's own values of the SEED_CEILINGS keys
    settings: dict[str, object] = dict(profile)
    for key, value in block.items():
        if key in settings and value is not None:
            settings[key] = min(value, ceilings[key]) if key in ceilings and _is_int(value) else value
    return settings


def _check_ceilings(settings: Mapping[str, object]) -> None:
    """Refuse a seed limit that is not an integer between 1 and its ceiling."""
    for key, ceiling in SEED_CEILINGS.items():
        value = settings[key]
        if not _is_int(value) or not 1 <= value <= ceiling:
            raise ProfileError(f"{key} must be an integer between 1 and {ceiling}")


def _check_types(settings: Mapping[str, object], shape: ProfileSettings) -> TypeGuard[ProfileSettings]:
    """Refuse a setting of another type than the profile's own value: a count limit that is not
    a non-negative integer (a string, a float, a bool), a flag that is not a boolean, a tier that
    is not a string. The rules compare these with counts, so a wrong type is refused here; once
    every setting has passed, ``settings`` is a ``ProfileSettings`` (True)."""
    for key, default in shape.items():
        value = settings[key]
        if _is_int(default):
            if not _is_int(value) or value < 0:
                raise ProfileError(f"{key} must be a non-negative integer")
        elif not isinstance(value, type(default)):
            kind = "true or false" if isinstance(default, bool) else "a string"
            raise ProfileError(f"{key} must be {kind}")
    return True


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def change_record(old: str, new: str, *, at: str, reason: str | None) -> ProfileChange:
    """The ``workgroup.profile-change/v1`` record: which settings moved, from what to what."""
    before: dict[str, object] = dict(profile_settings(old))
    after: dict[str, object] = dict(profile_settings(new))
    changed = {k: [before[k], after[k]] for k in sorted(after) if before[k] != after[k]}
    return {
        "schema": PROFILE_CHANGE_SCHEMA,
        "at": at,
        "from_profile": old,
        "to_profile": new,
        "changed_settings": changed,
        "reason": reason,
    }


def render_table() -> str:
    """The documented table (also printed by ``workgroup profile list``)."""
    header = "| setting | " + " | ".join(PROFILE_NAMES) + " | what it tunes |"
    rule = "|---" * (len(PROFILE_NAMES) + 2) + "|"
    rows = [
        f"| `{key}` | " + " | ".join(str(dict(PROFILES[p])[key]) for p in PROFILE_NAMES) + f" | {doc} |"
        for key, doc in SETTING_DOCS.items()
    ]
    return "\n".join([header, rule, *rows])
