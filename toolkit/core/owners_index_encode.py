"""Writing the writer registry's lookup index (the format: ``toolkit.core.owners_index``).

Kept apart from the reader so that ``workgroup runtime route``, which only reads the index, never
loads the timestamp parser (and ``datetime``) that encoding a registry's lease expiries needs.
Standard library only, no I/O (``toolkit.records.owners`` writes the bytes).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from datetime import datetime

from toolkit.core.owners_index import MAGIC, micros, plain_path, str_list
from toolkit.core.timefmt import parse_rfc3339


def encode_index(writers: Sequence[Mapping[str, object]], binding: Mapping[str, int]) -> bytes | None:
    """The index of registry rows (``Lease.to_json()``), bound to ``binding``; None when a row is
    not one the registry's writer would have written (the index is then not written at all)."""
    lines: set[str] = set()
    heads: set[str] = set()
    slow: list[list[object]] = []
    fallback: list[list[object]] = []
    for writer in writers:
        row = _lease_row(writer, parse_rfc3339(writer.get("lease_expires_at")))
        if row is None:
            return None
        at, holder, paths, globs = row
        if globs or not paths:
            fallback.append([at, holder])
            continue
        odd = _add_plain_lines(paths, at, holder, lines, heads)
        if odd:
            slow.append([at, holder, odd])
    body = "\n".join(sorted(lines, key=lambda line: line.encode("ascii"))).encode("ascii")
    header = {
        "registry": dict(binding),
        "body_crc32": zlib.crc32(body),
        "heads": sorted(heads),
        "slow": slow,
        "fallback": fallback,
    }
    return MAGIC + json.dumps(header, ensure_ascii=True).encode("ascii") + b"\n" + body


def _lease_row(
    writer: Mapping[str, object], expires: datetime | None
) -> tuple[int, str, list[str], list[str]] | None:
    """(expiry in microseconds, holder, owned paths, owned globs) of a registry row the writer
    would have written; None for any other row (no expiry or holder, a path or glob list that is
    not a list of strings)."""
    holder = writer.get("lineage_id")
    if expires is None or not isinstance(holder, str):
        return None
    paths: list[str] = []
    for name in ("owned_files", "resolved_owned_files"):
        value = writer.get(name, [])
        if not str_list(value):
            return None
        paths += value
    globs = writer.get("owned_globs", [])
    if not str_list(globs):
        return None
    return micros(expires), holder, paths, globs


def _add_plain_lines(paths: list[str], at: int, holder: str, lines: set[str], heads: set[str]) -> list[str]:
    """Add a lease's plain paths as body lines (and their directories as heads); the paths that
    are not plain, left for the header's slow part."""
    shown = json.dumps(holder, ensure_ascii=True)  # never a raw tab or newline
    odd = []
    for path in paths:
        if plain_path(path):
            heads.add(path.rpartition("/")[0])
            lines.add(f"{path.lower()}\t{at}\t{shown}")
        else:
            odd.append(path)
    return odd
