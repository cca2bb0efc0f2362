"""Shared capsule fixtures for the capsule, verify and lineage tests (no tests of its own).

``valid_capsule()`` is the reference's published valid capsule, with the hash the reference
runtime computed for it: our digest must reproduce that exact value.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

REFERENCE_VALID_HASH = "sha256:a1cd69eef6f9f3bb135f4231000123629a532aefaa5bc6a49a413a0696b7d8fa"

_VALID: dict[str, Any] = {
    "schema": "knowzcode.context-capsule/v1",
    "task_id": "task-auth-1",
    "workgroup_id": "kc-feat-auth-20260730-080000",
    "phase": "2A",
    "objective": "Implement token expiry without weakening authentication.",
    "node_ids": ["Authentication"],
    "owned_files": ["src/auth/token.js", "test/auth/token.test.js"],
    "read_files": ["knowzcode/specs/Authentication.md"],
    "specs": [{"path": "knowzcode/specs/Authentication.md", "verify_ids": ["AUTH-01", "AUTH-02"]}],
    "approved_decisions": ["Use the existing clock abstraction."],
    "checkpoint_sha": "abcdef1234567",
    "failures": [],
    "risks": ["Do not expose token values in logs."],
    "constraints": ["Follow TDD and preserve backward compatibility."],
    "next_action": "Write the failing expiry test.",
    "evidence": [],
    "artifact_refs": [],
    "capsule_hash": REFERENCE_VALID_HASH,
}


def valid_capsule() -> dict[str, Any]:
    return copy.deepcopy(_VALID)


def overflow_capsule() -> dict[str, Any]:
    """Twelve verbose evidence entries: about 5 KB sealed, mandatory part well under 1,450 bytes."""
    capsule = valid_capsule()
    capsule.update(
        task_id="task-large-evidence",
        workgroup_id="kc-feat-context-20260730-080000",
        phase="2B",
        objective="Audit the fixed criteria independently.",
        node_ids=["ContextEfficientOrchestration"],
        owned_files=[],
        read_files=["knowzcode/specs/ContextEfficientOrchestration.md"],
        specs=[
            {"path": "knowzcode/specs/ContextEfficientOrchestration.md", "verify_ids": ["CEO-03", "CEO-05"]}
        ],
        approved_decisions=["Review from the approved-spec baseline."],
        risks=["Avoid builder reasoning lineage."],
        constraints=["Read-only independent audit."],
        next_action="Compare the checkpoint diff with CEO-03 and CEO-05.",
        evidence=[
            {
                "kind": "log",
                "summary": f"Verbose evidence {i}: " + "detail " * 40,
                "artifact": f"knowzcode/artifacts/evidence-{i}.log",
            }
            for i in range(12)
        ],
    )
    capsule.pop("capsule_hash")
    return capsule


def in_process(op: str, request: Any) -> dict[str, Any]:
    """One runtime frame, in-process, through the real protocol (parse, execute, emit)."""
    from toolkit.runtime.protocol import RuntimeContext, run_single

    out = io.StringIO()
    run_single(op, io.BytesIO(json.dumps(request).encode("utf-8")), out, RuntimeContext())
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    frame: dict[str, Any] = json.loads(lines[0])
    return frame


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except ``.git`` (to prove that nothing was written)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }
