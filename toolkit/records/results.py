"""The result store behind ``workgroup result store``: apply a result-policy decision.

* A write-prohibited (or plain ephemeral) result writes nothing at all: no summary file, no
  artifact, no local state, no lock file. Its bounded summary is only returned to the caller.
* A result whose decision writes a handoff gets its bounded summary written atomically to
  ``.workgroup/workgroups/<wg>/results/<task_id>.md`` (DESIGN.md, Decisions), with the
  artifact path when there is one. Without a handoff the summary is only returned.
* Raw output, where the decision writes an artifact, is stored content-addressed under the
  artifact boundary as ``sha256-<hex>.<ext>``: the digest is in the name, so a swapped artifact
  is detectable and storing the same output twice is a no-op.

Everything is validated before the first write (summary size and encoding, the raw file, ids,
extension, and the privacy engine over a summary that will be committed), so bad input never
leaves a partial file. The summary is never truncated: an
oversized one is refused (the caller bounds it, as the capsule pipeline never truncates).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, NotRequired, TypedDict

from toolkit.core.errors import InvalidInput, Refused
from toolkit.infra import confined, confinedwrite, store
from toolkit.infra.store import Layout, safe_segment
from toolkit.privacy.engine import scan_text
from toolkit.privacy.files import context_for
from toolkit.runtime.codes import MESSAGES, RuntimeOpError
from toolkit.runtime.result_policy import RESULT_MODES, WRITE_KINDS, resolve_result_policy

MAX_SUMMARY_BYTES = 8192
MAX_RAW_BYTES = 256 * 1024 * 1024
_EXTENSION = re.compile(r"^[a-z0-9]{1,16}$")
DEFAULT_EXTENSION = "log"


@dataclass(frozen=True, slots=True)
class Writes:
    """What a result decision lets a result write, one flag per kind (``WRITE_KINDS``)."""

    handoff: bool
    artifact: bool
    vault: bool
    settings: bool
    workgroup: bool

    def any(self) -> bool:
        return self.handoff or self.artifact or self.vault or self.settings or self.workgroup


@dataclass(frozen=True, slots=True)
class ResultDecision:
    """A result-policy decision ``{mode, write_prohibited, writes}``, parsed and checked once."""

    mode: str
    write_prohibited: bool
    writes: Writes

    @classmethod
    def parse(cls, value: object) -> ResultDecision:
        """The decision a JSON value spells; anything else is ``POLICY_INVALID``.

        A known mode, a flag, exactly one flag per write kind, and a decision that agrees with
        itself (a hand-edited "write_prohibited but writes" is refused).
        """
        if not isinstance(value, Mapping) or set(value) != {"mode", "write_prohibited", "writes"}:
            _bad()
        mode, prohibited, writes = value["mode"], value["write_prohibited"], value["writes"]
        if not (
            isinstance(mode, str)
            and mode in RESULT_MODES
            and isinstance(prohibited, bool)
            and isinstance(writes, Mapping)
            and set(writes) == set(WRITE_KINDS)
            and all(isinstance(flag, bool) for flag in writes.values())
        ):
            _bad()
        decision = cls(mode, prohibited, Writes(**{kind: writes[kind] for kind in WRITE_KINDS}))
        decision.check_consistent()
        return decision

    def check_consistent(self) -> None:
        """Write-prohibited means ephemeral with no writes, an artifact is written exactly for an
        artifact decision, a durable one writes its handoff (checked in that order)."""
        if self.write_prohibited and (self.mode != "ephemeral" or self.writes.any()):
            raise InvalidInput(
                "POLICY_INVALID", "a write-prohibited decision must be ephemeral with no writes"
            )
        if self.writes.artifact != (self.mode == "artifact" and not self.write_prohibited):
            raise InvalidInput(
                "POLICY_INVALID", "an artifact is written exactly when the decision is artifact"
            )
        if self.mode == "durable" and not self.writes.handoff:
            raise InvalidInput("POLICY_INVALID", "a durable decision writes its handoff")


@dataclass(frozen=True)
class StoreRequest:
    """Everything ``store_result`` needs, already read by the shell."""

    decision: ResultDecision
    summary: str
    workgroup_id: str
    task_id: str
    raw_path: Path | None = None
    handoff_threshold: str = "material"
    artifact_boundary: str = "knowzcode/artifacts"


def decision_from_policy(policy: object) -> ResultDecision:
    """Accept a decision, a runtime frame carrying one, or a ``{input: facts}`` request.

    Facts are resolved here with the same pure function the runtime uses; a given decision is
    checked for shape and consistency (``ResultDecision.parse``).
    """
    policy = _unframed(policy)
    if isinstance(policy, Mapping) and set(policy) == {"input"}:
        return ResultDecision.parse(_resolve_facts(policy["input"]))
    return ResultDecision.parse(policy)


def _unframed(policy: object) -> object:
    """The decision inside a successful ``result-policy`` runtime frame; anything else as given."""
    if (
        isinstance(policy, Mapping)
        and policy.get("ok") is True
        and policy.get("operation") == "result-policy"
    ):
        return policy.get("result")
    return policy


def _resolve_facts(facts: object) -> Mapping[str, object]:
    """The decision of ``{input: facts}``, by the runtime's own function; its refusals keep their codes."""
    if not isinstance(facts, dict):
        _bad()
    try:
        return resolve_result_policy(facts)
    except RuntimeOpError as exc:
        if exc.code.startswith("RESULT_"):
            raise Refused(exc.code, MESSAGES[exc.code]) from None
        raise InvalidInput("POLICY_INVALID", "the policy facts are invalid") from None


