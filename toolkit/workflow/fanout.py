"""``workgroup fanout check``: validate a proposed fan-out against the active profile.

The seed's fan-out rules: Stage 0 starts with deterministic indexing and ONE analyst; scanners
only for independent slices or material uncertainty; an architect after the Change Set unless
architecture ambiguity prevents it; specialists (knowledge, security, test, design, compliance)
only when scope and active controls require them; extra read-only discovery only with
independently useful (non-overlapping) scopes; the profile's limits hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypedDict

from toolkit.core.errors import InvalidInput
from toolkit.core.jsontypes import JsonObject
from toolkit.workflow.profiles import EffectiveSettings, effective_settings

SPECIALISTS = frozenset({"knowledge", "security", "test", "design", "compliance"})
STAGES = frozenset({"0", "1A", "1B", "2A", "2B", "3"})
# Every code check_plan can report (tests/project/test_closed_vocabularies.py keeps the list exhaustive).
FANOUT_CODES: tuple[str, ...] = (
    "STAGE0_ONE_ANALYST",
    "STAGE0_INDEX_FIRST",
    "SCANNER_UNJUSTIFIED",
    "SCANNER_LIMIT",
    "ARCHITECT_BEFORE_CHANGE_SET",
    "SPECIALIST_UNREQUIRED",
    "SPECIALIST_LIMIT",
    "DISCOVERY_NOT_READ_ONLY",
    "DISCOVERY_SCOPE_NOT_USEFUL",
    "DISCOVERY_SCOPE_OVERLAP",
    "DISCOVERY_LIMIT",
    "WORKER_LIMIT",
    "INHERITED_WRITER_CAP",
)


class PlanError(InvalidInput, ValueError):
    """The plan is not a valid fan-out plan (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__("INVALID_PLAN", message)


class FindingRow(TypedDict):
    """``FanoutFinding.as_dict``: one finding as printed."""

    rule: str
    worker: int | None
    message: str


@dataclass(frozen=True)
class FanoutFinding:
    rule: str
    worker: int | None  # index in workers, or None for the plan as a whole
    message: str

    def as_dict(self) -> FindingRow:
        return {"rule": self.rule, "worker": self.worker, "message": self.message}


@dataclass(frozen=True)
class _Worker:
    """One worker of the plan, parsed once: its role, its scope (None when it names none) and the
    worker as given (the rules read its flags with ``is True``)."""

    role: str
    scope: str | None
    row: JsonObject


def _workers(plan: JsonObject) -> list[_Worker]:
    workers = plan.get("workers")
    if not isinstance(workers, list) or not all(isinstance(w, dict) for w in workers):
        raise PlanError("'workers' must be a list of objects")
    parsed: list[_Worker] = []
    for w in workers:
        role, scope = w.get("role"), w.get("scope")
        if not isinstance(role, str) or not role:
            raise PlanError("every worker needs a 'role'")
        if "scope" in w and not isinstance(scope, str):
            raise PlanError("'scope' must be a string")
        parsed.append(_Worker(role, scope, w))
    return parsed


def _overlaps(a: str, b: str) -> bool:
    a, b = a.strip("/"), b.strip("/")
    return a == b or a.startswith(b + "/") or b.startswith(a + "/") or a == "" or b == ""


@dataclass(frozen=True)
class _Plan:
    """The facts every rule reads: the plan, its workers by role, the active controls, the limits."""

    plan: JsonObject
    stage: str
    workers: list[_Worker]
    by_role: dict[str, list[int]]
    controls: frozenset[str]
    settings: EffectiveSettings  # the profile with config values merged in

    def role(self, name: str) -> list[int]:
        return self.by_role.get(name, [])

    def specialists(self) -> list[int]:
        return [i for i, w in enumerate(self.workers) if w.role in SPECIALISTS]


Findings = Iterator[FanoutFinding]


# --- Stage 0 -------------------------------------------------------------------------------------


def stage0_one_analyst(p: _Plan) -> Findings:
    """Stage 0 starts with exactly one analyst."""
    analysts = p.role("analyst")
    if p.stage == "0" and len(analysts) != 1:
        yield FanoutFinding(
            "STAGE0_ONE_ANALYST", None, f"Stage 0 starts with exactly one analyst (plan has {len(analysts)})"
        )


def stage0_index_first(p: _Plan) -> Findings:
    """Stage 0 begins with the deterministic index."""
    if p.stage == "0" and p.plan.get("indexed") is not True:
        yield FanoutFinding(
            "STAGE0_INDEX_FIRST",
            None,
            "Stage 0 begins with the deterministic index (`workgroup index`); set indexed: true after running it",
        )


# --- scanners, architect, specialists -----------------------------------------------------------


def scanner_justified(p: _Plan) -> Findings:
    """A scanner only for an independent slice or material uncertainty."""
    for i in p.role("scanner"):
        w = p.workers[i].row
        if not (w.get("independent_slice") is True or w.get("material_uncertainty") is True):
            yield FanoutFinding(
                "SCANNER_UNJUSTIFIED", i, "a scanner needs an independent slice or material uncertainty"
            )


def scanner_limit(p: _Plan) -> Findings:
    count, limit = len(p.role("scanner")), p.settings["max_scanners"]
    if count > limit:
        yield FanoutFinding("SCANNER_LIMIT", None, f"{count} scanners exceed the profile's {limit}")


def architect_after_change_set(p: _Plan) -> Findings:
    """An architect after the Change Set, unless architecture ambiguity prevents it."""
    if p.plan.get("change_set_approved") is True or p.plan.get("architecture_ambiguous") is True:
        return
    for i in p.role("architect"):
        yield FanoutFinding(
            "ARCHITECT_BEFORE_CHANGE_SET",
            i,
            "an architect joins after the Change Set unless architecture ambiguity prevents it",
        )


def specialist_required(p: _Plan) -> Findings:
    """A specialist only when the scope or an active control requires it."""
    for i in p.specialists():
        w = p.workers[i]
        required = w.row.get("required_by")
        by_control = isinstance(required, list) and any(
            isinstance(r, str) and r in p.controls for r in required
        )
        if not by_control and w.row.get("scope_requires") is not True:
            yield FanoutFinding(
                "SPECIALIST_UNREQUIRED",
                i,
                f"the {w.role} specialist is not required by the scope or an active control",
            )


def specialist_limit(p: _Plan) -> Findings:
    count, limit = len(p.specialists()), p.settings["max_specialists"]
    if count > limit:
        yield FanoutFinding("SPECIALIST_LIMIT", None, f"{count} specialists exceed the profile's {limit}")


# --- extra read-only discovery (checked worker by worker, each worker's findings together) ------


def discovery_read_only(p: _Plan, n: int, i: int) -> Findings:
    if p.workers[i].row.get("read_only") is not True:
        yield FanoutFinding("DISCOVERY_NOT_READ_ONLY", i, "extra discovery workers are read-only")


def discovery_scope_useful(p: _Plan, n: int, i: int) -> Findings:
    w = p.workers[i]
    if w.row.get("independently_useful") is not True or not w.scope:
        yield FanoutFinding(
            "DISCOVERY_SCOPE_NOT_USEFUL", i, "extra discovery needs an independently useful scope"
        )


def discovery_scope_independent(p: _Plan, n: int, i: int) -> Findings:
    """No two discovery scopes overlap (each worker is compared with the ones before it)."""
    scope = p.workers[i].scope
    for j in p.role("discovery")[:n]:
        other = p.workers[j].scope
        if scope and other and _overlaps(scope, other):
            yield FanoutFinding(
                "DISCOVERY_SCOPE_OVERLAP",
                i,
                f"scope overlaps worker {j}: discovery scopes must be independent",
            )


DISCOVERY_WORKER_RULES: tuple[Callable[[_Plan, int, int], Findings], ...] = (
    discovery_read_only,
    discovery_scope_useful,
    discovery_scope_independent,
)


def discovery_workers(p: _Plan) -> Findings:
    for n, i in enumerate(p.role("discovery")):
        for rule in DISCOVERY_WORKER_RULES:
            yield from rule(p, n, i)


def discovery_limit(p: _Plan) -> Findings:
    count, limit = len(p.role("discovery")), p.settings["max_read_only_discovery"]
    if count > limit:
        yield FanoutFinding(
            "DISCOVERY_LIMIT", None, f"{count} discovery workers exceed the profile's {limit}"
        )


# --- the profile's limits on the whole fan-out --------------------------------------------------


def worker_limit(p: _Plan) -> Findings:
    count, limit = len(p.workers), p.settings["max_parallel_workers"]
    if count > limit:
        yield FanoutFinding("WORKER_LIMIT", None, f"{count} workers exceed the profile's {limit}")


def inherited_writer_cap(p: _Plan) -> Findings:
    """Writers that inherit or resume a context are capped by the profile."""
    count = sum(
        1
        for w in (worker.row for worker in p.workers)
        if w.get("writer") is True and w.get("context") in ("inherit-full", "inherit-recent", "resume")
    )
    limit = p.settings["max_active_inherited"]
    if count > limit:
        yield FanoutFinding("INHERITED_WRITER_CAP", None, f"{count} inherited/resumed writers exceed {limit}")


# The rules in the order their findings are reported.
RULES: tuple[Callable[[_Plan], Findings], ...] = (
    stage0_one_analyst,
    stage0_index_first,
    scanner_justified,
    scanner_limit,
    architect_after_change_set,
    specialist_required,
    specialist_limit,
    discovery_workers,
    discovery_limit,
    worker_limit,
    inherited_writer_cap,
)


def _read_plan(plan: object, config_block: dict[str, object] | None) -> _Plan:
    if not isinstance(plan, dict):
        raise PlanError("the plan must be a JSON/YAML object")
    stage = str(plan.get("stage", ""))
    if stage not in STAGES:
        raise PlanError("'stage' must be one of 0, 1A, 1B, 2A, 2B, 3")
    block = dict(config_block or {})
    if isinstance(plan.get("profile"), str):
        block["profile"] = plan["profile"]
    settings = effective_settings(block)
    workers = _workers(plan)
    by_role: dict[str, list[int]] = {}
    for i, w in enumerate(workers):
        by_role.setdefault(w.role, []).append(i)
    active = plan.get("active_controls", [])
    if not isinstance(active, list):
        raise PlanError("'active_controls' must be a list")
    controls = frozenset(c for c in active if isinstance(c, str))
    return _Plan(plan, stage, workers, by_role, controls, settings)


def check_plan(
    plan: object, config_block: dict[str, object] | None = None
) -> tuple[EffectiveSettings, list[FanoutFinding]]:
    """Return (effective profile settings, findings), one rule of ``RULES`` after the other. Pure."""
    facts = _read_plan(plan, config_block)
    return facts.settings, [finding for rule in RULES for finding in rule(facts)]
