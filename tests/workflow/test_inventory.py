"""`workgroup index`: determinism (two runs, two clones, same bytes) and reuse on an unchanged tree."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.harness import GitRepo, run_workgroup

from toolkit.core.canonical import canonical_bytes
from toolkit.infra.git import discover
from toolkit.workflow.indexing import inventory
from toolkit.workflow.inventory import build, build_document, guess_language, load_cached


def _populate(repo: GitRepo) -> str:
    return repo.commit(
        "files",
        files={
            "src/app.py": "print('hi')\n",
            "web/App.tsx": "export {}\n",
            "docs/guide.md": "# g\n",
            "Makefile": "all:\n",
            "data/blob.bin": "\x00\x01",
            "z/ü.txt": "unicode path\n",
        },
    )


def test_two_runs_and_two_clones_give_identical_bytes(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _populate(git_repo)
    first = run_workgroup("index", "--json", "--no-cache")
    second = run_workgroup("index", "--json")
    assert first.returncode == 0 and first.stdout == second.stdout
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", f"file://{git_repo.path}", str(clone)], check=True)
    third = run_workgroup("index", "--json", cwd=clone)
    assert third.stdout == first.stdout
    doc = json.loads(first.stdout)
    paths = [f["path"] for f in doc["files"]]
    assert paths == sorted(paths, key=lambda p: p.encode())
    by_path = {f["path"]: f for f in doc["files"]}
    assert by_path["src/app.py"]["language"] == "python" and by_path["src/app.py"]["size"] == 12
    assert by_path["Makefile"]["language"] == "make"
    assert by_path["src/app.py"]["blob"] == str(git_repo.raw.revparse_single("HEAD:src/app.py").id)
    assert doc["totals"]["files"] == 6


def test_reuse_on_unchanged_tree_and_rebuild_on_change(git_repo) -> None:  # type: ignore[no-untyped-def]
    _populate(git_repo)
    repo = discover()
    built = inventory(repo)
    again = inventory(repo)
    assert not built.reused and again.reused and again.to_bytes() == built.to_bytes()
    git_repo.commit("empty commit, same tree")  # a new commit with the same tree still reuses
    assert inventory(repo).reused
    git_repo.commit("change", files={"src/app.py": "print('changed')\n"})
    changed = inventory(repo)
    assert not changed.reused and changed.digest != built.digest


def test_tampered_cache_is_not_reused(git_repo) -> None:  # type: ignore[no-untyped-def]
    _populate(git_repo)
    repo = discover()
    built = inventory(repo)
    cache = next((repo.layout.local / "index").glob("tree-*.json"))
    doc = json.loads(cache.read_text())
    doc["files"][0]["size"] = 999
    cache.write_text(json.dumps(doc))
    rebuilt = inventory(repo)
    assert not rebuilt.reused and rebuilt.to_bytes() == built.to_bytes()
    assert load_cached(b"not json", "x") is None


def test_staged_inventory_sees_the_index(git_repo) -> None:  # type: ignore[no-untyped-def]
    _populate(git_repo)
    git_repo.write("new.py", "x = 1\n")
    git_repo.raw.index.add("new.py")
    git_repo.raw.index.write()
    staged = json.loads(run_workgroup("index", "--staged", "--json").stdout)
    head = json.loads(run_workgroup("index", "--json").stdout)
    assert "new.py" in {f["path"] for f in staged["files"]}
    assert "new.py" not in {f["path"] for f in head["files"]}


def test_errors_are_coded(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    unborn = run_workgroup("index")
    assert unborn.returncode == 2 and b"UNBORN_HEAD" in unborn.stderr
    _populate(git_repo)
    bad = run_workgroup("index", "--rev", "no-such-rev")
    assert bad.returncode == 2 and b"UNKNOWN_REVISION" in bad.stderr and b"Traceback" not in bad.stderr
    outside = run_workgroup("index", cwd=tmp_path)
    assert outside.returncode == 3 and b"NOT_A_GIT_REPOSITORY" in outside.stderr


def test_document_is_pure_and_order_independent() -> None:
    rows = [("b.py", "1" * 40, 0o100644, 3), ("a.md", "2" * 40, 0o100644, 4), ("sub", "3" * 40, 0o160000, -1)]
    one = build_document("tree", "k", rows)
    two = build_document("tree", "k", list(reversed(rows)))
    assert one == two and [f["path"] for f in one["files"]] == ["a.md", "b.py", "sub"]
    assert build("tree", "k", rows).to_bytes() == canonical_bytes(build("tree", "k", rows).document) + b"\n"
    assert one["files"][2]["kind"] == "submodule"
    assert guess_language("x/Dockerfile") == "dockerfile" and guess_language("x.unknown") == "other"
