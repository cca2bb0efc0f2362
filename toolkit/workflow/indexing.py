"""Shell side of ``workgroup index``: read git, reuse the cached inventory for an unchanged tree."""

from __future__ import annotations

from toolkit.infra.boundedio import MAX_LOG_BYTES, FileRefused, read_regular
from toolkit.infra.git import Repo, blob_sizes, staged_blobs, staged_key, tree_blobs, tree_key
from toolkit.infra.store import atomic_write, file_lock
from toolkit.workflow.inventory import Inventory, build, load_cached


def inventory(repo: Repo, *, staged: bool = False, rev: str = "HEAD", use_cache: bool = True) -> Inventory:
    if staged:
        key, source = staged_key(repo), "index"
    else:
        repo.resolve_commit(rev)  # coded errors for an unborn HEAD or an unknown revision
        key, source = tree_key(repo, rev), "tree"
    layout = repo.layout
    cache = layout.local / "index" / f"{source}-{key}.json"
    if use_cache:
        try:
            raw = read_regular(cache, limit=MAX_LOG_BYTES, what="the index cache", follow_symlinks=False)
            cached = load_cached(raw or b"", key)
        except FileRefused:
            cached = None  # absent, not a regular file, too large: computed again
        if cached is not None:
            return cached
    entries = staged_blobs(repo) if staged else tree_blobs(repo, rev)
    sizes = blob_sizes(repo, [blob for _, blob, _ in entries])
    rows = [(path, blob, mode, size) for (path, blob, mode), size in zip(entries, sizes, strict=True)]
    inv = build(source, key, rows)
    if use_cache:
        with file_lock(layout.lock("index")):
            atomic_write(cache, inv.to_bytes())
    return inv
