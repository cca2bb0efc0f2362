"""Pre-compact: seal the session's current state into a capsule bound to HEAD.

The capsule is this session's own (task id: a digest of the session id, never the id): its last
capsule's objective, phase, decisions, risks and next action carry forward when there is one; the
uncommitted changed files are its ``owned_files`` (what the session has been writing). It goes
through the capsule pipeline (``toolkit.runtime.capsule.prepare_capsule``: closed schema, privacy
walk, portable paths, size bound, seal) and is stored atomically through the confined layer at
``.workgroup/workgroups/<workgroup>/capsules/<task>.json``, where session start finds it.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolkit.agents import answers, state
from toolkit.core.errors import InvalidInput
from toolkit.core.ownership import OwnershipPathError
from toolkit.infra import confined, confinedwrite
from toolkit.infra.paths import Canonicalizer
from toolkit.records.capsules import as_toolkit_error
from toolkit.runtime.capsule import prepare_capsule
from toolkit.runtime.capsule_rules import has_git_segment, portable_path
from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolkit.agents.answers import Answer
    from toolkit.agents.payload import HookInput, Options
    from toolkit.agents.shapes import CarriedWork, SessionCapsule
    from toolkit.runtime.op_types import ContextCapsule

NEXT_ACTION = "Read the handoff (.reviews/session-handoff.md) and the files in owned_files, then continue the open work."


def handle(hook: HookInput, options: Options) -> Answer:
    return pre_compact(hook)


def pre_compact(hook: HookInput) -> Answer:
    root = state.repo_root(hook.cwd)
    if root is None:
        return answers.error(
            "NOT_A_REPOSITORY", "not inside a git repository: no capsule sealed", "pre-compact"
        )
    head = state.head_sha(root)
    if head is None:
        raise InvalidInput("UNBORN_HEAD", "HEAD has no commit yet: no capsule can be bound to it")
    task = state.session_task_id(hook.agent, hook.session_id)
    rel, sealed = seal_session_capsule(root, head, task, hook.trigger)
    return answers.message(
        f"workgroup: sealed the session's state in {rel} (bound to {head[:12]}, {sealed['capsule_hash'][:19]}); "
        "the next session starts from it."
    )


def session_capsule(root: str, head: str, task: str, trigger: str | None) -> SessionCapsule:
    """The unsealed capsule of the session's current state: its previous capsule's workgroup,
    work, constraints and next action carried forward (a stored capsule passed the closed schema,
    so it has them all), else a fresh session's."""
    previous = next((c.data for c in _own(root, task)), None)
    owned = _portable(root, state.changed_files(root))
    return {
        "schema": "knowzcode.context-capsule/v1",
        "task_id": task,
        "workgroup_id": previous["workgroup_id"] if previous is not None else state.DEFAULT_WORKGROUP,
        **_carried(previous, head),
        "owned_files": owned,
        "checkpoint_sha": head,
        "constraints": _constraints(previous, trigger),
        "next_action": (previous["next_action"] if previous is not None else "") or NEXT_ACTION,
    }


def _carried(previous: ContextCapsule | None, head: str) -> CarriedWork:
    """The work fields of the capsule: the session's previous capsule's, else the defaults of a
    fresh session at ``head``."""
    if previous is None:
        return {
            "phase": "2A",
            "objective": f"Continue the agent session's work from checkpoint {head[:12]}.",
            "node_ids": [],
            "read_files": [],
            "specs": [],
            "approved_decisions": [],
            "failures": [],
            "risks": [],
        }
    return {
        "phase": previous["phase"],
        "objective": previous["objective"],
        "node_ids": previous["node_ids"],
        "read_files": previous["read_files"],
        "specs": previous["specs"],
        "approved_decisions": previous["approved_decisions"],
        "failures": previous["failures"],
        "risks": previous["risks"],
    }


def _constraints(previous: ContextCapsule | None, trigger: str | None) -> list[str]:
    """The previous capsule's constraints (at most 127, without the notes of earlier seals) and
    this seal's note naming its trigger (``auto``, ``manual``, else ``unknown``)."""
    note = f"Sealed before a context compaction ({trigger if trigger in ('auto', 'manual') else 'unknown'} trigger)."
    prior = previous["constraints"] if previous is not None else []
    constraints = [c for c in prior if not c.startswith("Sealed before a context")]
    return [*constraints[:127], note]


def seal_session_capsule(root: str, head: str, task: str, trigger: str | None) -> tuple[str, ContextCapsule]:
    """Seal and store the session capsule; (its repository-relative path, the sealed capsule)."""
    capsule = session_capsule(root, head, task, trigger)
    try:
        sealed = prepare_capsule(capsule).capsule
    except RuntimeOpError as exc:
        raise as_toolkit_error(exc) from None
    target = state.layout(root).capsule_path(sealed["workgroup_id"], sealed["task_id"])
    written = confinedwrite.atomic_write(
        root, target, json.dumps(sealed, indent=2, ensure_ascii=False) + "\n", what="the capsule"
    )
    return Path(written).relative_to(confined.real_root(root)).as_posix(), sealed


def _own(root: str, task: str) -> list[state.Capsule]:
    mine = [c for c in state.stored_capsules(root) if c.data.get("task_id") == task]
    return sorted(mine, key=lambda c: (c.mtime, c.rel), reverse=True)


def _portable(root: str, paths: list[str]) -> list[str]:
    """The paths the capsule's path rules and the owners canonicalizer both accept."""
    canon = Canonicalizer(root)
    kept: list[str] = []
    for path in paths:
        if len(path) > 512 or not portable_path(path) or has_git_segment(path):
            continue
        if path.startswith(".workgroup/"):
            continue  # the toolkit's own records are not the session's work
        try:
            canon.key(path)
        except OwnershipPathError:
            continue
        kept.append(path)
    return kept[:64]
