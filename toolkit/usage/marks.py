"""Whether the part of a log read before is still there: a digest of its first bytes and of the
bytes just before the offset read up to (standard library only: the status line checks it on a
refresh that reads nothing else)."""

from __future__ import annotations

import os
from hashlib import blake2b

MARK = 256  # bytes at the start and just before the offset whose digest says the read part is unchanged


def mark(fd: int, offset: int) -> str:
    """Digest of the first and the last ``MARK`` bytes before ``offset``."""
    start = max(0, offset - MARK)
    head = os.pread(fd, min(MARK, offset), 0)
    return blake2b(head + b"\x00" + os.pread(fd, offset - start, start), digest_size=16).hexdigest()