def _bad() -> NoReturn:
    raise InvalidInput("POLICY_INVALID", 'the policy must be a result-policy decision or {"input": facts}')


def check_summary(data: bytes, limit: int = MAX_SUMMARY_BYTES) -> str:
    """A bounded UTF-8 summary; oversized or undecodable input is refused, never truncated."""
    if len(data) > limit:
        raise InvalidInput(
            "SUMMARY_TOO_LARGE", f"the summary exceeds {limit} bytes; store raw output as an artifact"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("SUMMARY_INVALID", "the summary is not UTF-8 text") from None
    if "\x00" in text:
        raise InvalidInput("SUMMARY_INVALID", "the summary contains a NUL character")
    if not text.strip():
        raise InvalidInput("SUMMARY_INVALID", "the summary is empty")
    return text


def artifact_extension(raw_path: Path) -> str:
    suffix = raw_path.suffix.lstrip(".").lower()
    return suffix if _EXTENSION.match(suffix) else DEFAULT_EXTENSION


def _check_raw(raw_path: Path) -> int:
    try:
        size = raw_path.stat().st_size
    except FileNotFoundError:
        raise InvalidInput("FILE_NOT_FOUND", "the raw output file does not exist") from None
    if not raw_path.is_file():
        raise InvalidInput("NOT_A_FILE", "the raw output is not a regular file")
    if size > MAX_RAW_BYTES:
        raise InvalidInput("RAW_TOO_LARGE", f"the raw output exceeds {MAX_RAW_BYTES} bytes")
    return size


def store_artifact(layout: Layout, raw_path: Path, boundary: str) -> Path:
    """Copy ``raw_path`` to ``<boundary>/sha256-<hex>.<ext>``, hashing while copying; atomic.

    The artifact folder is the repository's: created through the confined layer (a folder that
    leads outside the work tree is refused), and the file's name is checked before the rename.
    """

    what = "the artifact folder"
    target_dir = Path(confined.mkdirs(layout.workdir, layout.artifact_boundary(boundary), what))
    # the temp lives in the local state dir, never in the work tree (a killed copy leaves nothing to commit)
    fd, tmp = store.open_temp(target_dir / "artifact")
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, open(raw_path, "rb") as src:
            while chunk := src.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        name = f"sha256-{digest.hexdigest()}.{artifact_extension(raw_path)}"
        target = Path(confined.resolve_inside(layout.workdir, target_dir / name, "the artifact"))
        os.chmod(tmp, 0o644)
        store.replace_from_temp(tmp, target)  # same bytes under the same name: replacing is harmless
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def _check_private(summary: str, rel_path: str) -> None:
    """A summary that will be committed passes the privacy engine first (as the hook would)."""

    findings = scan_text(summary, context_for(rel_path))
    if findings:
        rules = ", ".join(sorted({f.rule for f in findings}))
        raise Refused("PRIVATE_CONTENT", f"the summary contains private content ({rules}); nothing written")


def render_summary(summary: str, artifact_rel: str | None) -> str:
    body = summary if summary.endswith("\n") else summary + "\n"
    if artifact_rel:
        body += f"\nRaw output: `{artifact_rel}`\n"
    return body


class StoreAnswer(TypedDict):
    """What ``store_result`` returns (``result store --json``): the paths it wrote, repository-relative;
    without a handoff the summary itself comes back instead."""

    mode: str
    write_prohibited: bool
    written: list[str]
    summary_path: str | None
    artifact_path: str | None
    raw_persisted: bool
    summary: NotRequired[str]


def store_result(layout: Layout, request: StoreRequest) -> StoreAnswer:
    """Apply ``request.decision``; returns what was written (repository-relative paths)."""
    decision = request.decision
    prohibited = decision.write_prohibited
    # the "always" threshold gives every result that may write a handoff
    handoff = not prohibited and (decision.writes.handoff or request.handoff_threshold == "always")
    artifact = not prohibited and decision.writes.artifact
    safe_segment(request.workgroup_id, "workgroup_id")
    safe_segment(request.task_id, "task_id")
    out: StoreAnswer = {
        "mode": decision.mode,
        "write_prohibited": prohibited,
        "written": [],
        "summary_path": None,
        "artifact_path": None,
        "raw_persisted": False,
    }
    summary_path = layout.result_path(request.workgroup_id, request.task_id)
    if handoff:
        _check_private(request.summary, summary_path.relative_to(layout.workdir).as_posix())
        # every destination is checked before the first write (PATH_OUTSIDE_REPOSITORY)
        confined.resolve_inside(layout.workdir, summary_path, "the result summary")
    if artifact:
        if request.raw_path is None:
            raise InvalidInput("RAW_REQUIRED", "an artifact decision needs --raw with the raw output")
        _check_raw(request.raw_path)
        confined.resolve_dir(
            layout.workdir, layout.artifact_boundary(request.artifact_boundary), "the artifact folder"
        )
        target = store_artifact(layout, request.raw_path, request.artifact_boundary)
        rel = os.path.relpath(target, confined.real_root(layout.workdir)).replace(os.sep, "/")
        out["artifact_path"] = rel
        out["raw_persisted"] = True
        out["written"].append(rel)
    if handoff:
        confinedwrite.atomic_write(
            layout.workdir,
            summary_path,
            render_summary(request.summary, out["artifact_path"]),
            what="the result summary",
        )
        rel = summary_path.relative_to(layout.workdir).as_posix()
        out["summary_path"] = rel
        out["written"].append(rel)
    else:
        # no handoff: the bounded summary (and any artifact path) goes back to the caller only
        out["summary"] = request.summary
    return out
