"""The runtime's one adapter: every read of the clock, the environment, the disk and git that an
operation needs goes through the ``RuntimeContext`` built here.

The decision modules of ``toolkit.runtime`` take plain values and this context and do no I/O of
their own (tests/project/test_layers.py checks their imports and calls). What the context reads:

* ``now()``: the clock (an injected ``clock`` replaces it);
* ``env(name)``: one environment variable (from ``environ`` when one was given);
* ``canonicalizer(root)``: the ``realpath``-resolving owned-path canonicalizer of a workspace
  root, one per root and context, so the requests of one ``--batch`` share its caches;
* ``realpath(path)``;
* ``now_micros()``: the clock in microseconds since the epoch, without datetime;
* ``writer_registry()``: the persistent writer registry of the repository containing ``cwd``;
* ``writer_registry_index()``: its lookup index, while bound to the registry's exact bytes;
* ``owned_glob_matches(globs, root)``: the tracked files matched by owned globs;
* ``replay_state()``: the replay ledger's rows and the committed promotion record names.

The repository reads are in ``toolkit.runtime.registry_io`` (route's: the registry, its index,
tracked files) and ``toolkit.runtime.ledger_io`` (promotion's replay ledger), which import what
they need at the top; a context method loads its module on first use.

``cache`` is a plain dict shared by the requests of one ``--batch`` run; ``observer`` is told
about each decision of the live operations (the entry point injects live OTLP mode there).

Start-up matters (one process per delegation): this module imports ``os`` and ``time`` only;
each reader module is imported on first use. A plain slotted class, not a dataclass (which would import
dataclasses and inspect on every call).
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing itself costs start-up time; type checkers treat this as True
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime
    from typing import Any

    from toolkit.core.owners_index import OwnersIndex
    from toolkit.infra.paths import Canonicalizer

    # told (operation, answer, milliseconds, cwd) after each live decision
    Observer = Callable[[str, Mapping[str, object], float, str], None]

_CANON_CACHE_KEY = "adapter.canonicalizers"


class RuntimeContext:
    """Ambient facts and readers handed to the decision functions (frozen: set once here)."""

    __slots__ = ("_clock", "_environ", "cache", "cwd", "observer")

    cwd: str
    cache: dict[str, Any]  # a per-run memo of values of several types: each reader annotates what it stored
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

    def now_micros(self) -> int:
        """The current time in microseconds since the Unix epoch (the registry index's unit),
        read without importing datetime: the route path keeps it out of start-up. The same
        instant as ``now()`` (both floor the system clock to the microsecond)."""
        if self._clock is None:
            return time.time_ns() // 1000
        from toolkit.core.owners_index import micros  # an injected clock's datetime

        return micros(self._clock())

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

    # --- the repository's local state (read by toolkit.runtime.registry_io and ledger_io) -----
    # Each reader module is imported by the first operation that asks for its reads: the others
    # never load git location, the bounded reader, the registry index or the ledger.

    def writer_registry(self) -> tuple[str, object] | None:
        """(work tree, decoded registry file) of the repository containing ``cwd``, or None
        outside a repository; a missing file reads as ``{"writers": []}``.

        Raises ``ENVIRONMENT_ERROR`` when the file cannot be read as bounded JSON.
        """
        from toolkit.runtime.registry_io import writer_registry

        return writer_registry(self.cwd)

    def writer_registry_index(self) -> tuple[str, OwnersIndex] | None:
        """(work tree, registry index) of the repository containing ``cwd`` while the index is
        bound to the registry's exact bytes; None when there is no index to trust (the registry
        is then read in full, with its own errors)."""
        from toolkit.runtime.registry_io import writer_registry_index

        return writer_registry_index(self.cwd)

    def owned_glob_matches(self, globs: Sequence[str], root: str) -> list[str]:
        """The tracked files of the repository containing ``root`` that ``globs`` match, relative
        to ``root``'s real path (a match outside it is refused later, by the router).

        Raises ``INVALID_OWNERSHIP_GLOB`` for a bad glob, ``ENVIRONMENT_ERROR`` when git fails.
        """
        from toolkit.runtime.registry_io import owned_glob_matches

        return owned_glob_matches(globs, root)

    def replay_state(self) -> tuple[list[object], list[str]]:
        """(decoded replay-ledger rows, file names under ``.workgroup/promotions``) of the
        repository containing ``cwd``; both empty outside a repository.

        A torn, foreign or too deeply nested ledger line is skipped; a ledger that cannot be
        read at all raises ``ENVIRONMENT_ERROR`` (it must never read as "nothing consumed").
        """
        from toolkit.runtime.ledger_io import replay_state

        return replay_state(self.cwd)
