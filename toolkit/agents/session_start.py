"""Session start (``startup``, ``resume``, ``compact``, ``clear``): what the model starts from.

The answer's ``additionalContext`` carries, each bounded and privacy-checked (a part with a finding
is withheld and the answer says which rules fired, never the text):

* the handoff (``.reviews/session-handoff.md``, the HANDOFF context), reference data only;
* the capsule bound to HEAD (this session's own first, else the newest; the CAPSULE context);
* on ``resume``: the lineage check (``toolkit.runtime.lineage.evaluate_lineage``) of the lineage
  this session continues (``--lineage`` / ``WORKGROUP_LINEAGE_ID``) against the facts now
  observable (the platform, HEAD, the capsule's hash, the model when the payload names one). HOT
  or COLD_VALID: resuming is allowed. Anything else: a fresh capsule is due, and the answer says so
  and why (the invalidation codes). No recorded lineage is UNKNOWN_PROVENANCE, as the runtime
  decides for a missing lineage.
"""

from __future__ import annotations

import json
import os

from toolkit.agents import answers, state
from toolkit.core.errors import ToolkitError
from toolkit.infra import confined
from toolkit.infra.boundedio import FileRefused
from toolkit.infra.clock import now_utc
from toolkit.infra.store import safe_segment
from toolkit.privacy import Context, scan_text, scan_value
from toolkit.runtime.lineage import MISMATCH_FIELDS, evaluate_lineage, reference_now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolkit.agents.answers import Answer
    from toolkit.agents.payload import HookInput, Options
    from toolkit.privacy import Finding

MAX_PART_CHARS = 4_000
ALLOWED_STATES = ("HOT", "COLD_VALID")


def handle(hook: HookInput, options: Options) -> Answer:
    return start(hook, options.lineage_id)


def start(hook: HookInput, lineage_id: str | None) -> Answer:
    root = state.repo_root(hook.cwd)
    if root is None:
        return answers.context(
            "SessionStart", "workgroup: not inside a git repository; no handoff or capsule."
        )
    source = hook.source or "startup"
    head = state.head_sha(root)
    parts = [f"workgroup session start ({source}); HEAD {head[:12] if head else 'has no commit yet'}."]
    parts.append(_handoff_part(root))
    capsule = state.capsule_at_head(
        state.stored_capsules(root), head, state.session_task_id(hook.agent, hook.session_id)
    )
    parts.append(_capsule_part(capsule))
    message = None
    if source == "resume":
        decision = resume_decision(root, hook, lineage_id, head, capsule)
        parts.append(decision)
        message = decision.splitlines()[0]
    return answers.context("SessionStart", "\n\n".join(parts), message)


def _handoff_part(root: str) -> str:
    try:
        text = state.read_handoff(root)
    except confined.PathOutsideRepository:
        return f"Handoff ({state.HANDOFF_REL}): not read (it leads outside the repository through a symlink)."
    except FileRefused as exc:
        return f"Handoff ({state.HANDOFF_REL}): not read ({exc.code})."
    if text is None:
        return f"Handoff ({state.HANDOFF_REL}): none yet."
    findings = scan_text(text, Context.HANDOFF)
    if findings:
        return f"Handoff ({state.HANDOFF_REL}): withheld; the privacy engine found {_rules(findings)} in it."
    return (
        f"Handoff ({state.HANDOFF_REL}; reference only, it never resumes the run it describes):\n"
        + answers.clip(text.strip(), MAX_PART_CHARS)
    )


def _capsule_part(capsule: state.Capsule | None) -> str:
    if capsule is None:
        return "Capsule bound to HEAD: none."
    findings = scan_value(capsule.data, Context.CAPSULE)
    if findings:
        return f"Capsule bound to HEAD ({capsule.rel}): withheld; the privacy engine found {_rules(findings)} in it."
    shown = {
        k: v for k, v in capsule.data.items() if k not in ("schema", "capsule_hash") and v not in ([], None)
    }
    body = json.dumps(shown, ensure_ascii=False, indent=1, sort_keys=False)
    return f"Capsule bound to HEAD ({capsule.rel}):\n" + answers.clip(body, MAX_PART_CHARS)


def _rules(findings: list[Finding]) -> str:
    names = sorted({f.rule for f in findings})
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more rules" if len(names) > 5 else "")


def resume_decision(
    root: str, hook: HookInput, lineage_id: str | None, head: str | None, capsule: state.Capsule | None
) -> str:
    """The lineage check's verdict on resuming, as the lines the answer carries."""
    lineage = find_lineage(root, lineage_id) if lineage_id else None
    current: dict[str, object] = {}  # the facts observable now, by the lineage's field names
    if isinstance(lineage, dict):
        current = {name: lineage.get(name) for name, _ in MISMATCH_FIELDS}
        current["platform"] = hook.agent
        current["checkpoint_sha"] = head
        if hook.model:
            current["model"] = hook.model
    current["capsule_hash"] = capsule.data.get("capsule_hash") if capsule is not None else None
    decision = evaluate_lineage(lineage, current, reference_now(now_utc()))
    codes = ", ".join(decision["invalidations"]) or "none"
    if decision["state"] in ALLOWED_STATES:
        return (
            f"Resume: allowed (lineage check {decision['state']}).\n"
            "The lineage this session continues still matches the repository; continue from it."
        )
    why = "no recorded lineage names this session" if lineage is None else f"invalidations: {codes}"
    return (
        f"Resume: a fresh capsule is due (lineage check {decision['state']}; {why}).\n"
        "Do not rely on this conversation's earlier reasoning: start from the capsule and handoff above "
        "(or seal a new capsule at HEAD with `workgroup capsule seal`)."
    )


def find_lineage(root: str, lineage_id: str) -> object:
    """The recorded lineage ``lineage_id`` (``.workgroup/workgroups/*/lineages/<id>.json``), or None."""
    try:
        safe_segment(lineage_id, "lineage_id")
        top = confined.resolve_dir(root, state.CAPSULES_GLOB_ROOT, "the workgroups folder")
        groups = sorted(os.listdir(top))
    except (confined.PathOutsideRepository, OSError, ToolkitError):  # no such lineage to check
        return None
    matches = []
    for group in groups:
        rel = f"{state.CAPSULES_GLOB_ROOT}/{group}/lineages/{lineage_id}.json"
        try:
            raw = confined.read_bytes(
                root, rel, what="a lineage", limit=state.MAX_CAPSULE_BYTES, missing_ok=True
            )
        except (confined.PathOutsideRepository, FileRefused, OSError):
            continue
        if raw is not None:
            matches.append(raw)
    if len(matches) != 1:
        return None
    try:
        return json.loads(matches[0])
    except (ValueError, RecursionError):
        return None
