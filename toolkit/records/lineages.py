"""Lineage records: validate, bind to a commit, pseudonymize the platform handle, store; check.

A committed lineage carries ``platform_handle: null`` or a keyed pseudonym ``anon-<32 hex>``
(HMAC-SHA-256 of the platform and handle, keyed by a random per-repository key kept in local
state). The real handle is kept only in the local pseudonym map, never committed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused
from toolkit.core.identifiers import FULL_SHA, PSEUDONYM
from toolkit.core.jsontypes import JsonObject
from toolkit.infra import confinedwrite
from toolkit.infra.boundedio import FileRefused, read_json_bounded, read_regular
from toolkit.infra.clock import now_utc
from toolkit.infra.store import atomic_write, create_exclusive, file_lock, safe_segment
from toolkit.models.lineage import AgentLineage
from toolkit.records.capsules import read_record, safe_destination
from toolkit.records.owners import release_lineage
from toolkit.runtime.capsule_privacy import engine_findings
from toolkit.runtime.capsule_rules import private_value, walk
from toolkit.runtime.codes import RuntimeOpError
from toolkit.runtime.lineage import evaluate_lineage, reference_now

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

    from toolkit.infra.git import Repo
    from toolkit.infra.store import Layout

PSEUDONYM_KEY_FILE = "lineage-pseudonym-key"
ACCEPTED_STATES = ("HOT", "COLD_VALID")


class RecordedAnswer(TypedDict):
    """What ``lineage record --json`` prints (``Recorded.as_json``)."""

    written: str
    pseudonymized: bool
    lineage: JsonObject


class CheckedAnswer(TypedDict):
    """What ``lineage check --json`` prints (``Checked.as_json``)."""

    state: str
    invalidations: list[str]
    lease_released: bool | None


def _pseudonym_key(layout: Layout) -> bytes:
    """The per-repository HMAC key; created once (exclusive create, so racing writers agree)."""

    path = layout.local / PSEUDONYM_KEY_FILE
    if not os.path.lexists(path):
        create_exclusive(path, secrets.token_hex(32))
    try:
        raw = read_regular(path, limit=4096, what="the pseudonym key", follow_symlinks=False)
    except FileRefused as exc:
        raise EnvironmentFailure("PSEUDONYM_KEY_UNREADABLE", exc.message) from None
    key = (raw or b"").strip()
    if len(key) < 32:
        raise EnvironmentFailure("PSEUDONYM_KEY_UNREADABLE", "the pseudonym key is too short")
    return key


def pseudonym_for(key: bytes, platform: str, handle: str) -> str:
    mac = hmac.new(key, f"{platform}\x00{handle}".encode(), hashlib.sha256)
    return "anon-" + mac.hexdigest()[:32]


def _read_pseudonyms(layout: Layout) -> JsonObject:
    """The local map; anything but a JSON object in a regular file is refused (exit 3), never overwritten.

    Rebuilding a damaged map would silently drop the real handles it holds, so the user is told.
    """

    try:
        loaded = read_json_bounded(
            layout.pseudonyms,
            what="the pseudonym map",
            follow_symlinks=False,
            missing_ok=True,
            strict=False,
            default={},
        )
    except FileRefused as exc:
        raise EnvironmentFailure(
            "PSEUDONYM_MAP_UNREADABLE", f"{exc.message}; inspect or remove it (workgroup/pseudonyms.json)"
        ) from None
    if not isinstance(loaded, dict):
        raise EnvironmentFailure(
            "PSEUDONYM_MAP_UNREADABLE",
            "the pseudonym map is not a JSON object; inspect or remove it (workgroup/pseudonyms.json)",
        )
    return loaded


def _remember(layout: Layout, pseudonym: str, platform: str, handle: str) -> None:
    """Keep the real handle in local state only (mode 0600), under the map's lock."""
    with file_lock(layout.lock("pseudonyms")):
        table = _read_pseudonyms(layout)
        table[pseudonym] = {"platform": platform, "platform_handle": handle}
        atomic_write(layout.pseudonyms, json.dumps(table, indent=2, sort_keys=True) + "\n", mode=0o600)


def validate_lineage(value: object) -> tuple[JsonObject, AgentLineage]:
    """The lineage model's verdict (pydantic), as a coded error; returns the record as given and
    the model it parsed to (strict: its fields hold the record's own values)."""
    from pydantic import ValidationError

    if not isinstance(value, dict):
        raise InvalidInput("LINEAGE_SCHEMA_INVALID", "the lineage does not match knowzcode.agent-lineage/v1")
    try:
        model = AgentLineage.model_validate(value)
    except ValidationError as exc:
        problems = schema_paths(exc.errors(include_input=False, include_url=False))
        raise InvalidInput(
            "LINEAGE_SCHEMA_INVALID",
            "the lineage does not match knowzcode.agent-lineage/v1:",
            lines=tuple("  " + problem for problem in problems[:10]),
        ) from None
    return value, model


_NAME = re.compile(r"^[a-z][a-z_]{0,39}\Z")  # letters only: a field name, never a credential
# pydantic messages that may quote the input are replaced by the kind of rule they state
_QUOTING_TYPES = ("value_error", "assertion_error", "string_pattern_mismatch")


