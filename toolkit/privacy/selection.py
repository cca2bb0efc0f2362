"""Which files ``workgroup privacy scan`` reads, and scanning many of them on every core.

Selection: inside a git work tree, what git would commit: tracked files plus untracked files
that are not ignored (``git ls-files --cached --others --exclude-standard``), so ``.venv/``,
``node_modules/`` and build output stay out; ``all_files`` walks everything instead. Paths are
kept as the user gave them, relative to the current folder (``git ls-files`` prints them so).

Standard library only: ``git`` runs as a subprocess, which is also what keeps the command's
cold start lean (no pygit2).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from toolkit.privacy.files import (
    BATCH_FILE_LIMIT,
    FileFinding,
    ScanReport,
    artifact_paths,
    iter_files,
    load,
    relative_to_root,
    scan_batch,
    scan_loaded,
    set_artifact_paths,
)
from toolkit.privacy.types import Context

PARALLEL_MIN_BYTES = 4 * 1024 * 1024  # below this, starting worker processes costs more than it saves
_CHUNK_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Target:
    """A file to scan: ``shown`` as the user sees it, ``rel`` relative to the repository root
    (which decides its context), ``size`` in bytes."""

    shown: str
    rel: str
    size: int


def git_toplevel(cwd: Path) -> Path | None:
    """The work tree root containing ``cwd``, or None outside a repository (or without git)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None


def git_files(paths: list[str], cwd: Path) -> list[str] | None:
    """Tracked plus untracked-not-ignored files under ``paths``, relative to ``cwd``; None when
    git cannot answer (not a repository)."""
    import subprocess  # a scan of named files never starts git

    try:
        done = subprocess.run(
            [
                "git",
                "-c",
                "core.quotepath=off",
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
                "--",
                *paths,
            ],
            cwd=cwd,
            capture_output=True,
            check=False,
        )
    except OSError:
        return None
    if done.returncode != 0:
        return None
    names = [n for n in done.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    return sorted(dict.fromkeys(names))  # a conflicted file is listed once per stage


def select(paths: list[str], cwd: Path, root: Path, *, all_files: bool, notices: list[str]) -> list[Target]:
    """The files to scan, in a stable order, each with its display and repository paths."""
    # a file named on the command line is read even when git ignores it; folders are expanded
    # to what git would commit
    named = [p for p in paths if not (cwd / p).is_dir()]
    folders = [p for p in paths if (cwd / p).is_dir()]
    listed = None if all_files or not folders else git_files(folders, cwd)
    if listed is None:
        listed = [
            os.path.relpath(p, cwd) if not os.path.isabs(str(p)) else str(p)
            for p in iter_files([Path(p) for p in folders], root, notices)
        ]
    targets: list[Target] = []
    for shown in dict.fromkeys([*named, *listed]):
        target = _target(shown, cwd / shown, root, shown in named, notices)
        if target is not None:
            targets.append(target)
    return targets


def _target(shown: str, path: Path, root: Path, named: bool, notices: list[str]) -> Target | None:
    """The file at ``path`` as a scan target, or None: a symlink leading out of the repository and
    a named special file are said in ``notices``; a deleted tracked file, a submodule or a
    directory is passed over in silence."""
    try:
        if path.is_file() and not (path.is_symlink() and not _inside(path, root)):
            return Target(shown, relative_to_root(path, root), path.stat().st_size)
        if path.is_symlink() and path.exists():
            notices.append(f"{shown}: skipped (symlink to outside the repository)")
        elif named and os.path.lexists(path) and not path.is_dir():
            # named on the command line, yet a FIFO, a socket or a link to nothing: said, not read
            notices.append(f"{shown}: skipped (not a regular file)")
    except OSError:
        pass
    return None


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def _scan_chunk(
    chunk: list[Target], cwd: str, context: Context | None
) -> tuple[list[FileFinding], list[str], int]:
    findings: list[FileFinding] = []
    notices: list[str] = []
    small: list[tuple[str, str, str]] = []
    scanned = 0
    for target in chunk:
        loaded = load(Path(cwd) / target.shown, target.shown, target.rel, context)
        if loaded.notice is not None:
            notices.append(loaded.notice)
            continue
        scanned += 1
        text = loaded.text
        if text is None:
            findings.extend(loaded.findings)
        elif len(text) <= BATCH_FILE_LIMIT and "\x00" not in text:
            small.append((text, target.shown, target.rel))
        else:
            findings.extend(scan_loaded(text, target.shown, target.rel, context))
    findings.extend(scan_batch(small, context))
    order = {t.shown: i for i, t in enumerate(chunk)}
    findings.sort(
        key=lambda x: (
            order.get(x.path.split("!", 1)[0], 0),
            x.path,
            x.finding.line,
            x.finding.start,
            x.finding.rule,
        )
    )
    return findings, notices, scanned


def _chunks(targets: list[Target]) -> Iterable[list[Target]]:
    chunk: list[Target] = []
    size = 0
    for target in targets:
        chunk.append(target)
        size += target.size
        if size >= _CHUNK_BYTES:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def scan_targets(
    targets: list[Target],
    cwd: Path,
    context: Context | None = None,
    *,
    jobs: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> ScanReport:
    """Scan ``targets``; with ``jobs`` 0 (auto) large sets use one process per core.

    ``progress(done_bytes, total_bytes)`` is called after each chunk of work.
    """
    report = ScanReport()
    total = sum(t.size for t in targets)
    workers = jobs if jobs > 0 else (os.cpu_count() or 1)
    chunks = list(_chunks(targets))
    done = 0
    if workers > 1 and total >= PARALLEL_MIN_BYTES and len(chunks) > 1:
        from concurrent.futures import ProcessPoolExecutor  # only a parallel scan pays for it

        # the team's artifact globs reach the workers whatever the start method
        with ProcessPoolExecutor(
            max_workers=min(workers, len(chunks)),
            initializer=set_artifact_paths,
            initargs=(artifact_paths(),),
        ) as pool:
            futures = [pool.submit(_scan_chunk, chunk, str(cwd), context) for chunk in chunks]
            for chunk, future in zip(chunks, futures, strict=True):
                _merge(report, future.result())
                done += sum(t.size for t in chunk)
                if progress:
                    progress(done, total)
    else:
        for chunk in chunks:
            _merge(report, _scan_chunk(chunk, str(cwd), context))
            done += sum(t.size for t in chunk)
            if progress:
                progress(done, total)
    return report


def _merge(report: ScanReport, result: tuple[list[FileFinding], list[str], int]) -> None:
    findings, notices, scanned = result
    report.findings.extend(findings)
    report.notices.extend(notices)
    report.files_scanned += scanned
