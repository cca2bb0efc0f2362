"""The only module that imports pygit2. It hands plain data (SHAs, paths, booleans) to the core."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.errors import EnvironmentFailure, InvalidInput, ToolkitError
from toolkit.infra.gitlocation import NotARepository as NotARepository  # raised here, declared there
from toolkit.infra.store import Layout

if TYPE_CHECKING:
    import pygit2


def _pygit2() -> Any:
    import pygit2  # lazy: pygit2 costs start-up time that the runtime path must not pay

    return pygit2


@dataclass
class Repo:
    """A thin wrapper over ``pygit2.Repository``: work tree, common dir and the queries we need."""

    raw: pygit2.Repository

    @classmethod
    def discover(cls, start: str | os.PathLike[str] | None = None) -> Repo:
        pg = _pygit2()
        where = os.fspath(start) if start is not None else os.getcwd()
        try:
            gitdir = pg.discover_repository(where)
        except _pygit2().GitError:  # an unreadable candidate .git counts as no repository
            gitdir = None
        if not gitdir:
            raise NotARepository()
        try:
            return cls(pg.Repository(gitdir))
        except pg.GitError as exc:
            raise EnvironmentFailure("GIT_OPEN_FAILED", "the git repository could not be opened") from exc

    @property
    def workdir(self) -> Path:
        if self.raw.workdir is None:
            raise EnvironmentFailure(
                "BARE_REPOSITORY", "this command needs a work tree, not a bare repository"
            )
        return Path(self.raw.workdir).resolve()

    @property
    def common_dir(self) -> Path:
        """The git dir shared by all worktrees (``.git`` of the main work tree)."""
        path = Path(self.raw.path)
        commondir_file = path / "commondir"
        if commondir_file.is_file():
            target = commondir_file.read_text(encoding="utf-8").strip()
            return (path / target).resolve()
        return path.resolve()

    @cached_property
    def layout(self) -> Layout:
        return Layout(self.workdir, self.common_dir)

    @property
    def head_is_unborn(self) -> bool:
        return bool(self.raw.head_is_unborn)

    @property
    def is_shallow(self) -> bool:
        return bool(self.raw.is_shallow)

    @property
    def ignorecase(self) -> bool:
        try:
            return bool(self.raw.config.get_bool("core.ignorecase"))
        except KeyError:  # not set
            return False

    def resolve_commit(self, rev: str = "HEAD") -> str:
        """Full 40-hex SHA of the commit ``rev`` names; coded errors for unborn HEAD or unknown revs."""
        pg = _pygit2()
        if rev == "HEAD" and self.head_is_unborn:
            raise InvalidInput(
                "UNBORN_HEAD", "HEAD has no commit yet: make a first commit before binding a checkpoint"
            )
        try:
            obj = self.raw.revparse_single(rev)
            commit = obj.peel(pg.Commit)
        except (pg.GitError, KeyError, ValueError):  # unknown, ambiguous or not a commit-ish
            raise InvalidInput(
                "UNKNOWN_REVISION", "the revision does not name a commit in this repository"
            ) from None
        return str(commit.id)

    def commit_exists(self, sha: str) -> bool:
        pg = _pygit2()
        try:
            obj = self.raw.get(sha)
        except pg.GitError:  # not a valid object name
            return False
        return isinstance(obj, pg.Commit)

    def is_ancestor_or_equal(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is ``descendant`` or one of its ancestors."""
        if ancestor == descendant:
            return True
        try:
            return bool(self.raw.descendant_of(descendant, ancestor))
        except _pygit2().GitError:  # an invalid name or an object this clone does not have
            return False

    def tracked_files(self) -> list[str]:
        """Paths in the index (the staged set), POSIX, repository-relative."""
        self.raw.index.read()
        return [entry.path for entry in self.raw.index]

    def commit_candidates(self) -> list[str]:
        """The files git would commit: the index plus untracked files that are not ignored."""
        pg = _pygit2()
        wt_new = int(getattr(getattr(pg, "enums", None), "FileStatus", pg).WT_NEW)
        status = self.raw.status(untracked_files="all", ignored=False)
        untracked = {path for path, flags in status.items() if int(flags) & wt_new}
        return sorted(set(self.tracked_files()) | untracked)

    def tree_id(self, rev: str = "HEAD") -> str:
        pg = _pygit2()
        return str(self.raw.revparse_single(rev).peel(pg.Commit).tree_id)


def discover(start: str | os.PathLike[str] | None = None) -> Repo:
    return Repo.discover(start)


