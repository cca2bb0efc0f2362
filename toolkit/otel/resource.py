"""Resource attributes of every export: service, hashed repository id, workgroup and run.

* ``service.name``: ``OTEL_SERVICE_NAME``, else ``service.name`` of ``OTEL_RESOURCE_ATTRIBUTES``,
  else ``workgroup-toolkit``; ``service.version`` is the toolkit's version.
* ``workgroup.repository.id``: SHA-256 (first 32 hex digits) of the repository's root commits.
  Every clone of a repository gets the same id, and the id names neither the repository nor its
  remote (remote URLs can carry credentials and are never read). Cached in local state.
* ``workgroup.id`` and ``workgroup.run.id`` when the caller names them.
* ``OTEL_RESOURCE_ATTRIBUTES`` (``key=value`` pairs, comma separated, values percent-decoded)
  are added under ours; a malformed pair is refused with a coded error that names no value. A
  value the privacy engine's telemetry context flags is replaced by a pseudonym before it is sent
  (``toolkit.otel.withhold``, applied by the export and the live flusher).

Standard library only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote

import toolkit
from toolkit.core.errors import InvalidInput
from toolkit.infra.store import atomic_write

DEFAULT_SERVICE = "workgroup-toolkit"
REPOSITORY_ID_FILE = "repository-id"
_KEY = re.compile(r"^[A-Za-z0-9_.\-/]{1,255}$")
_ID = re.compile(r"^[0-9a-f]{32}$")
MAX_VALUE = 255


def repository_id_from_roots(roots: list[str]) -> str | None:
    if not roots:
        return None
    text = "workgroup-toolkit/repository-id\0" + "\0".join(sorted(roots))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def repository_id(otel_dir: Path, compute_roots: object) -> str | None:
    """The hashed repository id, cached in ``otel_dir`` (``compute_roots()`` walks history once)."""
    cache = otel_dir / REPOSITORY_ID_FILE
    try:
        cached = cache.read_text(encoding="ascii").strip()
        if _ID.fullmatch(cached):
            return cached
    except (OSError, UnicodeDecodeError):
        pass
    assert callable(compute_roots)
    value = repository_id_from_roots(compute_roots())
    if value is not None:
        try:
            otel_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(cache, (value + "\n").encode())
        except OSError:
            pass  # the id is recomputed next time
    return value


def parse_resource_env(raw: str) -> dict[str, str]:
    """``OTEL_RESOURCE_ATTRIBUTES`` as a dict; ``RESOURCE_ATTRIBUTES_INVALID`` (exit 2) when malformed."""
    out: dict[str, str] = {}
    for item in raw.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        key = key.strip()
        try:
            decoded = unquote(value.strip(), errors="strict")
        except UnicodeDecodeError:
            decoded = None
        if not sep or not _KEY.fullmatch(key) or decoded is None or len(decoded) > MAX_VALUE:
            raise InvalidInput(
                "RESOURCE_ATTRIBUTES_INVALID",
                "OTEL_RESOURCE_ATTRIBUTES must be key=value pairs, comma separated",
            )
        out[key] = decoded
    return out


def resource_attributes(
    environ: Mapping[str, str],
    *,
    repository: str | None,
    workgroup: str | None = None,
    run: str | None = None,
) -> dict[str, str]:
    """The resource attributes of an export (environment first, ours on top)."""
    attrs = parse_resource_env(environ.get("OTEL_RESOURCE_ATTRIBUTES", ""))
    service = environ.get("OTEL_SERVICE_NAME", "").strip()
    attrs["service.name"] = service or attrs.get("service.name") or DEFAULT_SERVICE
    attrs["service.version"] = toolkit.__version__
    if repository:
        attrs["workgroup.repository.id"] = repository
    if workgroup:
        attrs["workgroup.id"] = workgroup
    if run:
        attrs["workgroup.run.id"] = run
    return attrs
