"""The router: ``route {input}`` -> ``{mode, reason_codes}`` by the reference's rules (stdlib only).

First match wins:

1. a writer whose scope overlaps an active writer (equality or containment, after aliases are
   resolved) -> ``local`` [WRITER_OWNERSHIP_CONFLICT];
2. nesting depth >= max -> ``local`` [NESTING_LIMIT];
3. trivial, blocking or tight coupling -> ``local`` [LOCAL_CHEAPER and/or BLOCKING];
4. independent reviewer, restricted/isolated sensitivity or unsafe inheritance ->
   ``fresh-capsule`` [INDEPENDENT_CAPSULE + SENSITIVITY_ISOLATION/REVIEW_INDEPENDENCE];
5. (writer inference and the inherited-writer cap);
6. compatible, resumable lineage -> ``resume`` [RESUME_COMPATIBLE];
7. high affinity inheritance, explicitly safe and within budget -> ``inherit-recent`` or
   ``inherit-full``;
8. a compatible team with ``capsule_sufficient: false`` -> ``coordinated-team``;
9. else ``fresh-capsule`` [INDEPENDENT_CAPSULE (+ CAPABILITY_FALLBACK)].

Flags the reference tests with ``=== true`` are strict here; the few it tests for JavaScript
truthiness (``trivial``, ``blocking``, ``recent_*``, ``full_supported``) are truthy here, so the
same request gives the same decision. Unknown input fields are ignored.

When a request names no active writers, ``op_route`` reads the persistent registry written by
``workgroup owners`` (once per process, so ``--batch`` pays for it once). Every read (the
registry, the clock, tracked files, ``realpath``) goes through the context
(``toolkit.runtime.adapter``); this module does no I/O itself. The runtime never writes.
"""

from __future__ import annotations

import math
import re

from toolkit.core.errors import ToolkitError
from toolkit.core.jscompat import js_truthy
from toolkit.core.ownership import OverlapIndex, OwnershipPathError, check_globs, glob_matcher
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.vocabulary import MODES, REASON_CODES

# runs on every ``workgroup runtime route``: typing and datetime stay out of start-up
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime
    from typing import TypeGuard

    from toolkit.core.jsontypes import JsonObject
    from toolkit.core.owners_index import OwnersIndex
    from toolkit.infra.paths import Canonicalizer
    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.route_types import RegistryWriter, RouteDecision, RoutingEvidence

    # (the index, its work tree's canonicalizer, now in microseconds since the epoch, the proposed lineage)
    Indexed = tuple[OwnersIndex, Canonicalizer, int | None, object]
    # a registry writer's (owned_files, resolved_owned_files) -> its keys, across one ``--batch``
    KeyCache = dict[tuple[tuple[object, ...], tuple[object, ...]], list[str]]

_REASON_ORDER = {code: index for index, code in enumerate(REASON_CODES)}
_WRITER_ROLE = re.compile(r"(?:^|[-_])(builder|writer|implementer)(?:$|[-_])")
_REGISTRY_CACHE_KEY = "router.owners_registry"
_KEYS_CACHE_KEY = "router.registry_keys"
_SEEN_KEY = "router.registry_requests"
_INDEX_CACHE_KEY = "router.owners_index"


class IndexUndecided(ToolkitError):
    """The registry index cannot answer this request exactly: read the registry in full (never
    leaves the router; the full read answers instead)."""

    def __init__(self) -> None:
        super().__init__("INDEX_UNDECIDED", "the registry index cannot answer this request exactly")


def decision(mode: str, reasons: Sequence[str]) -> RouteDecision:
    """``{mode, reason_codes}`` with the reasons deduplicated and in the fixed order."""
    if mode not in MODES:  # pragma: no cover - every caller passes a literal mode
        raise RuntimeOpError("INVALID_REQUEST")
    return {"mode": mode, "reason_codes": sorted(set(reasons), key=_REASON_ORDER.__getitem__)}


def _is_int(value: object) -> TypeGuard[int | float]:
    """JavaScript ``Number.isInteger``: ints and integral floats, never booleans."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def _is_finite_number(value: object) -> TypeGuard[int | float]:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _obj(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _js_string(value: object) -> str:
    """``${value}`` for the values a role can plausibly be."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _role(inp: Mapping[str, object]) -> object:
    role = inp.get("role")
    return _obj(inp.get("lineage")).get("role") if role is None else role


