"""The confined file layer (``toolkit.infra.confined``) against real repositories with committed symlinks.

Every case commits its symlinks with pygit2 (mode 120000 in the tree, as a clone would check them
out) and checks both the coded refusal and the file system: nothing outside the work tree is read,
written or created.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.harness import GitRepo

from toolkit.core.errors import ExitCode
from toolkit.infra import confined, confinedwrite
from toolkit.infra.boundedio import FileRefused
from toolkit.infra.confined import PathOutsideRepository

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-secret\n"


link = GitRepo.link  # link(repo, rel, target): a committed symlink (conftest)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_key").write_bytes(SECRET)
    return folder


def listing(folder: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
        for p in sorted(folder.rglob("*"))
    }


def test_the_error_is_coded_invalid_input_and_names_no_path(git_repo: GitRepo, outside: Path) -> None:
    link(git_repo, "notes", outside)
    with pytest.raises(PathOutsideRepository) as caught:
        confined.resolve_inside(git_repo.path, "notes/x.md", "the note")
    assert caught.value.code == "PATH_OUTSIDE_REPOSITORY" == confined.CODE
    assert caught.value.exit_code == ExitCode.USAGE
    assert str(outside) not in caught.value.message and "notes" not in caught.value.message
    assert caught.value.message.startswith("the note ")


# --- reads -----------------------------------------------------------------------------------


def test_final_symlink_to_a_secret_outside_is_never_read(git_repo: GitRepo, outside: Path) -> None:
    link(git_repo, ".reviews/session-handoff.md", "../../outside/id_key")
    assert (git_repo.path / ".reviews/session-handoff.md").read_bytes() == SECRET  # the link works
    with pytest.raises(PathOutsideRepository) as caught:
        confined.read_bytes(
            git_repo.path, ".reviews/session-handoff.md", what="the handoff file", limit=1 << 20
        )
    assert "symlink" in caught.value.message and b"secret" not in caught.value.message.encode()


def test_parent_symlink_leading_outside_is_never_read(git_repo: GitRepo, outside: Path) -> None:
    link(git_repo, ".reviews", "../outside")
    with pytest.raises(PathOutsideRepository):
        confined.read_bytes(git_repo.path, ".reviews/id_key", what="the handoff file", limit=1 << 20)
    with pytest.raises(PathOutsideRepository):  # absolute, written under the root, same answer
        confined.read_text(git_repo.path, git_repo.path / ".reviews" / "id_key", what="x", limit=1 << 20)


def test_parent_symlink_that_stays_inside_is_followed(git_repo: GitRepo) -> None:
    git_repo.commit("docs", {"docs/specs/tasks.md": "- [ ] T1\n"})
    link(git_repo, "specs", "docs/specs")
    text = confined.read_text(git_repo.path, "specs/tasks.md", what="tasks.md", limit=1 << 20)
    assert text == "- [ ] T1\n"
    real = confined.resolve_inside(git_repo.path, "specs/tasks.md", "tasks.md")
    assert real == os.path.realpath(git_repo.path / "docs" / "specs" / "tasks.md")


def test_final_symlink_that_stays_inside_is_refused_too(git_repo: GitRepo) -> None:
    # the one rule the kernel can hold without a race: the last component is never a symlink
    git_repo.commit("real", {"real.md": "hello\n"})
    link(git_repo, "alias.md", "real.md")
    with pytest.raises(PathOutsideRepository) as caught:
        confined.read_bytes(git_repo.path, "alias.md", what="the file", limit=100)
    assert "is a symlink" in caught.value.message


def test_dangling_symlinks_are_refused_not_taken_as_absent(git_repo: GitRepo) -> None:
    link(git_repo, "gone.md", "nowhere.md")
    link(git_repo, "gonedir", "nowhere")
    with pytest.raises(PathOutsideRepository):
        confined.read_bytes(git_repo.path, "gone.md", what="the file", limit=100, missing_ok=True)
    with pytest.raises(PathOutsideRepository) as caught:
        confined.read_bytes(git_repo.path, "gonedir/x.md", what="the file", limit=100, missing_ok=True)
    assert "symlink to nothing" in caught.value.message
    with pytest.raises(PathOutsideRepository):
        confined.mkdirs(git_repo.path, "gonedir/sub", "the folder")
    assert not (git_repo.path / "nowhere").exists()


def test_missing_file_and_regular_file(git_repo: GitRepo) -> None:
    git_repo.commit("a", {"a/b.txt": "b\n"})
    assert confined.read_bytes(git_repo.path, "a/none.txt", what="x", limit=10, missing_ok=True) is None
    assert confined.read_bytes(git_repo.path, "missing/none.txt", what="x", limit=10, missing_ok=True) is None
    assert confined.read_bytes(git_repo.path, "a/b.txt", what="x", limit=10) == b"b\n"
    with pytest.raises(FileRefused):  # the bounded reader's own refusals still apply
        confined.read_bytes(git_repo.path, "a/b.txt", what="x", limit=1)
    os.mkfifo(git_repo.path / "a" / "fifo")
    with pytest.raises(FileRefused) as caught:
        confined.read_bytes(git_repo.path, "a/fifo", what="x", limit=10)
    assert caught.value.code == "NOT_A_FILE"


@pytest.mark.parametrize("rel", ["../outside/id_key", "a/../../outside/id_key", ".."])
def test_dot_dot_cannot_climb_out(git_repo: GitRepo, outside: Path, rel: str) -> None:
    git_repo.commit("a", {"a/b.txt": "b\n"})
    with pytest.raises(PathOutsideRepository):
        confined.read_bytes(git_repo.path, rel, what="x", limit=1 << 20)


def test_dot_dot_after_an_inside_symlink_is_taken_physically(git_repo: GitRepo) -> None:
    git_repo.commit("deep", {"deep/er/file.txt": "x\n", "file.txt": "top\n"})
    link(git_repo, "short", "deep/er")
    # short/.. is deep/, physically (not the root): the file there is deep/file.txt, absent
    assert (
        confined.read_bytes(git_repo.path, "short/../file.txt", what="x", limit=10, missing_ok=True) is None
    )


def test_absolute_path_outside_the_root_is_refused(git_repo: GitRepo, outside: Path) -> None:
    with pytest.raises(PathOutsideRepository):
        confined.read_bytes(git_repo.path, outside / "id_key", what="x", limit=1 << 20)


# --- writes ----------------------------------------------------------------------------------


def test_atomic_write_through_a_parent_symlink_outside_writes_nothing(
    git_repo: GitRepo, outside: Path
) -> None:
    link(git_repo, ".workgroup", "../outside")
    before = listing(outside)
    with pytest.raises(PathOutsideRepository):
        confinedwrite.atomic_write(
            git_repo.path, ".workgroup/config.yml", "x: 1\n", what=".workgroup/config.yml"
        )
    with pytest.raises(PathOutsideRepository):
        confinedwrite.atomic_write(git_repo.path, ".workgroup/new/deeper/f", "x", what="the file")
    assert listing(outside) == before


def test_atomic_write_onto_a_final_symlink_is_refused_and_leaves_it(git_repo: GitRepo, outside: Path) -> None:
    path = link(git_repo, "notes.md", "../outside/id_key")
    with pytest.raises(PathOutsideRepository):
        confinedwrite.atomic_write(git_repo.path, "notes.md", "new\n", what="the notes")
    assert path.is_symlink() and (outside / "id_key").read_bytes() == SECRET


def test_atomic_write_through_an_inside_parent_symlink_lands_inside(git_repo: GitRepo) -> None:
    git_repo.commit("docs", {"docs/specs/keep": ""})
    link(git_repo, "specs", "docs/specs")
    written = confinedwrite.atomic_write(git_repo.path, "specs/.reviews/h.md", "hi\n", what="the handoff")
    assert written == os.path.realpath(git_repo.path / "docs/specs/.reviews/h.md")
    assert (git_repo.path / "docs/specs/.reviews/h.md").read_text() == "hi\n"
    assert not (git_repo.path / "docs/specs/.reviews").is_symlink()


def test_mkdirs_creates_each_folder_under_the_checked_parent(git_repo: GitRepo, outside: Path) -> None:
    link(git_repo, "knowzcode/artifacts", "../../outside")
    with pytest.raises(PathOutsideRepository):
        confined.mkdirs(git_repo.path, "knowzcode/artifacts/x/y", "the artifact folder")
    assert listing(outside) == {"id_key": SECRET}
    made = confined.mkdirs(git_repo.path, "a/b/c", "the folder")
    assert made == os.path.realpath(git_repo.path / "a/b/c") and Path(made).is_dir()


def test_open_append_refuses_a_symlinked_log(git_repo: GitRepo, outside: Path) -> None:
    (outside / "log").write_text("ORIGINAL\n")
    link(git_repo, "specs/运行日志.jsonl", "../../outside/log")
    with pytest.raises(PathOutsideRepository):
        confined.open_append(git_repo.path, "specs/运行日志.jsonl", what="the project log")
    assert (outside / "log").read_text() == "ORIGINAL\n"
    fd = confined.open_append(git_repo.path, "specs/other.jsonl", what="the log")
    try:
        os.write(fd, b"{}\n")
    finally:
        os.close(fd)
    assert (git_repo.path / "specs/other.jsonl").read_bytes() == b"{}\n"


def test_lock_and_create_exclusive_never_create_a_symlink_target(git_repo: GitRepo, outside: Path) -> None:
    link(git_repo, "specs/.cm-run.lock", "../../outside/created.lock")
    link(git_repo, "claims/run-1.json", "../../outside/claim.json")
    with (
        pytest.raises(PathOutsideRepository),
        confinedwrite.lock(git_repo.path, "specs/.cm-run.lock", what="the lock"),
    ):
        pass
    with pytest.raises(PathOutsideRepository):
        confinedwrite.create_exclusive(git_repo.path, "claims/run-1.json", "{}", what="the claim")
    assert sorted(p.name for p in outside.iterdir()) == ["id_key"]
    with confinedwrite.lock(git_repo.path, "specs/.ok.lock", what="the lock"):
        assert stat.S_ISREG(os.lstat(git_repo.path / "specs/.ok.lock").st_mode)
    assert confinedwrite.create_exclusive(git_repo.path, "claims/run-2.json", "{}", what="the claim")
    assert not confinedwrite.create_exclusive(git_repo.path, "claims/run-2.json", "{}", what="the claim")


def test_store_primitives_refuse_a_symlink_swapped_in_after_the_check(
    git_repo: GitRepo, outside: Path
) -> None:
    """The race the path check cannot see: the opens themselves carry O_NOFOLLOW."""
    from toolkit.infra.store import file_lock

    os.symlink(outside / "late.lock", git_repo.path / "late.lock")
    with pytest.raises(OSError), file_lock(git_repo.path / "late.lock"):
        pass
    assert not (outside / "late.lock").exists()


def test_root_for_a_named_folder(git_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (git_repo.path / "specs").mkdir()
    assert confined.root_for("specs") == str(git_repo.path.resolve())
    elsewhere = tmp_path / "plain" / "specs"
    elsewhere.mkdir(parents=True)
    assert confined.root_for(elsewhere) == str(elsewhere)  # no repository: the folder itself
    other = GitRepo(tmp_path / "other")
    (other.path / "specs").mkdir()
    assert confined.root_for(other.path / "specs") == str(other.path)


# --- property: whatever the layout, a confined path stays inside ---------------------------

NAMES = ("a", ".reviews", ".workgroup")
OUTWARD = ("../outside", "../../outside", "../outside/id_key", "../../outside/id_key", "nowhere", "/")
LinkTarget = st.one_of(
    st.sampled_from(OUTWARD),
    st.sampled_from(NAMES),
    st.builds(lambda x, y: f"{x}/{y}", st.sampled_from(NAMES), st.sampled_from(NAMES)),
)
Layout = st.lists(
    st.tuples(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2), st.one_of(st.none(), LinkTarget)),
    max_size=6,
)
RelPath = st.lists(st.sampled_from((*NAMES, "..", "f.txt", "id_key")), min_size=1, max_size=4).map("/".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=Layout, rel=RelPath)
@example(layout=[(["a"], "../outside")], rel="a/id_key")
@example(layout=[([".reviews"], "../outside/id_key")], rel=".reviews")
@example(layout=[(["a"], "nowhere")], rel="a/f.txt")
@example(layout=[(["a"], None), (["a", "a"], "../../outside")], rel=".workgroup/../a/a/f.txt")
def test_property_writes_and_reads_never_leave_the_root(
    tmp_path: Path, layout: list[tuple[list[str], str | None]], rel: str
) -> None:
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        root, outside = base / "repo" / "root", base / "repo" / "outside"
        root.mkdir(parents=True)
        outside.mkdir()
        (outside / "id_key").write_bytes(SECRET)
        for parts, target in layout:  # folders, and symlinks to anywhere (in, out, nowhere, /)
            path = root.joinpath(*parts)
            if os.path.lexists(path):
                continue
            try:
                if target is None:
                    path.mkdir(parents=True, exist_ok=True)
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    os.symlink(target, path)
            except OSError:
                continue
        before = listing(outside)
        real_root = os.path.realpath(root)
        try:
            checked = confined.resolve_inside(root, rel, "x")
        except PathOutsideRepository:
            checked = None
        if checked is not None:
            assert os.path.realpath(os.path.dirname(checked)) == os.path.dirname(
                checked
            ) or not os.path.exists(os.path.dirname(checked))
            assert checked == real_root or checked.startswith(real_root + "/")
            assert not os.path.islink(checked)
        for action in (
            lambda: confinedwrite.atomic_write(root, rel, "data", what="x"),
            lambda: confined.read_bytes(root, rel, what="x", limit=1 << 20, missing_ok=True),
            lambda: os.close(confined.open_append(root, rel, what="x")),
        ):
            try:
                result = action()
            except (PathOutsideRepository, FileRefused, OSError):
                continue
            assert result != SECRET
        assert listing(outside) == before
    finally:
        shutil.rmtree(base, ignore_errors=True)
