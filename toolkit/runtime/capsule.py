"""The capsule pipeline: validate, privacy-check, bound, seal (stdlib only, never writes).

Order (reference §4), each step fail-closed:

1. closed schema -> ``CAPSULE_SCHEMA_INVALID``;
2. privacy walk over keys and values (and 4,096-byte strings) -> ``CAPSULE_PRIVATE_CONTENT`` /
   ``CAPSULE_STRING_TOO_LONG``, so a poisoned capsule is never externalized, sized or hashed;
3. portable paths -> ``CAPSULE_ARTIFACT_REF_INVALID``; artifact paths outside
   ``knowzcode/artifacts`` (the root itself is inside) -> ``CAPSULE_ARTIFACT_REF_UNAUTHORIZED``;
4. sealed canonical bytes within ``max_bytes`` -> done;
5. otherwise only optional ``evidence`` may leave, and only to an ``artifact_path`` inside (or
   equal to) an explicit ``artifact_roots`` entry inside the boundary (``.git`` never);
6. still too big -> ``CAPSULE_MANDATORY_OVERFLOW``. Nothing is ever truncated.

Improvement over the reference: externalized evidence is content-addressed. The ref added to
``artifact_refs`` is ``<dir of artifact_path>/sha256-<hex>.json`` (inside ``artifact_path`` when
it is one of the roots) where ``<hex>`` is the SHA-256 of the artifact bytes
(``evidence_artifact_bytes``), so the capsule hash binds the evidence and a swapped artifact is
detected by ``workgroup verify``. The runtime returns the capsule only (the reference's shape);
the shell (``workgroup capsule seal --write``) writes the artifact. Right before sealing, the
complete transformed capsule is privacy-walked again.
"""

from __future__ import annotations

import hashlib

from toolkit.core.canonical import canonical_bytes, capsule_digest, sha256_digest
from toolkit.runtime.capsule_rules import (
    ARTIFACT_BOUNDARY,
    assert_artifact_path,
    assert_paths,
    checked_capsule,
    has_git_segment,
    inside_or_equal,
    portable_path,
)
from toolkit.runtime.codes import RuntimeOpError

TYPE_CHECKING = False  # typing costs start-up on every runtime call; type checkers read True
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.core.jsontypes import JsonObject
    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.op_types import ContextCapsule

DEFAULT_MAX_BYTES = 12_288
EVIDENCE_ARTIFACT_SCHEMA = "workgroup.capsule-evidence/v1"
CONTENT_ADDRESS_PREFIX = "sha256-"


class Prepared:
    """A sealed capsule plus, when evidence was moved out, the artifact to store beside it.

    A plain class: a dataclass would import dataclasses and inspect on every capsule call.
    """

    __slots__ = ("artifact_bytes", "artifact_ref", "capsule")

    capsule: ContextCapsule  # sealed, and checked against the closed schema right before
    artifact_ref: str | None
    artifact_bytes: bytes | None

    def __init__(
        self, capsule: ContextCapsule, artifact_ref: str | None = None, artifact_bytes: bytes | None = None
    ) -> None:
        self.capsule = capsule
        self.artifact_ref = artifact_ref
        self.artifact_bytes = artifact_bytes

    @property
    def artifact_digest(self) -> str | None:
        if self.artifact_bytes is None:
            return None
        return sha256_digest(self.artifact_bytes)


def evidence_artifact_bytes(capsule: Mapping[str, object]) -> bytes:
    """The exact bytes of an externalized-evidence artifact (canonical JSON, newline-free)."""
    return canonical_bytes(
        {
            "schema": EVIDENCE_ARTIFACT_SCHEMA,
            "workgroup_id": capsule["workgroup_id"],
            "task_id": capsule["task_id"],
            "evidence": capsule["evidence"],
        }
    )


def content_addressed_ref(artifact_path: str, data: bytes, *, is_directory: bool = False) -> str:
    """``<dir of artifact_path>/sha256-<hex>.json``: the file name is the digest of ``data``.

    ``is_directory``: ``artifact_path`` names a directory (an artifact root), the file goes inside it.
    """
    directory = artifact_path if is_directory else artifact_path.rsplit("/", 1)[0]
    return f"{directory}/{CONTENT_ADDRESS_PREFIX}{hashlib.sha256(data).hexdigest()}.json"


def _assert_private_content_free(capsule: Mapping[str, object]) -> None:
    """``capsule_privacy.assert_private_content_free``, its engine loaded by the first capsule
    checked: ``seal`` and ``verify``'s record reader import this module without scanning anything
    (tests/records/test_verify_lean.py)."""
    from toolkit.runtime.capsule_privacy import assert_private_content_free

    assert_private_content_free(capsule)


