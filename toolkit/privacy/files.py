"""Reading files for the privacy gate safely, and choosing the context of a file by its path.

* binary files (a NUL byte in the first 8 KiB) and files over ``MAX_FILE_BYTES`` are skipped
  with a notice, never crashed on;
* directories are walked without following symlinks (``.git`` is never entered);
* a symlink whose target lies outside the scan root (the repository) is skipped with a notice;
* text is decoded as UTF-8; undecodable bytes become U+FFFD so columns stay code points.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.privacy.engine import scan_text_with_values
from toolkit.privacy.rules import lazy
from toolkit.privacy.types import Context, Finding

MAX_FILE_BYTES = 4 * 1024 * 1024
_SNIFF = 8192
_SKIP_DIRS = frozenset({".git", "__pycache__"})
_CAPSULE = lazy(r"(^|/)\.workgroup/workgroups/[^/]+/capsules/[^/]+\.json$")
_HANDOFF = lazy(r"(?i)(^|/)(\.reviews/session-handoff\.md|[^/]*handoff[^/]*\.md)$")
_EVENT_LOG = lazy(r"(?i)(^|/)(运行日志\.jsonl|[^/]*events?[^/]*\.jsonl)$")


@dataclass(frozen=True)
class FileFinding:
    """A finding in a file: the repository-relative POSIX ``path`` plus the engine's finding."""

    path: str
    finding: Finding
    fingerprint_value: str = field(repr=False, compare=False, default="")


@dataclass
class ScanReport:
    findings: list[FileFinding] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    files_scanned: int = 0


def context_for(rel_path: str) -> Context:
    """The engine context a committed file belongs to, from its repository-relative path."""
    if _CAPSULE.search(rel_path):
        return Context.CAPSULE
    if _HANDOFF.search(rel_path):
        return Context.HANDOFF
    if _EVENT_LOG.search(rel_path):
        return Context.EVENT_LOG
    return Context.GENERIC


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` as POSIX text (the absolute path only when outside root)."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def read_text(path: Path, limit: int = MAX_FILE_BYTES) -> tuple[str | None, str | None]:
    """(text, None) or (None, reason) for a file that is binary, huge or unreadable."""
    from toolkit.infra.boundedio import NOT_A_FILE, FileRefused, read_regular

    try:
        # regular files only: a FIFO among the staged paths must not hang the hook
        data = read_regular(path, limit=limit, what="the file", allow_over=True) or b""
    except FileRefused as exc:
        if exc.code == NOT_A_FILE:
            return None, exc.message.removeprefix("the file ").split(";")[0]
        return None, f"unreadable ({exc.code})"
    if len(data) > limit:
        return None, f"larger than {limit} bytes"
    if b"\0" in data[:_SNIFF]:
        return None, "binary"
    return data.decode("utf-8", errors="replace"), None


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return False
    return True


def iter_files(paths: list[Path], root: Path, notices: list[str]) -> Iterator[Path]:
    """Files named or under the named directories, in a stable order, symlinks kept in the root."""
    for given in paths:
        if given.is_symlink() and not _inside(given, root):
            notices.append(f"{given.as_posix()}: skipped (symlink to outside the repository)")
            continue
        if given.is_dir():
            yield from _walk(given, root, notices)
        else:
            yield given


def _walk(top: Path, root: Path, notices: list[str]) -> Iterator[Path]:
    for current, dirs, files in os.walk(top, followlinks=False):
        base = Path(current)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not (base / d).is_symlink())
        for name in sorted(files):
            path = base / name
            if path.is_symlink() and not _inside(path, root):
                notices.append(f"{relative_to_root(path, root)}: skipped (symlink to outside the repository)")
                continue
            yield path


def scan_file(path: Path, root: Path, context: Context | None = None) -> tuple[list[FileFinding], str | None]:
    """Findings of one file (context chosen from its path unless given), or a skip notice."""
    rel = relative_to_root(path, root)
    if not path.exists():
        return [], f"{rel}: skipped (does not exist)"
    text, reason = read_text(path)
    if text is None:
        return [], f"{rel}: skipped ({reason})"
    ctx = context if context is not None else context_for(rel)
    return [FileFinding(rel, f, v) for f, v in scan_text_with_values(text, ctx)], None


def scan_paths(paths: list[Path], root: Path, context: Context | None = None) -> ScanReport:
    """Scan files and directories under ``root``; notices for everything skipped."""
    report = ScanReport()
    for path in iter_files(paths, root, report.notices):
        found, notice = scan_file(path, root, context)
        if notice:
            report.notices.append(notice)
            continue
        report.files_scanned += 1
        report.findings.extend(found)
    return report
