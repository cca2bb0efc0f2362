"""Rollout progression (DESIGN "Orchestration details"): one stage at a time, one family at a time.

The ladder is off -> observe -> shadow -> canary 10 -> canary 25 -> canary 50 -> on. Advancing may
not skip a step; moving back (a rollback) is always allowed. Each advance names exactly one
intervention family (for example ``routing`` or ``capsules``); while one family is part-way up the
ladder, another family cannot start. Reaching ``on`` needs a recorded promotion decision that
promoted. The stage lives in ``.workgroup/config.yml`` (``context_efficiency.rollout`` and
``canary_percent``, which dispatch reads); the history lives in ``.workgroup/rollout.json``.
``plan_advance`` is pure; ``apply_advance`` is the shell that reads and writes the files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, TypeGuard

from toolkit.core.errors import InvalidInput, Refused
from toolkit.infra import confined, confinedwrite
from toolkit.infra.boundedio import MAX_FILE_BYTES, FileRefused, loads_bounded
from toolkit.infra.config import load_config, read_config_text, validate_config
from toolkit.infra.store import Layout, file_lock
from toolkit.runtime.rollout import ROLLOUT_STATES

LADDER: tuple[tuple[str, float | None], ...] = (
    ("off", None),
    ("observe", None),
    ("shadow", None),
    ("canary", 10),
    ("canary", 25),
    ("canary", 50),
    ("on", None),
)
HISTORY_SCHEMA = "workgroup.rollout-history/v1"
_FAMILY = re.compile(r"^[a-z][a-z0-9-]{0,63}$")


class AdvanceFacts(TypedDict):
    """What ``plan_advance`` decides: the one family the move names and whether it moves back."""

    family: str
    rollback: bool


# "from" is a keyword, so these two are declared in the functional form
AdvanceResult = TypedDict(
    "AdvanceResult", {"from": str, "to": str, "family": str, "rollback": bool, "written": bool}
)
"""What ``apply_advance`` returns (and ``rollout advance --json`` prints)."""

HistoryStep = TypedDict(
    "HistoryStep",
    {"at": str, "family": str, "from": str, "to": str, "rollback": bool, "evidence": str | None},
)
"""One move as ``apply_advance`` appends it to ``.workgroup/rollout.json``."""


class History(TypedDict):
    """``.workgroup/rollout.json`` as ``read_history`` checked it (a file edited into another
    shape is refused; keys beyond these are kept as written)."""

    schema: str
    active_family: str | None
    steps: list[HistoryStep]


@dataclass(frozen=True)
class Step:
    stage: str
    percent: float | None

    def label(self) -> str:
        return (
            f"{self.stage} {self.percent:g}%"
            if self.stage == "canary" and self.percent is not None
            else self.stage
        )


def position(stage: str, percent: float | None) -> int:
    """Index on the ladder; a non-standard canary share counts as the highest step at or below it."""
    if stage != "canary":
        return next(i for i, (name, _) in enumerate(LADDER) if name == stage)
    steps = [
        i
        for i, (name, share) in enumerate(LADDER)
        if name == "canary" and share is not None and percent is not None and share <= percent
    ]
    return steps[-1] if steps else 2  # below 10 %: still at the shadow step


def plan_advance(
    current: Step, target: Step, families: list[str], history: Mapping[str, object], promoted_run: bool
) -> AdvanceFacts:
    """Check one move; returns the new history entry's facts or raises ``Refused``/``InvalidInput``."""
    family = _one_family(families)
    here, there = position(current.stage, current.percent), position(target.stage, target.percent)
    if target.stage == "canary" and (target.percent, there) not in (
        (s, i) for i, (_, s) in enumerate(LADDER)
    ):
        raise InvalidInput("ROLLOUT_PERCENT_INVALID", "canary shares are 10, 25 and 50")
    active = history.get("active_family")
    starting_new = current.stage in ("off", "on") and family != active
    if there < here and not starting_new:
        return {"family": family, "rollback": True}
    if starting_new:
        if there != 1:
            raise Refused("ROLLOUT_STAGE_SKIPPED", "a new family starts at observe")
        return {"family": family, "rollback": False}
    _check_next_step(current, target, here, there, family != active, promoted_run)
    return {"family": family, "rollback": False}


