"""Pure decision functions of the KnowzCode-compatible runtime and its stdin/stdout protocol.

Everything under ``toolkit.runtime`` must stay standard-library only: ``workgroup runtime``
runs on every delegation and must not pay for typer, pydantic or pygit2 at start-up.
"""

__all__ = [
    "adapter",
    "budget",
    "capsule",
    "capsule_privacy",
    "capsule_rules",
    "codes",
    "deep_query",
    "dispatch",
    "envelope",
    "lineage",
    "ops",
    "promotion",
    "promotion_pairs",
    "promotion_report",
    "protocol",
    "result_policy",
    "rollout",
    "router",
    "telemetry",
    "vault_delta",
    "verification",
    "vocabulary",
]