def _path_list(value: object) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RuntimeOpError("INVALID_OWNERSHIP_PATH")
    return value


def _non_empty_list(value: object) -> bool:
    return isinstance(value, list) and len(value) > 0


def _scope_keys(scope: Mapping[str, object], canon: Canonicalizer) -> list[str]:
    raw = _path_list(scope.get("owned_files")) + _path_list(scope.get("resolved_owned_files"))
    return canon.keys(raw)


def _team_scopes(inp: Mapping[str, object]) -> list[object]:
    scopes = _obj(inp.get("team")).get("scopes")
    return _path_list(scopes)


def _proposed_keys(inp: Mapping[str, object], canon: Canonicalizer) -> list[str]:
    lineage = _obj(inp.get("lineage"))
    raw: list[object] = []
    for source in (inp, lineage):
        raw += _path_list(source.get("owned_files"))
        raw += _path_list(source.get("resolved_owned_files"))
    for scope in _team_scopes(inp):
        if isinstance(scope, dict) and scope.get("is_writer") is not False:
            raw += _path_list(scope.get("owned_files"))
            raw += _path_list(scope.get("resolved_owned_files"))
    return canon.keys(raw)


def _writer_conflict(
    inp: JsonObject,
    canon: Canonicalizer,
    active_writers: object,
    active_canon: Canonicalizer,
    from_registry: bool,
    key_cache: KeyCache | None = None,
    indexed: Indexed | None = None,
) -> bool:
    """Rule 1. Also raises the coded refusals for bad paths and unscoped writers.

    ``key_cache`` memoizes the keys of registry writers (validated lists of strings) across the
    requests of one ``--batch``. ``indexed``: the registry's writers are looked up in its index
    instead (``IndexUndecided`` when it cannot answer exactly).
    """
    writers = _path_list(active_writers)
    proposed = _proposed_keys(inp, canon)
    looks_writer = (
        inp.get("is_writer") is True
        or bool(proposed)
        or _WRITER_ROLE.search(_js_string(_role(inp)).lower()) is not None
    )
    if not looks_writer:
        return False
    if not proposed:
        raise RuntimeOpError("WRITER_SCOPE_REQUIRED")
    if indexed is not None:
        return _indexed_conflict(proposed, *indexed)
    index = OverlapIndex()
    index.add_all(proposed, "proposed")
    if key_cache is not None and from_registry:
        return _memoized_registry_conflict(index, writers, active_canon, key_cache)
    return _listed_writers_conflict(index, writers, active_canon, from_registry)


def _memoized_registry_conflict(
    index: OverlapIndex, writers: list[object], active_canon: Canonicalizer, key_cache: KeyCache
) -> bool:
    """Rule 1 against registry writers whose keys are memoized across one ``--batch``.

    A bad registry entry (not an object, no scope, a path that does not canonicalize) is the
    environment's fault: ``ENVIRONMENT_ERROR``.
    """
    for active in writers:
        try:
            if not isinstance(active, dict):
                raise RuntimeOpError("INVALID_OWNERSHIP_PATH")
            memo = (
                tuple(active.get("owned_files") or ()),
                tuple(active.get("resolved_owned_files") or ()),
            )
            keys = key_cache.get(memo)
            if keys is None:
                keys = key_cache[memo] = _scope_keys(active, active_canon)
            if not keys:
                raise RuntimeOpError("WRITER_SCOPE_REQUIRED")
            if index.first_overlap(keys) is not None:
                return True
        except (RuntimeOpError, OwnershipPathError):
            raise RuntimeOpError("ENVIRONMENT_ERROR") from None
    return False


def _listed_writers_conflict(
    index: OverlapIndex, writers: list[object], active_canon: Canonicalizer, from_registry: bool
) -> bool:
    """Rule 1 against writers read afresh (the request's own, or the registry's without a memo).

    A bad writer is the request's refusal, or ``ENVIRONMENT_ERROR`` when it came from the registry.
    """
    for active in writers:
        try:
            if not isinstance(active, dict):
                raise RuntimeOpError("INVALID_OWNERSHIP_PATH")
            raw = _path_list(active.get("owned_files")) + _path_list(active.get("resolved_owned_files"))
            if not raw:
                raise RuntimeOpError("WRITER_SCOPE_REQUIRED")
            if active_canon.first_overlap(index, raw) is not None:
                return True
        except (RuntimeOpError, OwnershipPathError):
            if from_registry:  # the registry was written validated: a bad entry is the environment's fault
                raise RuntimeOpError("ENVIRONMENT_ERROR") from None
            raise
    return False


