"""The persistent active-writer registry: who may write which paths, under a lease.

One JSON file in the local state dir (``Layout.owners_registry``, inside the git common dir, so
every worktree shares it)::

    {"schema": "workgroup.owners/v1",
     "writers": [{"lineage_id", "owned_files", "owned_globs", "resolved_owned_files",
                  "acquired_at", "lease_expires_at"}]}

Every change happens under ``file_lock(layout.lock("owners"))`` and is written atomically, so two
processes can never both hold overlapping scopes, and a reader without the lock (the runtime)
sees the old file or the new one. Expired leases are dropped on every read and write.

Beside it, ``owners.index`` (``toolkit.core.owners_index``): the owned paths sorted for lookup,
written after each registry write and bound to its exact bytes, so ``workgroup runtime route``
does not decode and validate every entry. ``list_leases`` rebuilds it after a hand edit.

Stored paths are exactly what the holder gave (repository-relative); aliases, case and NFKC are
folded only to compare. Owned globs are expanded against the tracked files at acquire time
(``resolved_owned_files``) and also matched, with pathspec, against the other side's literal
paths, so a new, untracked file under a held glob conflicts too. Two globs conflict when their
literal directory prefixes overlap (conservative: a false conflict serializes, a missed one
corrupts).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypedDict

from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused
from toolkit.core.owners_index import INDEX_FILE, decode_index, registry_binding
from toolkit.core.owners_index_encode import encode_index
from toolkit.core.ownership import (
    OverlapIndex,
    check_globs,
    expand_globs,
    glob_literal_prefix,
    glob_spec,
    overlaps,
)
from toolkit.core.timefmt import format_utc, parse_rfc3339
from toolkit.infra.boundedio import NOT_A_FILE, TOO_DEEP, TOO_LARGE, FileRefused, loads_bounded, read_regular
from toolkit.infra.clock import now_utc
from toolkit.infra.gitlocation import MAX_REGISTRY_BYTES, read_owners_registry
from toolkit.infra.paths import Canonicalizer
from toolkit.infra.store import Layout, atomic_write, file_lock, safe_segment

SCHEMA = "workgroup.owners/v1"
DEFAULT_LEASE_MINUTES = 20  # the seed's warm_lease_minutes
MAX_LEASE_MINUTES = 7 * 24 * 60
MAX_PATHS = 10_000


class OwnershipConflict(Refused):
    """Acquiring would overlap a live lease (exit 1); names the holder and its path."""

    def __init__(self, holder: str, path: str) -> None:
        super().__init__("WRITER_OWNERSHIP_CONFLICT", f"the scope overlaps the lease of {holder} on {path}")
        self.holder = holder
        self.path = path


class LeaseRow(TypedDict):
    """One writer's row in the registry file (and in ``owners`` JSON output), as ``Lease.to_json`` builds it."""

    lineage_id: str
    owned_files: list[str]
    owned_globs: list[str]
    resolved_owned_files: list[str]
    acquired_at: str
    lease_expires_at: str


@dataclass(frozen=True)
class Lease:
    lineage_id: str
    owned_files: tuple[str, ...]
    owned_globs: tuple[str, ...]
    resolved_owned_files: tuple[str, ...]
    acquired_at: str
    lease_expires_at: str

    def to_json(self) -> LeaseRow:
        return {
            "lineage_id": self.lineage_id,
            "owned_files": list(self.owned_files),
            "owned_globs": list(self.owned_globs),
            "resolved_owned_files": list(self.resolved_owned_files),
            "acquired_at": self.acquired_at,
            "lease_expires_at": self.lease_expires_at,
        }


def _corrupt() -> EnvironmentFailure:
    return EnvironmentFailure(
        "OWNERS_REGISTRY_CORRUPT",
        "the writer registry in the local state dir is not valid; "
        "inspect or remove it (workgroup/owners.json)",
    )


