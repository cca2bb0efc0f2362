"""Find the git common dir (and the work tree) from a directory, without pygit2.

The runtime runs on every delegation and must stay standard-library only, yet it reads the
persistent writer registry that lives in ``<git common dir>/workgroup/``. Git's own rules:
walk up from the start directory to the first ``.git``; a directory is the git dir, a file
holds ``gitdir: <path>`` (worktrees, submodules); a git dir with a ``commondir`` file points to
the dir shared by all worktrees.

Also here, for the same stdlib-only readers: the writer registry's location in that dir and its one
bounded read (``read_owners_registry``), and the index's path list from the git command
(``tracked_files``).
"""

from __future__ import annotations

import os

from toolkit.core.errors import EnvironmentFailure
from toolkit.infra.boundedio import FileRefused, read_json_bounded, read_regular

WORKGROUP_DIR = ".workgroup"  # the committed records' folder at the work tree's root

# Same value as ``toolkit.infra.store.LOCAL_STATE_NAME`` (a test keeps them equal); not imported from
# there because ``store`` pulls in ``tempfile`` and ``pathlib``, which the runtime path avoids.
LOCAL_STATE_NAME = "workgroup"
OWNERS_FILE = "owners.json"

_MAX_POINTER_BYTES = 4096
MAX_REGISTRY_BYTES = 64 * 1024 * 1024  # the writer registry: far above any real one, bounded all the same


class NotARepository(EnvironmentFailure):
    """Not inside a git work tree (here rather than in ``git``: the verify hook asks ``git`` the
    command and must not import the pygit2 layer or the store to raise it)."""

    def __init__(self) -> None:
        super().__init__("NOT_A_GIT_REPOSITORY", "not inside a git repository (run this in a work tree)")


def read_owners_registry(path: str, default: object) -> object:
    """The decoded writer registry at ``path`` (``default`` when absent), read the one way both its
    readers use: our own state file, so a symlink or a FIFO there is never ours (O_NOFOLLOW,
    regular files only), bounded in size and depth. Raises ``boundedio.FileRefused``."""

    return read_json_bounded(
        path,
        limit=MAX_REGISTRY_BYTES,
        what="the writer registry",
        follow_symlinks=False,
        missing_ok=True,
        strict=False,
        default=default,
    )


class GitLocation:
    """``workdir``: the work tree top; ``git_dir``: its git dir; ``common_dir``: shared by worktrees.

    A plain value class: a dataclass would import dataclasses and inspect on every route call.
    """

    __slots__ = ("common_dir", "git_dir", "workdir")

    def __init__(self, workdir: str, git_dir: str, common_dir: str) -> None:
        self.workdir = workdir
        self.git_dir = git_dir
        self.common_dir = common_dir

    def _fields(self) -> tuple[str, str, str]:
        return (self.workdir, self.git_dir, self.common_dir)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GitLocation):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "GitLocation({!r}, {!r}, {!r})".format(*self._fields())

    @property
    def local_state(self) -> str:
        return os.path.join(self.common_dir, LOCAL_STATE_NAME)

    @property
    def owners_registry(self) -> str:
        return os.path.join(self.local_state, OWNERS_FILE)


def _read_small(path: str) -> str | None:

    try:
        # a FIFO named .git or commondir must not block the runtime: regular files only
        raw = read_regular(path, limit=_MAX_POINTER_BYTES, what="a git pointer file", missing_ok=True)
        return None if raw is None else raw.decode("utf-8").strip()
    except (FileRefused, UnicodeDecodeError):
        return None


def _git_dir_of(dot_git: str) -> str | None:
    if os.path.isdir(dot_git):
        return dot_git
    text = _read_small(dot_git)
    if not text or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    if not target:
        return None
    resolved = target if os.path.isabs(target) else os.path.join(os.path.dirname(dot_git), target)
    return os.path.realpath(resolved) if os.path.isdir(resolved) else None


def find_git(start: str) -> GitLocation | None:
    """The repository containing ``start`` (walking up), or None outside any repository."""
    current = os.path.realpath(start)
    while True:
        dot_git = os.path.join(current, ".git")
        if os.path.lexists(dot_git):
            git_dir = _git_dir_of(dot_git)
            if git_dir is not None:
                common = git_dir
                pointer = _read_small(os.path.join(git_dir, "commondir"))
                if pointer:
                    candidate = pointer if os.path.isabs(pointer) else os.path.join(git_dir, pointer)
                    if os.path.isdir(candidate):
                        common = candidate
                return GitLocation(current, os.path.realpath(git_dir), os.path.realpath(common))
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# variables that would point ``git`` at another repository or index than the one found here
_GIT_LOCATION_VARS = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
    }
)


def tracked_files(workdir: str) -> list[str]:
    """The paths in the index of the work tree ``workdir`` (``git ls-files -z``), POSIX and
    relative to it: the staged set, as ``Repo.tracked_files`` reads it, without importing pygit2.

    Raises ``OSError`` when git cannot be run or does not answer (never an empty list for that).
    """
    env = {key: value for key, value in os.environ.items() if key not in _GIT_LOCATION_VARS}
    return [
        path.decode("utf-8", "surrogateescape") for path in _git_output(workdir, env).split(b"\0") if path
    ]


def _git_output(workdir: str, env: dict[str, str]) -> bytes:
    """The standard output of ``git -C workdir ls-files -z --cached --full-name``, started with
    ``os.posix_spawnp``: the subprocess module (with threading, selectors and signal) would cost
    the route path more start-up than git itself. No stdin, stderr discarded; raises ``OSError``
    when git cannot be started or exits with a failure."""
    argv = ["git", "-C", workdir, "ls-files", "-z", "--cached", "--full-name"]
    read_end, write_end = os.pipe()  # both close-on-exec: the child gets only the dup2 copies
    try:
        try:
            null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            try:
                actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, write_end, 1)]
                actions.append((os.POSIX_SPAWN_DUP2, null, 2))
                pid = os.posix_spawnp("git", argv, env, file_actions=actions)
            finally:
                os.close(null)
        finally:
            os.close(write_end)  # the child's copy alone keeps the pipe open: EOF when git exits
    except BaseException:
        os.close(read_end)
        raise
    chunks: list[bytes] = []
    try:
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    finally:
        # closed before the wait: a git still writing (the read was interrupted) gets EPIPE and
        # exits instead of blocking on a full pipe that nobody reads
        os.close(read_end)
        status = os.waitpid(pid, 0)[1]
    if os.waitstatus_to_exitcode(status) != 0:
        raise OSError("git ls-files failed")
    return b"".join(chunks)