def seal(capsule: Mapping[str, object]) -> JsonObject:
    """A copy with ``capsule_hash`` recomputed (and placed last, as the reference does)."""
    sealed: JsonObject = {key: value for key, value in capsule.items() if key != "capsule_hash"}
    sealed["capsule_hash"] = capsule_digest(sealed)
    return sealed


def sealed_size(capsule: Mapping[str, object]) -> int:
    return len(canonical_bytes(capsule))


def _max_bytes(value: object) -> int:
    if value is None:
        return DEFAULT_MAX_BYTES
    # JSON has one number type: 1450.0 is the integer 1450 for the reference, true is not a number
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuntimeOpError("INVALID_REQUEST")
    if isinstance(value, float) and not value.is_integer():
        raise RuntimeOpError("INVALID_REQUEST")
    if value <= 0:
        raise RuntimeOpError("INVALID_REQUEST")
    return int(value)


def _roots(value: object) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RuntimeOpError("INVALID_REQUEST")
    roots: list[str] = []
    for root in value:
        if not portable_path(root):
            raise RuntimeOpError("CAPSULE_ARTIFACT_REF_INVALID")
        if not inside_or_equal(root, ARTIFACT_BOUNDARY) or has_git_segment(root):
            raise RuntimeOpError("CAPSULE_ARTIFACT_REF_UNAUTHORIZED")
        roots.append(root)
    return roots


def prepare_capsule(
    capsule: object,
    *,
    max_bytes: object = None,
    artifact_path: object = None,
    artifact_roots: object = None,
) -> Prepared:
    """Run the whole pipeline; raises ``RuntimeOpError`` with the reference's codes."""
    limit = _max_bytes(max_bytes)
    if artifact_path is not None and not isinstance(artifact_path, str):
        raise RuntimeOpError("INVALID_REQUEST")
    if not isinstance(capsule, dict):
        raise RuntimeOpError("INVALID_REQUEST" if not isinstance(capsule, list) else "CAPSULE_SCHEMA_INVALID")
    roots = _roots(artifact_roots)
    checked = checked_capsule(capsule, sealed=False)  # the paths are the capsule's own
    _assert_private_content_free(capsule)
    assert_paths(checked)
    if artifact_path is not None:
        assert_artifact_path(artifact_path)

    prepared = seal(capsule)
    if sealed_size(prepared) <= limit:
        return _final(prepared)
    return _externalized(prepared, artifact_path, roots, limit)


def _externalized(prepared: JsonObject, artifact_path: str | None, roots: list[str], limit: int) -> Prepared:
    """An oversized capsule with its evidence moved to a content-addressed artifact under an
    authorized root; ``CAPSULE_MANDATORY_OVERFLOW`` when there is no evidence or path to move it
    to, or the capsule is still too large without it."""
    evidence = prepared.get("evidence")
    if not (isinstance(evidence, list) and evidence and artifact_path is not None):
        raise RuntimeOpError("CAPSULE_MANDATORY_OVERFLOW")
    if not any(inside_or_equal(artifact_path, root) for root in roots):
        # externalization needs an explicit, authorized root; the boundary alone is not enough
        raise RuntimeOpError("CAPSULE_ARTIFACT_REF_UNAUTHORIZED")
    data = evidence_artifact_bytes(prepared)
    # a path equal to a root names that directory (the reference accepts the root itself)
    ref = content_addressed_ref(artifact_path, data, is_directory=artifact_path in roots)
    moved = dict(prepared)
    moved["evidence"] = []
    listed = moved.get("artifact_refs", [])  # a list of paths: the sealed capsule passed the schema
    refs = list(listed) if isinstance(listed, list) else []
    if ref not in refs:
        refs.append(ref)
    moved["artifact_refs"] = refs
    moved = seal(moved)
    if sealed_size(moved) > limit:
        raise RuntimeOpError("CAPSULE_MANDATORY_OVERFLOW")
    return _final(moved, ref, data)


def _final(capsule: JsonObject, ref: str | None = None, data: bytes | None = None) -> Prepared:
    # the complete transformed capsule, checked again immediately before it is handed out sealed
    sealed = checked_capsule(capsule, sealed=True)  # the capsule itself, as the schema's record
    _assert_private_content_free(sealed)
    assert_paths(sealed)
    return Prepared(capsule=sealed, artifact_ref=ref, artifact_bytes=data)


def op_capsule(request: Mapping[str, object], ctx: RuntimeContext) -> ContextCapsule:
    """``workgroup runtime capsule``: ``{capsule, max_bytes?, artifact_path?, artifact_roots?}`` -> sealed."""
    if "max_bytes" in request and request["max_bytes"] is None:
        raise RuntimeOpError("INVALID_REQUEST")  # only an absent limit takes the default
    prepared = prepare_capsule(
        request.get("capsule"),
        max_bytes=request.get("max_bytes"),
        artifact_path=request.get("artifact_path"),
        artifact_roots=request.get("artifact_roots"),
    )
    return prepared.capsule
