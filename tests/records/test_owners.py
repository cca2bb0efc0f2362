"""The active-writer registry (toolkit/records/owners.py) and git discovery (toolkit/infra/gitlocation.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.sync import AT_START_LINE, StartLine

from toolkit.core.errors import EnvironmentFailure, InvalidInput
from toolkit.infra.git import discover
from toolkit.infra.gitlocation import LOCAL_STATE_NAME, find_git
from toolkit.infra.store import LOCAL_STATE_NAME as STORE_LOCAL_STATE_NAME
from toolkit.infra.store import Layout, write_json_atomic
from toolkit.records import owners

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def layout(git_repo) -> Layout:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"src/api.py": "a", "src/ui.tsx": "b", "src/deep/x.py": "c", "README.md": "r"})
    return discover(git_repo.path).layout


def registry(layout: Layout) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(layout.owners_registry.read_text(encoding="utf-8"))
    return data


def test_acquire_list_release(layout: Layout) -> None:
    assert owners.list_leases(layout, now=T0) == []
    assert owners.release(layout, "nobody", now=T0) is False
    assert not layout.local.exists()  # reading an empty registry creates no state
    lease = owners.acquire(layout, "L1", ["src/api.py"], now=T0)
    assert lease.lease_expires_at == "2026-01-05T12:20:00Z"  # warm_lease_minutes default 20
    assert [x.lineage_id for x in owners.list_leases(layout, now=T0)] == ["L1"]
    assert registry(layout)["writers"][0]["owned_files"] == ["src/api.py"]
    assert owners.release(layout, "L1", now=T0) is True
    assert owners.release(layout, "L1", now=T0) is False
    assert owners.list_leases(layout, now=T0) == []


@pytest.mark.parametrize(
    ("held", "proposed"),
    [
        (["src/api.py"], ["src/api.py"]),  # equal
        (["src/api.py"], ["./src/api.py"]),  # ./ alias
        (["src/api.py"], ["SRC/API.py"]),  # case alias
        (["src/api.py"], ["src\\api.py"]),  # backslash alias
        (["src"], ["src/deep/x.py"]),  # held directory contains the path
        (["src/deep/x.py"], ["src"]),  # proposed directory contains a held path
        (["src/api.py"], ["lib/../src/api.py"]),  # .. inside the root
    ],
)
def test_overlapping_scope_is_refused_naming_the_holder(
    layout: Layout, held: list[str], proposed: list[str]
) -> None:
    owners.acquire(layout, "holder", held, now=T0)
    before = layout.owners_registry.read_bytes()
    with pytest.raises(owners.OwnershipConflict) as caught:
        owners.acquire(layout, "second", proposed, now=T0)
    assert caught.value.exit_code == 1
    assert caught.value.holder == "holder"
    assert caught.value.path == held[0]  # the holder's stored path, never the folded key
    assert "holder" in caught.value.message
    assert layout.owners_registry.read_bytes() == before  # nothing written


def test_symlink_alias_conflicts(layout: Layout) -> None:
    (layout.workdir / "alias").symlink_to(layout.workdir / "src", target_is_directory=True)
    owners.acquire(layout, "holder", ["src/api.py"], now=T0)
    with pytest.raises(owners.OwnershipConflict):
        owners.acquire(layout, "second", ["alias/api.py"], now=T0)


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x", "C:/x", "https://e.x/a", "", "a\x00b"])
def test_invalid_paths_are_refused_and_nothing_is_written(layout: Layout, bad: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        owners.acquire(layout, "L1", [bad], now=T0)
    assert caught.value.code == "INVALID_OWNERSHIP_PATH"
    assert not layout.owners_registry.exists()


def test_symlink_escape_is_refused(layout: Layout, tmp_path: Path) -> None:
    (layout.workdir / "out").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(InvalidInput):
        owners.acquire(layout, "L1", ["out/x"], now=T0)


@pytest.mark.parametrize(
    ("lineage", "paths", "minutes", "code"),
    [
        ("../x", ["a"], 20, "UNSAFE_SEGMENT"),  # lineage ids are safe segments
        ("L1", [], 20, "WRITER_SCOPE_REQUIRED"),  # a writer owns at least one path
        ("L1", ["a"], 0, "INVALID_LEASE_MINUTES"),  # lease length bounds
        ("L1", ["a"], 10**6, "INVALID_LEASE_MINUTES"),
    ],
)
def test_bad_acquire_arguments(
    layout: Layout, lineage: str, paths: list[str], minutes: int, code: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        owners.acquire(layout, lineage, paths, now=T0, minutes=minutes)
    assert caught.value.code == code


def test_same_lineage_renews_its_lease(layout: Layout) -> None:
    owners.acquire(layout, "L1", ["src"], now=T0)
    lease = owners.acquire(layout, "L1", ["src/api.py"], now=T0 + timedelta(minutes=10))
    assert lease.lease_expires_at == "2026-01-05T12:30:00Z"
    assert [w["owned_files"] for w in registry(layout)["writers"]] == [["src/api.py"]]


def test_lease_expiry_frees_the_scope_and_is_dropped(layout: Layout) -> None:
    owners.acquire(layout, "old", ["src"], now=T0, minutes=5)
    with pytest.raises(owners.OwnershipConflict):
        owners.acquire(layout, "new", ["src/api.py"], now=T0 + timedelta(minutes=4, seconds=59))
    owners.acquire(layout, "new", ["src/api.py"], now=T0 + timedelta(minutes=5))  # expired exactly at its end
    assert [w["lineage_id"] for w in registry(layout)["writers"]] == ["new"]


def test_list_drops_expired_leases_from_the_file(layout: Layout) -> None:
    owners.acquire(layout, "a", ["src"], now=T0, minutes=1)
    owners.acquire(layout, "b", ["README.md"], now=T0, minutes=60)
    assert [x.lineage_id for x in owners.list_leases(layout, now=T0 + timedelta(minutes=2))] == ["b"]
    assert [w["lineage_id"] for w in registry(layout)["writers"]] == ["b"]


def test_release_lineage_is_what_lineage_invalidation_calls(layout: Layout) -> None:
    owners.acquire(layout, "L7", ["src"], now=datetime.now(UTC))
    assert owners.release_lineage(layout, "L7") is True
    owners.acquire(layout, "L8", ["src"], now=datetime.now(UTC))


def test_glob_ownership_against_real_tracked_files(layout: Layout) -> None:
    tracked = discover(layout.workdir).tracked_files()
    lease = owners.acquire(layout, "globber", [], ["src/*.py"], now=T0, tracked_files=tracked)
    assert lease.resolved_owned_files == ("src/api.py",)
    # a tracked file matched by the held glob
    with pytest.raises(owners.OwnershipConflict):
        owners.acquire(layout, "x", ["src/api.py"], now=T0)
    # a new, untracked file under the held glob conflicts too
    with pytest.raises(owners.OwnershipConflict) as caught:
        owners.acquire(layout, "x", ["src/new.py"], now=T0)
    assert caught.value.path == "src/*.py"
    # a file the glob does not match is free
    owners.acquire(layout, "x", ["src/ui.tsx"], now=T0)
    # a proposed glob matching a held literal path conflicts
    with pytest.raises(owners.OwnershipConflict):
        owners.acquire(layout, "y", [], ["**/*.tsx"], now=T0, tracked_files=tracked)
    # two globs with overlapping literal prefixes conflict (conservative)
    with pytest.raises(owners.OwnershipConflict):
        owners.acquire(layout, "z", [], ["src/deep/**"], now=T0, tracked_files=tracked)
    # disjoint prefixes are fine
    owners.acquire(layout, "w", [], ["docs/**"], now=T0, tracked_files=tracked)


def test_negated_glob_is_refused(layout: Layout) -> None:
    with pytest.raises(InvalidInput) as caught:
        owners.acquire(layout, "g", [], ["!src/generated/"], now=T0, tracked_files=[])
    assert caught.value.code == "INVALID_OWNERSHIP_GLOB"


@pytest.mark.parametrize(
    "content",
    ["not json", "[]", '{"schema":"x","writers":[]}', '{"schema":"workgroup.owners/v1","writers":[1]}'],
)
def test_corrupt_registry_is_an_environment_error(layout: Layout, content: str) -> None:
    layout.owners_registry.parent.mkdir(parents=True, exist_ok=True)
    layout.owners_registry.write_text(content, encoding="utf-8")
    with pytest.raises(EnvironmentFailure) as caught:
        owners.acquire(layout, "L1", ["src"], now=T0)
    assert caught.value.exit_code == 3
    assert layout.owners_registry.read_text(encoding="utf-8") == content  # left for inspection


RACER = (
    """
