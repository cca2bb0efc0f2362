"""Capsule paths go through the canonicalizer ``workgroup owners`` uses (issue 24).

``owned_files`` and ``artifact_refs`` once accepted what the writer registry refuses: full-width
dots that normalize to ``..``, bidi and zero-width characters, paths under ``.git``. Each is now
refused with the owners' code, ``INVALID_OWNERSHIP_PATH`` (exit 2), by ``workgroup capsule seal``
and by the runtime ``capsule`` op; ordinary paths still seal.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from support.harness import GitRepo, run_workgroup, runtime_call
from test_capsule_support import valid_capsule

from toolkit.runtime.codes import MESSAGES

HOSTILE_OWNED = {
    "full-width-dots": "\uff0e\uff0e/x",
    "two-dot-leader": "\u2025/x",
    "bidi-override": "src/\u202egpj.js",
    "zero-width": "src/a\u200b.js",
    "git-config": ".git/config",
    "git-folded": "src/.GIT/hooks/pre-commit",
    "full-width-git": "\uff0egit/config",
    "line-separator": "src/a\u2028b.js",
}
HOSTILE_ARTIFACTS = {
    "full-width-dots": "knowzcode/artifacts/\uff0e\uff0e/\uff0e\uff0e/x",
    "bidi-override": "knowzcode/artifacts/\u202eevil.json",
    "zero-width": "knowzcode/artifacts/e\u200b.json",
    "full-width-git": "knowzcode/artifacts/\uff0egit/config",
}
# what the reference itself refuses (C0/C1 controls, "..", "\\", ":") keeps the reference's code,
# CAPSULE_ARTIFACT_REF_INVALID (the runtime compat tests hold that)
ORDINARY = ["src/auth/token.js", "docs/notes:v2.md", "données/文件.py", "knowzcode/.github/x.yml"]


def _owners_code(repo: GitRepo, path: str) -> str:
    proc = run_workgroup("owners", "acquire", "holder", "--path", path, "--json", cwd=repo.path)
    assert proc.returncode == 2, proc.stderr
    return str(json.loads(proc.stdout)["error"]["code"])


def _seal(repo: GitRepo, capsule: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    repo.write("input/capsule.json", json.dumps(capsule))
    proc = run_workgroup("capsule", "seal", "input/capsule.json", "--write", "--json", cwd=repo.path)
    lines = proc.stdout.decode("utf-8").splitlines()
    return proc.returncode, json.loads(lines[-1]) if lines else {}


@pytest.fixture
def committed(git_repo: GitRepo) -> GitRepo:
    git_repo.commit("initial", {"src/app.py": "a = 1\n"})
    return git_repo


@pytest.mark.parametrize("name", sorted(HOSTILE_OWNED))
def test_hostile_owned_file_is_refused_with_the_owners_code(committed: GitRepo, name: str) -> None:
    path = HOSTILE_OWNED[name]
    owners = _owners_code(committed, path)
    assert owners == "INVALID_OWNERSHIP_PATH"
    capsule = valid_capsule()
    capsule["owned_files"] = ["src/auth/token.js", path]
    code, doc = _seal(committed, capsule)
    assert code == 2 and doc["error"]["code"] == owners, doc
    assert not (committed.path / ".workgroup").exists()  # nothing written
    status, out = runtime_call("capsule", {"capsule": capsule}, cwd=committed.path)
    assert status != 0 and out == {"ok": False, "code": owners, "message": MESSAGES[owners]}, out


@pytest.mark.parametrize("name", sorted(HOSTILE_ARTIFACTS))
def test_hostile_artifact_ref_is_refused_with_the_owners_code(committed: GitRepo, name: str) -> None:
    capsule = valid_capsule()
    capsule["artifact_refs"] = [HOSTILE_ARTIFACTS[name]]
    code, doc = _seal(committed, capsule)
    assert code == 2 and doc["error"]["code"] == "INVALID_OWNERSHIP_PATH", doc
    status, out = runtime_call("capsule", {"capsule": capsule}, cwd=committed.path)
    assert status != 0 and out["code"] == "INVALID_OWNERSHIP_PATH", out


def test_owned_file_through_a_symlink_out_of_the_repository_is_refused(
    committed: GitRepo, tmp_path: Any
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, committed.path / "linked")
    capsule = valid_capsule()
    capsule["owned_files"] = ["linked/secret.txt"]
    code, doc = _seal(committed, capsule)
    assert code == 2 and doc["error"]["code"] == _owners_code(committed, "linked/secret.txt"), doc


def test_ordinary_paths_still_seal(committed: GitRepo) -> None:
    capsule = valid_capsule()
    capsule["owned_files"] = [p for p in ORDINARY if ":" not in p]  # the reference bans ':' in capsules
    capsule["artifact_refs"] = ["knowzcode/artifacts/sha256-" + "a" * 64 + ".json"]
    code, doc = _seal(committed, capsule)
    assert code == 0, doc
    status, out = runtime_call("capsule", {"capsule": capsule}, cwd=committed.path)
    assert status == 0 and out["ok"] is True, out


def test_verify_finds_a_hand_sealed_capsule_with_a_hostile_owned_file(committed: GitRepo) -> None:
    from toolkit.core.canonical import capsule_digest

    code, doc = _seal(committed, valid_capsule())
    assert code == 0, doc
    committed.commit("capsule")
    rel = ".workgroup/workgroups/kc-feat-auth-20260730-080000/capsules/task-auth-1.json"
    path = committed.path / rel
    capsule = json.loads(path.read_text(encoding="utf-8"))
    capsule["owned_files"] = [HOSTILE_OWNED["full-width-dots"]]
    capsule["capsule_hash"] = capsule_digest(capsule)  # sealed by hand, bypassing the pipeline
    path.write_text(json.dumps(capsule), encoding="utf-8")
    proc = run_workgroup("verify", "--json", cwd=committed.path)
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert [(f["path"], f["code"]) for f in findings] == [(rel, "path")]
    assert "INVALID_OWNERSHIP_PATH" in findings[0]["message"]
