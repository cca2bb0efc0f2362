"""The shell side of capsules: read a capsule file safely, bind it to a commit, seal, store.

The decision (``toolkit.runtime.capsule.prepare_capsule``) is pure and never writes; this module
reads the file, resolves the checkpoint with pygit2, and with ``write=True`` stores the sealed
capsule at ``.workgroup/workgroups/<wg>/capsules/<task_id>.json`` and any externalized evidence at
its content-addressed path under the artifact boundary, both atomically.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from toolkit.core.canonical import canonical_bytes
from toolkit.core.errors import InvalidInput, Refused, ToolkitError
from toolkit.infra import confined, confinedwrite
from toolkit.infra.confined import resolve_inside
from toolkit.infra.paths import Canonicalizer
from toolkit.infra.store import read_json_file
from toolkit.runtime.capsule import Prepared, prepare_capsule
from toolkit.runtime.capsule_rules import ARTIFACT_BOUNDARY, artifact_paths, explain_schema
from toolkit.runtime.codes import MESSAGES, RuntimeOpError

if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject
    from toolkit.infra.git import Repo
    from toolkit.runtime.op_types import ContextCapsule

MAX_RECORD_BYTES = 1_048_576

# pipeline codes that mean "this input is malformed" (exit 2); the rest are refusals (exit 1)
_INVALID_INPUT_CODES = frozenset(
    {"INVALID_REQUEST", "CAPSULE_SCHEMA_INVALID", "CAPSULE_ARTIFACT_REF_INVALID", "INVALID_OWNERSHIP_PATH"}
)


class ArtifactAnswer(TypedDict):
    """Where ``capsule seal`` put (or would put) the evidence it moved out."""

    path: str
    digest: str | None
    written: bool


class SealAnswer(TypedDict):
    """What ``capsule seal --json`` prints (``SealOutcome.as_json``)."""

    capsule_hash: str
    checkpoint_sha: str
    bytes: int
    written: str | None
    artifact: ArtifactAnswer | None
    capsule: ContextCapsule


def as_toolkit_error(exc: RuntimeOpError) -> ToolkitError:
    """The CLI face of a pipeline refusal: same code, same fixed message."""
    cls = InvalidInput if exc.code in _INVALID_INPUT_CODES else Refused
    return cls(exc.code, MESSAGES[exc.code])


def schema_error(capsule: object, path: str | None = None) -> InvalidInput:
    """CAPSULE_SCHEMA_INVALID naming every field at fault with its rule (never a value)."""

    problems = explain_schema(capsule, sealed=False)
    shown = problems[:10] + ([f"... and {len(problems) - 10} more"] if len(problems) > 10 else [])
    lines = (*("  " + problem for problem in shown), "(an example: `workgroup capsule seal --help`)")
    return InvalidInput(
        "CAPSULE_SCHEMA_INVALID", "the capsule does not match the capsule schema:", path=path, lines=lines
    )


def inside(root: Path, target: Path) -> bool:
    try:
        target.relative_to(root)
    except ValueError:
        return False
    return True


def read_record(
    path: Path,
    workdir: Path,
    *,
    what: str = "capsule file",
    limit: int = MAX_RECORD_BYTES,
) -> object:
    """Parse a JSON record with a size cap; a symlink leading outside the repository is refused.

    Reads at most ``limit + 1`` bytes, so a 10 MB file costs no more than a 1 MB one. The file
    is named by the user, so a symlink to another file of the repository is followed; one that
    leads outside it, or (for a file in the work tree) a folder on the way that does, is
    ``PATH_OUTSIDE_REPOSITORY`` (``toolkit.infra.confined``).
    """
    confined.check_named_file(path, f"the {what}", root=workdir)
    return read_json_file(path, limit=limit, what=f"the {what}")


def safe_destination(workdir: Path, target: Path) -> Path:
    """The checked path of a write under the work tree (``confined.resolve_inside``): a folder
    above it that leads outside, or a symlink in its place, is ``PATH_OUTSIDE_REPOSITORY``."""

    return Path(resolve_inside(workdir, target, "the destination"))


@dataclass(frozen=True)
class SealOutcome:
    """What ``capsule seal`` did: the sealed capsule and, with ``--write``, where it went."""

    capsule: ContextCapsule  # the runtime's sealed capsule (``Prepared.capsule``), on its way out as JSON
    capsule_hash: str  # read off the sealed capsule once, where it leaves the pipeline
    checkpoint_sha: str
    size: int
    capsule_path: str | None = None
    artifact_ref: str | None = None
    artifact_digest: str | None = None
    artifact_written: bool = False

    def as_json(self) -> SealAnswer:
        return {
            "capsule_hash": self.capsule_hash,
            "checkpoint_sha": self.checkpoint_sha,
            "bytes": self.size,
            "written": self.capsule_path,
            "artifact": None
            if self.artifact_ref is None
            else {
                "path": self.artifact_ref,
                "digest": self.artifact_digest,
                "written": self.artifact_written,
            },
            "capsule": self.capsule,
        }


def _canonical_paths(workdir: Path, paths: list[str]) -> None:
    """Owned files and artifact refs through the canonicalizer ``workgroup owners`` uses, against the
    real work tree: a path whose real location (symlinks resolved) leaves it, or lies in ``.git``,
    is ``INVALID_OWNERSHIP_PATH`` (exit 2), as in the writer registry."""

    canon = Canonicalizer(str(workdir))
    for path in paths:
        canon.key(path)


def seal_file(
    repo: Repo,
    source: Path,
    *,
    checkpoint: str = "HEAD",
    max_bytes: int | None = None,
    artifact_path: str | None = None,
    artifact_roots: list[str] | None = None,
    write: bool = False,
) -> SealOutcome:
    """Read ``source``, bind it to ``checkpoint``, run the pipeline, optionally store the result."""

    workdir = repo.workdir
    capsule = read_record(source, workdir)
    if not isinstance(capsule, dict) or explain_schema(capsule, sealed=False):
        raise schema_error(capsule, str(source))
    sha = repo.resolve_commit(checkpoint)
    bound: JsonObject = {**capsule, "checkpoint_sha": sha}
    prepared = _prepare(bound, source, max_bytes, artifact_path, artifact_roots)
    sealed = prepared.capsule
    _canonical_paths(workdir, [*sealed.get("owned_files", []), *artifact_paths(sealed)])
    size = len(canonical_bytes(sealed))
    if not write:
        return SealOutcome(
            sealed,
            sealed["capsule_hash"],
            sha,
            size,
            artifact_ref=prepared.artifact_ref,
            artifact_digest=prepared.artifact_digest,
        )
    return _store_sealed(repo, prepared, sha, size)


def _prepare(
    bound: JsonObject,
    source: Path,
    max_bytes: int | None,
    artifact_path: str | None,
    artifact_roots: list[str] | None,
) -> Prepared:
    """The runtime's capsule pipeline on a bound capsule (artifacts under the default boundary
    unless roots are given); a schema refusal names the source file, other codes keep theirs."""
    roots = artifact_roots if artifact_roots is not None else ([ARTIFACT_BOUNDARY] if artifact_path else [])
    try:
        return prepare_capsule(bound, max_bytes=max_bytes, artifact_path=artifact_path, artifact_roots=roots)
    except RuntimeOpError as exc:
        if exc.code == "CAPSULE_SCHEMA_INVALID":
            raise schema_error(bound, str(source)) from None
        raise as_toolkit_error(exc) from None


def _store_sealed(repo: Repo, prepared: Prepared, sha: str, size: int) -> SealOutcome:
    """Write the sealed capsule (and its artifact first, unless the same bytes are there) inside
    the work tree, every destination checked before the first byte is written."""
    workdir = repo.workdir
    sealed = prepared.capsule
    layout = repo.layout
    capsule_target = safe_destination(workdir, layout.capsule_path(sealed["workgroup_id"], sealed["task_id"]))
    artifact_target = None
    if prepared.artifact_ref is not None:
        artifact_target = safe_destination(workdir, workdir / prepared.artifact_ref)
    # every check is done before the first byte is written; the artifact goes first so a
    # stored capsule never points at a missing artifact
    written = False
    if artifact_target is not None and prepared.artifact_bytes is not None:
        if not (artifact_target.is_file() and artifact_target.read_bytes() == prepared.artifact_bytes):
            confinedwrite.atomic_write(workdir, artifact_target, prepared.artifact_bytes, what="the artifact")
            written = True
    confinedwrite.atomic_write(
        workdir, capsule_target, json.dumps(sealed, indent=2, ensure_ascii=False) + "\n", what="the capsule"
    )
    return SealOutcome(
        sealed,
        sealed["capsule_hash"],
        sha,
        size,
        capsule_path=capsule_target.relative_to(workdir).as_posix(),
        artifact_ref=prepared.artifact_ref,
        artifact_digest=prepared.artifact_digest,
        artifact_written=written,
    )
