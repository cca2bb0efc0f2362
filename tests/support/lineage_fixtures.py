"""Shared test data for runtime tests: the reference's "hot" lineage fixture and a probe op."""

from __future__ import annotations

import copy
from typing import Any

from toolkit.runtime.lineage import CURRENT_KEYS  # the compared fields plus capsule_hash

HOT_LINEAGE: dict[str, Any] = {
    "schema": "knowzcode.agent-lineage/v1",
    "lineage_id": "lineage-builder-auth",
    "workgroup_id": "kc-feat-auth",
    "platform": "claude",
    "platform_handle": None,
    "parent_lineage_id": None,
    "role": "builder",
    "scope": "Authentication/token-expiry",
    "phase": "2A",
    "fix_loop_id": "fix-auth-1",
    "mode": "fresh-capsule",
    "model": "standard",
    "effort": "medium",
    "runtime_prefix_hash": "sha256:" + "b" * 64,
    "baseline_hash": "sha256:" + "c" * 64,
    "tools_hash": "sha256:tools-v1",
    "permissions_hash": "sha256:permissions-v1",
    "spec_hash": "sha256:spec-v1",
    "scope_hash": "sha256:scope-v1",
    "checkpoint_sha": "abcdef1234567",
    "capsule_hash": "sha256:" + "a" * 64,
    "sensitivity": "normal",
    "created_at": "2026-07-30T08:00:00Z",
    "last_used_at": "2026-07-30T08:10:00Z",
    "resumable": True,
    "lease_expires_at": "2026-07-30T08:30:00Z",
}

HOT_NOW = "2026-07-30T08:20:00Z"


def hot_lineage(**changes: Any) -> dict[str, Any]:
    value = copy.deepcopy(HOT_LINEAGE)
    value.update(changes)
    return value


def hot_current(**changes: Any) -> dict[str, Any]:
    value = {key: HOT_LINEAGE[key] for key in CURRENT_KEYS}
    value.update(changes)
    return value


def probe_op(request: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A test-only op that counts its calls in the shared batch cache."""
    calls = ctx.cache.setdefault("probe", [])
    calls.append(len(calls) + 1)
    return {"calls": len(calls)}
