"""Owned paths against the file system: ``Canonicalizer`` resolves symlinks (``realpath``, one
``scandir`` per directory, cached) under a workspace root. The pure rules (validation, comparison
keys, the overlap index, globs) are ``toolkit.core.ownership``.
"""

from __future__ import annotations

import os

from toolkit.core.ownership import (
    MAX_PATH_CHARS,
    PAD,
    SIMPLE_PATH,
    CanonicalPath,
    OverlapIndex,
    OwnershipPathError,
    fold,
    git_segment,
    lexical_segments,
)

# on every ``workgroup runtime route``: no typing or dataclasses (inspect) at import time
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


class Canonicalizer:
    """Canonicalizes many paths under one workspace root, caching ``realpath`` per directory."""

    def __init__(self, root: str) -> None:
        if not isinstance(root, str) or not root.strip():
            raise OwnershipPathError("workspace_root must be a non-empty string")
        self.root = root
        self._real_root = os.path.realpath(os.path.abspath(root.strip().replace("\\", "/")))
        self._root_slash = self._real_root.rstrip("/") + "/"
        self._dirs: dict[str, tuple[str, bool]] = {}
        self._links: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._heads: dict[str, tuple[str | None, frozenset[str]]] = {}

    def __repr__(self) -> str:
        return f"Canonicalizer(root={self.root!r})"

    @property
    def real_root(self) -> str:
        return self._real_root

    def _dir_state(self, rel_dir: str) -> tuple[str, bool]:
        """(real absolute path, exists) of the directory ``rel_dir`` (no ``..``), cached.

        Resolved one segment at a time from the parent's cached state: under a missing
        directory nothing can be a symlink, so no system call is made there at all; in an
        existing one, one ``scandir`` per directory tells which names exist and which are links.
        """
        cached = self._dirs.get(rel_dir)
        if cached is not None:
            return cached
        # iterative (a path may have thousands of segments): find the nearest known ancestor...
        pending: list[str] = []
        probe = rel_dir
        while probe and probe not in self._dirs:
            pending.append(probe)
            probe = probe.rpartition("/")[0]
        state = self._dirs[probe] if probe else self._dirs.setdefault("", (self._real_root, True))
        # ...then resolve downward one segment at a time
        for current in reversed(pending):
            parent, parent_exists = state
            joined = parent.rstrip("/") + "/" + current.rpartition("/")[2]
            if not parent_exists:
                state = (joined, False)
            else:
                names, links = self._entries(parent)
                name = current.rpartition("/")[2]
                if name in links:
                    real = os.path.realpath(joined)
                    state = (real, os.path.isdir(real))
                else:
                    state = (joined, name in names)
            self._dirs[current] = state
        return state

    def _entries(self, real_dir: str) -> tuple[frozenset[str], frozenset[str]]:
        """(names, symlink names) directly inside ``real_dir``: one scandir per directory."""
        cached = self._links.get(real_dir)
        if cached is None:
            try:
                with os.scandir(real_dir) as entries:
                    listed = [(e.name, e.is_symlink()) for e in entries]
                cached = (frozenset(n for n, _ in listed), frozenset(n for n, link in listed if link))
            except OSError:  # missing or unreadable: nothing to resolve there
                cached = (frozenset(), frozenset())
            self._links[real_dir] = cached
        return cached

    def _symlinks_in(self, real_dir: str) -> frozenset[str]:
        return self._entries(real_dir)[1]

    def _real_path(self, segments: list[str]) -> str:
        if ".." in segments:
            # rare: resolve physically, so a ``..`` after a symlink follows the link
            return os.path.realpath(os.path.join(self._real_root, *segments))
        if not segments:
            return self._real_root
        parent, exists = self._dir_state("/".join(segments[:-1]))
        name = segments[-1]
        if exists and name in self._symlinks_in(parent):
            return os.path.realpath(os.path.join(parent, name))
        return parent + "/" + name if parent != "/" else "/" + name

    def _resolve(self, value: object) -> str:
        real = self._real_path(lexical_segments(value))
        root = self._real_root
        if real != root and not real.startswith(self._root_slash) and root != "/":
            raise OwnershipPathError("an owned path resolves outside the workspace root")
        if git_segment(real[len(root) :].split("/")):  # a symlink into .git, for example
            raise OwnershipPathError("nothing under .git can be owned")
        return real

    def _dir_info(self, head: str) -> tuple[str | None, frozenset[str]]:
        """(folded real directory + "/", or None when it is outside the root; its symlinks)."""
        info = self._heads.get(head)
        if info is None:
            real, exists = self._dir_state(head)
            inside = real == self._real_root or real.startswith(self._root_slash) or self._real_root == "/"
            if inside and git_segment(real[len(self._real_root) :].split("/")):
                inside = False  # a directory reached through a symlink into .git: never ownable
            prefix = (fold(real).rstrip("/") + "/") if inside else None
            info = (prefix, self._symlinks_in(real) if exists else frozenset())
            self._heads[head] = info
        return info

    def root_key_prefix(self) -> str | None:
        """The comparison key of the root itself, ending in ``/``: every key inside starts with it."""
        return self._dir_info("")[0]

    def plain_dir_links(self, rel_dir: str) -> frozenset[str] | None:
        """The symlink names in the directory ``rel_dir`` (plain segments, no ``..``) when its real
        path is the lexical one (no symlink on the way there); None when it is not."""
        real, exists = self._dir_state(rel_dir)
        lexical = self._real_root.rstrip("/") + "/" + rel_dir if rel_dir else self._real_root
        if real != lexical:
            return None
        return self._symlinks_in(real) if exists else frozenset()

    def key(self, value: object) -> str:
        """The comparison key of one owned path; ``OwnershipPathError`` when it is not one."""
        if (
            type(value) is str
            and len(value) <= MAX_PATH_CHARS
            and value.isascii()
            and SIMPLE_PATH.fullmatch(value)
            and value.strip(PAD) == value
        ):
            # hot path: an already-canonical path whose last segment is not a symlink
            head, _, name = value.rpartition("/")
            prefix, links = self._dir_info(head)
            if name not in links:
                if prefix is None:
                    raise OwnershipPathError("an owned path resolves outside the workspace root or into .git")
                return prefix + fold(name)
        return fold(self._resolve(value))

    def canonical(self, value: object) -> CanonicalPath:
        """The canonical form of one owned path; ``OwnershipPathError`` when it is not one."""
        real = self._resolve(value)
        rel = "" if real == self._real_root else real[len(self._real_root) :].lstrip("/")
        return CanonicalPath(rel=rel, key=fold(real))

    def first_overlap(self, index: OverlapIndex, values: Sequence[object]) -> tuple[str, str] | None:
        """(holder, held key) of the first of ``values`` that overlaps ``index``, or None.

        Computes each key and looks it up in one pass (the router's hot loop). Every value is
        still validated, even after a hit: an invalid path is refused whatever its neighbours do.
        """
        simple = SIMPLE_PATH.fullmatch
        heads = self._heads
        exact_get = index.exact.get
        below_get = index.below.get
        for position, value in enumerate(values):
            hit: tuple[str, str] | None = None
            if (
                type(value) is str
                and len(value) <= MAX_PATH_CHARS
                and value.isascii()
                and simple(value)
                and value.strip(PAD) == value
            ):
                head, _, name = value.rpartition("/")
                info = heads.get(head) or self._dir_info(head)
                prefix = info[0]
                if prefix is not None and name not in info[1]:
                    key = prefix + (name.lower() if name.isascii() else fold(name))
                    holder = exact_get(key)
                    hit = (
                        (holder, key) if holder is not None else below_get(key) or index.directory_hit(prefix)
                    )
                    if hit is None:
                        continue
            if hit is None:
                hit = index.find(self.key(value))
            if hit is not None:
                for rest in values[position + 1 :]:
                    self.key(rest)
                return hit
        return None

    def keys(self, values: Iterable[object]) -> list[str]:
        """Deduplicated comparison keys of ``values`` (order of first appearance)."""
        # ``key`` inlined: this loop runs for every path of every active writer
        out: dict[str, None] = {}
        simple = SIMPLE_PATH.fullmatch
        heads = self._heads
        for value in values:
            if (
                type(value) is str
                and len(value) <= MAX_PATH_CHARS
                and value.isascii()
                and simple(value)
                and value.strip(PAD) == value
            ):
                head, _, name = value.rpartition("/")
                info = heads.get(head) or self._dir_info(head)
                if name not in info[1] and info[0] is not None:
                    out[info[0] + (name.lower() if name.isascii() else fold(name))] = None
                    continue
            out[self.key(value)] = None
        return list(out)


def canonical_path(value: object, workspace_root: str) -> CanonicalPath:
    """One-off canonicalization (use a ``Canonicalizer`` for many paths)."""
    return Canonicalizer(workspace_root).canonical(value)
