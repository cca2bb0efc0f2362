"""Writes onto repository-controlled paths through the confined layer: an atomic replace, an
exclusive create and a lock file, each on a path ``toolkit.infra.confined`` checked first.

Apart from ``confined`` (which the hot paths import for their checked reads) because these go
through ``toolkit.infra.store`` (temp files, fsync, locks), whose imports a reader does not need.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from toolkit.infra import store
from toolkit.infra.confined import target_for_write


def atomic_write(
    root: str | os.PathLike[str],
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    what: str,
    mode: int = 0o644,
) -> str:
    """``store.atomic_write`` onto the checked path (a rename never writes through a symlink)."""
    target = target_for_write(root, path, what=what)
    store.atomic_write(Path(target), data, mode=mode)
    return target


def create_exclusive(
    root: str | os.PathLike[str], path: str | os.PathLike[str], data: bytes | str, *, what: str
) -> bool:
    """``store.create_exclusive`` onto the checked path (a hard link never follows a symlink)."""
    return store.create_exclusive(Path(target_for_write(root, path, what=what)), data)


@contextlib.contextmanager
def lock(root: str | os.PathLike[str], path: str | os.PathLike[str], *, what: str) -> Iterator[None]:
    """``store.file_lock`` on the checked lock file (its open refuses a symlink)."""
    with store.file_lock(Path(target_for_write(root, path, what=what))):
        yield
