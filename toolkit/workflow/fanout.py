"""``workgroup fanout check``: validate a proposed fan-out against the active profile.

The seed's fan-out rules: Stage 0 starts with deterministic indexing and ONE analyst; scanners
only for independent slices or material uncertainty; an architect after the Change Set unless
architecture ambiguity prevents it; specialists (knowledge, security, test, design, compliance)
only when scope and active controls require them; extra read-only discovery only with
independently useful (non-overlapping) scopes; the profile's limits hold.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from toolkit.core.errors import InvalidInput
from toolkit.workflow.profiles import effective_settings

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


@dataclass(frozen=True)
class FanoutFinding:
    rule: str
    worker: int | None  # index in workers, or None for the plan as a whole
    message: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _workers(plan: dict[str, Any]) -> list[dict[str, Any]]:
    workers = plan.get("workers")
    if not isinstance(workers, list) or not all(isinstance(w, dict) for w in workers):
        raise PlanError("'workers' must be a list of objects")
    for w in workers:
        if not isinstance(w.get("role"), str) or not w["role"]:
            raise PlanError("every worker needs a 'role'")
        if "scope" in w and not isinstance(w["scope"], str):
            raise PlanError("'scope' must be a string")
    return workers


def _overlaps(a: str, b: str) -> bool:
    a, b = a.strip("/"), b.strip("/")
    return a == b or a.startswith(b + "/") or b.startswith(a + "/") or a == "" or b == ""


def check_plan(
    plan: Any, config_block: dict[str, Any] | None = None
) -> tuple[dict[str, Any], list[FanoutFinding]]:
    """Return (effective profile settings, findings). Pure."""
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
    controls = {c for c in plan.get("active_controls", []) if isinstance(c, str)}
    out: list[FanoutFinding] = []
    by_role: dict[str, list[int]] = {}
    for i, w in enumerate(workers):
        by_role.setdefault(w["role"], []).append(i)

    if stage == "0":
        analysts = by_role.get("analyst", [])
        if len(analysts) != 1:
            out.append(
                FanoutFinding(
                    "STAGE0_ONE_ANALYST",
                    None,
                    f"Stage 0 starts with exactly one analyst (plan has {len(analysts)})",
                )
            )
        if plan.get("indexed") is not True:
            out.append(
                FanoutFinding(
                    "STAGE0_INDEX_FIRST",
                    None,
                    "Stage 0 begins with the deterministic index (`workgroup index`); "
                    "set indexed: true after running it",
                )
            )
    scanners = by_role.get("scanner", [])
    for i in scanners:
        w = workers[i]
        if not (w.get("independent_slice") is True or w.get("material_uncertainty") is True):
            out.append(
                FanoutFinding(
                    "SCANNER_UNJUSTIFIED", i, "a scanner needs an independent slice or material uncertainty"
                )
            )
    if len(scanners) > settings["max_scanners"]:
        out.append(
            FanoutFinding(
                "SCANNER_LIMIT",
                None,
                f"{len(scanners)} scanners exceed the profile's {settings['max_scanners']}",
            )
        )
    for i in by_role.get("architect", []):
        if plan.get("change_set_approved") is not True and plan.get("architecture_ambiguous") is not True:
            out.append(
                FanoutFinding(
                    "ARCHITECT_BEFORE_CHANGE_SET",
                    i,
                    "an architect joins after the Change Set unless architecture ambiguity prevents it",
                )
            )
    specialists = [i for i, w in enumerate(workers) if w["role"] in SPECIALISTS]
    for i in specialists:
        w = workers[i]
        required = w.get("required_by")
        if (
            not (isinstance(required, list) and any(isinstance(r, str) and r in controls for r in required))
            and w.get("scope_requires") is not True
        ):
            out.append(
                FanoutFinding(
                    "SPECIALIST_UNREQUIRED",
                    i,
                    f"the {w['role']} specialist is not required by the scope or an active control",
                )
            )
    if len(specialists) > settings["max_specialists"]:
        out.append(
            FanoutFinding(
                "SPECIALIST_LIMIT",
                None,
                f"{len(specialists)} specialists exceed the profile's {settings['max_specialists']}",
            )
        )
    discovery = by_role.get("discovery", [])
    for n, i in enumerate(discovery):
        w = workers[i]
        if w.get("read_only") is not True:
            out.append(FanoutFinding("DISCOVERY_NOT_READ_ONLY", i, "extra discovery workers are read-only"))
        if w.get("independently_useful") is not True or not w.get("scope"):
            out.append(
                FanoutFinding(
                    "DISCOVERY_SCOPE_NOT_USEFUL", i, "extra discovery needs an independently useful scope"
                )
            )
        for j in discovery[:n]:
            if w.get("scope") and workers[j].get("scope") and _overlaps(w["scope"], workers[j]["scope"]):
                out.append(
                    FanoutFinding(
                        "DISCOVERY_SCOPE_OVERLAP",
                        i,
                        f"scope overlaps worker {j}: discovery scopes must be independent",
                    )
                )
    if len(discovery) > settings["max_read_only_discovery"]:
        out.append(
            FanoutFinding(
                "DISCOVERY_LIMIT",
                None,
                f"{len(discovery)} discovery workers exceed the profile's "
                f"{settings['max_read_only_discovery']}",
            )
        )
    if len(workers) > settings["max_parallel_workers"]:
        out.append(
            FanoutFinding(
                "WORKER_LIMIT",
                None,
                f"{len(workers)} workers exceed the profile's {settings['max_parallel_workers']}",
            )
        )
    inherited_writers = [
        i
        for i, w in enumerate(workers)
        if w.get("writer") is True and w.get("context") in ("inherit-full", "inherit-recent", "resume")
    ]
    if len(inherited_writers) > settings["max_active_inherited"]:
        out.append(
            FanoutFinding(
                "INHERITED_WRITER_CAP",
                None,
                f"{len(inherited_writers)} inherited/resumed writers exceed "
                f"{settings['max_active_inherited']}",
            )
        )
    return settings, out
