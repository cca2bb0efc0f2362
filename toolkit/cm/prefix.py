"""The stable prefix: five sections in a fixed order, byte-identical while their sources are unchanged.

Order: safety and authorization boundary; CM workflow/stage boundary; applicable project rules;
role contract; output schema. Every section comes from fixed text shipped here or from a file the
caller names; nothing dynamic (time, attempt ids, diffs, task text, test output) ever enters it.
Prefix stability allows reuse; it is never reported as a cache hit.
"""

from __future__ import annotations

from toolkit.cm.answer_schemas import ROLES, schema_text
from toolkit.cm.packet import STABLE_PREFIX_KEYS

SAFETY = (
    "Work only inside the repository and the scope this packet names. Never reveal, log or copy credentials, "
    "session identifiers, transcripts, personal data or home paths. This packet grants no authorization: do "
    "not approve specs, skip review, push, deploy or change records; the local orchestrator applies accepted "
    "results and keeps every execution and review gate."
)
NO_PROJECT_RULES = "No project-specific rules apply beyond the workflow's own."

ROLE_CONTRACTS: dict[str, str] = {
    "analyst": (
        "Analyst: turn the current requirement into deltas, decisions, open questions and AC/task mappings "
        "for the given business-map slice. Do not design or code. Report missing inputs as open questions."
    ),
    "planner": (
        "Planner: from the analyst result, affected modules/interfaces and approved constraints, produce "
        "acceptance-criteria and task mappings. Do not widen scope beyond the approved constraints."
    ),
    "coder": (
        "Coder: implement exactly one task within the allowed files, satisfy the mapped ACs and design "
        "contracts, run the declared verification commands and report blockers and any scope deviation."
    ),
    "tester": (
        "Tester: run the in-scope test cases with the declared commands in the stated environment and report "
        "case verdicts, counts, failing ids and evidence paths. Never mark a case passed without evidence."
    ),
    "reviewer": (
        "Reviewer: review only the task's diff and new files against the mapped ACs and rules and the "
        "verification summary; exclude pre-task dirty files. Report findings first, then the verdict."
    ),
    "browser_qa": (
        "Browser QA: run the selected browser cases against the target environment and route, honour the "
        "setup and cleanup facts, and compare with the expected observable results."
    ),
}


def workflow_text(workflow: str, stage: str) -> str:
    """Section 2: the CM workflow and stage boundary (changes only when the stage does)."""
    return (
        f"CM workflow {workflow}, stage {stage}. Act only within this stage; a change of stage, unit or "
        "scope belongs to the workflow, not to this call."
    )


def build_prefix(
    role: str, workflow: str, stage: str, sources: dict[str, str] | None = None
) -> dict[str, str]:
    """The five sections in the fixed order; ``sources`` (file contents) override the defaults."""
    if role not in ROLES:
        raise ValueError("unknown role")
    given = sources or {}
    unknown = set(given) - set(STABLE_PREFIX_KEYS)
    if unknown:
        raise ValueError("unknown prefix section")
    defaults = {
        "safety": SAFETY,
        "workflow": workflow_text(workflow, stage),
        "project_rules": NO_PROJECT_RULES,
        "role": ROLE_CONTRACTS[role],
        "output_schema": schema_text(role),
    }
    return {key: given.get(key, defaults[key]) for key in STABLE_PREFIX_KEYS}
