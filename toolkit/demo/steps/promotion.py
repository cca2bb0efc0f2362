"""Demo step: promotion. A deterministic canary decision, then synthetic data refused by the gates."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from toolkit.infra.resources import data_dir

if TYPE_CHECKING:
    from toolkit.demo.runner import Demo

TASK = "anon-0123456789abcdef"


def _canary(demo: Demo, percent: int) -> None:
    request = {
        "input": {
            "rollout": "canary",
            "canary_percent": percent,
            "task_corpus_id": TASK,
            "actual_mode": "local",
            "recommended_mode": "fresh-capsule",
        }
    }
    frame = demo.runtime("rollout", request)
    result = frame.get("result", {})
    demo.say(f"$ workgroup runtime rollout   (canary {percent}%, task {TASK})")
    demo.say(json.dumps(frame, separators=(",", ":")))
    if frame.get("ok"):
        verb = "runs the recommendation" if result["execute_recommendation"] else "keeps the actual mode"
        demo.say(
            f"-> bucket {result['canary_bucket']:.2f} vs {percent}%: "
            f"this task {verb} ({result['selected_mode']})."
        )


def run(demo: Demo) -> None:

    demo.heading("Rollout and promotion: a canary decision, and synthetic data that cannot promote")
    demo.say("The canary bucket is the first 8 hex digits of SHA-256(task id) scaled to 0..100, the same")
    demo.say("number the reference runtime computes, so a task is in or out of a canary everywhere.")
    _canary(demo, 10)
    _canary(demo, 50)

    demo.say("")
    demo.say("Promotion needs measured pairs signed by a trusted key. The shipped paired results are")
    demo.say("synthetic (they exercise the evaluator), so even a valid signature cannot make them promote.")
    pairs = data_dir("corpus") / "paired-results.json"
    keys = demo.root / ".scratch" / "keys"  # a throwaway key; real keys live outside the repository
    demo.run("measure", "keygen", ".scratch/keys", "--key-id", "measurement-key-demo")
    trusted = demo.root / ".scratch" / "trusted"
    trusted.mkdir(parents=True, exist_ok=True)
    (trusted / "measurement-key-demo.pem").write_bytes((keys / "measurement-key-demo.pem").read_bytes())
    signed = demo.run(
        "measure",
        "sign",
        "--pairs",
        str(pairs),
        "--key",
        ".scratch/keys/measurement-key-demo.key",
        "--candidate-version",
        "candidate-demo",
        "--corpus-version",
        "corpus-v2",
        "--out",
        ".scratch/envelope.json",
    )
    demo.say(
        "$ workgroup measure keygen .scratch/keys && "
        "workgroup measure sign --pairs corpus/paired-results.json ..."
        f"   (exit {signed.returncode})"
    )
    demo.say(signed.stderr.strip())
    proc = demo.run(
        "promote",
        "--pairs",
        str(pairs),
        "--envelope",
        ".scratch/envelope.json",
        "--trusted-keys",
        ".scratch/trusted",
        "--expected-candidate-version",
        "candidate-demo",
        "--expected-corpus-version",
        "corpus-v2",
    )
    demo.say(
        f"$ workgroup promote --pairs corpus/paired-results.json --envelope envelope.json "
        f"--trusted-keys .scratch/trusted ...   (exit {proc.returncode})"
    )
    demo.say(proc.stdout.strip() or proc.stderr.strip())
    demo.say(proc.stderr.strip())
    demo.say(
        "-> refused: provenance fails (SYNTHETIC_DATA, and the envelope says promotion_authorized false),"
    )
    demo.say("   whatever the other gates say. Nothing was recorded, so no measurement run was consumed.")
