"""The writer registry's lookup index: ``workgroup runtime route`` answers from it exactly what the
full read of the registry answers, and trusts it only while it is bound to the registry's bytes.

Real repositories, real symlinks, a real ``kill -9``; the full read is the reference (the index
file removed, or the router run on a registry the index was not built from).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.core.owners_index import INDEX_FILE, decode_index
from toolkit.core.owners_index_encode import encode_index
from toolkit.core.timefmt import format_utc
from toolkit.infra.git import discover
from toolkit.records import owners
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.protocol import RuntimeContext
from toolkit.runtime.router import op_route

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _git_init(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    return path


def _lease(lineage: str, files: list[str], *, minutes: int = 60, globs: tuple[str, ...] = ()) -> owners.Lease:
    """A registry row as the owners command writes it (``minutes`` < 0: an expired lease)."""
    return owners.Lease(
        lineage_id=lineage,
        owned_files=tuple(files),
        owned_globs=globs,
        resolved_owned_files=(),
        acquired_at="2026-06-01T11:00:00Z",
        lease_expires_at=format_utc(NOW + timedelta(minutes=minutes)),
    )


def _route(repo: Path, inp: dict[str, Any]) -> tuple[str, Any, bool]:
    """(outcome, value, whether the index was trusted) of one ``op_route`` in a fresh process state."""
    ctx = RuntimeContext(cwd=str(repo), clock=lambda: NOW)
    try:
        out: tuple[str, Any] = ("ok", op_route({"input": inp}, ctx))
    except RuntimeOpError as exc:
        out = ("error", exc.code)
    return out[0], out[1], ctx.cache.get("router.owners_index") is not None


def _full_read(repo: Path, inp: dict[str, Any]) -> tuple[str, Any]:
    index = repo / ".git" / "workgroup" / INDEX_FILE
    saved = index.read_bytes() if index.exists() else None
    index.unlink(missing_ok=True)
    try:
        outcome, value, used = _route(repo, inp)
        assert not used
        return outcome, value
    finally:
        if saved is not None:
            index.write_bytes(saved)


def _writer(paths: list[str], lineage: str | None = None) -> dict[str, Any]:
    inp: dict[str, Any] = {"is_writer": True, "owned_files": paths}
    if lineage is not None:
        inp["lineage_id"] = lineage
    return inp


# --- the equivalence property -------------------------------------------------------------------

# plain, case variants, NFKC forms (full-width, composed and decomposed), a dot-dot, a backslash,
# a symlinked directory (``ln`` -> ``src``), a symlink out of the tree and one into .git
SEGMENTS = [
    "src",
    "Src",
    "SRC",
    "a.py",
    "A.py",
    "lib",
    "ｓｒｃ",
    "caf\u00e9",
    "cafe\u0301",
    "x",
    "ln",
    "out",
    "dotgit",
]
ODD = [
    "src/../lib",
    "src\\a.py",
    "./src/x",
    "lib//x",
    "ln/a.py",
    "out/a.py",
    "dotgit/config",
    ".",
    "repo",
    "repo/src/a.py",
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = _git_init(tmp_path_factory.mktemp("index") / "repo")
    for rel in ("src/a.py", "src/x/a.py", "lib/x/a.py", "caf\u00e9/a.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x\n")
    os.symlink("src", repo / "ln")
    outside = tmp_path_factory.mktemp("outside")
    os.symlink(outside, repo / "out")
    os.symlink(".git", repo / "dotgit")
    return repo


paths_st = st.one_of(
    st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4).map("/".join),
    st.sampled_from(ODD),
)
leases_st = st.lists(
    st.tuples(
        st.sampled_from(["h1", "h2", "h3", "me"]),
        st.lists(paths_st, min_size=0, max_size=4),
        st.sampled_from([-30, -1, 1, 60]),  # expired or live
        st.sampled_from([(), (), ("lib/**",)]),
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=leases_st,
    proposed=st.lists(paths_st, min_size=0, max_size=3),
    lineage=st.sampled_from([None, "me", "h1"]),
    role=st.sampled_from(["writer", "reader"]),
    root=st.sampled_from([None, None, "parent", "/"]),
)
def test_indexed_lookups_answer_what_the_full_read_answers(
    tree: Path,
    rows: list[tuple[str, list[str], int, tuple[str, ...]]],
    proposed: list[str],
    lineage: str | None,
    role: str,
    root: str | None,
) -> None:
    layout = discover(tree).layout
    leases = [
        _lease(f"{name}-{n}", files, minutes=minutes, globs=globs)
        for n, (name, files, minutes, globs) in enumerate(rows)
    ]
    if lineage is not None and leases:
        leases[0] = dataclasses.replace(leases[0], lineage_id=lineage)
    owners._write(layout, leases)
    inp: dict[str, Any] = {"role": role, "owned_files": proposed} if proposed else {"role": role}
    if lineage is not None:
        inp["lineage_id"] = lineage
    if root is not None:  # proposed paths relative to another root: above the work tree, or /
        inp["workspace_root"] = str(tree.parent) if root == "parent" else root
    outcome, value, used = _route(tree, inp)
    assert used  # the index was bound to the registry just written
    assert (outcome, value) == _full_read(tree, inp), (rows, proposed, lineage)


def test_the_property_reaches_both_answers_and_the_index_decides_alone(tree: Path) -> None:
    # not vacuous: a conflict and a clear route, each decided without reading the registry
    layout = discover(tree).layout
    owners._write(layout, [_lease("h1", ["src/x/a.py"]), _lease("h2", ["lib"], minutes=-5)])
    for paths, mode in ((["SRC/x"], "local"), (["lib/x/a.py"], "fresh-capsule")):
        ctx = RuntimeContext(cwd=str(tree), clock=lambda: NOW)
        assert op_route({"input": _writer(paths)}, ctx)["mode"] == mode
        assert "router.owners_registry" not in ctx.cache  # the full read never ran
        assert _full_read(tree, _writer(paths))[1]["mode"] == mode


# --- big registries: no scan of every entry ------------------------------------------------------


def test_ten_thousand_entries_are_not_read_one_by_one(tmp_path: Path) -> None:
    repo = _git_init(tmp_path / "r")
    leases = [_lease(f"h{i}", [f"held/d{i % 50}/f{i}.py"]) for i in range(10_000)]
    owners._write(discover(repo).layout, leases)
    for paths, mode in (
        (["held/d7/f57.py"], "local"),
        (["held/d7"], "local"),
        (["held/d7/f58.py"], "fresh-capsule"),
    ):
        ctx = RuntimeContext(cwd=str(repo), clock=lambda: NOW)
        assert op_route({"input": _writer(paths)}, ctx)["mode"] == mode
        assert "router.owners_registry" not in ctx.cache
    # the holder re-routing its own path is not a second writer; after expiry nobody holds it
    assert _route(repo, _writer(["held/d7/f57.py"], "h57"))[1]["mode"] == "fresh-capsule"
    later = RuntimeContext(cwd=str(repo), clock=lambda: NOW + timedelta(hours=2))
    assert op_route({"input": _writer(["held"])}, later)["mode"] == "fresh-capsule"


# --- trusted only while bound to the registry's bytes --------------------------------------------


@pytest.fixture
def held(tmp_path: Path) -> Path:
    repo = _git_init(tmp_path / "r")
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("x\n")
    owners.acquire(discover(repo).layout, "holder", ["src/a.py"], now=NOW)
    return repo


def _registry(repo: Path) -> Path:
    return repo / ".git" / "workgroup" / "owners.json"


def test_owners_writes_an_index_bound_to_the_registry(held: Path) -> None:
    assert _route(held, _writer(["src/a.py"]))[1:] == (
        {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]},
        True,
    )
    owners.release(discover(held).layout, "holder", now=NOW)
    assert _route(held, _writer(["src/a.py"]))[1:] == (
        {"mode": "fresh-capsule", "reason_codes": ["INDEPENDENT_CAPSULE"]},
        True,
    )


def test_a_valid_hand_edit_is_seen_at_the_next_call(held: Path) -> None:
    registry = _registry(held)
    document = json.loads(registry.read_text())
    document["writers"][0]["owned_files"] = ["src/b.py"]
    registry.write_text(json.dumps(document))
    outcome, value, used = _route(held, _writer(["src/a.py"]))
    assert (outcome, value["mode"], used) == ("ok", "fresh-capsule", False)
    assert _route(held, _writer(["src/b.py"]))[1]["mode"] == "local"


def test_an_in_place_edit_keeping_size_inode_and_mtime_is_seen(held: Path) -> None:
    registry = _registry(held)
    info = registry.stat()
    raw = registry.read_bytes()
    edited = raw.replace(b'"src/a.py"', b'"src/b.py"')
    assert len(edited) == len(raw) and edited != raw
    with open(registry, "r+b") as fh:  # same inode
        fh.write(edited)
    os.utime(registry, ns=(info.st_atime_ns, info.st_mtime_ns))  # same mtime
    assert registry.stat().st_ino == info.st_ino
    outcome, value, used = _route(held, _writer(["src/a.py"]))
    assert (value["mode"], used) == ("fresh-capsule", False)


@pytest.mark.parametrize(
    "damage",
    [
        lambda w: w.update(owned_files=42),
        lambda w: w.update(lease_expires_at="tomorrow"),
        lambda w: w.update(owned_globs=[1]),
    ],
)
def test_a_malformed_hand_edit_is_an_environment_error_despite_the_index(held: Path, damage: Any) -> None:
    registry = _registry(held)
    document = json.loads(registry.read_text())
    document["writers"].append(dict(document["writers"][0], lineage_id="other", owned_files=["zz/q.py"]))
    damage(document["writers"][1])
    registry.write_text(json.dumps(document))
    assert _route(held, _writer(["src/a.py"]))[:2] == ("error", "ENVIRONMENT_ERROR")
    assert _route(held, {"role": "reader"})[:2] == ("error", "ENVIRONMENT_ERROR")  # as the full read does


def test_a_corrupt_truncated_or_foreign_index_falls_back(held: Path) -> None:
    index = _registry(held).with_name(INDEX_FILE)
    good = index.read_bytes()
    for bad in (good[:-3], good.replace(b"src/a.py", b"src/z.py"), b"", b"not an index", good[:40]):
        index.write_bytes(bad)
        outcome, value, used = _route(held, _writer(["src/a.py"]))
        assert (value["mode"], used) == ("local", False), bad


def test_a_symlinked_index_is_not_followed(held: Path, tmp_path: Path) -> None:
    index = _registry(held).with_name(INDEX_FILE)
    elsewhere = tmp_path / "elsewhere.index"
    elsewhere.write_bytes(index.read_bytes())
    index.unlink()
    index.symlink_to(elsewhere)
    assert _route(held, _writer(["src/a.py"]))[1:] == (
        {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]},
        False,
    )
    # the next owners write replaces the link with a file and leaves the target alone
    before = elsewhere.read_bytes()
    owners.acquire(discover(held).layout, "second", ["src/b.py"], now=NOW)
    assert not index.is_symlink() and elsewhere.read_bytes() == before
    assert _route(held, _writer(["src/b.py"]))[1:] == (
        {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]},
        True,
    )


KILL_BETWEEN = """
import os, signal, sys
from datetime import datetime
from toolkit.infra.git import discover
from toolkit.records import owners

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