def _indexed_conflict(
    proposed: list[str], index: OwnersIndex, canon: Canonicalizer, now: int | None, exclude: object
) -> bool:
    """Rule 1 against the registry's index: the same answer as the full read of every live writer
    (whose paths the owners command validated when it wrote both), or ``IndexUndecided``.

    Undecided: a live lease the index does not hold paths of (owned globs, no path), a path of a
    live lease that no longer canonicalizes, a symlink on the way to an indexed path (its key
    would not be the lexical one), or a proposed key holding the whole work tree.
    """
    if index.empty():
        return False
    if now is None:
        raise IndexUndecided
    at = now
    mine = isinstance(exclude, str)

    def live(expires: int, holder: str) -> bool:
        return expires > at and not (mine and holder == exclude)

    if any(live(expires, holder) for expires, holder in index.fallback):
        raise IndexUndecided
    root_prefix = _index_root_prefix(proposed, index, canon)
    if _slow_entries_conflict(proposed, index, canon, live):
        return True
    cut = len(root_prefix)
    try:
        return any(
            key.startswith(root_prefix) and index.live_overlap(key[cut:], at, exclude) for key in proposed
        )
    except ValueError:
        raise IndexUndecided from None


def _slow_entries_conflict(
    proposed: list[str], index: OwnersIndex, canon: Canonicalizer, live: Callable[[int, str], bool]
) -> bool:
    """Whether a live lease of the index's slow part (paths not keyed lexically) overlaps the
    proposed keys; ``IndexUndecided`` when one of its paths no longer canonicalizes."""
    odd = OverlapIndex()
    for expires, holder, paths in index.slow:
        if live(expires, holder):
            try:
                odd.add_all(canon.keys(paths), holder)
            except OwnershipPathError:
                raise IndexUndecided from None
    return bool(odd.exact) and odd.first_overlap(proposed) is not None


def _index_root_prefix(proposed: list[str], index: OwnersIndex, canon: Canonicalizer) -> str:
    """The work tree's key prefix, once the index's lexical keys are known to be the real ones
    (no symlink on the way to an indexed path) and no proposed key holds the whole work tree;
    otherwise ``IndexUndecided``."""
    for head in index.heads:
        links = canon.plain_dir_links(head)
        if links is None or any(
            index.has_key((head + "/" + name if head else name).lower()) for name in links
        ):
            raise IndexUndecided
    root_prefix = canon.root_key_prefix()
    if root_prefix is None:
        raise IndexUndecided
    for key in proposed:
        if not key.startswith(root_prefix) and root_prefix.startswith(key.rstrip("/") + "/"):
            raise IndexUndecided  # the work tree itself or above it: left to the full read
    return root_prefix


def _team_scopes_overlap(scopes: object, canon: Canonicalizer) -> bool:
    """Overlap ACROSS team writer scopes (equality or containment); within one scope is fine."""
    index = OverlapIndex()
    for number, scope in enumerate(_path_list(scopes)):
        if not isinstance(scope, dict):
            raise RuntimeOpError("INVALID_OWNERSHIP_PATH")
        if scope.get("is_writer") is False:
            continue
        keys = _scope_keys(scope, canon)
        if not keys:
            raise RuntimeOpError("WRITER_SCOPE_REQUIRED")
        if index.first_overlap(keys) is not None:
            return True
        index.add_all(keys, str(number))
    return False


def _inferred_writer(inp: JsonObject) -> bool:
    lineage = _obj(inp.get("lineage"))
    if inp.get("is_writer") is True:
        return True
    for source in (inp, lineage):
        if _non_empty_list(source.get("owned_files")) or _non_empty_list(source.get("resolved_owned_files")):
            return True
    team_scopes = _obj(inp.get("team")).get("scopes")
    if isinstance(team_scopes, list) and any(_writer_scope_with_paths(scope) for scope in team_scopes):
        return True
    return _WRITER_ROLE.search(_js_string(_role(inp)).lower()) is not None


