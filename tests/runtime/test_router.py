"""The router (toolkit/runtime/router.py): every rule and reason code of the reference, plus the
persistent writer registry it reads when a request names no active writers."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.protocol import RuntimeContext, execute
from toolkit.runtime.router import REASON_CODES, op_route, route_task

IC, CF = "INDEPENDENT_CAPSULE", "CAPABILITY_FALLBACK"
ACTIVE = [{"lineage_id": "L1", "owned_files": ["src"]}]
WRITER = {"is_writer": True, "owned_files": ["src/api.py"]}
COMPAT = {"compatible": True, "resumable": True}
INHERIT = {"affinity": "high", "safe": True, "within_budget": True}
TEAM = {
    "coordination_required": True,
    "peers": 2,
    "provider_supported": True,
    "safe": True,
    "sensitivity_approved": True,
    "within_budget": True,
    "latency_ratio": 0.5,
}
TEAM_IN = {"sensitivity": "normal", "capsule_sufficient": False}


def team(**over: Any) -> dict[str, Any]:
    return {**TEAM, **over}


ROWS: list[tuple[dict[str, Any], str, list[str]]] = [
    # defaults: nothing requested -> fresh-capsule
    ({}, "fresh-capsule", [IC]),
    # rule 1: writer overlapping an active writer (containment) -> local
    ({**WRITER, "active_writers": ACTIVE}, "local", ["WRITER_OWNERSHIP_CONFLICT"]),
    # rule 1: the same lineage id still conflicts (the reference's rule for caller-named writers)
    ({**WRITER, "lineage_id": "L1", "active_writers": ACTIVE}, "local", ["WRITER_OWNERSHIP_CONFLICT"]),
    # rule 1: an alias (./, case) of an active path conflicts
    (
        {"is_writer": True, "owned_files": ["./SRC/api.py"], "active_writers": ACTIVE},
        "local",
        ["WRITER_OWNERSHIP_CONFLICT"],
    ),
    # rule 1: resolved_owned_files make a writer and are compared
    (
        {"resolved_owned_files": ["src/x.py"], "active_writers": ACTIVE},
        "local",
        ["WRITER_OWNERSHIP_CONFLICT"],
    ),
    # rule 1: lineage.owned_files are part of the proposed scope
    (
        {"lineage": {"owned_files": ["src/x.py"]}, "active_writers": ACTIVE},
        "local",
        ["WRITER_OWNERSHIP_CONFLICT"],
    ),
    # rule 1: a team writer scope overlapping an active writer conflicts
    (
        {"team": {"scopes": [{"owned_files": ["src/ui.tsx"]}]}, "active_writers": ACTIVE},
        "local",
        ["WRITER_OWNERSHIP_CONFLICT"],
    ),
    # rule 1: a read-only team scope (is_writer false) is not a writer
    (
        {"team": {"scopes": [{"is_writer": False, "owned_files": ["src/ui.tsx"]}]}, "active_writers": ACTIVE},
        "fresh-capsule",
        [IC],
    ),
    # rule 1: active_writer_scopes is read when active_writers is absent
    ({**WRITER, "active_writer_scopes": ACTIVE}, "local", ["WRITER_OWNERSHIP_CONFLICT"]),
    # rule 1: an active writer's resolved paths count too
    (
        {**WRITER, "active_writers": [{"resolved_owned_files": ["src/api.py"]}]},
        "local",
        ["WRITER_OWNERSHIP_CONFLICT"],
    ),
    # rule 1: a reader (no writer facts) never conflicts
    ({"active_writers": ACTIVE}, "fresh-capsule", [IC]),
    # rule 1: disjoint scopes do not conflict
    ({"is_writer": True, "owned_files": ["docs"], "active_writers": ACTIVE}, "fresh-capsule", [IC]),
    # rule 1 precedes rule 2
    ({**WRITER, "active_writers": ACTIVE, "nesting_depth": 5}, "local", ["WRITER_OWNERSHIP_CONFLICT"]),
    # rule 2: depth at the default maximum (2)
    ({"nesting_depth": 2}, "local", ["NESTING_LIMIT"]),
    # rule 2: explicit maximum
    ({"nesting_depth": 1, "max_nesting_depth": 1}, "local", ["NESTING_LIMIT"]),
    # rule 2: an integral float is an integer (JSON 2.0 is JavaScript's 2)
    ({"nesting_depth": 2.0}, "local", ["NESTING_LIMIT"]),
    # rule 2: below the maximum continues
    ({"nesting_depth": 1}, "fresh-capsule", [IC]),
    # rule 2 precedes rule 3
    ({"nesting_depth": 2, "trivial": True}, "local", ["NESTING_LIMIT"]),
    # rule 3: trivial
    ({"trivial": True}, "local", ["LOCAL_CHEAPER"]),
    # rule 3: blocking
    ({"blocking": True}, "local", ["BLOCKING"]),
    # rule 3: tight coupling
    ({"coupling": "tight"}, "local", ["LOCAL_CHEAPER"]),
    # rule 3: both reasons, in the fixed order
    ({"blocking": True, "trivial": True}, "local", ["LOCAL_CHEAPER", "BLOCKING"]),
    # rule 3: reasons are deduplicated (trivial and tight both give LOCAL_CHEAPER)
    ({"trivial": True, "coupling": "tight", "blocking": True}, "local", ["LOCAL_CHEAPER", "BLOCKING"]),
    # rule 3: trivial is read with JavaScript truthiness, like the reference
    ({"trivial": "yes"}, "local", ["LOCAL_CHEAPER"]),
    # rule 3: a falsy trivial is not trivial
    ({"trivial": 0, "blocking": ""}, "fresh-capsule", [IC]),
    # rule 3: moderate coupling is not local
    ({"coupling": "moderate"}, "fresh-capsule", [IC]),
    # rule 3 precedes rule 4
    ({"trivial": True, "independent_reviewer": True}, "local", ["LOCAL_CHEAPER"]),
    # rule 4: an independent reviewer gets a fresh capsule
    ({"independent_reviewer": True}, "fresh-capsule", [IC, "REVIEW_INDEPENDENCE"]),
    # rule 4: restricted sensitivity
    ({"sensitivity": "restricted"}, "fresh-capsule", [IC, "SENSITIVITY_ISOLATION"]),
    # rule 4: isolated sensitivity
    ({"sensitivity": "isolated"}, "fresh-capsule", [IC, "SENSITIVITY_ISOLATION"]),
    # rule 4: unsafe inheritance
    ({"inheritance": {"safe": False}}, "fresh-capsule", [IC, "SENSITIVITY_ISOLATION"]),
    # rule 4: both, in the fixed order
    (
        {"independent_reviewer": True, "sensitivity": "restricted"},
        "fresh-capsule",
        [IC, "SENSITIVITY_ISOLATION", "REVIEW_INDEPENDENCE"],
    ),
    # rule 4: the reviewer flag is strict (=== true)
    ({"independent_reviewer": "true"}, "fresh-capsule", [IC]),
    # rule 4 precedes resume
    ({"independent_reviewer": True, "lineage": COMPAT}, "fresh-capsule", [IC, "REVIEW_INDEPENDENCE"]),
    # rule 6: compatible, resumable lineage resumes
    ({"lineage": COMPAT}, "resume", ["RESUME_COMPATIBLE"]),
    # rule 6: compatible is strict
    ({"lineage": {"compatible": "true", "resumable": True}}, "fresh-capsule", [IC]),
    # rule 6: not resumable
    ({"lineage": {"compatible": True, "resumable": False}}, "fresh-capsule", [IC]),
    # rule 6: a builder-contaminated lineage is never resumed
    ({"role": "analyst", "lineage": {**COMPAT, "role": "builder-contaminated"}}, "fresh-capsule", [IC]),
    # rule 5: without an input role, the lineage's role infers a writer (who then needs a path)
    (
        {"lineage": {**COMPAT, "role": "builder", "owned_files": ["lib"]}, "active_inherited_writers": 2},
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 6: a reviewer never resumes a builder lineage
    ({"role": "reviewer", "lineage": {**COMPAT, "role": "builder"}}, "fresh-capsule", [IC]),
    # rule 5+6: a writer at the inherited-writer cap (default 2) cannot resume: fallback
    ({**WRITER, "active_inherited_writers": 2, "lineage": COMPAT}, "fresh-capsule", [IC, CF]),
    # rule 5: resolved paths alone make a writer that counts toward the cap
    (
        {"resolved_owned_files": ["lib/x.py"], "active_inherited_writers": 2, "lineage": COMPAT},
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 5: a team writer scope makes the proposal a writer for the cap
    (
        {"team": {"scopes": [{"owned_files": ["lib"]}]}, "active_inherited_writers": 2, "lineage": COMPAT},
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 5: a writer role with paths, explicit cap
    (
        {
            "role": "lead_implementer",
            "owned_files": ["lib"],
            "active_inherited_writers": 3,
            "max_active_inherited": 3,
            "lineage": COMPAT,
        },
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 5: below the cap resumes
    ({**WRITER, "active_inherited_writers": 1, "lineage": COMPAT}, "resume", ["RESUME_COMPATIBLE"]),
    # rule 5: the cap applies to writers only (and its counts are not even validated for readers)
    ({"active_inherited_writers": "many", "lineage": COMPAT}, "resume", ["RESUME_COMPATIBLE"]),
    # rule 5: 'builders' is not a writer role (the role regex needs a boundary)
    ({"role": "builders", "active_inherited_writers": 9, "lineage": COMPAT}, "resume", ["RESUME_COMPATIBLE"]),
    # rule 7: bounded recent inheritance
    (
        {"inheritance": {**INHERIT, "recent_sufficient": True, "recent_supported": True}},
        "inherit-recent",
        ["BOUNDED_RECENT_CONTEXT"],
    ),
    # rule 7: full inheritance
    ({"inheritance": {**INHERIT, "full_supported": True}}, "inherit-full", ["HIGH_CONTEXT_AFFINITY"]),
    # rule 7: recent is preferred when both are possible
    (
        {
            "inheritance": {
                **INHERIT,
                "full_supported": True,
                "recent_sufficient": True,
                "recent_supported": True,
            }
        },
        "inherit-recent",
        ["BOUNDED_RECENT_CONTEXT"],
    ),
    # rule 7: recent needs both flags; falls to full
    (
        {"inheritance": {**INHERIT, "recent_sufficient": True, "full_supported": True}},
        "inherit-full",
        ["HIGH_CONTEXT_AFFINITY"],
    ),
    # rule 6 precedes rule 7
    (
        {"lineage": COMPAT, "inheritance": {**INHERIT, "full_supported": True}},
        "resume",
        ["RESUME_COMPATIBLE"],
    ),
    # rule 7: safety must be explicit (absent is not safe): fallback
    (
        {"inheritance": {"affinity": "high", "within_budget": True, "full_supported": True}},
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 7: budget must be explicit
    ({"inheritance": {"affinity": "high", "safe": True, "full_supported": True}}, "fresh-capsule", [IC, CF]),
    # rule 7: over budget
    ({"inheritance": {**INHERIT, "within_budget": False, "full_supported": True}}, "fresh-capsule", [IC, CF]),
    # rule 7: a writer at the cap cannot inherit
    (
        {**WRITER, "active_inherited_writers": 2, "inheritance": {**INHERIT, "full_supported": True}},
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 7: high affinity the provider cannot serve: fallback
    ({"inheritance": INHERIT}, "fresh-capsule", [IC, CF]),
    # rule 7: medium affinity wants no inheritance: no fallback
    ({"inheritance": {**INHERIT, "affinity": "medium", "full_supported": True}}, "fresh-capsule", [IC]),
    # rule 8: a compatible team that a capsule cannot replace
    ({**TEAM_IN, "team": team()}, "coordinated-team", ["TEAM_COORDINATION_REQUIRED"]),
    # rule 8: latency ratio boundary 0.75 is allowed
    ({**TEAM_IN, "team": team(latency_ratio=0.75)}, "coordinated-team", ["TEAM_COORDINATION_REQUIRED"]),
    # rule 8: latency ratio 0 is allowed
    ({**TEAM_IN, "team": team(latency_ratio=0)}, "coordinated-team", ["TEAM_COORDINATION_REQUIRED"]),
    # rule 8: a compatible team is not used when a capsule suffices (no fallback either)
    ({"sensitivity": "normal", "team": team()}, "fresh-capsule", [IC]),
    # rule 8: one peer is not a team request
    ({**TEAM_IN, "team": team(peers=1)}, "fresh-capsule", [IC]),
    # rule 8: a non-integer peer count is not a team request
    ({**TEAM_IN, "team": team(peers=2.5)}, "fresh-capsule", [IC]),
    # rule 8: coordination_required is strict
    ({**TEAM_IN, "team": team(coordination_required="true")}, "fresh-capsule", [IC]),
    # rule 8: provider support required: requested team not OK -> fallback
    ({**TEAM_IN, "team": team(provider_supported=False)}, "fresh-capsule", [IC, CF]),
    # rule 8: team.safe required
    ({**TEAM_IN, "team": team(safe=None)}, "fresh-capsule", [IC, CF]),
    # rule 8: sensitivity approval required
    ({**TEAM_IN, "team": team(sensitivity_approved=None)}, "fresh-capsule", [IC, CF]),
    # rule 8: sensitivity must be 'normal' (absent is not normal)
    ({"capsule_sufficient": False, "team": team()}, "fresh-capsule", [IC, CF]),
    # rule 8: within budget required
    ({**TEAM_IN, "team": team(within_budget=False)}, "fresh-capsule", [IC, CF]),
    # rule 8: latency above 0.75
    ({**TEAM_IN, "team": team(latency_ratio=0.76)}, "fresh-capsule", [IC, CF]),
    # rule 8: negative latency
    ({**TEAM_IN, "team": team(latency_ratio=-0.1)}, "fresh-capsule", [IC, CF]),
    # rule 8: latency must be a number (not a string)
    ({**TEAM_IN, "team": team(latency_ratio="0.5")}, "fresh-capsule", [IC, CF]),
    # rule 8: latency must be a number (not a boolean)
    ({**TEAM_IN, "team": team(latency_ratio=False)}, "fresh-capsule", [IC, CF]),
    # rule 8: latency absent
    ({**TEAM_IN, "team": team(latency_ratio=None)}, "fresh-capsule", [IC, CF]),
    # rule 8: writer scopes overlapping ACROSS scopes (containment) refuse the team
    (
        {**TEAM_IN, "team": team(scopes=[{"owned_files": ["src"]}, {"owned_files": ["src/a.py"]}])},
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 8: an alias across scopes is an overlap too
    (
        {**TEAM_IN, "team": team(scopes=[{"owned_files": ["src/a.py"]}, {"owned_files": ["./SRC/a.py"]}])},
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 8: resolved paths of another scope overlap too
    (
        {**TEAM_IN, "team": team(scopes=[{"owned_files": ["lib"]}, {"resolved_owned_files": ["lib/x.py"]}])},
        "fresh-capsule",
        [IC, CF],
    ),
    # rule 8 (deliberate improvement): overlap WITHIN one scope is that scope's own business
    (
        {**TEAM_IN, "team": team(scopes=[{"owned_files": ["src", "src/a.py"]}, {"owned_files": ["docs"]}])},
        "coordinated-team",
        ["TEAM_COORDINATION_REQUIRED"],
    ),
    # rule 8: a read-only scope may overlap a writer scope
    (
        {
            **TEAM_IN,
            "team": team(scopes=[{"owned_files": ["src"]}, {"is_writer": False, "owned_files": ["src"]}]),
        },
        "coordinated-team",
        ["TEAM_COORDINATION_REQUIRED"],
    ),
    # rule 9: both fallbacks at once are one reason
    ({**TEAM_IN, "team": team(safe=False), "inheritance": INHERIT}, "fresh-capsule", [IC, CF]),
    # unknown fields are ignored in decision inputs
    ({"frobnicate": True, "nested": {"x": 1}}, "fresh-capsule", [IC]),
]


@pytest.mark.parametrize(("facts", "mode", "reasons"), ROWS)
def test_router_rules(tmp_path: Path, facts: dict[str, Any], mode: str, reasons: list[str]) -> None:
    assert route_task(facts, workspace_root=str(tmp_path), ctx=RuntimeContext()) == {
        "mode": mode,
        "reason_codes": reasons,
    }


def test_every_reason_code_and_mode_is_exercised() -> None:
    seen_reasons = {code for _, _, reasons in ROWS for code in reasons}
    assert seen_reasons == set(REASON_CODES)
    from toolkit.runtime.router import MODES

    assert {mode for _, mode, _ in ROWS} == set(MODES)


ERRORS: list[tuple[Any, str]] = [
    ([], "INVALID_REQUEST"),  # input must be an object
    ("x", "INVALID_REQUEST"),  # input must be an object
    ({"nesting_depth": "1"}, "INVALID_REQUEST"),  # nesting depth must be an integer (no coercion)
    ({"nesting_depth": 1.5}, "INVALID_REQUEST"),  # nor a fraction
    ({"nesting_depth": -1}, "INVALID_REQUEST"),  # nor negative
    ({"nesting_depth": True}, "INVALID_REQUEST"),  # nor a boolean
    ({"max_nesting_depth": 0}, "INVALID_REQUEST"),  # the maximum is at least 1
    ({**WRITER, "active_inherited_writers": "1"}, "INVALID_REQUEST"),  # writer counts must be integers
    ({**WRITER, "active_inherited_writers": -1}, "INVALID_REQUEST"),  # and non-negative
    ({**WRITER, "max_active_inherited": 0}, "INVALID_REQUEST"),  # the cap is at least 1
    ({"is_writer": True}, "WRITER_SCOPE_REQUIRED"),  # a declared writer needs a path
    ({"role": "builder"}, "WRITER_SCOPE_REQUIRED"),  # an inferred (role) writer needs a path
    ({"role": "Lead_Implementer"}, "WRITER_SCOPE_REQUIRED"),  # role inference is case-insensitive
    ({"role": "code-writer", "owned_files": []}, "WRITER_SCOPE_REQUIRED"),  # an empty list is no scope
    (
        {**WRITER, "active_writers": [{"lineage_id": "L9"}]},
        "WRITER_SCOPE_REQUIRED",
    ),  # active writer without paths
    (
        {**TEAM_IN, "team": team(scopes=[{"owned_files": ["a"]}, {}])},
        "WRITER_SCOPE_REQUIRED",
    ),  # team writer scope
    ({**WRITER, "active_writers": ["src"]}, "INVALID_OWNERSHIP_PATH"),  # active writer must be an object
    ({**WRITER, "active_writers": "src"}, "INVALID_OWNERSHIP_PATH"),  # active writers must be a list
    ({"owned_files": "src/api.py"}, "INVALID_OWNERSHIP_PATH"),  # owned_files must be a list
    ({"team": {"scopes": "src"}}, "INVALID_OWNERSHIP_PATH"),  # team scopes must be a list
    ({"owned_files": ["/etc/passwd"]}, "INVALID_OWNERSHIP_PATH"),  # absolute
    ({"owned_files": ["../x"]}, "INVALID_OWNERSHIP_PATH"),  # escape
    ({"owned_files": ["C:/x"]}, "INVALID_OWNERSHIP_PATH"),  # drive
    ({"owned_files": ["https://e.x/y"]}, "INVALID_OWNERSHIP_PATH"),  # URL
    ({"lineage": {"owned_files": [" src"]}}, "INVALID_OWNERSHIP_PATH"),  # padded, in the lineage
    ({"resolved_owned_files": [""]}, "INVALID_OWNERSHIP_PATH"),  # empty resolved path
    ({**WRITER, "active_writers": [{"owned_files": ["/abs"]}]}, "INVALID_OWNERSHIP_PATH"),  # bad active path
    ({**WRITER, "workspace_root": ""}, "INVALID_OWNERSHIP_PATH"),  # blank workspace root
    ({**WRITER, "workspace_root": 5}, "INVALID_OWNERSHIP_PATH"),  # non-string workspace root
]


@pytest.mark.parametrize(("facts", "code"), ERRORS)
def test_router_coded_refusals(tmp_path: Path, facts: Any, code: str) -> None:
    with pytest.raises(RuntimeOpError) as caught:
        op_route({"input": facts}, RuntimeContext(cwd=str(tmp_path)))
    assert caught.value.code == code


def test_symlink_alias_and_escape_through_workspace_root(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "link").symlink_to(ws / "src", target_is_directory=True)
    (ws / "out").symlink_to(tmp_path, target_is_directory=True)
    facts = {
        "is_writer": True,
        "owned_files": ["link/api.py"],
        "workspace_root": str(ws),
        "active_writers": [{"owned_files": ["src/api.py"]}],
    }
    assert route_task(facts, workspace_root="/nonexistent", ctx=RuntimeContext())["reason_codes"] == [
        "WRITER_OWNERSHIP_CONFLICT"
    ]
    with pytest.raises(RuntimeOpError) as caught:
        route_task({**facts, "owned_files": ["out/x"]}, workspace_root="/nonexistent", ctx=RuntimeContext())
    assert caught.value.code == "INVALID_OWNERSHIP_PATH"


def test_overlap_check_does_not_compare_all_pairs(tmp_path: Path) -> None:
    # 400 active writers x 50 paths against 50 proposed: answered through the index
    active = [{"owned_files": [f"pkg{w}/f{j}.py" for j in range(50)]} for w in range(400)]
    owned = [f"new/f{j}.py" for j in range(50)]
    facts = {"is_writer": True, "owned_files": owned, "active_writers": active}
    assert route_task(facts, workspace_root=str(tmp_path), ctx=RuntimeContext())["mode"] == "fresh-capsule"
    owned.append("pkg399")
    assert route_task(facts, workspace_root=str(tmp_path), ctx=RuntimeContext())["mode"] == "local"


# --- the persistent registry ---------------------------------------------------------------


def _acquire(
    repo_path: Path, lineage: str, paths: list[str], *, now: datetime | None = None, minutes: int = 20
) -> None:
    from toolkit.infra.git import discover
    from toolkit.records import owners

    owners.acquire(discover(repo_path).layout, lineage, paths, now=now or datetime.now(UTC), minutes=minutes)


def test_route_reads_the_registry_when_no_writers_are_named(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "x"})
    _acquire(git_repo.path, "holder", ["src/api.py"])
    ctx = RuntimeContext(cwd=str(git_repo.path))
    writer = {"is_writer": True, "owned_files": ["./src/api.py"]}
    assert op_route({"input": writer}, ctx)["reason_codes"] == ["WRITER_OWNERSHIP_CONFLICT"]
    # the holder re-routing its own scope is not a second writer
    mine = {**writer, "lineage": {"lineage_id": "holder"}}
    assert op_route({"input": mine}, RuntimeContext(cwd=str(git_repo.path)))["mode"] == "fresh-capsule"
    # naming the active writers (even none) replaces the registry, as in the reference
    named = {**writer, "active_writers": []}
    assert op_route({"input": named}, RuntimeContext(cwd=str(git_repo.path)))["mode"] == "fresh-capsule"


def test_registry_from_a_subdirectory_and_another_worktree(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "x", "docs/a.md": "d"})
    _acquire(git_repo.path, "holder", ["src"])
    sub = RuntimeContext(cwd=str(git_repo.path / "src"))
    assert op_route({"input": {"is_writer": True, "owned_files": ["api.py"]}}, sub)["mode"] == "local"
    other = tmp_path / "wt2"
    git_repo.raw.add_worktree("wt2", str(other))
    ctx = RuntimeContext(cwd=str(other))
    assert op_route({"input": {"is_writer": True, "owned_files": ["src/api.py"]}}, ctx)["mode"] == "local"
    from toolkit.infra.gitlocation import find_git

    assert find_git(str(other)).common_dir == find_git(str(git_repo.path)).common_dir  # type: ignore[union-attr]


def test_expired_leases_are_ignored_by_route(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "x"})
    _acquire(git_repo.path, "old", ["src"], now=datetime.now(UTC) - timedelta(minutes=30), minutes=20)
    ctx = RuntimeContext(cwd=str(git_repo.path))
    assert (
        op_route({"input": {"is_writer": True, "owned_files": ["src/api.py"]}}, ctx)["mode"]
        == "fresh-capsule"
    )


def test_batch_reads_the_registry_once(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "x"})
    _acquire(git_repo.path, "holder", ["src"])
    ctx = RuntimeContext(cwd=str(git_repo.path))
    writer = {"input": {"is_writer": True, "owned_files": ["src/api.py"]}}
    assert op_route(writer, ctx)["mode"] == "local"
    registry = git_repo.path / ".git" / "workgroup" / "owners.json"
    registry.write_text("not json", encoding="utf-8")  # a second read would fail
    assert op_route(writer, ctx)["mode"] == "local"
    assert execute("route", writer, RuntimeContext(cwd=str(git_repo.path)))["code"] == "ENVIRONMENT_ERROR"


@pytest.mark.parametrize(
    "entry",
    [
        {"owned_files": ["src"]},  # no lease expiry
        {"owned_files": "src", "lease_expires_at": "2999-01-01T00:00:00Z"},  # paths not a list
        {"owned_files": [1], "lease_expires_at": "2999-01-01T00:00:00Z"},  # a path not a string
        {"owned_files": ["src"], "lease_expires_at": "tomorrow"},  # not RFC 3339
        {"owned_files": ["/abs"], "lease_expires_at": "2999-01-01T00:00:00Z"},  # an invalid stored path
    ],
)
def test_a_damaged_registry_is_an_environment_error(git_repo, entry: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "x"})
    registry = git_repo.path / ".git" / "workgroup" / "owners.json"
    registry.parent.mkdir(parents=True)
    registry.write_text(json.dumps({"schema": "workgroup.owners/v1", "writers": [entry]}), encoding="utf-8")
    frame = execute(
        "route",
        {"input": {"is_writer": True, "owned_files": ["lib"]}},
        RuntimeContext(cwd=str(git_repo.path)),
    )
    assert frame["code"] == "ENVIRONMENT_ERROR"


def test_bad_glob_outside_a_repository_is_still_a_glob_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeOpError) as caught:
        op_route({"input": {"owned_globs": ["!x"]}}, RuntimeContext(cwd=str(tmp_path)))
    assert caught.value.code == "INVALID_OWNERSHIP_GLOB"


def test_runtime_subprocess_uses_the_registry_and_writes_nothing(git_repo) -> None:  # type: ignore[no-untyped-def]
    from support.harness import run_workgroup, runtime_call

    git_repo.commit("init", {"src/api.py": "x"})
    _acquire(git_repo.path, "holder", ["src/api.py"])
    registry = git_repo.path / ".git" / "workgroup" / "owners.json"
    before = registry.read_bytes()
    code, frame = runtime_call(
        "route", {"input": {"is_writer": True, "owned_files": ["SRC/api.py"]}}, cwd=git_repo.path
    )
    assert (code, frame["result"]["reason_codes"]) == (0, ["WRITER_OWNERSHIP_CONFLICT"])
    lines = [json.dumps({"input": {"is_writer": True, "owned_files": [p]}}) for p in ("src", "docs", "/abs")]
    proc = run_workgroup("runtime", "--batch", "route", stdin="\n".join(lines) + "\n", cwd=git_repo.path)
    frames = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [f.get("result", {}).get("mode") or f["code"] for f in frames] == [
        "local",
        "fresh-capsule",
        "INVALID_OWNERSHIP_PATH",
    ]
    assert proc.returncode == 1
    assert registry.read_bytes() == before


def test_held_glob_covers_new_untracked_files_in_route(git_repo) -> None:  # type: ignore[no-untyped-def]
    from toolkit.infra.git import discover
    from toolkit.records import owners

    git_repo.commit("init", {"src/api.py": "x", "src/ui.tsx": "y"})
    repo = discover(git_repo.path)
    owners.acquire(
        repo.layout, "globber", [], ["src/*.py"], now=datetime.now(UTC), tracked_files=repo.tracked_files()
    )
    ctx = RuntimeContext(cwd=str(git_repo.path))
    new_file = {"is_writer": True, "owned_files": ["src/brand_new.py"]}  # untracked, matched by the held glob
    assert op_route({"input": new_file}, ctx)["reason_codes"] == ["WRITER_OWNERSHIP_CONFLICT"]
    other = {"is_writer": True, "owned_files": ["src/new.tsx"]}
    assert op_route({"input": other}, RuntimeContext(cwd=str(git_repo.path)))["mode"] == "fresh-capsule"
    sub = {"is_writer": True, "owned_files": ["brand_new.py"]}  # relative to a subdirectory cwd
    assert op_route({"input": sub}, RuntimeContext(cwd=str(git_repo.path / "src")))["mode"] == "local"


def test_owned_globs_in_a_route_request(git_repo) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "x", "src/ui.tsx": "y"})
    ctx = RuntimeContext(cwd=str(git_repo.path))
    active = [{"owned_files": ["src/api.py"]}]
    hit = {"is_writer": True, "owned_globs": ["src/*.py"], "active_writers": active}
    assert op_route({"input": hit}, ctx)["mode"] == "local"
    miss = {"is_writer": True, "owned_globs": ["src/*.tsx"], "active_writers": active}
    assert op_route({"input": miss}, ctx)["mode"] == "fresh-capsule"
    with pytest.raises(RuntimeOpError) as caught:
        op_route({"input": {"owned_globs": ["!src/*.py"]}}, ctx)
    assert caught.value.code == "INVALID_OWNERSHIP_GLOB"


def test_runtime_route_imports_no_heavy_modules() -> None:
    import subprocess
    import sys

    code = (
        "import sys, io, json;"
        "from toolkit.runtime.protocol import RuntimeContext, execute;"
        "execute('route', {'input': {'is_writer': True, 'owned_files': ['a']}}, RuntimeContext());"
        "heavy = ('typer', 'pydantic', 'pygit2', 'yaml', 'pathspec', 'tempfile');"
        "bad = [m for m in heavy if m in sys.modules];"
        "print(json.dumps(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
    )
    assert json.loads(out.stdout) == []


# --- hypothesis: no input makes the router raise anything but a coded refusal -----------------

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(
        [
            "builder",
            "reviewer",
            "tight",
            "high",
            "normal",
            "restricted",
            "src/a.py",
            "./src",
            "/x",
            "..",
            "C:/x",
            "",
        ]
    ),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "owned_files",
                    "resolved_owned_files",
                    "is_writer",
                    "scopes",
                    "lineage",
                    "compatible",
                    "resumable",
                    "role",
                    "affinity",
                    "safe",
                    "peers",
                    "latency_ratio",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)
_keys = st.sampled_from(
    [
        "is_writer",
        "owned_files",
        "resolved_owned_files",
        "role",
        "lineage",
        "inheritance",
        "team",
        "active_writers",
        "active_writer_scopes",
        "nesting_depth",
        "max_nesting_depth",
        "active_inherited_writers",
        "max_active_inherited",
        "trivial",
        "blocking",
        "coupling",
        "independent_reviewer",
        "sensitivity",
        "capsule_sufficient",
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(facts=st.dictionaries(_keys, _json, max_size=8))
def test_router_fuzz_only_coded_refusals(tmp_path: Path, facts: dict[str, Any]) -> None:
    try:
        result = route_task(facts, workspace_root=str(tmp_path), ctx=RuntimeContext())
    except RuntimeOpError as exc:
        assert exc.code in {"INVALID_REQUEST", "INVALID_OWNERSHIP_PATH", "WRITER_SCOPE_REQUIRED"}
        return
    assert result["reason_codes"] == sorted(set(result["reason_codes"]), key=REASON_CODES.index)
    assert result["reason_codes"]
