"""Writer ownership before a write (CEO-06): another live writer's lease covering the path denies it.

Decided by the runtime's own router (``route`` with the registry and its index), so the hook and
``workgroup runtime route`` never disagree. The session's own lineage (``--lineage`` or
``WORKGROUP_LINEAGE_ID``) is not another writer. ``toolkit.agents.prewrite`` loads this module
only when the repository has a writer registry at all: without one no lease can cover a path, and
the router's imports are not paid for.
"""

from __future__ import annotations

from toolkit.agents.paths import safe_path
from toolkit.core.display import shown
from toolkit.core.errors import ToolkitError
from toolkit.core.ownership import OverlapIndex, glob_matcher
from toolkit.infra.clock import now_utc
from toolkit.infra.gitlocation import read_owners_registry
from toolkit.infra.paths import Canonicalizer
from toolkit.runtime.adapter import RuntimeContext
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.router import live_registry_writers, op_route, registry_writers


def ownership_holder(root: str, registry: str, rel: str, lineage: str | None) -> str | None:
    """The reason ``rel`` may not be written by this session (another live lease in the writer
    registry at ``registry`` covers it), or None."""
    request: dict[str, object] = {"is_writer": True, "owned_files": [rel]}
    if lineage:
        request["lineage_id"] = lineage
    try:
        decision = op_route({"input": request}, RuntimeContext(cwd=root))
    except RuntimeOpError as exc:
        where = safe_path(rel)
        if exc.code == "INVALID_OWNERSHIP_PATH":
            return f"{where}: the path cannot be checked against the writer registry ({exc.code}); name a plain repository path"
        return f"{where}: the writer registry could not be read ({exc.code}); the write waits until `workgroup owners list` works"
    if "WRITER_OWNERSHIP_CONFLICT" not in decision.get("reason_codes", ()):
        return None
    who = _holder_of(root, registry, rel, lineage)
    held = f"the lease of writer {who}" if who else "another active writer's lease"
    return (
        f"{safe_path(rel)}: {held} covers this path (CEO-06: one writer per path); leave it to that writer, "
        "or wait until `workgroup owners list` no longer shows the lease"
    )


def _holder_of(root: str, registry: str, rel: str, lineage: str | None) -> str | None:
    """The lineage id of a live lease covering ``rel`` (for the reason only; None when unsure)."""
    try:
        writers = registry_writers(read_owners_registry(registry, {"writers": []}))
        canon = Canonicalizer(root)
        mine = canon.keys([rel])
        for writer in live_registry_writers(writers, now_utc(), lineage):
            index = OverlapIndex()
            index.add_all(
                canon.keys(writer.get("owned_files", []) + writer.get("resolved_owned_files", [])), "x"
            )
            globs = writer.get("owned_globs") or []
            if index.first_overlap(mine) is not None or (globs and glob_matcher(globs)(rel)):
                holder = writer.get("lineage_id")
                return shown(holder) if isinstance(holder, str) else None
    except (ToolkitError, OSError, ValueError, TypeError):  # naming the holder is a courtesy: the deny stands
        return None
    return None
