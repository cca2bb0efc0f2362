"""The confined file layer: reads and writes of repository-controlled paths never leave the work tree.

A repository anyone can clone can commit symlinks. A committed ``.reviews -> ../../outside`` or
``运行日志.jsonl -> ~/.ssh/id_ed25519`` must not make a command print, append to, create or
replace a file outside the work tree. Every read for display (or for a decision) of a path the
repository controls, and every write under the work tree, goes through here. The rule, the same for
reads and writes:

* **parents** (every folder between the root and the file): a symlink is followed only when its
  real target is inside the root's real path (a monorepo's ``specs -> docs/specs`` keeps working);
  a parent symlink that leaves the root, or that dangles, is refused. ``..`` is taken physically
  (after any symlink before it) and refused when it climbs out of the root.
* **the final component** is never a symlink, wherever it points (inside, outside or nowhere).
  That is the only rule the kernel can hold without a race (``O_NOFOLLOW``): a target checked
  "inside" could be retargeted between the check and the open. Reads open with ``O_NOFOLLOW`` and
  read only a regular file (``fstat`` on the descriptor, ``toolkit.infra.boundedio``); appends and
  locks open with ``O_NOFOLLOW``; atomic writes rename onto the checked name (a rename replaces a
  symlink, it never writes through one).
* folders that do not exist yet are created one at a time under the checked real parent
  (``mkdirs``), so no component of a new path can be a symlink.

Every refusal is ``PathOutsideRepository``: code ``PATH_OUTSIDE_REPOSITORY``, exit 2 (a hostile
repository layout is invalid input, as the capsule and lineage writers always treated it). The
message names what was refused in our words (``the handoff file``), never the path or the link's
target. The threat is a committed layout, not a process racing the command on the same machine.

Standard library only (``cm-log-event`` and the privacy hook import it on their hot path). The
writes that go through ``toolkit.infra.store`` (atomic replace, exclusive create, lock) are in
``toolkit.infra.confinedwrite``, so that loading this module never loads the store.
"""

from __future__ import annotations

import errno
import os
import stat

from toolkit.core.errors import InvalidInput
from toolkit.infra.boundedio import read_regular, read_text_bounded

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

CODE = "PATH_OUTSIDE_REPOSITORY"
_OPEN_FLAGS = os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class PathOutsideRepository(InvalidInput):
    """A repository-controlled path that leads outside the work tree, or whose last part is a symlink."""

    def __init__(self, what: str, why: str = "leads outside the repository through a symlink") -> None:
        super().__init__(CODE, f"{what} {why}; nothing was read or written there")


def _inside(real: str, root: str) -> bool:
    return real == root or root == "/" or real.startswith(root + "/")


def real_root(root: str | os.PathLike[str]) -> str:
    """The real (symlink-free) absolute path of ``root``."""
    return os.path.realpath(os.path.abspath(root))


def _relative_parts(root: str, given: str, root_real: str) -> list[str]:
    """The components of ``given`` below ``root``: relative to it, or absolute under it (lexically)."""
    if not os.path.isabs(given):
        return given.split("/")
    for base in (os.path.abspath(root), root_real):
        base = base.rstrip("/") or "/"
        if given == base:
            return []
        prefix = base if base == "/" else base + "/"
        if given.startswith(prefix):
            return given[len(prefix) :].split("/")
    # an absolute path lexically elsewhere: its folder may still reach the root through symlinks
    # (the last component is kept as written, so a symlink there is still seen as one)
    folder, name = os.path.split(given.rstrip("/") or "/")
    real = os.path.realpath(folder)
    if not _inside(real, root_real):
        raise PathOutsideRepository("the path", "is outside the repository")
    return ([] if real == root_real else os.path.relpath(real, root_real).split("/")) + [name]


def _walk(root_real: str, parts: list[str], what: str) -> str:
    """The real path of the folder ``parts`` (every part a parent), checked against ``root_real``.

    An existing symlink is resolved and must stay inside; a missing part ends the physical walk
    (nothing below a missing folder can be a symlink) and the rest is joined lexically.
    """
    current = root_real
    missing = False
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            if not _inside(current, root_real):
                raise PathOutsideRepository(what, "climbs out of the repository")
            missing = False  # back above a missing folder: the parts after this are looked at again
            continue
        candidate = current.rstrip("/") + "/" + part
        if missing:
            current = candidate
            continue
        try:
            info = os.lstat(candidate)
        except OSError:  # missing, or a file where a folder should be (ENOTDIR): the write says so
            missing = True
            current = candidate
            continue
        current = _followed_link(candidate, root_real, what) if stat.S_ISLNK(info.st_mode) else candidate
    return current


def _followed_link(link: str, root_real: str, what: str) -> str:
    """The real folder a symlink on the way leads to: it must stay inside the root and be a folder."""
    real = os.path.realpath(link)
    if not _inside(real, root_real):
        raise PathOutsideRepository(what)
    if not os.path.isdir(real):
        raise PathOutsideRepository(what, "passes through a symlink to nothing")
    return real


def resolve_inside(root: str | os.PathLike[str], path: str | os.PathLike[str], what: str) -> str:
    """The checked absolute path of ``path`` (relative to ``root``, or absolute under it).

    Its parent is the real path (parent symlinks resolved, each inside the root); its last
    component is not a symlink (absent is fine). ``PathOutsideRepository`` otherwise.
    """
    root_real = real_root(root)
    parts = _relative_parts(os.fspath(root), os.fspath(path), root_real)
    while parts and parts[-1] in ("", "."):
        parts.pop()
    if not parts:
        return root_real
    name = parts[-1]
    if name == "..":
        raise PathOutsideRepository(what, "climbs out of the repository")
    parent = _walk(root_real, parts[:-1], what)
    target = parent.rstrip("/") + "/" + name
    try:
        mode = os.lstat(target).st_mode
    except OSError:  # absent (or unreadable): the caller's open decides
        return target
    if stat.S_ISLNK(mode):
        raise PathOutsideRepository(what, "is a symlink, which is never followed here")
    return target


