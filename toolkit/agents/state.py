"""What the session hooks read from the repository: its root and HEAD, the handoff, the capsules.

Every repository file is read through the confined layer (``toolkit.infra.confined``): a committed
symlink that leaves the work tree, or stands in a file's place, is never followed. Bounded sizes
throughout; a capsule is used only when its schema holds and its hash is its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from toolkit.cm.handoff import MAX_HANDOFF_BYTES
from toolkit.core.errors import InvalidInput
from toolkit.infra import confined
from toolkit.infra.boundedio import FileRefused
from toolkit.infra.gitcli import resolve_commit
from toolkit.infra.gitlocation import find_git
from toolkit.infra.store import Layout
from toolkit.runtime.capsule import seal
from toolkit.runtime.capsule_rules import is_capsule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TypeGuard

    from toolkit.runtime.op_types import ContextCapsule

HANDOFF_REL = ".reviews/session-handoff.md"
CAPSULES_GLOB_ROOT = ".workgroup/workgroups"
MAX_CAPSULE_FILES = 256
MAX_CAPSULE_BYTES = 1_048_576
DEFAULT_WORKGROUP = "agents"
OWN_RECORDS = (".workgroup/", ".reviews/")  # the toolkit's records: not the session's own work


def repo_root(cwd: str | None) -> str | None:
    """The work tree holding ``cwd`` (the payload's, else the process's), or None outside one."""
    base = cwd if cwd and os.path.isabs(cwd) and os.path.isdir(cwd) else os.getcwd()
    location = find_git(base)
    return None if location is None else location.workdir


def layout(root: str) -> Layout:
    """The toolkit's paths of the work tree ``root`` (committed state and the git common dir's)."""
    location = find_git(root)
    common = location.common_dir if location is not None else os.path.join(root, ".git")
    return Layout(Path(root), Path(common))


def head_sha(root: str) -> str | None:
    """HEAD's full SHA, or None on an unborn branch (``UNKNOWN_REVISION`` and the like raise)."""
    try:
        return resolve_commit(Path(root), "HEAD")
    except InvalidInput as exc:
        if exc.code == "UNBORN_HEAD":
            return None
        raise


def session_task_id(agent: str, session_id: str | None) -> str:
    """The capsule task id of one agent session: a digest of its id, never the id itself."""
    digest = hashlib.sha256(
        f"workgroup-capsule\x1f{agent}\x1f{session_id or ''}".encode("utf-8", "surrogatepass")
    ).hexdigest()
    return f"{agent}-work-{digest[:12]}"  # "-session-<hex>" reads as a provider session id


def read_handoff(root: str) -> str | None:
    """The handoff's text (``None`` when absent); ``PathOutsideRepository`` / ``FileRefused`` raise."""
    raw = confined.read_bytes(
        root,
        os.path.join(root, HANDOFF_REL),
        what="the handoff file",
        limit=MAX_HANDOFF_BYTES,
        missing_ok=True,
    )
    return None if raw is None else raw.decode("utf-8", errors="replace")


class Capsule:
    """A stored capsule: its ``data``, repository-relative ``rel`` and modification time."""

    __slots__ = ("data", "mtime", "rel")

    def __init__(self, data: ContextCapsule, rel: str, mtime: float) -> None:
        self.data = data
        self.rel = rel
        self.mtime = mtime


def _sound(data: object) -> TypeGuard[ContextCapsule]:
    """A sealed capsule whose schema holds and whose hash is its own."""
    return is_capsule(data) and seal(data).get("capsule_hash") == data.get("capsule_hash")


def stored_capsules(root: str) -> list[Capsule]:
    """The sound capsules under ``.workgroup/workgroups/*/capsules/`` (at most ``MAX_CAPSULE_FILES``
    looked at; a folder or file that is a symlink, or unreadable, is skipped)."""
    found: list[Capsule] = []
    try:
        top = confined.resolve_dir(root, CAPSULES_GLOB_ROOT, "the workgroups folder")
    except confined.PathOutsideRepository:
        return found
    for looked, (group, name) in enumerate(_capsule_files(top), 1):
        if looked > MAX_CAPSULE_FILES:
            return found
        capsule = _read_capsule(root, os.path.join(top, group, "capsules"), group, name)
        if capsule is not None:
            found.append(capsule)
    return found


def _capsule_files(top: str) -> Iterator[tuple[str, str]]:
    """(workgroup, file name) of each ``*.json`` under ``<top>/<workgroup>/capsules/``, by name; a
    workgroup or capsules folder that is a symlink is skipped."""
    for group in _names(top):
        folder = os.path.join(top, group, "capsules")
        if os.path.islink(os.path.join(top, group)) or os.path.islink(folder):
            continue
        for name in _names(folder):
            if name.endswith(".json"):
                yield group, name


def _read_capsule(root: str, folder: str, group: str, name: str) -> Capsule | None:
    """The capsule in ``folder/name`` when it can be read through the confined layer, parses and is
    sound; None otherwise."""
    rel = f"{CAPSULES_GLOB_ROOT}/{group}/capsules/{name}"
    try:
        raw = confined.read_bytes(root, rel, what="a capsule", limit=MAX_CAPSULE_BYTES)
        data: object = json.loads(raw or b"")
        mtime = os.lstat(os.path.join(folder, name)).st_mtime
    except (confined.PathOutsideRepository, FileRefused, OSError, ValueError, RecursionError):
        return None
    return Capsule(data, rel, mtime) if _sound(data) else None


def _names(folder: str) -> list[str]:
    try:
        return sorted(
            entry.name for entry in os.scandir(folder) if entry.is_dir() or entry.name.endswith(".json")
        )
    except OSError:
        return []


def capsule_at_head(
    capsules: list[Capsule], head: str | None, prefer_task: str | None = None
) -> Capsule | None:
    """The capsule bound to ``head``: this session's own first, else the newest."""
    bound = [c for c in capsules if head is not None and c.data.get("checkpoint_sha") == head]
    if not bound:
        return None
    own = [c for c in bound if c.data.get("task_id") == prefer_task]
    return max(own or bound, key=lambda c: (c.mtime, c.rel))


def changed_files(root: str, limit: int = 64) -> list[str]:
    """Paths with uncommitted changes (modified, added, untracked; not ignored), repository-relative."""
    output = _porcelain_status(root)
    if output is None:
        return []
    return _changed_paths(output.decode("utf-8", "surrogateescape").split("\0"), limit)


def _porcelain_status(root: str) -> bytes | None:
    """The output of ``git status --porcelain=v1 -z`` with every untracked file, or None when git
    cannot be run or fails."""
    try:
        proc = subprocess.run(
            ["git", "status", "--porcelain=v1", "-z", "--untracked-files=all"],
            cwd=root,
            capture_output=True,
            check=False,
            stdin=subprocess.DEVNULL,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _changed_paths(entries: list[str], limit: int) -> list[str]:
    """The first ``limit`` distinct paths of the status entries that are not deleted and not the
    toolkit's own records (the source name of a rename or copy is skipped)."""
    paths: list[str] = []
    skip = False
    for entry in entries:
        if skip:  # the source name of a rename
            skip = False
            continue
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        skip = "R" in status or "C" in status
        if "D" in status or path in paths or path.startswith(OWN_RECORDS):
            continue
        paths.append(path)
        if len(paths) >= limit:
            break
    return paths
