"""The router's shapes in toolkit.runtime.route_types (#25) against what the router prints, records
and reads, and the route path free of them: they are annotations only, never imported by
``workgroup runtime route``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.harness import GitRepo, declared_keys, run_workgroup, runtime_call, runtime_loads

from toolkit.records.owners import LeaseRow
from toolkit.runtime.route_types import (
    EvidenceSizes,
    InvalidationResult,
    RegistryWriter,
    RouteDecision,
    RoutingEvidence,
)
from toolkit.runtime.router import registry_writers

REGISTRY = Path(".git") / "workgroup" / "owners.json"
FULL_INHERITANCE = {"affinity": "high", "safe": True, "within_budget": True, "full_supported": True}


def _held(git_repo: GitRepo) -> Path:
    """A repository whose registry holds one live lease with a path and a glob."""
    git_repo.commit("init", {"src/api.py": "a", "src/ui.tsx": "b", "docs/a.md": "c"})
    acquired = run_workgroup(
        "owners", "acquire", "holder", "--path", "docs/a.md", "--glob", "src/*.py", cwd=git_repo.path
    )
    assert acquired.returncode == 0, acquired.stderr
    return git_repo.path


@pytest.mark.parametrize(
    ("facts", "mode"),
    [
        ({"is_writer": True, "owned_files": ["docs/a.md"]}, "local"),  # rule 1, against the registry
        ({"trivial": True, "blocking": True}, "local"),
        ({"independent_reviewer": True, "sensitivity": "restricted"}, "fresh-capsule"),
        ({"lineage": {"compatible": True, "resumable": True}}, "resume"),
        ({"inheritance": FULL_INHERITANCE}, "inherit-full"),
        ({"owned_files": ["src/new.py"], "owned_globs": ["docs/*.md"]}, "local"),  # the held glob, globs
        ({}, "fresh-capsule"),
    ],
)
def test_route_answers_in_its_shape(git_repo: GitRepo, facts: dict[str, object], mode: str) -> None:
    code, frame = runtime_call("route", {"input": facts}, cwd=_held(git_repo))
    assert code == 0, frame
    assert frame["result"]["mode"] == mode
    assert list(frame["result"]) == declared_keys(RouteDecision)


def test_routing_evidence_is_recorded_in_its_shape(git_repo: GitRepo) -> None:
    root = _held(git_repo)
    facts = {
        "task_id": "t-1",
        "role": "builder",
        "owned_files": ["src/ui.tsx"],
        "capsule_bytes": 900,
        "lineage": {"lineage_id": "lin-1", "state": "HOT", "invalidations": ["X"]},
    }
    proc = run_workgroup("route", "-", "--json", "--record", stdin=json.dumps({"input": facts}), cwd=root)
    assert proc.returncode == 0, proc.stderr
    decided = json.loads(proc.stdout)
    assert list(decided) == declared_keys(RouteDecision)
    rows = (root / ".git" / "workgroup" / "telemetry.jsonl").read_text(encoding="utf-8").splitlines()
    evidence = json.loads(rows[-1])
    assert list(evidence) == declared_keys(RoutingEvidence)
    assert list(evidence["sizes"]) == declared_keys(EvidenceSizes)
    assert list(evidence["invalidation_result"]) == declared_keys(InvalidationResult)
    assert (evidence["mode"], evidence["reason_codes"]) == (decided["mode"], decided["reason_codes"])


def test_registry_writers_are_read_in_the_order_the_owners_command_writes(git_repo: GitRepo) -> None:
    root = _held(git_repo)
    assert declared_keys(RegistryWriter) == declared_keys(LeaseRow)
    writers = registry_writers(json.loads((root / REGISTRY).read_bytes()))
    assert [list(writer) for writer in writers] == [declared_keys(RegistryWriter)]
    assert writers[0]["owned_globs"] == ["src/*.py"] and writers[0]["owned_files"] == ["docs/a.md"]


@pytest.mark.usefixtures("without_coverage")  # what the child imports is the subject
def test_the_route_path_imports_no_annotation_module(git_repo: GitRepo) -> None:
    _held(git_repo)
    (git_repo.path / ".git" / "workgroup" / "owners.index").unlink()  # the full read: writers, held globs
    request = {"input": {"is_writer": True, "owned_files": ["src/new.py"], "owned_globs": ["docs/*.md"]}}
    names = ("typing", "toolkit.runtime.route_types", "toolkit.core.jsontypes")
    assert runtime_loads("route", request, names) == []
    code, frame = runtime_call("route", request, cwd=git_repo.path)  # the held glob covers the new file
    assert (code, frame["result"]) == (0, {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]})


@pytest.mark.parametrize("scopes", [True, 5, 2.5, "src", {"owned_files": ["docs/a.md"]}])
@pytest.mark.parametrize("indexed", [True, False], ids=["index", "full-read"])
def test_team_scopes_that_are_not_a_list_are_refused_alike_with_or_without_the_index(
    git_repo: GitRepo, scopes: object, indexed: bool
) -> None:
    """``team.scopes`` that is not a list is INVALID_OWNERSHIP_PATH (route_task's own refusal),
    whether the registry is looked up through its index or read whole. The full read (with the
    held-glob pass) iterated the value first: a number or ``true`` raised, and the catch-all
    INVALID_REQUEST answered instead."""
    _held(git_repo)
    if not indexed:
        (git_repo.path / ".git" / "workgroup" / "owners.index").unlink()
    request = {"input": {"is_writer": True, "owned_files": ["src/new.py"], "team": {"scopes": scopes}}}
    code, frame = runtime_call("route", request, cwd=git_repo.path)
    assert frame["ok"] is False and frame["code"] == "INVALID_OWNERSHIP_PATH", frame
    assert code != 0
