"""Demo step: capsules. Seal a capsule bound to HEAD, commit it, verify; rewrite history, verify again."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

from toolkit.infra.git import commit_all, discover, squash_onto

if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject
    from toolkit.demo.runner import Demo

# the builder's capsule as the demo writes it for ``capsule seal`` (unsealed: no checkpoint, no hash)
CAPSULE: JsonObject = {
    "schema": "knowzcode.context-capsule/v1",
    "task_id": "api-timeout",
    "workgroup_id": "demo-wg",
    "phase": "2A",
    "objective": "Add a request timeout to the API handler without changing its response.",
    "node_ids": ["ApiHandler"],
    "owned_files": ["src/api.py"],
    "read_files": ["README.md"],
    "specs": [],
    "approved_decisions": ["Use the standard library's timeout support."],
    "checkpoint_sha": None,
    "failures": [],
    "risks": ["A too-short timeout would fail healthy slow requests."],
    "constraints": ["Keep the handler's signature."],
    "next_action": "Write the failing timeout test.",
    "evidence": [
        {"kind": "test", "summary": f"Slow-path probe {i}: the handler answered after a long wait. " * 4}
        for i in range(6)
    ],
    "artifact_refs": [],
}


def _show(
    demo: Demo, args: tuple[str, ...], proc: subprocess.CompletedProcess[str], *, stdout: bool = True
) -> None:
    demo.say(f"$ workgroup {' '.join(args)}   (exit {proc.returncode})")
    for text in ((proc.stdout.strip() if stdout else ""), proc.stderr.strip()):
        if text:
            demo.say(text)


def _expect(proc: subprocess.CompletedProcess[str], code: int, what: str) -> None:
    if proc.returncode != code:
        raise RuntimeError(f"{what}: expected exit {code}, got {proc.returncode}")


def run(demo: Demo) -> None:

    demo.heading("Capsules bound to checkpoints, and `workgroup verify`")
    repo = discover(demo.root)
    base = repo.resolve_commit("HEAD")  # what history looks like before this step's commits
    commit_all(repo, "api: start the timeout work")
    demo.say("A builder's context goes into a capsule bound to the current commit. Its evidence is larger")
    demo.say("than the 1,500-byte limit we set here, so the evidence (and only the evidence) moves to an")
    demo.say("artifact named by its SHA-256; the capsule hash covers that name, so it binds the artifact.")
    source = demo.write("tmp/capsule-input.json", json.dumps(CAPSULE, indent=2))
    args = (
        "capsule",
        "seal",
        str(source.relative_to(demo.root)),
        "--max-bytes",
        "1500",
        "--artifact-path",
        "knowzcode/artifacts/evidence.json",
        "--write",
        "--json",
    )
    proc = demo.run(*args)
    _show(demo, args[:-1] + ("--json",), proc, stdout=False)
    _expect(proc, 0, "capsule seal")
    result = json.loads(proc.stdout)
    demo.say(f"capsule_hash {result['capsule_hash']}")
    demo.say(f"checkpoint_sha {result['checkpoint_sha']} (HEAD)")
    demo.say(f"artifact_refs {result['capsule']['artifact_refs']}")
    source.unlink()
    source.parent.rmdir()
    demo.say("")

    demo.say("A capsule with a leaked session id is refused before anything is sized, hashed or written:")
    leaky = dict(CAPSULE, risks=["Resume Claude session id: claude-session-1a2b3c4d5e6f"])
    source = demo.write("tmp/leaky.json", json.dumps(leaky))
    proc = demo.run("capsule", "seal", "tmp/leaky.json", "--write")
    _show(demo, ("capsule", "seal", "tmp/leaky.json", "--write"), proc, stdout=False)
    _expect(proc, 1, "leaky capsule")
    source.unlink()
    source.parent.rmdir()
    demo.say("")

    commit_all(repo, "record the api-timeout capsule")
    demo.say("The capsule and its artifact are committed. CI (templates/ci/workgroup-verify.yml) runs:")
    proc = demo.run("verify")
    _show(demo, ("verify",), proc)
    _expect(proc, 0, "verify after commit")
    demo.say("")

    demo.say("Now someone squashes this step's two commits into one (as a rebase that drops commits would):")
    demo.say("the capsule's checkpoint is no longer in the branch's history.")
    squash_onto(discover(demo.root), base, "api timeout work (squashed)")
    proc = demo.run("verify")
    _show(demo, ("verify",), proc)
    _expect(proc, 1, "verify after the rewrite")
    demo.say("verify names the file and the rule. The fix is to reseal the capsule at the new commit:")
    capsule_rel = ".workgroup/workgroups/demo-wg/capsules/api-timeout.json"
    stored = json.loads((demo.root / capsule_rel).read_text(encoding="utf-8"))
    stored.pop("capsule_hash")
    source = demo.write("tmp/reseal.json", json.dumps(stored))
    proc = demo.run("capsule", "seal", "tmp/reseal.json", "--write")
    _show(demo, ("capsule", "seal", "tmp/reseal.json", "--write"), proc, stdout=False)
    source.unlink()
    source.parent.rmdir()
    commit_all(repo, "reseal the api-timeout capsule")
    proc = demo.run("verify")
    _show(demo, ("verify",), proc)
    _expect(proc, 0, "verify after resealing")
