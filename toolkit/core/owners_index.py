"""The lookup index of the writer registry: owned paths sorted by key, searched by bisection.

``workgroup owners`` writes it beside the registry (``owners.index`` in the local state dir),
under the owners lock, each time it writes the registry. ``workgroup runtime route`` reads it
instead of decoding and validating every registry entry, and only while it is bound to the exact
registry bytes it was built from; otherwise the router reads the registry in full, as before.

The format (ASCII)::

    workgroup.owners-index/v1
    {"registry": {"size", "crc32", "mtime_ns", "ino"}, "body_crc32", "heads", "slow", "fallback"}
    <key>\\t<lease expiry, microseconds since the epoch>\\t<holder, a JSON string>
    ...

* each body line is one plain owned path (``SIMPLE_PATH``, ASCII: the canonicalizer's fast
  path) of one lease, lower-cased (the comparison key relative to the work tree when no symlink
  is on the way), the lines sorted bytewise, so one key, the keys below a directory and a key's
  ancestors are each a bisection;
* ``heads``: the directories of those paths. The keys hold only while no symlink sits on the
  way: the reader checks each head directory (and the symlinks in it) against the file system
  on every call and falls back to the full read when one differs;
* ``slow``: ``[expiry, holder, [paths]]`` of the other paths (non-ASCII, ``..``, ``\\``, ...),
  canonicalized by the reader on every call;
* ``fallback``: ``[expiry, holder]`` of leases the index cannot answer for (owned globs, or no
  path at all): while one is live, the router reads the registry in full;
* ``registry``: the registry file's size, CRC-32, ``st_mtime_ns`` and ``st_ino`` when the
  index was written; ``body_crc32``: the lines' checksum (a torn or altered index is not used).

Standard library only, no I/O (the adapter and ``toolkit.records.owners`` read and write; the
encoder is ``toolkit.core.owners_index_encode``).
"""

from __future__ import annotations

import json
import zlib
from bisect import bisect_left

from toolkit.core.ownership import MAX_PATH_CHARS, PAD, SIMPLE_PATH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import TypeGuard

    from toolkit.core.jsontypes import JsonObject

MAGIC = b"workgroup.owners-index/v1\n"
_EPOCH_ORDINAL = 719_163  # date(1970, 1, 1).toordinal()
INDEX_FILE = "owners.index"


def plain_path(value: object) -> TypeGuard[str]:
    """True for the paths the canonicalizer keys without resolving (its fast path)."""
    return (
        type(value) is str
        and len(value) <= MAX_PATH_CHARS
        and value.isascii()
        and SIMPLE_PATH.fullmatch(value) is not None
        and value.strip(PAD) == value
    )


def micros(moment: datetime) -> int:
    """An aware datetime as exact microseconds since the Unix epoch (order kept exactly).

    Integer arithmetic on the moment's UTC fields: nothing to import on the router's path."""
    offset = moment.utcoffset()
    utc = moment if offset is None else moment - offset
    days = utc.toordinal() - _EPOCH_ORDINAL
    seconds = days * 86_400 + utc.hour * 3_600 + utc.minute * 60 + utc.second
    return seconds * 1_000_000 + utc.microsecond


def registry_binding(raw: bytes, mtime_ns: int, ino: int) -> dict[str, int]:
    return digest_binding(len(raw), zlib.crc32(raw), mtime_ns, ino)


def digest_binding(size: int, crc32: int, mtime_ns: int, ino: int) -> dict[str, int]:
    """The binding of registry bytes known by their size and CRC-32 (checksummed in chunks)."""
    return {"size": size, "crc32": crc32, "mtime_ns": mtime_ns, "ino": ino}


def _int(value: object) -> bool:
    return type(value) is int