def _one_family(families: list[str]) -> str:
    """The one intervention family a move names: more than one is refused, none or a malformed
    name is a usage error (checked in that order)."""
    if len(set(families)) > 1:
        raise Refused("ROLLOUT_MULTIPLE_FAMILIES", "change one intervention family at a time")
    if not families:
        raise InvalidInput("ROLLOUT_FAMILY_REQUIRED", "name the intervention family with --family")
    family = families[0]
    if not _FAMILY.match(family):
        raise InvalidInput("ROLLOUT_FAMILY_INVALID", "a family is a lower-case name like routing or capsules")
    return family


def _check_next_step(
    current: Step, target: Step, here: int, there: int, other_family: bool, promoted_run: bool
) -> None:
    """A forward move of the active family: refused while another family is part-way, when it
    skips a step, or when it turns ``on`` without a promotion that promoted."""
    if other_family:
        raise Refused(
            "ROLLOUT_FAMILY_IN_PROGRESS", "another intervention family is part-way through its rollout"
        )
    if there != here + 1:
        raise Refused("ROLLOUT_STAGE_SKIPPED", f"the next step after {current.label()} is {_label(here + 1)}")
    if target.stage == "on" and not promoted_run:
        raise Refused(
            "ROLLOUT_PROMOTION_REQUIRED", "rollout on needs a recorded promotion decision that promoted"
        )


def _label(index: int) -> str:
    if index >= len(LADDER):
        return "nothing (already on)"
    stage, share = LADDER[index]
    return Step(stage, share).label()


def read_history(layout: Layout) -> History:

    empty: History = {"schema": HISTORY_SCHEMA, "active_family": None, "steps": []}
    what = ".workgroup/rollout.json"
    try:
        # the repository's file: a symlink leaving the work tree is PATH_OUTSIDE_REPOSITORY, never read
        raw = confined.read_bytes(
            layout.workdir, _history_path(layout), what=what, limit=MAX_FILE_BYTES, missing_ok=True
        )
        data = empty if raw is None else loads_bounded(raw, what=what)
    except FileRefused as exc:
        raise InvalidInput("ROLLOUT_HISTORY_INVALID", exc.message) from None
    if not _is_history(data):
        raise InvalidInput("ROLLOUT_HISTORY_INVALID", ".workgroup/rollout.json is not a rollout history")
    return data


def _is_history(data: object) -> TypeGuard[History]:
    """The history's shape as ``apply_advance`` writes it: the schema, an ``active_family`` (a
    string or null) and ``steps``, each a ``HistoryStep`` (its text fields strings, ``rollback`` a
    boolean, ``evidence`` a string or null). A file edited into another shape is refused whole."""
    if not isinstance(data, dict) or data.get("schema") != HISTORY_SCHEMA:
        return False
    steps, active = data.get("steps"), data.get("active_family", 0)
    return (
        (active is None or isinstance(active, str))
        and isinstance(steps, list)
        and all(_is_step(step) for step in steps)
    )


def _is_step(step: object) -> bool:
    if not isinstance(step, dict):
        return False
    evidence = step.get("evidence", 0)
    return (
        all(isinstance(step.get(key), str) for key in ("at", "family", "from", "to"))
        and isinstance(step.get("rollback"), bool)
        and (evidence is None or isinstance(evidence, str))
    )


def _history_path(layout: Layout) -> Path:
    return layout.workgroup / "rollout.json"


def promoted(layout: Layout, run_id: str | None) -> bool:
    """True when ``.workgroup/promotions/<run_id>.json`` records a promotion that promoted."""
    if run_id is None:
        return False

    what = "the promotion record"
    try:
        raw = confined.read_bytes(
            layout.workdir, layout.promotion_path(run_id), what=what, limit=MAX_FILE_BYTES
        )
        record = loads_bounded(raw or b"", what=what)
    except FileRefused:
        return False  # no readable record of a promotion: not promoted
    return isinstance(record, dict) and record.get("promote") is True