def project_root() -> Path:
    """The git work tree containing the current directory, else the current directory (resolved)."""
    try:
        return discover().workdir.resolve()
    except ToolkitError:  # not a repository (or no usable one): the directory is the root
        return Path.cwd().resolve()


DEMO_SIGNATURE = ("workgroup demo", "demo@example.invalid")


def init_repository(path: str | os.PathLike[str]) -> Repo:
    """Create a new non-bare repository (used by ``workgroup demo`` and tests)."""
    pg = _pygit2()
    raw = pg.init_repository(os.fspath(path), bare=False, initial_head="main")
    return Repo(raw)


def commit_all(repo: Repo, message: str, *, when: int | None = None) -> str:
    """Stage every file of the work tree and commit it on HEAD; returns the new commit SHA."""
    pg = _pygit2()
    raw = repo.raw
    raw.index.add_all()
    raw.index.write()
    tree = raw.index.write_tree()
    if when is None:
        sig = pg.Signature(*DEMO_SIGNATURE)
    else:
        sig = pg.Signature(*DEMO_SIGNATURE, when, 0)
    parents = [] if raw.head_is_unborn else [raw.head.target]
    return str(raw.create_commit("HEAD", sig, sig, message, tree, parents))


def tree_key(repo: Repo, rev: str = "HEAD") -> str:
    """The tree id of ``rev``: the cache key of an inventory, known before reading any entry."""
    pg = _pygit2()
    return str(repo.raw.revparse_single(rev).peel(pg.Commit).tree_id)


def tree_blobs(repo: Repo, rev: str = "HEAD") -> list[tuple[str, str, int]]:
    """[(path, blob id, mode)] of every file in ``rev``'s tree, read via an in-memory index."""
    pg = _pygit2()
    commit = repo.raw.revparse_single(rev).peel(pg.Commit)
    index = pg.Index()
    index.read_tree(commit.tree)
    return [(e.path, str(e.id), int(e.mode)) for e in index]


def staged_key(repo: Repo) -> str:
    """The index file's own checksum (its last 20 bytes): a cache key that writes no object."""
    try:
        data = (Path(repo.raw.path) / "index").read_bytes()
    except FileNotFoundError:
        return "index-empty"
    return "index-" + data[-20:].hex() if len(data) >= 20 else "index-empty"


def staged_blobs(repo: Repo) -> list[tuple[str, str, int]]:
    """[(path, blob id, mode)] of the staging area, without writing any object."""
    raw = repo.raw
    raw.index.read()
    return [(e.path, str(e.id), int(e.mode)) for e in raw.index]


def blob_sizes(repo: Repo, blob_ids: list[str]) -> list[int]:
    """Sizes of blobs from their object headers (no content inflation for packed objects)."""
    odb = repo.raw.odb
    sizes: list[int] = []
    for oid in blob_ids:
        try:
            sizes.append(int(odb.read_header(oid)[1]))
        except (_pygit2().GitError, KeyError, ValueError):
            sizes.append(-1)  # submodule commit or missing object: size unknown
    return sizes


def squash_onto(repo: Repo, base: str, message: str) -> str:
    """Rewrite history: one new commit with HEAD's tree whose parent is ``base``; the branch moves to it.

    Every commit between ``base`` and HEAD disappears from the branch (as after a squash or a
    rebase that drops them). The work tree already matches HEAD's tree, so nothing is checked out.
    """
    pg = _pygit2()
    raw = repo.raw
    head = raw.head.peel(pg.Commit)
    parent = raw.revparse_single(base).peel(pg.Commit)
    sig = pg.Signature(*DEMO_SIGNATURE)
    new = raw.create_commit(None, head.author, sig, message, head.tree_id, [parent.id])
    raw.head.set_target(new)
    return str(new)


def reset_hard(repo: Repo, rev: str) -> str:
    """Move the branch to ``rev`` and make the index and work tree match it (``git reset --hard``)."""
    pg = _pygit2()
    commit = repo.raw.revparse_single(rev).peel(pg.Commit)
    repo.raw.reset(commit.id, pg.enums.ResetMode.HARD)
    return str(commit.id)


def root_commit_ids(repo: Repo) -> list[str]:
    """The parentless commits reachable from HEAD, sorted (empty for an unborn HEAD)."""
    pg = _pygit2()
    if repo.head_is_unborn:
        return []
    try:
        walker = repo.raw.walk(repo.raw.head.target, pg.enums.SortMode.NONE)
        return sorted({str(commit.id) for commit in walker if not commit.parent_ids})
    except pg.GitError:  # a damaged history: no id rather than a wrong one
        return []