class OwnersIndex:
    """A decoded index: the header's parts and the body's sorted lines (bytes)."""

    __slots__ = ("binding", "fallback", "heads", "lines", "slow")

    def __init__(
        self,
        binding: dict[str, int],
        heads: list[str],
        slow: list[tuple[int, str, list[str]]],
        fallback: list[tuple[int, str]],
        lines: list[bytes],
    ) -> None:
        self.binding = binding
        self.heads = heads
        self.slow = slow
        self.fallback = fallback
        self.lines = lines

    def empty(self) -> bool:
        return not (self.lines or self.slow or self.fallback)

    def bound_to(self, raw: bytes, mtime_ns: int, ino: int) -> bool:
        """True when the registry now holds the exact bytes the index was built from."""
        return self.binding == registry_binding(raw, mtime_ns, ino)

    def bound_to_digest(self, size: int, crc32: int, mtime_ns: int, ino: int) -> bool:
        """``bound_to`` for registry bytes known by their size and CRC-32."""
        return self.binding == digest_binding(size, crc32, mtime_ns, ino)

    def has_key(self, key: str) -> bool:
        """A plain path of any lease, live or not, has the comparison key ``key``."""
        prefix = key.encode("utf-8", "surrogateescape") + b"\t"
        at = bisect_left(self.lines, prefix)
        return at < len(self.lines) and self.lines[at].startswith(prefix)

    def live_overlap(self, rel: str, now: int, exclude: object) -> bool:
        """A live plain path of another holder is ``rel``, under it, or one of its directories.

        ``rel`` is a comparison key relative to the work tree. Raises ``ValueError`` on a line
        that is not one of ours (the caller falls back to the full read).
        """
        lines = self.lines
        encoded = rel.encode("utf-8", "surrogateescape")
        prefixes = [encoded + b"\t", encoded + b"/"]
        cut = encoded.rfind(b"/")
        while cut > 0:
            prefixes.append(encoded[:cut] + b"\t")
            cut = encoded.rfind(b"/", 0, cut)
        for prefix in prefixes:
            at = bisect_left(lines, prefix)
            while at < len(lines) and lines[at].startswith(prefix):
                _, expires, holder = lines[at].split(b"\t", 2)
                if int(expires) > now and not (isinstance(exclude, str) and json.loads(holder) == exclude):
                    return True
                at += 1
        return False


def decode_index(raw: bytes) -> OwnersIndex | None:
    """The index in ``raw``, or None when it is not a whole, well-formed one."""
    split = _split_header(raw)
    if split is None:
        return None
    header, body = split
    binding, heads = header.get("registry"), header.get("heads")
    slow, fallback = header.get("slow"), header.get("fallback")
    if not (
        _binding_ok(binding)
        and str_list(heads)
        and (slow_rows := _slow_rows(slow)) is not None
        and (fallback_rows := _fallback_rows(fallback)) is not None
    ):
        return None
    return OwnersIndex(binding, heads, slow_rows, fallback_rows, body.split(b"\n") if body else [])


def _split_header(raw: bytes) -> tuple[JsonObject, bytes] | None:
    """(the JSON header, the body) when the magic, the header line and the body's CRC32 hold."""
    if not raw.startswith(MAGIC):
        return None
    end = raw.find(b"\n", len(MAGIC))
    if end < 0:
        return None
    try:
        header = json.loads(raw[len(MAGIC) : end])
    except ValueError:
        return None
    body = raw[end + 1 :]
    if not isinstance(header, dict) or header.get("body_crc32") != zlib.crc32(body):
        return None
    return header, body


def _binding_ok(binding: object) -> TypeGuard[dict[str, int]]:
    return (
        isinstance(binding, dict)
        and sorted(binding) == ["crc32", "ino", "mtime_ns", "size"]
        and all(_int(value) for value in binding.values())
    )


def str_list(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _slow_rows(value: object) -> list[tuple[int, str, list[str]]] | None:
    """The rows ``[expires, holder, [path, ...]]`` of a list as tuples, or None when one is not."""
    if not isinstance(value, list):
        return None
    rows: list[tuple[int, str, list[str]]] = []
    for row in value:
        if not (
            isinstance(row, list)
            and len(row) == 3
            and _int(row[0])
            and isinstance(row[1], str)
            and str_list(row[2])
        ):
            return None
        rows.append((row[0], row[1], row[2]))
    return rows


def _fallback_rows(value: object) -> list[tuple[int, str]] | None:
    """The rows ``[expires, holder]`` of a list as tuples, or None when one is not."""
    if not isinstance(value, list):
        return None
    rows: list[tuple[int, str]] = []
    for row in value:
        if not (isinstance(row, list) and len(row) == 2 and _int(row[0]) and isinstance(row[1], str)):
            return None
        rows.append((row[0], row[1]))
    return rows