import os, sys
from datetime import datetime, UTC
from pathlib import Path
from toolkit.records import owners
from toolkit.infra.store import Layout
layout = Layout(Path(sys.argv[1]), Path(sys.argv[1]) / ".git")
"""
    + AT_START_LINE
    + """
at_start_line()
try:
    owners.acquire(layout, sys.argv[2], [sys.argv[3]], now=datetime.now(UTC))
except owners.OwnershipConflict:
    sys.exit(1)
sys.exit(0)
"""
)


def test_sixteen_processes_race_for_overlapping_scopes(layout: Layout, tmp_path: Path) -> None:
    # 50 unrelated leases must survive. With the start barrier the race is real: with the lock
    # replaced by a no-op, 13 of 16 racers "won" when checked by hand.
    background = [
        {
            "lineage_id": f"bg{w}",
            "owned_files": [f"bg/m{w}/f{j}.py" for j in range(50)],
            "owned_globs": [],
            "resolved_owned_files": [],
            "acquired_at": "2026-01-01T00:00:00Z",
            "lease_expires_at": "2999-01-01T00:00:00Z",
        }
        for w in range(50)
    ]
    write_json_atomic(layout.owners_registry, {"schema": owners.SCHEMA, "writers": background})
    # every pair of these overlaps (equal file through an alias, or containment)
    aliases = [
        "src",
        "src/api.py",
        "./src/api.py",
        "SRC/api.py",
        "src/./api.py",
        "lib/../src/api.py",
        "src//api.py",
        "src\\api.py",
    ]
    with StartLine() as line:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", RACER, str(layout.workdir), f"racer{i}", aliases[i % 8]],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                **line.popen_kwargs(),
            )
            for i in range(16)
        ]
        line.release(16)  # every process has imported and reached the start line
    codes = [proc.wait(timeout=120) for proc in procs]
    assert sorted(codes) == [0] + [1] * 15, [p.stderr.read() for p in procs if p.stderr]
    data = registry(layout)  # still valid JSON
    racers = [w["lineage_id"] for w in data["writers"] if w["lineage_id"].startswith("racer")]
    assert racers == [f"racer{codes.index(0)}"]
    assert len(data["writers"]) == 51


# --- gitlocation: the git common dir without pygit2 ------------------------------------------


def test_gitlocation_matches_pygit2(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    git_repo.commit("init", {"a/b/c.txt": "x"})
    repo = discover(git_repo.path)
    found = find_git(str(git_repo.path / "a" / "b"))
    assert found is not None
    assert Path(found.workdir) == repo.workdir
    assert Path(found.common_dir) == repo.common_dir
    assert found.owners_registry == str(repo.layout.owners_registry)
    wt = tmp_path / "linked"
    git_repo.raw.add_worktree("linked", str(wt))
    linked = find_git(str(wt))
    assert linked is not None
    assert Path(linked.common_dir) == repo.common_dir and Path(linked.workdir) == wt.resolve()
    assert Path(linked.git_dir) != repo.common_dir  # the worktree's own git dir


def test_gitlocation_outside_a_repository_and_bad_pointers(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert find_git(str(plain)) is None or find_git(str(plain)).workdir != str(plain)  # type: ignore[union-attr]
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("gitdir: does/not/exist\n", encoding="utf-8")
    found = find_git(str(broken))
    assert found is None or found.workdir != str(broken.resolve())


def test_local_state_name_matches_store() -> None:
    assert LOCAL_STATE_NAME == STORE_LOCAL_STATE_NAME


_path_text = st.text(max_size=20) | st.sampled_from(
    ["src", "./src/api.py", "SRC", "/abs", "../up", "C:/x", "a:b/c"]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    paths=st.lists(_path_text, max_size=4),
    globs=st.lists(st.text(max_size=12) | st.sampled_from(["src/*.py", "!x", "**/*.tsx"]), max_size=2),
    minutes=st.integers(-5, 20000),
)
def test_acquire_fuzz_only_coded_errors_and_a_valid_registry(
    layout: Layout, paths: list[str], globs: list[str], minutes: int
) -> None:
    from toolkit.core.errors import ToolkitError

    try:
        owners.acquire(layout, "fuzz", paths, globs, now=T0, minutes=minutes, tracked_files=["src/api.py"])
    except ToolkitError as exc:
        assert exc.exit_code in (1, 2)
        for path in paths:
            if len(path) > 3:
                assert path not in exc.message  # never echoes input
    else:
        assert owners.release(layout, "fuzz", now=T0) is True
    if layout.owners_registry.exists():
        assert registry(layout)["schema"] == owners.SCHEMA


def test_registry_rows_are_the_declared_lease_rows(layout: Layout) -> None:
    """Each row written to the registry is a LeaseRow: its keys in the declared order, list fields
    as lists of strings, the rest strings; and it is exactly what ``Lease.to_json`` returns."""
    from typing import get_type_hints

    lease = owners.acquire(layout, "L1", ["src/api.py"], now=T0)
    [row] = registry(layout)["writers"]
    declared = get_type_hints(owners.LeaseRow)
    assert list(row) == list(declared)
    assert row == lease.to_json()
    for key, value in row.items():
        assert isinstance(value, list if declared[key] == list[str] else str), key
        if isinstance(value, list):
            assert all(isinstance(item, str) for item in value), key
