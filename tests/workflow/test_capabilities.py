"""Provider capabilities: the versioned table, router facts, and degradation without fabrication (CEO-07)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from support.harness import run_workgroup

from toolkit.workflow import capabilities as caps


def test_table_is_versioned_and_complete() -> None:
    table = caps.table()
    assert table["version"] == caps.TABLE_VERSION
    for name, entry in table["providers"].items():
        assert set(entry["operations"]) == set(caps.OPERATIONS), name
        for op in entry["operations"].values():
            assert op["status"] in (caps.NATIVE, caps.EXPERIMENTAL, caps.UNSUPPORTED)


def test_experimental_is_not_routed_to() -> None:
    assert caps.PROVIDERS["claude-code"]["operations"]["formTeam"][0] == caps.EXPERIMENTAL
    assert caps.route_facts("claude-code")["team"]["provider_supported"] is False


def _high_affinity() -> dict[str, Any]:
    return {
        "inheritance": {
            "affinity": "high",
            "safe": True,
            "within_budget": True,
            "full_supported": True,
            "recent_supported": True,
            "recent_sufficient": True,
        }
    }


def _team() -> dict[str, Any]:
    return {
        "capsule_sufficient": False,
        "team": {
            "coordination_required": True,
            "peers": 2,
            "provider_supported": True,
            "safe": True,
            "sensitivity_approved": True,
            "within_budget": True,
            "latency_ratio": 0.5,
        },
    }


def _resume() -> dict[str, Any]:
    return {"lineage": {"compatible": True, "resumable": True}}


@pytest.mark.parametrize("provider", list(caps.PROVIDERS))
@pytest.mark.parametrize(
    ("wanted", "capability", "build"),
    [
        ("inherit", "conversation_fork", _high_affinity),
        ("team", "formTeam", _team),
        ("resume", "resume", _resume),
    ],
)
def test_each_provider_lacking_each_capability_degrades(
    provider: str, wanted: str, capability: str, build: Callable[[], dict[str, Any]]
) -> None:
    from toolkit.workflow.capability_routing import route_for_provider

    decision = route_for_provider(build(), provider, workspace_root=".")
    native = caps.supports(provider, capability) or (
        wanted == "inherit" and caps.supports(provider, "bounded_inheritance")
    )
    if native:
        assert decision["mode"] != "fresh-capsule"
    else:
        assert decision["mode"] == "fresh-capsule"
        assert decision["reason_codes"] == ["INDEPENDENT_CAPSULE", "CAPABILITY_FALLBACK"]


def test_fill_never_claims_support_the_provider_lacks() -> None:
    filled, lacking = caps.fill_route_input(_team(), "codex")
    team = filled["team"]
    assert isinstance(team, dict)
    assert team["provider_supported"] is False and lacking == ["formTeam"]
    filled, lacking = caps.fill_route_input({"inheritance": {"affinity": "low"}}, "api")
    assert filled["inheritance"] == {"affinity": "low", "full_supported": False, "recent_supported": False}
    assert lacking == []


def test_cli(git_repo) -> None:  # type: ignore[no-untyped-def]
    out = run_workgroup("capabilities", "--provider", "codex", "--json")
    assert out.returncode == 0 and list(json.loads(out.stdout)["providers"]) == ["codex"]
    facts = json.loads(run_workgroup("capabilities", "--provider", "api", "--route-facts").stdout)
    assert facts["resume_supported"] is False
    bad = run_workgroup("capabilities", "--provider", "skynet")
    assert bad.returncode == 2 and b"UNKNOWN_PROVIDER" in bad.stderr


def test_route_facts_and_provider_rows_match_their_declarations() -> None:
    """RouteFacts names exactly the facts route_facts returns (booleans, nested as declared), and each
    PROVIDERS row carries every operation as a (status, via) pair of strings."""
    from typing import get_type_hints

    from toolkit.workflow import capabilities as caps

    for provider, row in caps.PROVIDERS.items():
        assert set(row) == set(get_type_hints(caps.ProviderCapabilities)), provider
        assert list(row["operations"]) == list(caps.OPERATIONS), provider
        for status, via in row["operations"].values():
            assert status in (caps.NATIVE, caps.EXPERIMENTAL, caps.UNSUPPORTED) and isinstance(via, str)
        facts = caps.route_facts(provider)
        assert set(facts) == set(get_type_hints(caps.RouteFacts))
        assert set(facts["inheritance"]) == set(get_type_hints(caps.InheritanceFacts))
        assert set(facts["team"]) == set(get_type_hints(caps.TeamFacts))
        flat = [*facts["inheritance"].values(), *facts["team"].values(), facts["resume_supported"]]
        assert all(type(value) is bool for value in flat), provider
