"""The repository reads of ``route`` (and ``dispatch``, which routes): the writer registry, its
lookup index and the tracked files that owned globs match.

Part of the runtime's adapter (``toolkit.runtime.adapter``): ``RuntimeContext`` loads this module
when an operation first asks for one of these reads, so the operations that never read the
repository (budget, rollout, telemetry ...) do not pay for git location, the bounded reader or
the index code at start-up. Standard library only; every error is a ``RuntimeOpError``.
"""

from __future__ import annotations

import os
import zlib

from toolkit.core.owners_index import INDEX_FILE, OwnersIndex, decode_index
from toolkit.core.ownership import OwnershipPathError, check_globs, expand_globs
from toolkit.infra.boundedio import FileRefused, open_checked, read_regular
from toolkit.infra.gitlocation import MAX_REGISTRY_BYTES, find_git, read_owners_registry, tracked_files
from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Sequence

_CHUNK = 1 << 18  # the registry is checksummed a chunk at a time: no copy of the whole file


def writer_registry(cwd: str) -> tuple[str, object] | None:
    """(work tree, decoded registry file) of the repository containing ``cwd``, or None outside a
    repository; a missing file reads as ``{"writers": []}``.

    Raises ``ENVIRONMENT_ERROR`` when the file cannot be read as bounded JSON.
    """
    location = find_git(cwd)
    if location is None:
        return None
    try:
        data = read_owners_registry(location.owners_registry, {"writers": []})
    except FileRefused:
        raise RuntimeOpError("ENVIRONMENT_ERROR") from None
    return location.workdir, data


def writer_registry_index(cwd: str) -> tuple[str, OwnersIndex] | None:
    """(work tree, registry index) of the repository containing ``cwd`` while the index is bound
    to the registry's exact bytes (size, CRC-32, mtime, inode); None when there is no index to
    trust: outside a repository, no registry or no index, an index that is a symlink, torn,
    altered or built from other bytes (the registry is then read in full, with its own errors)."""
    location = find_git(cwd)
    if location is None:
        return None
    try:
        raw_index = read_regular(
            os.path.join(location.local_state, INDEX_FILE),
            limit=MAX_REGISTRY_BYTES,
            what="the writer registry index",
            follow_symlinks=False,
            missing_ok=True,
        )
        index = None if raw_index is None else decode_index(raw_index)
        if index is None:
            return None
        digest = _registry_digest(location.owners_registry)
    except (FileRefused, OSError):
        return None
    if digest is None or not index.bound_to_digest(*digest):
        return None
    return location.workdir, index


def _registry_digest(path: str) -> tuple[int, int, int, int] | None:
    """(size, CRC-32, st_mtime_ns, st_ino) of the registry file (never a symlink), read in
    chunks: the checksum needs every byte, not one buffer holding them all (at 10,000 leases that
    buffer's allocation cost more than the reading). None when absent or over the registry cap."""
    opened = open_checked(path, "the writer registry", follow_symlinks=False, missing_ok=True)
    if opened is None:
        return None
    fd, info = opened
    size = crc = 0
    try:
        while chunk := os.read(fd, _CHUNK):
            size += len(chunk)
            if size > MAX_REGISTRY_BYTES:
                return None
            crc = zlib.crc32(chunk, crc)
    finally:
        os.close(fd)
    return size, crc, info.st_mtime_ns, info.st_ino


def owned_glob_matches(globs: Sequence[str], root: str) -> list[str]:
    """The tracked files of the repository containing ``root`` that ``globs`` match, relative to
    ``root``'s real path (a match outside it is refused later, by the router).

    Raises ``INVALID_OWNERSHIP_GLOB`` for a bad glob, ``ENVIRONMENT_ERROR`` when git fails.
    """
    try:
        check_globs(list(globs))
    except OwnershipPathError:
        raise RuntimeOpError("INVALID_OWNERSHIP_GLOB") from None
    # the index, asked of `git ls-files`: pygit2's import alone costs more than the whole call
    location = find_git(root)
    if location is None:
        raise RuntimeOpError("ENVIRONMENT_ERROR")
    try:
        files = tracked_files(location.workdir)
    except OSError:
        raise RuntimeOpError("ENVIRONMENT_ERROR") from None
    matched = expand_globs(globs, files)
    repo_root = location.workdir
    real_root = os.path.realpath(root)
    return [
        os.path.relpath(os.path.join(repo_root, path), real_root).replace(os.sep, "/") for path in matched
    ]
