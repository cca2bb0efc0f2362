"""``workgroup runtime route`` with owned globs: the index asked of ``git ls-files`` (no pygit2),
plain globs matched by one regex (no pathspec), held equal to pathspec's gitignore meaning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.ownership import _plain_glob_regex, glob_matcher, glob_spec
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.protocol import RuntimeContext
from toolkit.runtime.router import op_route

GLOB_SEGMENTS = ["a", "b-c", "a.py", "*.py", "a*", "*", "**", "*b*", ".x", "_", "test_*", "*_test.go"]
PATH_SEGMENTS = ["a", "b-c", "a.py", "x.py", "ab", ".x", "_", "cb", "test_x", "é", "a b", "y_test.go"]


@settings(max_examples=400, deadline=None)
@given(
    globs=st.lists(
        st.tuples(st.lists(st.sampled_from(GLOB_SEGMENTS), min_size=1, max_size=4), st.booleans()),
        min_size=1,
        max_size=3,
    ),
    paths=st.lists(st.lists(st.sampled_from(PATH_SEGMENTS), min_size=1, max_size=5), min_size=1, max_size=20),
)
def test_plain_globs_match_exactly_what_pathspec_matches(
    globs: list[tuple[list[str], bool]], paths: list[list[str]]
) -> None:
    patterns = ["/".join(segments) + ("/" if trailing else "") for segments, trailing in globs]
    ours = glob_matcher(patterns)
    theirs = glob_spec(patterns)
    for segments in paths:
        path = "/".join(segments)
        assert ours(path) == bool(theirs.match_file(path)), (patterns, path)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "glob",
    ["src/**", "src/pkg1/**", "*.py", "src/api/", "**/test_*.py", "docs/*.md", "src/api.py", "**/*.ts"],
)
def test_common_globs_take_the_plain_path(glob: str) -> None:
    assert _plain_glob_regex(glob) is not None


@pytest.mark.parametrize("glob", ["src/*", "src/?.py", "src/[ab].py", "a\\*b", "#x", "a b", "é/**", "a***b"])
def test_other_globs_are_left_to_pathspec(glob: str) -> None:
    assert _plain_glob_regex(glob) is None
    assert glob_matcher([glob])("zz/never") is bool(glob_spec([glob]).match_file("zz/never"))  # type: ignore[attr-defined]


def _repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for rel in ("src/pkg1/a.py", "src/pkg2/b.py", "docs/x.md"):
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text("x\n")
    subprocess.run(
        ["git", "add", "src/pkg1/a.py", "docs/x.md"], cwd=path, check=True
    )  # staged, never committed
    return path


def test_route_with_globs_reads_the_index_without_pygit2_or_pathspec(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    code = (
        "import sys, json\n"
        "from toolkit.runtime.protocol import RuntimeContext\n"
        "from toolkit.runtime.router import op_route\n"
        "ctx = RuntimeContext(cwd=sys.argv[1])\n"
        "active = [{'owned_files': ['src/pkg1/a.py']}]\n"
        "hit = op_route({'input': {'is_writer': True, 'owned_globs': ['src/pkg1/**'], 'active_writers': active}}, ctx)\n"
        "try:\n"
        "    op_route({'input': {'is_writer': True, 'owned_globs': ['src/pkg2/**'], 'active_writers': []}}, ctx)\n"
        "    untracked = 'routed'\n"
        "except Exception as exc:\n"
        "    untracked = exc.code\n"
        "print(json.dumps([hit['mode'], untracked, 'pygit2' in sys.modules, 'pathspec' in sys.modules]))\n"
    )
    env = {
        **os.environ,
        "GIT_INDEX_FILE": str(tmp_path / "other-index"),
    }  # ignored: the repository's own index
    proc = subprocess.run(
        [sys.executable, "-c", code, str(repo)], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    # the staged file conflicts; src/pkg2/b.py is not tracked, so its glob names no path
    assert json.loads(proc.stdout) == ["local", "WRITER_SCOPE_REQUIRED", False, False]


def test_an_index_git_cannot_read_is_an_environment_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    (repo / ".git" / "index").write_bytes(b"DIRC garbage, not an index")
    ctx = RuntimeContext(cwd=str(repo))
    with pytest.raises(RuntimeOpError) as caught:
        op_route({"input": {"is_writer": True, "owned_globs": ["src/**"], "active_writers": []}}, ctx)
    assert caught.value.code == "ENVIRONMENT_ERROR"


def test_globs_outside_a_repository_are_an_environment_error(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    ctx = RuntimeContext(cwd=str(tmp_path / "plain"))
    with pytest.raises(RuntimeOpError) as caught:
        op_route({"input": {"is_writer": True, "owned_globs": ["src/**"], "active_writers": []}}, ctx)
    assert caught.value.code == "ENVIRONMENT_ERROR"


def test_tracked_files_reads_past_the_pipe_buffer(tmp_path: Path) -> None:
    # git is started with os.posix_spawnp and its output read to the end while it runs: more than
    # a pipe buffer (64 KiB) of paths neither blocks nor is cut short
    from toolkit.infra.gitlocation import tracked_files

    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for i in range(700):
        path = repo / "src" / f"pkg{i % 7}" / (f"module_{i:04d}_" + "x" * 100 + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    subprocess.run(["git", "add", "src"], cwd=repo, check=True)
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
    assert len(listed) > 65_536
    assert tracked_files(str(repo)) == listed.decode().split("\0")[:-1]
    ctx = RuntimeContext(cwd=str(repo))
    assert ctx.owned_glob_matches(["src/pkg3/**"], str(repo)) == sorted(
        p for p in listed.decode().split("\0") if p.startswith("src/pkg3/")
    )


def test_git_that_cannot_be_started_is_an_environment_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolkit.infra.gitlocation import tracked_files

    repo = _repo(tmp_path / "r")
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # a machine without git on its PATH
    with pytest.raises(OSError):
        tracked_files(str(repo))
    ctx = RuntimeContext(cwd=str(repo))
    with pytest.raises(RuntimeOpError) as caught:
        op_route({"input": {"is_writer": True, "owned_globs": ["src/**"], "active_writers": []}}, ctx)
    assert caught.value.code == "ENVIRONMENT_ERROR"


def test_git_reading_an_index_it_refuses_leaves_no_descriptor_behind(tmp_path: Path) -> None:
    from toolkit.infra.gitlocation import tracked_files

    repo = _repo(tmp_path / "r")
    (repo / ".git" / "index").write_bytes(b"DIRC garbage, not an index")
    before = sorted(os.listdir("/proc/self/fd"))
    for _ in range(20):
        with pytest.raises(OSError):
            tracked_files(str(repo))
    assert sorted(os.listdir("/proc/self/fd")) == before
