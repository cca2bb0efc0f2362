"""Demo step: results. Result policy applied, vault deltas journaled, an MCP probe reused."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject
    from toolkit.demo.runner import Demo


def _show(
    demo: Demo, args: tuple[str, ...], proc: subprocess.CompletedProcess[str], *, stdout: bool = True
) -> None:
    demo.say(f"$ workgroup {' '.join(args)}   (exit {proc.returncode})")
    for text in ((proc.stdout.strip() if stdout else ""), proc.stderr.strip()):
        if text:
            demo.say(text)


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(what)


def _files(root: Path) -> dict[str, int]:
    found: dict[str, int] = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            found[str(path.relative_to(root))] = path.stat().st_mtime_ns
    return found


def _policy(demo: Demo, facts: Mapping[str, object], inputs: Path, name: str) -> Path:
    frame = demo.runtime("result-policy", {"input": facts})
    demo.say(f"result-policy {json.dumps(facts)} -> {json.dumps(frame.get('result'))}")
    path = inputs / name
    path.write_text(json.dumps(frame), encoding="utf-8")
    return path


def _results(demo: Demo, inputs: Path) -> None:
    summary = inputs / "summary.txt"
    summary.write_text(
        "pytest: 212 passed, 3 failed; first failure tests/test_api.py::test_retry "
        "(AssertionError: expected 3 retries, got 5)\n",
        encoding="utf-8",
    )
    demo.say("A read-only audit runs write-prohibited: its result must leave no trace at all.")
    policy = _policy(
        demo,
        {"write_prohibited": True, "material": True, "authorize_vault_write": True},
        inputs,
        "readonly.json",
    )
    before = _files(demo.root)
    args = (
        "result",
        "store",
        "--policy",
        str(policy),
        "--summary",
        str(summary),
        "--workgroup",
        "wg-demo",
        "--task",
        "audit-1",
    )
    proc = demo.run(*args)
    _show(
        demo,
        (
            "result",
            "store",
            "--policy",
            "readonly.json",
            "--summary",
            "summary.txt",
            "--workgroup",
            "wg-demo",
            "--task",
            "audit-1",
        ),
        proc,
    )
    _expect(
        proc.returncode == 0 and _files(demo.root) == before, "a write-prohibited result changed the tree"
    )
    demo.say("Every file of the repository, .git and the local state included, is unchanged: the bounded")
    demo.say("summary went back to the caller on stdout and nowhere else.")
    demo.say("")

    raw = inputs / "pytest-full.log"
    raw.write_text(
        "".join(f"tests/test_api.py::test_case_{i} PASSED\n" for i in range(4000)), encoding="utf-8"
    )
    demo.say(
        f"The full test run printed {raw.stat().st_size} bytes. Raw logs must not enter follow-up prompts,"
    )
    demo.say("so the policy asks for an artifact, and the material result keeps a recoverable handoff.")
    policy = _policy(demo, {"large_raw_output": True, "material": True}, inputs, "full-run.json")
    args2: tuple[str, ...] = (
        "result",
        "store",
        "--policy",
        str(policy),
        "--summary",
        str(summary),
        "--raw",
        str(raw),
        "--workgroup",
        "wg-demo",
        "--task",
        "gate3-tests",
        "--json",
    )
    proc = demo.run(*args2)
    _show(
        demo,
        (
            "result",
            "store",
            "--policy",
            "full-run.json",
            "--summary",
            "summary.txt",
            "--raw",
            "pytest-full.log",
            "--workgroup",
            "wg-demo",
            "--task",
            "gate3-tests",
            "--json",
        ),
        proc,
    )
    out = json.loads(proc.stdout) if proc.returncode == 0 else {}
    _expect(bool(out.get("artifact_path")) and bool(out.get("summary_path")), "the artifact was not stored")
    handoff = demo.root / out["summary_path"]
    demo.say(f"{out['summary_path']} ({handoff.stat().st_size} bytes) is what the next worker reads:")
    demo.say(handoff.read_text("utf-8").rstrip())
    demo.say("The raw log is content-addressed under the artifact boundary; its digest is its name.")
    demo.say("")


def _vault(demo: Demo) -> None:
    demo.say("Knowledge captures go through the local delta journal in the git common dir.")
    deltas: list[tuple[JsonObject, str, str]] = [
        (
            {
                "delta": {
                    "category": "pattern",
                    "title": "API retries",
                    "content": "Retry 3 times with jitter.",
                    "semantic_key": "api-retries",
                    "KnowledgeId": "K-101",
                }
            },
            "batch",
            "A new delta is batched: pending in the journal, sent nowhere yet.",
        ),
        (
            {
                "delta": {
                    "category": "Pattern",
                    "title": "api retries!",
                    "content": "retry 3 times, with jitter",
                }
            },
            "skip",
            "Same knowledge after normalization (case, punctuation): skipped, nothing appended.",
        ),
        (
            {
                "delta": {
                    "category": "pattern",
                    "title": "API retries",
                    "content": "Retry 5 times with jitter.",
                    "semantic_key": "API Retries",
                }
            },
            "amend",
            "Same semantic key, new content: an amend of exactly one record, whose id is returned.",
        ),
    ]
    for payload, action, why in deltas:
        proc = demo.run("vault", "add", "-", "--json", stdin=json.dumps(payload))
        _show(demo, ("vault", "add", "-", "--json"), proc)
        _expect(proc.returncode == 0 and json.loads(proc.stdout)["action"] == action, f"expected {action}")
        demo.say(why)
    proc = demo.run("vault", "flush")
    _show(demo, ("vault", "flush"), proc)
    batch = json.loads(proc.stdout)
    _expect(len(batch["entries"]) == 2, "the flush did not carry the two pending entries")
    proc = demo.run("vault", "flush")
    _show(demo, ("vault", "flush"), proc)
    _expect(json.loads(proc.stdout)["entries"] == [], "a second flush repeated the batch")
    demo.say("The coordinator sends the printed batch to its vault service; a second flush has nothing left.")
    demo.say("")


def _probe(demo: Demo) -> None:
    demo.say("An MCP health probe ran in phase 1A. In phase 2A, four minutes later, it is not repeated:")
    for args in (
        ("probe", "record", "knowz-mcp", "--healthy", "--phase", "1A", "--now", "2026-03-01T10:00:00Z"),
        ("probe", "check", "knowz-mcp", "--phase", "2A", "--now", "2026-03-01T10:04:00Z"),
    ):
        proc = demo.run(*args)
        _show(demo, args, proc)
        _expect(proc.returncode == 0, "probe command failed")
    _expect("4 min 0 s ago" in proc.stderr, "the reuse did not say how old the result is")
    demo.say(
        "The healthy result is within mcp_health_ttl_minutes (15 by default), so it is reused and its age"
    )
    demo.say("is stated; a failure would be retried only at a later phase.")


def run(demo: Demo) -> None:
    demo.heading("Bounded results, the vault delta journal and MCP probes")
    inputs = demo.root.parent / "result-inputs"
    inputs.mkdir(exist_ok=True)
    _results(demo, inputs)
    _vault(demo)
    _probe(demo)
