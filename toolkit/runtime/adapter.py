"""The runtime's one adapter: every read of the clock, the environment, the disk and git that an
operation needs goes through the ``RuntimeContext`` built here.

The decision modules of ``toolkit.runtime`` take plain values and this context and do no I/O of
their own (tests/project/test_layers.py checks their imports and calls). What the context reads:

* ``now()``: the clock (an injected ``clock`` replaces it);
* ``env(name)``: one environment variable (from ``environ`` when one was given);
* ``canonicalizer(root)``: the ``realpath``-resolving owned-path canonicalizer of a workspace
  root, one per root and context, so the requests of one ``--batch`` share its caches;
* ``realpath(path)``;
* ``writer_registry()``: the persistent writer registry of the repository containing ``cwd``;
* ``writer_registry_index()``: its lookup index, while bound to the registry's exact bytes;
* ``owned_glob_matches(globs, root)``: the tracked files matched by owned globs;
* ``replay_state()``: the replay ledger's rows and the committed promotion record names.

``cache`` is a plain dict shared by the requests of one ``--batch`` run; ``observer`` is told
about each decision of the live operations (the entry point injects live OTLP mode there).

Start-up matters (one process per delegation): this module imports ``os`` only; each reader
imports its helpers on first use. A plain slotted class, not a dataclass (which would import
dataclasses and inspect on every call).
"""

from __future__ import annotations

import os

from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False  # typing itself costs start-up time; type checkers treat this as True
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime
    from typing import Any

    from toolkit.core.owners_index import OwnersIndex
    from toolkit.infra.paths import Canonicalizer

    Observer = Callable[[str, dict[str, Any], float, str], None]

_CANON_CACHE_KEY = "adapter.canonicalizers"


class RuntimeContext:
    """Ambient facts and readers handed to the decision functions (frozen: set once here)."""

    __slots__ = ("_clock", "_environ", "cache", "cwd", "observer")

    cwd: str
    cache: dict[str, Any]
    observer: Observer | None
    _environ: Mapping[str, str] | None
    _clock: Callable[[], datetime] | None

    def __init__(
        self,
        cwd: str | None = None,
        environ: Mapping[str, str] | None = None,
        cache: dict[str, Any] | None = None,
        observer: Observer | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        setter = object.__setattr__
        setter(self, "cwd", os.getcwd() if cwd is None else cwd)
        setter(self, "_environ", environ)
        setter(self, "cache", {} if cache is None else cache)
        setter(self, "observer", observer)
        setter(self, "_clock", clock)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"RuntimeContext is frozen: cannot set {name}")

    def __repr__(self) -> str:
        return f"RuntimeContext(cwd={self.cwd!r})"

    # --- clock and environment ---------------------------------------------------------------

    def now(self) -> datetime:
        """The current time, timezone-aware UTC (datetime is imported only by the ops that ask)."""
        if self._clock is not None:
            return self._clock()
        from toolkit.infra.clock import now_utc

        return now_utc()

    def env(self, name: str) -> str | None:
        source = os.environ if self._environ is None else self._environ
        return source.get(name)

    # --- the file system ---------------------------------------------------------------------

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def canonicalizer(self, root: str) -> Canonicalizer:
        """The canonicalizer of ``root`` (raises ``OwnershipPathError`` for a blank root)."""
        found: dict[str, Canonicalizer] = self.cache.setdefault(_CANON_CACHE_KEY, {})
        canon = found.get(root)
        if canon is None:
            from toolkit.infra.paths import Canonicalizer

            canon = found[root] = Canonicalizer(root)
        return canon

    # --- the repository's local state --------------------------------------------------------

    def writer_registry(self) -> tuple[str, object] | None:
        """(work tree, decoded registry file) of the repository containing ``cwd``, or None
        outside a repository; a missing file reads as ``{"writers": []}``.

        Raises ``ENVIRONMENT_ERROR`` when the file cannot be read as bounded JSON.
        """
        from toolkit.infra.gitlocation import find_git

        location = find_git(self.cwd)
        if location is None:
            return None
        from toolkit.infra.boundedio import FileRefused
        from toolkit.infra.gitlocation import read_owners_registry

        try:
            data = read_owners_registry(location.owners_registry, {"writers": []})
        except FileRefused:
            raise RuntimeOpError("ENVIRONMENT_ERROR") from None
        return location.workdir, data

    def writer_registry_index(self) -> tuple[str, OwnersIndex] | None:
        """(work tree, registry index) of the repository containing ``cwd`` while the index is
        bound to the registry's exact bytes (size, CRC-32, mtime, inode); None when there is no
        index to trust: outside a repository, no registry or no index, an index that is a
        symlink, torn, altered or built from other bytes (the registry is then read in full,
        with its own errors)."""
        from toolkit.infra.gitlocation import find_git

        location = find_git(self.cwd)
        if location is None:
            return None
        from toolkit.core.owners_index import INDEX_FILE, decode_index
        from toolkit.infra.boundedio import FileRefused, open_regular, read_regular
        from toolkit.infra.gitlocation import MAX_REGISTRY_BYTES

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
            handle = open_regular(
                location.owners_registry, what="the writer registry", follow_symlinks=False, missing_ok=True
            )
            if handle is None:
                return None
            with handle:
                info = os.fstat(handle.fileno())
                raw = handle.read(MAX_REGISTRY_BYTES + 1)
        except (FileRefused, OSError):
            return None
        if not index.bound_to(raw, info.st_mtime_ns, info.st_ino):
            return None
        return location.workdir, index

    def owned_glob_matches(self, globs: Sequence[str], root: str) -> list[str]:
        """The tracked files of the repository containing ``root`` that ``globs`` match, relative
        to ``root``'s real path (a match outside it is refused later, by the router).

        Raises ``INVALID_OWNERSHIP_GLOB`` for a bad glob, ``ENVIRONMENT_ERROR`` when git fails.
        """
        from toolkit.core.ownership import OwnershipPathError, check_globs, expand_globs
        from toolkit.infra.gitlocation import find_git, tracked_files

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

    def replay_state(self) -> tuple[list[object], list[str]]:
        """(decoded replay-ledger rows, file names under ``.workgroup/promotions``) of the
        repository containing ``cwd``; both empty outside a repository.

        A torn, foreign or too deeply nested ledger line is skipped; a ledger that cannot be
        read at all raises ``ENVIRONMENT_ERROR`` (it must never read as "nothing consumed").
        """
        from toolkit.infra.gitlocation import find_git

        location = find_git(self.cwd)
        if location is None:
            return [], []
        from toolkit.infra.boundedio import FileRefused
        from toolkit.infra.ledger import LEDGER_NAME, read_replay_state

        try:
            return read_replay_state(
                os.path.join(location.local_state, LEDGER_NAME),
                os.path.join(location.workdir, ".workgroup", "promotions"),
            )
        except FileRefused:
            raise RuntimeOpError("ENVIRONMENT_ERROR") from None