owners._write_index = die  # the registry is written, its index is not
owners.acquire(discover(sys.argv[1]).layout, "late", ["src/late.py"], now=datetime.fromisoformat(sys.argv[2]))
"""


def test_kill_9_between_the_registry_and_its_index_is_safe(held: Path) -> None:
    index = _registry(held).with_name(INDEX_FILE)
    old_index = index.read_bytes()
    proc = subprocess.run([sys.executable, "-c", KILL_BETWEEN, str(held), NOW.isoformat()], check=False)
    assert proc.returncode == -signal.SIGKILL
    assert index.read_bytes() == old_index and b"late" in _registry(held).read_bytes()
    # the old index is bound to the old bytes: the new lease is seen, by the full read
    assert _route(held, _writer(["src/late.py"]))[1:] == (
        {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]},
        False,
    )
    assert _route(held, _writer(["src/a.py"]))[1]["mode"] == "local"


# --- symlinks on the way to an indexed path ------------------------------------------------------


def test_a_directory_turned_symlink_after_the_write_is_resolved(tmp_path: Path) -> None:
    repo = _git_init(tmp_path / "r")
    (repo / "src").mkdir()
    owners._write(discover(repo).layout, [_lease("holder", ["held/x.py"])])
    assert _route(repo, _writer(["src/x.py"]))[1]["mode"] == "fresh-capsule"
    os.symlink("src", repo / "held")  # held/x.py now is src/x.py
    outcome, value, used = _route(repo, _writer(["src/x.py"]))
    assert (value["mode"], used) == ("local", True)
    assert _full_read(repo, _writer(["src/x.py"])) == (outcome, value)


def test_a_last_segment_symlink_is_resolved(tmp_path: Path) -> None:
    repo = _git_init(tmp_path / "r")
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("x\n")
    owners._write(discover(repo).layout, [_lease("holder", ["held/alias.py"])])
    (repo / "held").mkdir()
    os.symlink("../src/a.py", repo / "held" / "alias.py")
    assert _route(repo, _writer(["src/a.py"]))[1]["mode"] == "local"
    assert _full_read(repo, _writer(["src/a.py"]))[1]["mode"] == "local"


@pytest.mark.parametrize("held", [["deep/x.py"], ["caf\u00e9/x.py"], ["deep/x.py", "caf\u00e9/x.py"]])
def test_a_proposed_path_holding_the_work_tree_answers_as_the_full_read(
    tmp_path: Path, held: list[str]
) -> None:
    repo = _git_init(tmp_path / "r")
    owners._write(discover(repo).layout, [_lease("holder", held)])
    for inp in (
        _writer(["."]),
        {**_writer([repo.name]), "workspace_root": str(repo.parent)},
        {**_writer(["."]), "workspace_root": "/"},
    ):
        assert _route(repo, inp)[:2] == _full_read(repo, inp), inp


# --- the format ------------------------------------------------------------------------------


def test_the_index_keeps_odd_paths_for_the_reader_and_refuses_rows_owners_would_not_write() -> None:
    binding = {"size": 1, "crc32": 2, "mtime_ns": 3, "ino": 4}
    rows = [
        _lease("a", ["src/A.py", "caf\u00e9/x", "src/../lib"]).to_json(),
        _lease("b", [], globs=("lib/**",)).to_json(),
    ]
    raw = encode_index(rows, binding)
    assert raw is not None
    index = decode_index(raw)
    assert index is not None and index.binding == binding
    assert index.heads == ["src"] and [line.split(b"\t")[0] for line in index.lines] == [b"src/a.py"]
    assert [paths for _, _, paths in index.slow] == [["caf\u00e9/x", "src/../lib"]]
    assert [holder for _, holder in index.fallback] == ["b"]
    assert encode_index([{**rows[0], "lease_expires_at": "soon"}], binding) is None
    assert encode_index([{**rows[0], "owned_files": [1]}], binding) is None


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("slow", "x"),
        ("slow", [[1, "a"]]),
        ("slow", [[1, "a", ["p"], 4]]),
        ("slow", [[True, "a", ["p"]]]),
        ("slow", [[1.0, "a", ["p"]]]),
        ("slow", [[1, 2, ["p"]]]),
        ("slow", [[1, "a", [3]]]),
        ("slow", [[1, "a", "p"]]),
        ("fallback", {"1": "a"}),
        ("fallback", [[1, "a", ["p"]]]),
        ("fallback", [[False, "a"]]),
        ("fallback", [[1, None]]),
        ("fallback", [(1, "a"), 5]),
    ],
)
def test_a_header_row_of_another_shape_makes_the_whole_index_unreadable(key: str, value: object) -> None:
    """Each slow row is [int expiry, holder, [path, ...]] and each fallback row [int expiry, holder]
    (a bool or float expiry is not an int); any other row and the index is not used at all."""
    binding = {"size": 1, "crc32": 2, "mtime_ns": 3, "ino": 4}
    raw = encode_index(
        [_lease("a", ["caf\u00e9/x"]).to_json(), _lease("b", [], globs=("lib/**",)).to_json()], binding
    )
    assert raw is not None
    good = decode_index(raw)
    assert good is not None and good.slow == [(good.slow[0][0], "a", ["caf\u00e9/x"])]
    assert good.fallback == [(good.fallback[0][0], "b")] and isinstance(good.fallback[0][0], int)
    magic = b"workgroup.owners-index/v1\n"
    end = raw.index(b"\n", len(magic))
    header = json.loads(raw[len(magic) : end])
    assert decode_index(magic + json.dumps(header).encode() + raw[end:]) is not None
    header[key] = value
    assert decode_index(magic + json.dumps(header).encode() + raw[end:]) is None


def test_owners_list_rebuilds_the_index_after_a_valid_hand_edit(held: Path) -> None:
    registry = _registry(held)
    document = json.loads(registry.read_text())
    document["writers"].append(dict(document["writers"][0], lineage_id="edited", owned_files=["docs"]))
    registry.write_text(json.dumps(document))
    assert _route(held, _writer(["docs/x.md"]))[1:] == (
        {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]},
        False,
    )
    assert [lease.lineage_id for lease in owners.list_leases(discover(held).layout, now=NOW)] == [
        "holder",
        "edited",
    ]
    assert _route(held, _writer(["docs/x.md"]))[1:] == (
        {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]},
        True,
    )
    assert _route(held, _writer(["src/b.py"]))[1:] == (
        {"mode": "fresh-capsule", "reason_codes": ["INDEPENDENT_CAPSULE"]},
        True,
    )


def test_owners_list_builds_no_index_for_a_malformed_registry(held: Path) -> None:
    registry = _registry(held)
    document = json.loads(registry.read_text())
    document["writers"][0]["owned_files"] = "src/a.py"
    registry.write_text(json.dumps(document))
    with pytest.raises(owners.EnvironmentFailure):
        owners.list_leases(discover(held).layout, now=NOW)
    assert _route(held, _writer(["src/b.py"]))[:2] == ("error", "ENVIRONMENT_ERROR")


def test_a_registry_checksummed_in_chunks_is_bound_to_its_last_byte(tmp_path: Path) -> None:
    # the reader checksums the registry a chunk at a time (registry_io._CHUNK): a registry of
    # several chunks is trusted whole, and an edit in its last chunk that keeps size, inode and
    # mtime is still seen
    from toolkit.runtime import registry_io

    repo = _git_init(tmp_path / "r")
    owners._write(discover(repo).layout, [_lease(f"h{i}", [f"held/f{i}.py"]) for i in range(3_000)])
    registry = _registry(repo)
    assert registry.stat().st_size > 2 * registry_io._CHUNK
    assert _route(repo, _writer(["held/f2999.py"]))[1:] == (
        {"mode": "local", "reason_codes": ["WRITER_OWNERSHIP_CONFLICT"]},
        True,
    )
    info = registry.stat()
    raw = registry.read_bytes()
    cut = raw.rindex(b'"held/f2999.py"')
    edited = raw[:cut] + b'"held/f2998.py"' + raw[cut + len(b'"held/f2999.py"') :]
    assert len(edited) == len(raw) and cut > 2 * registry_io._CHUNK
    with open(registry, "r+b") as fh:  # same inode
        fh.write(edited)
    os.utime(registry, ns=(info.st_atime_ns, info.st_mtime_ns))  # same mtime
    outcome, value, used = _route(repo, _writer(["held/f2999.py"]))
    assert (value["mode"], used) == ("fresh-capsule", False)
