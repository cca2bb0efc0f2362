"""The pre-commit hook's memory of records it already verified (``<git common dir>/workgroup/verify-cache.json``).

An entry says: the record at this path, with this content (the digest of its parsed JSON), passed
every rule that depends on the record alone, and its checkpoint is an ancestor of ``head``.
A later run trusts an entry only when all of these still hold:

* the file is ours: a regular file under the common dir's ``workgroup/`` folder, neither it nor
  the folder a symlink; bounded, valid JSON of this shape. Anything else reads as empty;
* ``rules``: the same toolkit version and the same rule modules (size and mtime of each), so an
  upgraded or edited rule set recomputes everything;
* ``workdir``: the same work tree (worktrees share the common dir);
* ``head``: the HEAD proven then is the current one or an ancestor of it (``git merge-base
  --is-ancestor``). An ancestor of an ancestor is an ancestor, so every cached checkpoint still
  is; a history rewrite that drops that HEAD invalidates the whole cache.

What is never cached: artifact checks (the artifact can change without the record), parent
lineage and run-id uniqueness (they depend on the other records), and any record with a finding.
CI does not use this file: ``workgroup verify`` always recomputes (it must not trust a cache it
did not build); only ``workgroup-verify-hook`` reads it, and ``--no-cache`` turns it off there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import TypeGuard

import toolkit
from toolkit.core.errors import ToolkitError
from toolkit.infra.boundedio import FileRefused, read_json_bounded
from toolkit.infra.confinedwrite import atomic_write
from toolkit.infra.store import LOCAL_STATE_NAME

CACHE_NAME = "verify-cache.json"
VERSION = 1
MAX_CACHE_BYTES = 16 * 1024 * 1024

# the packages whose code decides a record-local verdict (schema, hash, paths, privacy)
_RULE_PACKAGES = ("core", "privacy", "records", "runtime")


def rules_fingerprint() -> str:
    """Toolkit version plus (name, size, mtime) of every module of the rule packages: an upgraded
    or edited rule set never meets a cache of the old one."""

    package = Path(toolkit.__file__).parent
    parts = [str(getattr(toolkit, "__version__", ""))]
    for sub in _RULE_PACKAGES:
        try:
            entries = sorted(os.scandir(package / sub), key=lambda entry: entry.name)
        except OSError:
            parts.append(f"{sub}:absent")
            continue
        for entry in entries:
            if entry.name.endswith(".py"):
                try:
                    st = entry.stat()
                except OSError:
                    parts.append(f"{sub}/{entry.name}:absent")
                    continue
                parts.append(f"{sub}/{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def record_key(data: object) -> str:
    """Digest of a parsed record: every record-local rule is a function of it (and of its path)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def cache_path(common_dir: Path) -> Path:

    return common_dir / LOCAL_STATE_NAME / CACHE_NAME


def load(common_dir: Path, workdir: Path, rules: str) -> tuple[str, dict[str, str]] | None:
    """(proven head, {rel path: record key}) of a cache of this rule set and work tree, else None.

    A missing, foreign, symlinked, oversized or corrupt file is None: recompute, never "verified".
    """

    path = cache_path(common_dir)
    if os.path.islink(path.parent):
        return None
    try:
        data = read_json_bounded(
            path,
            limit=MAX_CACHE_BYTES,
            what="the verify cache",
            follow_symlinks=False,
            missing_ok=True,
            default=None,
        )
    except (FileRefused, ToolkitError, OSError, ValueError, RecursionError):
        return None
    return _cache_contents(data, workdir, rules)


def _cache_contents(data: object, workdir: Path, rules: str) -> tuple[str, dict[str, str]] | None:
    """(proven head, records) of a decoded cache of this version, rule set and work tree whose
    head is a full commit id and whose records map strings to strings; None otherwise."""
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    if data.get("rules") != rules or data.get("workdir") != str(workdir):
        return None
    head, records = data.get("head"), data.get("records")
    if not isinstance(head, str) or len(head) != 40 or not _str_map(records):
        return None
    return head, records


def _str_map(value: object) -> TypeGuard[dict[str, str]]:
    """A dict from strings to strings."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def save(common_dir: Path, workdir: Path, rules: str, head: str, records: dict[str, str]) -> None:
    """Write the cache atomically (temp + rename, never through a symlink). A cache that cannot
    be written is no error: the next run recomputes."""

    document = {"version": VERSION, "rules": rules, "workdir": str(workdir), "head": head, "records": records}
    with contextlib.suppress(ToolkitError, OSError):
        atomic_write(
            common_dir,
            cache_path(common_dir),
            json.dumps(document, sort_keys=True) + "\n",
            what="the verify cache",
            mode=0o600,
        )
