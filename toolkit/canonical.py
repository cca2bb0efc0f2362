"""Canonical JSON bytes and ``sha256:`` digests.

Two functions, on purpose (DESIGN.md, Decisions):

* ``capsule_digest`` reproduces the reference runtime's capsule hash: keys sorted recursively,
  ``capsule_hash`` dropped at any depth, compact separators, UTF-8, numbers printed as
  JavaScript prints them (``100.0`` -> ``100``).
* ``signing_bytes`` is RFC 8785 (JCS) via ``rfc8785``, for envelopes and corpus digests.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

SHA256_PREFIX = "sha256:"


def _js_number(value: float) -> int | float:
    if math.isnan(value) or math.isinf(value):
        raise ValueError("non-finite number")
    if value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def _normalize(value: Any, drop_key: str | None) -> Any:
    if isinstance(value, dict):
        return {
            k: _normalize(v, drop_key)
            for k, v in value.items()
            if k != drop_key
        }
    if isinstance(value, (list, tuple)):
        return [_normalize(v, drop_key) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return _js_number(value)
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def canonical_bytes(value: Any, *, drop_key: str | None = None) -> bytes:
    """Sorted keys, compact, UTF-8 (not escaped), JS number printing; ``drop_key`` removed at any depth."""
    normalized = _normalize(value, drop_key)
    return json.dumps(
        normalized, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def sha256_digest(data: bytes) -> str:
    return SHA256_PREFIX + hashlib.sha256(data).hexdigest()


def capsule_digest(capsule: Any) -> str:
    """The reference's ``capsule_hash``: sha256 over canonical bytes without ``capsule_hash``."""
    return sha256_digest(canonical_bytes(capsule, drop_key="capsule_hash"))


def signing_bytes(value: Any) -> bytes:
    """RFC 8785 canonical bytes, for everything that is signed."""
    import rfc8785  # lazy: only signing paths need it

    return bytes(rfc8785.dumps(value))


def dumps_line(value: Any) -> str:
    """One compact JSON line (key order preserved), for protocol output and logs."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