def set_config_keys(text: str, values: dict[str, str]) -> str:
    """Replace (or add) keys of the ``context_efficiency:`` block, keeping every other line as written."""
    lines = text.splitlines()
    header = next(
        (i for i, line in enumerate(lines) if re.match(r"^context_efficiency:\s*(#.*)?$", line)), None
    )
    if header is None:
        block = ["context_efficiency:", *(f"  {k}: {v}" for k, v in values.items())]
        return "\n".join([*lines, *block]) + "\n"
    end = _block_end(lines, header)
    indent = _block_indent(lines, header, end)
    for key, value in values.items():
        if not _replace_key(lines, header, end, key, value):
            lines.insert(header + 1, f"{indent}{key}: {value}")
            end += 1
    return "\n".join(lines) + "\n"


def _block_end(lines: list[str], header: int) -> int:
    """The index after the block that starts at ``header``: its blank and indented lines."""
    end = header + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t")):
        end += 1
    return end


def _block_indent(lines: list[str], header: int, end: int) -> str:
    """The indentation of the block's first key line (not blank, not a comment); two spaces
    for an empty block."""
    return next(
        (
            lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            for i in range(header + 1, end)
            if lines[i].strip() and not lines[i].lstrip().startswith("#")
        ),
        "  ",
    )


def _replace_key(lines: list[str], header: int, end: int, key: str, value: str) -> bool:
    """Set the first line of the block holding ``key`` to ``value``, keeping its indentation and
    trailing comment; False when the block has no such line."""
    pattern = re.compile(rf"^(\s+){re.escape(key)}:(\s*)([^#]*?)(\s*#.*)?$")
    for i in range(header + 1, end):
        match = pattern.match(lines[i])
        if match:
            lines[i] = f"{match.group(1)}{key}: {value}{match.group(4) or ''}"
            return True
    return False


def apply_advance(
    layout: Layout, target: Step, families: list[str], *, evidence_run: str | None, at: str, write: bool
) -> AdvanceResult:
    """Check and (with ``write``) record one rollout move under the rollout lock."""

    with file_lock(layout.lock("rollout")):
        block = load_config(layout)["context_efficiency"]
        current = Step(block["rollout"], block["canary_percent"] if block["rollout"] == "canary" else None)
        if target.stage == "canary" and target.percent is None:
            following = LADDER[min(position(current.stage, current.percent) + 1, len(LADDER) - 1)]
            target = Step("canary", following[1] if following[0] == "canary" else 10)
        history = read_history(layout)
        facts = plan_advance(current, target, families, history, promoted(layout, evidence_run))
        result: AdvanceResult = {
            "from": current.label(),
            "to": target.label(),
            "family": facts["family"],
            "rollback": facts["rollback"],
            "written": False,
        }
        if not write:
            return result
        values = {"rollout": target.stage}
        if target.stage == "canary" and target.percent is not None:
            values["canary_percent"] = f"{target.percent:g}"
        config_path = layout.config

        old = read_config_text(config_path) or ""
        new = set_config_keys(old, values)
        import yaml  # type: ignore[import-untyped,unused-ignore]

        validate_config(yaml.safe_load(new))  # never write a config the loader would refuse
        if not facts["rollback"]:
            history["active_family"] = facts["family"]
        step: HistoryStep = {
            "at": at,
            "family": facts["family"],
            "from": current.label(),
            "to": target.label(),
            "rollback": facts["rollback"],
            "evidence": evidence_run,
        }
        history["steps"].append(step)

        # both paths were checked when they were read above, so neither write is refused after the other
        confinedwrite.atomic_write(layout.workdir, config_path, new, what=".workgroup/config.yml")
        confinedwrite.atomic_write(
            layout.workdir,
            _history_path(layout),
            json.dumps(history, indent=2) + "\n",
            what=".workgroup/rollout.json",
        )
        result["written"] = True
        return result


def parse_target(stage: str, percent: float | None) -> Step:

    if stage not in ROLLOUT_STATES:
        raise InvalidInput("ROLLOUT_STAGE_INVALID", "the stage is one of off, observe, shadow, canary, on")
    if stage != "canary" and percent is not None:
        raise InvalidInput("ROLLOUT_PERCENT_INVALID", "--percent applies to canary only")
    return Step(stage, percent)