def _str_tuple(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _corrupt()
    return tuple(value)


def _lease_from_json(row: object) -> Lease:
    if not isinstance(row, dict):
        raise _corrupt()
    lineage_id = row.get("lineage_id")
    acquired, expires = row.get("acquired_at"), row.get("lease_expires_at")
    if not isinstance(lineage_id, str) or parse_rfc3339(acquired) is None or parse_rfc3339(expires) is None:
        raise _corrupt()
    return Lease(
        lineage_id=lineage_id,
        owned_files=_str_tuple(row.get("owned_files", [])),
        owned_globs=_str_tuple(row.get("owned_globs", [])),
        resolved_owned_files=_str_tuple(row.get("resolved_owned_files", [])),
        acquired_at=str(acquired),
        lease_expires_at=str(expires),
    )


def _read(layout: Layout) -> list[Lease]:

    try:
        data = read_owners_registry(str(layout.owners_registry), {"schema": SCHEMA, "writers": []})
    except FileRefused as exc:
        if exc.code in (NOT_A_FILE, TOO_LARGE, TOO_DEEP) or exc.code.startswith("INVALID"):
            raise _corrupt() from None
        raise EnvironmentFailure("OWNERS_REGISTRY_UNREADABLE", "the writer registry cannot be read") from None
    return _leases_from(data)


def _leases_from(data: object) -> list[Lease]:
    if (
        not isinstance(data, dict)
        or data.get("schema") != SCHEMA
        or not isinstance(data.get("writers"), list)
    ):
        raise _corrupt()
    return [_lease_from_json(row) for row in data["writers"]]


def _write(layout: Layout, leases: Sequence[Lease]) -> None:
    """The registry, then its lookup index bound to the bytes just written (under the lock).

    A crash between the two leaves the old index bound to the old bytes: never trusted, the
    runtime reads the registry in full until the next write.
    """
    rows = [lease.to_json() for lease in leases]
    data = (json.dumps({"schema": SCHEMA, "writers": rows}, indent=2, ensure_ascii=False) + "\n").encode()
    atomic_write(layout.owners_registry, data)
    _write_index(layout, rows, data)


def _write_index(layout: Layout, rows: list[LeaseRow], data: bytes) -> None:

    index_path = layout.local / INDEX_FILE
    try:
        before = os.stat(layout.owners_registry, follow_symlinks=False)
        written = read_regular(
            layout.owners_registry,
            limit=MAX_REGISTRY_BYTES,
            what="the writer registry",
            follow_symlinks=False,
        )
        after = os.stat(layout.owners_registry, follow_symlinks=False)
        same = (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
        encoded = (
            encode_index(rows, registry_binding(data, after.st_mtime_ns, after.st_ino))
            if same and written == data
            else None
        )
        if encoded is None:  # not the bytes we wrote: no index (the runtime reads the registry)
            index_path.unlink(missing_ok=True)
            return
        if index_path.is_symlink():
            index_path.unlink()  # our own state file: a symlink there is replaced, never followed
        atomic_write(index_path, encoded)
    except (OSError, FileRefused):
        # the lease is written; an index left behind is bound to older bytes and not trusted
        return


def _refresh_index(layout: Layout) -> None:
    """Under the lock, when nothing is written: a registry whose index is missing or bound to
    other bytes (a hand edit, a crash between the two writes) gets one again, built from the bytes
    read here once they validate as ``_read`` validates them. Anything else leaves it as it is."""

    registry, index_path = layout.owners_registry, layout.local / INDEX_FILE
    try:
        read = _steady_registry_bytes(registry)
        if read is None:
            return
        raw, after = read
        if _index_bound(index_path, raw, after):
            return
        leases = _leases_from(loads_bounded(raw, what="the writer registry", strict=False))
        encoded = encode_index(
            [lease.to_json() for lease in leases], registry_binding(raw, after.st_mtime_ns, after.st_ino)
        )
        if encoded is None:
            return
        if index_path.is_symlink():
            index_path.unlink()
        atomic_write(index_path, encoded)
    except (OSError, FileRefused, EnvironmentFailure):
        return  # not valid, or not readable: no index, and the readers report the registry


def _steady_registry_bytes(registry: Path) -> tuple[bytes, os.stat_result] | None:
    """The registry's bytes and its status after the read, or None when it is missing or was
    replaced or changed while it was read."""
    before = os.stat(registry, follow_symlinks=False)
    raw = read_regular(registry, limit=MAX_REGISTRY_BYTES, what="the writer registry", follow_symlinks=False)
    after = os.stat(registry, follow_symlinks=False)
    if raw is None or (before.st_ino, before.st_mtime_ns) != (after.st_ino, after.st_mtime_ns):
        return None
    return raw, after


def _index_bound(index_path: Path, raw: bytes, after: os.stat_result) -> bool:
    """The index on disk decodes and is bound to exactly these registry bytes (a symlink or a
    non-file there is not an index)."""
    try:
        old = read_regular(
            index_path, limit=MAX_REGISTRY_BYTES, what="the index", follow_symlinks=False, missing_ok=True
        )
    except FileRefused:
        return False  # a symlink or not a file: replaced by the caller
    current = None if old is None else decode_index(old)
    return current is not None and current.bound_to(raw, after.st_mtime_ns, after.st_ino)


def _live(leases: Sequence[Lease], now: datetime) -> list[Lease]:
    out = []
    for lease in leases:
        expires = parse_rfc3339(lease.lease_expires_at)
        if expires is not None and expires > now:
            out.append(lease)
    return out


def _find_conflict(
    layout: Layout,
    proposed_files: Sequence[str],
    proposed_globs: Sequence[str],
    proposed_resolved: Sequence[str],
    held: Sequence[Lease],
    canon: Canonicalizer,
) -> tuple[str, str] | None:
    """(holder, holder's stored path or glob) of the first live lease overlapping the proposal:
    path against path, then the proposed paths against held globs, then the proposed globs
    against held paths and globs."""
    proposed_literal = list(proposed_files) + list(proposed_resolved)
    return (
        _path_conflict(proposed_literal, held, canon)
        or _held_glob_conflict([canon.canonical(path).rel for path in proposed_literal], held)
        or (_proposed_glob_conflict(proposed_globs, held, canon) if proposed_globs else None)
    )


def _path_conflict(
    proposed: list[str], held: Sequence[Lease], canon: Canonicalizer
) -> tuple[str, str] | None:
    index = OverlapIndex()
    by_id = {lease.lineage_id: lease for lease in held}
    for lease in held:
        index.add_all(canon.keys(lease.owned_files + lease.resolved_owned_files), lease.lineage_id)
    found = index.first_overlap(canon.keys(proposed))
    if found is None:
        return None
    holder, held_key = found
    paths = by_id[holder].owned_files + by_id[holder].resolved_owned_files
    # name the path as the holder stored it, never the folded key
    return holder, next((p for p in paths if canon.key(p) == held_key), held_key)


def _held_glob_conflict(proposed_rel: list[str], held: Sequence[Lease]) -> tuple[str, str] | None:
    for lease in held:
        if lease.owned_globs:
            spec = glob_spec(lease.owned_globs)
            if any(rel and spec.match_file(rel) for rel in proposed_rel):  # type: ignore[attr-defined]
                return lease.lineage_id, ", ".join(lease.owned_globs)
    return None


def _proposed_glob_conflict(
    proposed_globs: Sequence[str], held: Sequence[Lease], canon: Canonicalizer
) -> tuple[str, str] | None:
    spec = glob_spec(proposed_globs)
    mine = [glob_literal_prefix(g).lower() for g in proposed_globs]
    for lease in held:
        for path in lease.owned_files + lease.resolved_owned_files:
            rel = canon.canonical(path).rel
            if rel and spec.match_file(rel):  # type: ignore[attr-defined]
                return lease.lineage_id, path
        for glob in lease.owned_globs:
            theirs = glob_literal_prefix(glob).lower()
            if any(_prefix_overlap(theirs, prefix) for prefix in mine):
                return lease.lineage_id, glob
    return None


def _prefix_overlap(left: str, right: str) -> bool:
    return left == "" or right == "" or overlaps(left, right)


def acquire(
    layout: Layout,
    lineage_id: str,
    owned_files: Sequence[str],
    owned_globs: Sequence[str] = (),
    *,
    now: datetime,
    minutes: int = DEFAULT_LEASE_MINUTES,
    tracked_files: Sequence[str] | None = None,
) -> Lease:
    """Take a lease on the scope, or raise ``OwnershipConflict`` naming the live holder.

    The same lineage acquiring again renews and replaces its own lease.
    """
    safe_segment(lineage_id, "lineage_id")
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= MAX_LEASE_MINUTES:
        raise InvalidInput("INVALID_LEASE_MINUTES", f"the lease must be 1..{MAX_LEASE_MINUTES} minutes")
    canon = Canonicalizer(str(layout.workdir))
    files, globs, resolved = _checked_scope(canon, owned_files, owned_globs, tracked_files)
    lease = Lease(
        lineage_id=lineage_id,
        owned_files=tuple(dict.fromkeys(files)),
        owned_globs=tuple(dict.fromkeys(globs)),
        resolved_owned_files=tuple(resolved),
        acquired_at=format_utc(now),
        lease_expires_at=format_utc(now + timedelta(minutes=minutes)),
    )
    with file_lock(layout.lock("owners")):
        held = [other for other in _live(_read(layout), now) if other.lineage_id != lineage_id]
        conflict = _find_conflict(
            layout, lease.owned_files, lease.owned_globs, lease.resolved_owned_files, held, canon
        )
        if conflict is not None:
            raise OwnershipConflict(*conflict)
        _write(layout, [*held, lease])
    return lease


def _checked_scope(
    canon: Canonicalizer,
    owned_files: Sequence[str],
    owned_globs: Sequence[str],
    tracked_files: Sequence[str] | None,
) -> tuple[list[str], list[str], list[str]]:
    """(files, globs, tracked files the globs match) of a proposed scope, validated before
    anything is locked or written: valid globs, at most MAX_PATHS entries, valid paths
    (INVALID_OWNERSHIP_PATH, exit 2), and at least one path or glob, in that order."""
    files = list(owned_files)
    globs = check_globs(list(owned_globs))
    if len(files) + len(globs) > MAX_PATHS:
        raise InvalidInput("TOO_MANY_PATHS", f"at most {MAX_PATHS} owned paths per lease")
    for path in files:
        canon.key(path)
    resolved = expand_globs(globs, tracked_files or []) if globs else []
    if not files and not globs:
        raise InvalidInput("WRITER_SCOPE_REQUIRED", "a writer must own at least one path or glob")
    return files, globs, resolved


def release(layout: Layout, lineage_id: str, *, now: datetime | None = None) -> bool:
    """Drop the lease of ``lineage_id``; True when it held one. Expired leases go too."""
    safe_segment(lineage_id, "lineage_id")
    if not layout.owners_registry.exists():
        return False
    with file_lock(layout.lock("owners")):
        leases = _read(layout)
        kept = [
            lease
            for lease in (leases if now is None else _live(leases, now))
            if lease.lineage_id != lineage_id
        ]
        released = any(lease.lineage_id == lineage_id for lease in leases)
        if released or len(kept) != len(leases):
            _write(layout, kept)
    return released


def release_lineage(layout: Layout, lineage_id: str) -> bool:
    """Called when a lineage check invalidates the holder: its lease is released."""

    return release(layout, lineage_id, now=now_utc())


def list_leases(layout: Layout, *, now: datetime) -> list[Lease]:
    """Live leases; expired ones are dropped from the file as well."""
    if not os.path.lexists(layout.owners_registry):
        return []  # a read creates nothing (no lock file, no state dir); a dangling link is read (refused)
    with file_lock(layout.lock("owners")):
        leases = _read(layout)
        live = _live(leases, now)
        if len(live) != len(leases):
            _write(layout, live)
        else:
            _refresh_index(layout)
    return live