def resolve_dir(root: str | os.PathLike[str], path: str | os.PathLike[str], what: str) -> str:
    """The real path of the folder ``path``: like a parent, it may be a symlink that stays inside."""
    root_real = real_root(root)
    return _walk(root_real, _relative_parts(os.fspath(root), os.fspath(path), root_real), what)


def mkdirs(root: str | os.PathLike[str], path: str | os.PathLike[str], what: str) -> str:
    """Create the folder ``path`` and its missing parents, one at a time; returns its real path.

    Each folder is created under the checked real path of its parent, so none of them can be a
    symlink; one that appears meanwhile (another process) is judged like any existing part.
    """
    root_real = real_root(root)
    parts = _relative_parts(os.fspath(root), os.fspath(path), root_real)
    for index, part in enumerate(parts):
        if part in ("", ".", ".."):
            continue
        current = _walk(root_real, parts[: index + 1], what)
        if os.path.isdir(current):
            continue
        try:
            os.mkdir(current)
        except FileExistsError:
            pass
    return _walk(root_real, parts, what)


def read_bytes(
    root: str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    what: str,
    limit: int,
    missing_ok: bool = False,
    allow_over: bool = False,
) -> bytes | None:
    """A regular file's bytes (at most ``limit``; ``None`` when absent and ``missing_ok``).

    ``boundedio.FileRefused`` for a FIFO, a directory, an oversized file and the like;
    ``PathOutsideRepository`` for the layout.
    """
    target = resolve_inside(root, path, what)
    return read_regular(
        target, limit=limit, what=what, follow_symlinks=False, missing_ok=missing_ok, allow_over=allow_over
    )


def read_text(
    root: str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    what: str,
    limit: int,
    missing_ok: bool = False,
) -> str | None:
    """``boundedio.read_text_bounded`` after the layout check (``NOT_UTF8`` for other text)."""
    target = resolve_inside(root, path, what)
    return read_text_bounded(target, limit=limit, what=what, follow_symlinks=False, missing_ok=missing_ok)


def exists(root: str | os.PathLike[str], path: str | os.PathLike[str], *, what: str) -> bool:
    """Whether ``path`` exists, after the layout check (a symlink in its place is refused)."""
    return os.path.lexists(resolve_inside(root, path, what))


def target_for_write(root: str | os.PathLike[str], path: str | os.PathLike[str], *, what: str) -> str:
    """Check ``path`` and create its missing parent folders; returns the checked path to write."""
    target = resolve_inside(root, path, what)
    mkdirs(root, os.path.dirname(target), what)
    return target


def open_append(
    root: str | os.PathLike[str], path: str | os.PathLike[str], *, what: str, mode: int = 0o644
) -> int:
    """A descriptor for appending to the regular file ``path`` (created when absent, never a symlink)."""
    target = target_for_write(root, path, what=what)
    try:
        fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_APPEND | _OPEN_FLAGS, mode)
    except OSError:
        if os.path.islink(target):  # swapped in after the check: O_NOFOLLOW refused it (ELOOP)
            raise PathOutsideRepository(what, "is a symlink, which is never followed here") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device in its place is never written
            raise OSError(errno.EINVAL, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def is_under(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (made absolute) is written under ``root`` or its real path, lexically."""
    given = os.path.abspath(os.fspath(path))
    for base in {os.path.abspath(root), real_root(root)}:
        if base == "/" or given == base or given.startswith(base.rstrip("/") + "/"):
            return True
    return False


def check_named_file(
    path: str | os.PathLike[str], what: str, *, root: str | os.PathLike[str] | None = None
) -> None:
    """A file named on the command line may be anywhere; one that lies in a work tree (``root``, the
    current one, or the nearest above it as written) must stay in it: no folder on its way, and no
    symlink in its place, may lead outside that work tree (a symlink to another file of it is followed)."""
    from toolkit.infra.gitlocation import find_git

    absolute = os.path.abspath(os.fspath(path))
    tree: str | None
    if root is not None and is_under(root, absolute):
        tree = os.fspath(root)
    else:
        here = find_git(os.getcwd())
        inside_here = here is not None and is_under(here.workdir, absolute)
        tree = here.workdir if here is not None and inside_here else work_tree_of(absolute)
    if tree is None:
        return
    root_real = real_root(tree)
    _walk(root_real, _relative_parts(tree, os.path.dirname(absolute), root_real), what)
    if os.path.islink(absolute) and not _inside(os.path.realpath(absolute), root_real):
        raise PathOutsideRepository(what)


def root_for(directory: str | os.PathLike[str]) -> str:
    """The root that files under a folder named on the command line are confined to.

    The work tree of the current directory when the folder is written under it (a driver runs
    from the project); else the nearest work tree above the folder as written; else the folder.
    """
    from toolkit.infra.gitlocation import find_git

    absolute = os.path.abspath(os.fspath(directory))
    here = find_git(os.getcwd())
    if here is not None:
        tree = here.workdir.rstrip("/") or "/"
        if absolute == tree or absolute.startswith(tree + "/") or tree == "/":
            return tree
    return work_tree_of(absolute) or absolute


def work_tree_of(path: str | os.PathLike[str]) -> str | None:
    """The work tree holding ``path``: the nearest folder with a ``.git`` entry, walking up the
    path as written (not resolved: a symlinked folder inside must still be judged against it)."""
    current = os.path.abspath(os.fspath(path))
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
