"""The local telemetry log as size-bounded segments (standard library only).

Writers (``workgroup telemetry record``, the runtime's routing evidence) append through
``append_event`` under the ``telemetry`` lock. When the active log (``telemetry.jsonl``) would
grow past the segment size, it is first renamed, under that lock, to the next numbered segment
(``telemetry.1.jsonl``, ``telemetry.2.jsonl``, ...; a higher number is newer) and the record
starts a new active log. The rename is one atomic step: a writer killed at any point leaves
every record in exactly one file, none lost and none doubled.

No segment is ever deleted by the toolkit: an export does not record what a collector received,
so a segment is never known to be safe to drop. A user who has exported may delete old
numbered segments by hand; the numbering of the later ones is unaffected.

Readers (``telemetry export``, the live-mode key) go through ``iter_lines``: every segment in
order, then the active log, streamed line by line with each line capped like any other log line,
so a log of any total size is read in bounded memory.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from toolkit.infra.boundedio import MAX_FILE_BYTES, effective_limit, open_regular
from toolkit.infra.store import append_jsonl

SEGMENT_BYTES = 16 * 1_048_576
SEGMENT_ENV = "WORKGROUP_TELEMETRY_SEGMENT_BYTES"  # a smaller segment size (tests)
LOCK_NAME = "telemetry"
_MAX_SEGMENT_FILES = 100_000  # bound on the directory listing


def segment_bytes() -> int:
    """The segment size: ``SEGMENT_BYTES``, or a positive override from ``SEGMENT_ENV``."""
    raw = os.environ.get(SEGMENT_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return SEGMENT_BYTES


def _pattern(active: Path) -> re.Pattern[str]:
    stem, suffix = os.path.splitext(active.name)
    return re.compile(re.escape(stem) + r"\.([1-9][0-9]{0,8})" + re.escape(suffix) + r"\Z")


def _numbered(active: Path) -> list[tuple[int, Path]]:
    pattern = _pattern(active)
    numbered: list[tuple[int, Path]] = []
    try:
        with os.scandir(active.parent) as entries:
            for count, entry in enumerate(entries):
                if count >= _MAX_SEGMENT_FILES:
                    break
                match = pattern.match(entry.name)
                if match:
                    numbered.append((int(match.group(1)), active.parent / entry.name))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(numbered)


def segment_paths(active: Path) -> list[Path]:
    """The numbered segments beside ``active``, oldest first (the active log not included)."""
    return [path for _, path in _numbered(active)]


def all_paths(active: Path) -> list[Path]:
    """Every file of the log in record order: the numbered segments, then the active log."""
    return [*segment_paths(active), active]


def _next_segment(active: Path) -> Path:
    existing = _numbered(active)
    number = existing[-1][0] + 1 if existing else 1
    stem, suffix = os.path.splitext(active.name)
    return active.with_name(f"{stem}.{number}{suffix}")


def rotate_if_due(active: Path, incoming: int) -> Path | None:
    """Rename a non-empty active log that ``incoming`` more bytes would take past the segment size.

    The caller holds the log's lock. Returns the segment it became, or None.
    """
    try:
        size = os.lstat(active).st_size
    except FileNotFoundError:
        return None
    if size == 0 or size + incoming <= segment_bytes():
        return None
    target = _next_segment(active)
    os.rename(active, target)  # atomic: the records are in the old name or the new, never both
    return target


def append_held(active: Path, record: Any) -> None:
    """Append one record to the telemetry log, rotating first when due; the caller holds its lock."""
    size = len(json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")) + 1
    rotate_if_due(active, size)
    append_jsonl(active, record)


@dataclass(frozen=True)
class Line:
    """One line of the log: its bytes (without the newline), or None when it passed the line cap."""

    raw: bytes | None
    torn: bool  # the last line of a file, without its newline


def iter_lines(active: Path, *, what: str = "the telemetry log") -> Iterator[Line]:
    """Every non-blank line of every segment, in order, each read with at most the line cap.

    A rotation while this reads loses and doubles nothing: the active log is opened before the
    segments are listed; when a listed segment is that same file (rotated since), the listing
    stops there and its records are read through the handle already open (segments newer than it
    hold only records written after the read began). A file that is not a regular file (or a symlink in its
    place) raises ``FileRefused``.
    """

    cap = effective_limit(MAX_FILE_BYTES)
    current = open_regular(active, what=what, follow_symlinks=False, missing_ok=True)
    try:
        same = None if current is None else os.fstat(current.fileno())
        for path in segment_paths(active):
            handle = open_regular(path, what=what, follow_symlinks=False, missing_ok=True)
            if handle is None:
                continue
            with handle:
                info = os.fstat(handle.fileno())
                if same is not None and (info.st_dev, info.st_ino) == (same.st_dev, same.st_ino):
                    break  # the active log, rotated after it was opened: read below
                yield from _lines(handle, cap)
        if current is not None:
            yield from _lines(current, cap)
    finally:
        if current is not None:
            current.close()


def _lines(handle: IO[bytes], cap: int) -> Iterator[Line]:
    while True:
        chunk = handle.readline(cap + 1)
        if not chunk:
            return
        if len(chunk) > cap and not chunk.endswith(b"\n"):
            while chunk and not chunk.endswith(b"\n"):  # skip the rest of the long line
                chunk = handle.readline(cap + 1)
            yield Line(None, not chunk)
            continue
        torn = not chunk.endswith(b"\n")
        body = chunk if torn else chunk[:-1]
        if body.strip():
            yield Line(body, torn)


def count_equal_lines(active: Path, line: bytes) -> int:
    """How many lines of the whole log (every segment) are exactly ``line`` (no newline)."""
    return sum(1 for item in iter_lines(active) if item.raw == line)