def _writer_scope_with_paths(scope: object) -> bool:
    """A team scope that is not marked read-only and names owned paths makes the task a writer."""
    return (
        isinstance(scope, dict)
        and scope.get("is_writer") is not False
        and (_non_empty_list(scope.get("owned_files")) or _non_empty_list(scope.get("resolved_owned_files")))
    )


def _int_field(inp: JsonObject, name: str, default: int, minimum: int) -> int:
    value = inp.get(name)
    if value is None:
        return default
    if not _is_int(value) or value < minimum:
        raise RuntimeOpError("INVALID_REQUEST")
    return int(value)


def route_task(
    input: JsonObject,
    *,
    workspace_root: str,
    ctx: RuntimeContext,
    active_writers: object = None,
    active_root: str | None = None,
    from_registry: bool = False,
    key_cache: KeyCache | None = None,
    indexed: Indexed | None = None,
) -> RouteDecision:
    """Decide the mode of one delegation.

    ``active_writers`` defaults to the request's ``active_writers``/``active_writer_scopes``;
    ``active_root`` is the root their paths are relative to (default ``workspace_root``).
    Paths are resolved by ``ctx.canonicalizer(root)`` (the adapter's ``realpath`` lookups, shared
    by the requests of one ``--batch``).
    Raises ``RuntimeOpError`` with the reference's codes.
    """
    inp = input
    if not isinstance(inp, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    root = inp.get("workspace_root", workspace_root)
    if root is None:
        root = workspace_root
    try:
        canon = ctx.canonicalizer(root) if isinstance(root, str) else None
        if canon is None:
            raise RuntimeOpError("INVALID_OWNERSHIP_PATH")
        if active_writers is None:
            active_writers = inp.get("active_writers")
            if active_writers is None:
                active_writers = inp.get("active_writer_scopes")
        active_canon = canon if active_root is None else ctx.canonicalizer(active_root)
        if _writer_conflict(inp, canon, active_writers, active_canon, from_registry, key_cache, indexed):
            return decision("local", ["WRITER_OWNERSHIP_CONFLICT"])
    except OwnershipPathError:
        raise RuntimeOpError("INVALID_OWNERSHIP_PATH") from None

    return _route_after_ownership(inp, canon)


# --- the numbered rules of the reference router (§3); the first that answers wins -------------
# Rule 1 (writer overlap) needs the canonicalizers and runs in ``route_task`` itself. Each later
# rule reads the request and the facts the earlier rules established, and returns a decision or
# None. The facts are a small slotted object, not a dataclass: this module is on the runtime path.


class _Facts:
    __slots__ = (
        "inp", "canon", "depth", "max_depth", "inheritance", "lineage", "at_cap", "resumable",
        "wants_inheritance", "inheritance_ok", "recent", "full", "team_requested", "team_ok",
    )  # fmt: skip

    def __init__(self, inp: JsonObject, canon: Canonicalizer) -> None:
        self.inp = inp
        self.canon = canon
        self.depth = _int_field(inp, "nesting_depth", 0, 0)
        self.max_depth = _int_field(inp, "max_nesting_depth", 2, 1)
        self.inheritance = _obj(inp.get("inheritance"))
        self.lineage = _obj(inp.get("lineage"))
        self.at_cap = False
        self.resumable = False
        self.wants_inheritance = False
        self.inheritance_ok = False
        self.recent = False
        self.full = False
        self.team_requested = False
        self.team_ok = False


if TYPE_CHECKING:  # an alias for annotations only: route_types is not imported at run time
    _Decision = RouteDecision | None


def _rule2_nesting_limit(f: _Facts) -> _Decision:
    """2. depth (default 0) >= max (default 2) -> local [NESTING_LIMIT]."""
    return decision("local", ["NESTING_LIMIT"]) if f.depth >= f.max_depth else None


def _rule3_local(f: _Facts) -> _Decision:
    """3. trivial, blocking or tight coupling -> local [LOCAL_CHEAPER if trivial/tight; BLOCKING]."""
    trivial, blocking = js_truthy(f.inp.get("trivial")), js_truthy(f.inp.get("blocking"))
    tight = f.inp.get("coupling", "independent") == "tight"
    if not (trivial or blocking or tight):
        return None
    return decision(
        "local", (["LOCAL_CHEAPER"] if trivial or tight else []) + (["BLOCKING"] if blocking else [])
    )


def _rule4_independence(f: _Facts) -> _Decision:
    """4. independent reviewer, restricted/isolated sensitivity or unsafe inheritance -> fresh-capsule."""
    reviewer = f.inp.get("independent_reviewer") is True
    sensitive = f.inp.get("sensitivity") in ("restricted", "isolated") or f.inheritance.get("safe") is False
    if not (reviewer or sensitive):
        return None
    reasons = ["INDEPENDENT_CAPSULE"]
    reasons += ["SENSITIVITY_ISOLATION"] if sensitive else []
    reasons += ["REVIEW_INDEPENDENCE"] if reviewer else []
    return decision("fresh-capsule", reasons)


def _rule5_writer_cap(f: _Facts) -> _Decision:
    """5. A writer at the inherited-writer cap (default 2) may not resume or inherit. Never answers."""
    if _inferred_writer(f.inp):
        active_inherited = _int_field(f.inp, "active_inherited_writers", 0, 0)
        max_inherited = _int_field(f.inp, "max_active_inherited", 2, 1)
        f.at_cap = active_inherited >= max_inherited
    return None


def _rule6_resume(f: _Facts) -> _Decision:
    """6. compatible and resumable lineage, not at the cap, no contaminated or reviewed builder -> resume."""
    f.resumable = f.lineage.get("compatible") is True and f.lineage.get("resumable") is True
    if (
        f.resumable
        and not f.at_cap
        and f.lineage.get("role") != "builder-contaminated"
        and not (f.inp.get("role") == "reviewer" and f.lineage.get("role") == "builder")
    ):
        return decision("resume", ["RESUME_COMPATIBLE"])
    return None


def _rule7_inheritance(f: _Facts) -> _Decision:
    """7. high affinity, safe, in budget, not at the cap, depth < max -> inherit-recent or inherit-full."""
    inheritance = f.inheritance
    f.wants_inheritance = inheritance.get("affinity") == "high"
    f.inheritance_ok = (
        f.wants_inheritance
        and inheritance.get("safe") is True
        and inheritance.get("within_budget") is True
        and not f.at_cap
        and f.depth < f.max_depth
    )
    f.recent = js_truthy(inheritance.get("recent_sufficient")) and js_truthy(
        inheritance.get("recent_supported")
    )
    f.full = js_truthy(inheritance.get("full_supported"))
    if f.inheritance_ok and f.recent:
        return decision("inherit-recent", ["BOUNDED_RECENT_CONTEXT"])
    if f.inheritance_ok and f.full:
        return decision("inherit-full", ["HIGH_CONTEXT_AFFINITY"])
    return None


def _rule8_team(f: _Facts) -> _Decision:
    """8. a requested team that is supported, safe, approved, in budget, fast enough, without overlap."""
    inp, team = f.inp, _obj(f.inp.get("team"))
    peers = team.get("peers")
    f.team_requested = team.get("coordination_required") is True and _is_int(peers) and peers >= 2
    f.team_ok = bool(
        f.team_requested and _team_admissible(team, inp) and not _team_overlap(team.get("scopes"), f.canon)
    )
    if f.team_ok and inp.get("capsule_sufficient") is False:
        return decision("coordinated-team", ["TEAM_COORDINATION_REQUIRED"])
    return None


def _team_admissible(team: JsonObject, inp: JsonObject) -> bool:
    """A team the provider supports, marked safe and approved for normal sensitivity, in budget,
    with a latency ratio of at most 0.75 (scope overlap is checked after)."""
    latency = team.get("latency_ratio")
    return (
        team.get("provider_supported") is True
        and team.get("safe") is True
        and team.get("sensitivity_approved") is True
        and inp.get("sensitivity") == "normal"
        and team.get("within_budget") is True
        and _is_finite_number(latency)
        and 0 <= latency <= 0.75
    )


def _rule9_fresh_capsule(f: _Facts) -> RouteDecision:
    """9. fresh-capsule, with CAPABILITY_FALLBACK when a wanted mode could not be served."""
    fallback = (
        (f.wants_inheritance and not (f.inheritance_ok and (f.full or f.recent)))
        or (f.team_requested and not f.team_ok)
        or (f.resumable and f.at_cap)
    )
    return decision("fresh-capsule", ["INDEPENDENT_CAPSULE"] + (["CAPABILITY_FALLBACK"] if fallback else []))


_RULES = (
    _rule2_nesting_limit,
    _rule3_local,
    _rule4_independence,
    _rule5_writer_cap,
    _rule6_resume,
    _rule7_inheritance,
    _rule8_team,
)


def _route_after_ownership(inp: JsonObject, canon: Canonicalizer) -> RouteDecision:
    facts = _Facts(inp, canon)
    for rule in _RULES:
        answer = rule(facts)
        if answer is not None:
            return answer
    return _rule9_fresh_capsule(facts)


def _team_overlap(scopes: object, canon: Canonicalizer) -> bool:
    try:
        return _team_scopes_overlap(scopes, canon)
    except OwnershipPathError:
        raise RuntimeOpError("INVALID_OWNERSHIP_PATH") from None


EVIDENCE_SCHEMA = "workgroup.routing-evidence/v1"
_EVIDENCE_TEXT_LIMIT = 256


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and len(value) <= _EVIDENCE_TEXT_LIMIT else None


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _size(value: object) -> int | None:
    return int(value) if _is_int(value) and value >= 0 else None


def routing_evidence(
    facts: Mapping[str, object], result: RouteDecision, *, recorded_at: str
) -> RoutingEvidence:
    """The seed's routing evidence of one decision (typed fields only; anything else is null)."""
    lineage = _obj(facts.get("lineage"))
    inheritance = _obj(facts.get("inheritance"))
    owned = facts.get("owned_files")
    invalidations = lineage.get("invalidations")
    return {
        "schema": EVIDENCE_SCHEMA,
        "recorded_at": recorded_at,
        "task_id": _text(facts.get("task_id")),
        "node_id": _text(facts.get("node_id")),
        "phase": _text(facts.get("phase")),
        "role": _text(facts.get("role")),
        "owned_files": [p for p in owned if isinstance(p, str)] if isinstance(owned, list) else [],
        "dependency_ready": _flag(facts.get("dependency_ready")),
        "blocking": _flag(facts.get("blocking")),
        "coupling": _text(facts.get("coupling")),
        "context_reuse": _text(facts.get("context_reuse", inheritance.get("affinity"))),
        "sensitivity": _text(facts.get("sensitivity")),
        "independent_reviewer": _flag(facts.get("independent_reviewer")),
        "sizes": {
            "capsule_bytes": _size(facts.get("capsule_bytes")),
            "inherited_context_bytes": _size(facts.get("inherited_context_bytes")),
            "expected_output_bytes": _size(facts.get("expected_output_bytes")),
        },
        "latency_priority": _text(facts.get("latency_priority")),
        "lineage_candidate": _text(facts.get("lineage_id", lineage.get("lineage_id"))),
        "invalidation_result": {
            "state": _text(lineage.get("state")),
            "invalidations": [c for c in invalidations if isinstance(c, str)]
            if isinstance(invalidations, list)
            else [],
        },
        "mode": result["mode"],
        "reason_codes": list(result["reason_codes"]),
    }


# --- the op: the persistent registry and owned globs, read through the context ---------------


def _load_registry(ctx: RuntimeContext) -> tuple[str, list[RegistryWriter]] | None:
    """(work tree, registry writers) of the repository containing ``ctx.cwd``, read once per process."""
    if _REGISTRY_CACHE_KEY in ctx.cache:
        cached: tuple[str, list[RegistryWriter]] | None = ctx.cache[_REGISTRY_CACHE_KEY]
        return cached
    found = ctx.writer_registry()
    loaded = None if found is None else (found[0], registry_writers(found[1]))
    ctx.cache[_REGISTRY_CACHE_KEY] = loaded
    return loaded


def _load_index(ctx: RuntimeContext) -> tuple[str, OwnersIndex] | None:
    """(work tree, registry index) while the index is bound to the registry's bytes, read once
    per process; None when there is none to trust (the registry is then read in full)."""
    if _INDEX_CACHE_KEY not in ctx.cache:
        ctx.cache[_INDEX_CACHE_KEY] = ctx.writer_registry_index()
    cached: tuple[str, OwnersIndex] | None = ctx.cache[_INDEX_CACHE_KEY]
    return cached


def registry_writers(data: object) -> list[RegistryWriter]:
    """The writers of a decoded registry file; a malformed one is ``ENVIRONMENT_ERROR``."""
    writers = data.get("writers") if isinstance(data, dict) else None
    if not isinstance(writers, list) or not all(_valid_entry(w) for w in writers):
        raise RuntimeOpError("ENVIRONMENT_ERROR")
    checked: list[RegistryWriter] = writers  # each entry is what _valid_entry checked
    return checked


def _valid_entry(writer: object) -> bool:
    if not isinstance(writer, dict) or not isinstance(writer.get("lease_expires_at"), str):
        return False
    for name in ("owned_files", "resolved_owned_files", "owned_globs"):
        value = writer.get(name, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return False
    return True


def live_registry_writers(
    writers: list[RegistryWriter], now: datetime, exclude_lineage: object
) -> list[RegistryWriter]:
    """Registry entries whose lease has not expired, minus the proposed lineage's own lease."""
    from toolkit.core.timefmt import parse_rfc3339

    live: list[RegistryWriter] = []
    for writer in writers:
        expires = parse_rfc3339(writer.get("lease_expires_at"))
        if expires is None:
            raise RuntimeOpError("ENVIRONMENT_ERROR")
        if expires <= now:
            continue
        # the holder re-routing its own scope is not a second writer
        if isinstance(exclude_lineage, str) and writer.get("lineage_id") == exclude_lineage:
            continue
        live.append(writer)
    return live


def _expand_owned_globs(inp: JsonObject, root: str, ctx: RuntimeContext) -> JsonObject:
    """Rarely used: ``owned_globs`` expanded against the tracked files into ``resolved_owned_files``."""
    globs = inp.get("owned_globs")
    if globs is None or globs == []:
        return inp
    try:
        # a bad glob is the request's fault, whatever the environment; the checked globs (``/``
        # separators) match what the request's own would: the tracked-file lookup checks them again
        checked = check_globs(globs)
    except OwnershipPathError:
        raise RuntimeOpError("INVALID_OWNERSHIP_GLOB") from None
    resolved = _path_list(inp.get("resolved_owned_files"))
    # relative to the workspace root; a match outside it is refused later as INVALID_OWNERSHIP_PATH
    return {**inp, "resolved_owned_files": resolved + ctx.owned_glob_matches(checked, root)}


def _apply_held_globs(
    inp: JsonObject,
    live: list[RegistryWriter],
    root: object,
    workdir: str,
    ctx: RuntimeContext,
) -> list[RegistryWriter]:
    """Rarely used: a held glob also covers new, untracked files it matches.

    Each proposed path a live writer's glob matches is added to that writer's resolved paths, so
    rule 1 reports the conflict in its place in the rule order.
    """
    if not isinstance(root, str) or not root.strip():
        return live
    rels = _proposed_rels(inp, ctx.canonicalizer(root), ctx.realpath(workdir).rstrip("/") + "/")
    return [_HeldGlobs(writer).with_matches(rels) for writer in live] if rels else live


def _proposed_rels(inp: JsonObject, canon: Canonicalizer, real_workdir: str) -> list[str]:
    """The proposed owned paths (the task's, its lineage's, its team scopes') that canonicalize
    inside the work tree, relative to it; the others are refused by route_task itself, in order."""
    sources = [inp, _obj(inp.get("lineage"))]
    sources += [s for s in _list_or_empty(_obj(inp.get("team")).get("scopes")) if isinstance(s, dict)]
    rels = []
    for path in (p for source in sources for name in _OWNED_FIELDS for p in _list_or_empty(source.get(name))):
        rel = _rel_below(canon, path, real_workdir)
        if rel is not None:
            rels.append(rel)
    return rels


def _rel_below(canon: Canonicalizer, path: object, real_workdir: str) -> str | None:
    """``path`` relative to the work tree when it canonicalizes strictly inside it, else None."""
    try:
        real = canon.canonical(path)
    except OwnershipPathError:
        return None
    absolute = canon.real_root.rstrip("/") + "/" + real.rel if real.rel else canon.real_root
    if (absolute + "/").startswith(real_workdir) and absolute + "/" != real_workdir:
        return absolute[len(real_workdir) :]
    return None


_OWNED_FIELDS = ("owned_files", "resolved_owned_files")


def _list_or_empty(value: object) -> list[object]:
    return value if isinstance(value, list) else []


class _HeldGlobs:
    """What the held-glob rule reads of a registry writer, parsed once: its owned globs (empty
    unless a list of strings) and its resolved paths (empty unless a list). A plain class: a
    dataclass would import dataclasses and inspect on every route."""

    __slots__ = ("globs", "resolved", "writer")

    def __init__(self, writer: RegistryWriter) -> None:
        globs = writer.get("owned_globs")
        resolved = writer.get("resolved_owned_files")
        self.globs: list[str] = (
            globs if isinstance(globs, list) and all(isinstance(g, str) for g in globs) else []
        )
        self.resolved: list[str] = resolved if isinstance(resolved, list) else []
        self.writer = writer

    def with_matches(self, rels: list[str]) -> RegistryWriter:
        """The writer with the proposed paths its owned globs match added to its resolved paths."""
        if not self.globs:
            return self.writer
        match = glob_matcher(self.globs)
        matched = [rel for rel in rels if match(rel)]
        if not matched:
            return self.writer
        return {**self.writer, "resolved_owned_files": self.resolved + matched}


def op_route(request: Mapping[str, object], ctx: RuntimeContext) -> RouteDecision:
    """``workgroup runtime route``: ``{input}`` -> ``{mode, reason_codes}``."""
    raw = request.get("input")
    if not isinstance(raw, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    inp: JsonObject = raw  # the request's input as it came off the protocol: each field is checked where read
    cwd = ctx.cwd
    root = inp.get("workspace_root")
    root = cwd if root is None else root
    if isinstance(root, str) and root.strip():
        inp = _expand_owned_globs(inp, root, ctx)
    if inp.get("active_writers") is not None or inp.get("active_writer_scopes") is not None:
        return route_task(inp, workspace_root=cwd, ctx=ctx)
    proposed_lineage = inp.get("lineage_id")
    if proposed_lineage is None:
        proposed_lineage = _obj(inp.get("lineage")).get("lineage_id")
    answer = _route_by_index(inp, ctx, proposed_lineage)
    if answer is not None:
        return answer
    return _route_by_registry(inp, ctx, root, proposed_lineage)


def _route_by_index(inp: JsonObject, ctx: RuntimeContext, proposed_lineage: object) -> RouteDecision | None:
    """The decision with the registry's writers looked up in its index; None when there is no
    trusted index or it cannot answer exactly (the full read answers then)."""
    found = _load_index(ctx)
    if found is None:
        return None
    workdir, index = found
    now = None if index.empty() else ctx.now_micros()  # the index's unit: no datetime to import
    indexed = (index, ctx.canonicalizer(workdir), now, proposed_lineage)
    try:
        return route_task(
            inp, workspace_root=ctx.cwd, ctx=ctx, active_writers=[], active_root=workdir, indexed=indexed
        )
    except IndexUndecided:
        return None


def _route_by_registry(
    inp: JsonObject, ctx: RuntimeContext, root: object, proposed_lineage: object
) -> RouteDecision:
    """The decision against the live writers of the registry read in full (none without one)."""
    cwd = ctx.cwd
    loaded = _load_registry(ctx)
    if loaded is None:
        return route_task(inp, workspace_root=cwd, ctx=ctx, active_writers=[])
    workdir, writers = loaded
    live: list[RegistryWriter] = []
    if writers:  # only a registry with leases needs the clock
        live = live_registry_writers(writers, ctx.now(), proposed_lineage)
    # memoize registry keys from the second request of a batch on: a single call is faster without
    seen = ctx.cache.get(_SEEN_KEY, 0)
    ctx.cache[_SEEN_KEY] = seen + 1
    key_cache = ctx.cache.setdefault(_KEYS_CACHE_KEY, {}) if seen else None
    if any(writer.get("owned_globs") for writer in live):
        live = _apply_held_globs(inp, live, root, workdir, ctx)
    return route_task(
        inp,
        workspace_root=cwd,
        ctx=ctx,
        active_writers=live,
        active_root=workdir,
        from_registry=True,
        key_cache=key_cache,
    )