def schema_paths(errors: Sequence[ErrorDetails]) -> list[str]:
    """Pydantic errors as ``$.field[0].key: rule`` lines (the JSON path and the rule, no values)."""
    out: list[str] = []
    for error in errors:
        path = "$"
        for part in error.get("loc", ()):
            if isinstance(part, int):
                path += f"[{part}]"
            else:
                path += f".{part}" if _NAME.match(str(part)) else ".<a field>"
        kind = error.get("type", "")
        if kind == "extra_forbidden":
            rule = "not a field of the record (the schema is closed)"
        elif kind == "missing":
            rule = "required"
        elif kind in _QUOTING_TYPES:
            rule = (
                "invalid value"
                if kind != "string_pattern_mismatch"
                else "does not match the required pattern"
            )
        else:
            msg = str(error.get("msg", "invalid")).replace("Input should be", "must be")
            rule = msg[:1].lower() + msg[1:]
        out.append(f"{path}: {rule}")
    return out


def _privacy_refusal(value: JsonObject) -> bool:

    return any(kind == "str" and private_value(item) for kind, _, item in walk(value)) or bool(
        # generic context: lineage field names are fixed by the schema (platform_handle is one)
        engine_findings(value, "generic")
    )


@dataclass(frozen=True)
class Recorded:
    lineage: JsonObject
    path: str
    pseudonymized: bool

    def as_json(self) -> RecordedAnswer:
        return {"written": self.path, "pseudonymized": self.pseudonymized, "lineage": self.lineage}


def record_lineage(repo: Repo, source: Path) -> Recorded:
    """Validate ``source``, check its checkpoint, pseudonymize the handle, store it atomically."""
    workdir = repo.workdir
    given, model = validate_lineage(read_record(source, workdir, what="lineage file"))
    lineage = dict(given)
    layout = repo.layout
    target = safe_destination(workdir, layout.lineage_path(model.workgroup_id, model.lineage_id))
    sha = model.checkpoint_sha
    if not FULL_SHA.match(sha) or not repo.commit_exists(sha):
        raise InvalidInput(
            "CHECKPOINT_NOT_A_COMMIT",
            "checkpoint_sha must be the full 40-hex SHA of a commit in this repository",
        )
    handle = model.platform_handle
    pseudonym: str | None = None
    if handle is not None and not PSEUDONYM.match(handle):
        pseudonym = pseudonym_for(_pseudonym_key(layout), model.platform, handle)
        lineage["platform_handle"] = pseudonym
    if _privacy_refusal(lineage):
        raise Refused("LINEAGE_PRIVATE_CONTENT", "the lineage contains private content (secrets, ids, paths)")
    if pseudonym is not None and handle is not None:
        _remember(layout, pseudonym, model.platform, handle)
    confinedwrite.atomic_write(
        workdir, target, json.dumps(lineage, indent=2, ensure_ascii=False) + "\n", what="the lineage"
    )
    return Recorded(lineage, target.relative_to(workdir).as_posix(), pseudonym is not None)


def find_lineage(repo: Repo, ref: str) -> Path:
    """``ref`` is a lineage file, or a lineage id looked up under ``.workgroup/workgroups/*/lineages``."""
    candidate = Path(ref)
    if candidate.is_file() or candidate.is_symlink():
        return candidate

    lineage_id = safe_segment(ref, "lineage_id")
    matches = sorted(repo.layout.workgroup.glob(f"workgroups/*/lineages/{lineage_id}.json"))
    if len(matches) != 1:
        code = "LINEAGE_NOT_FOUND" if not matches else "LINEAGE_AMBIGUOUS"
        raise InvalidInput(code, "the lineage must be a file or the id of exactly one recorded lineage")
    return matches[0]


@dataclass(frozen=True)
class Checked:
    state: str
    invalidations: list[str]
    lease_released: bool | None

    @property
    def accepted(self) -> bool:
        return self.state in ACCEPTED_STATES

    def as_json(self) -> CheckedAnswer:
        return {
            "state": self.state,
            "invalidations": self.invalidations,
            "lease_released": self.lease_released,
        }


def check_lineage(repo: Repo, ref: str, current_file: Path, now: str | None) -> Checked:
    """Evaluate a recorded lineage against the current facts; an invalid holder loses its lease."""

    workdir = repo.workdir
    lineage = read_record(find_lineage(repo, ref), workdir, what="lineage file")
    current = read_record(current_file, workdir, what="current facts file")
    if not isinstance(current, dict):
        raise InvalidInput("INVALID_REQUEST", "the current facts must be one JSON object")
    try:
        decision = evaluate_lineage(lineage, current, now if now is not None else reference_now(now_utc()))
    except RuntimeOpError as exc:
        raise InvalidInput(exc.code, exc.message) from None
    released: bool | None = None
    if (
        decision["state"] == "INVALID"
        and isinstance(lineage, dict)
        and isinstance(lineage.get("lineage_id"), str)
    ):
        released = _release(repo, lineage["lineage_id"])
    return Checked(decision["state"], list(decision["invalidations"]), released)


def _release(repo: Repo, lineage_id: str) -> bool:
    """Free the invalidated holder's writer lease; True when it held one."""

    return bool(release_lineage(repo.layout, lineage_id))
