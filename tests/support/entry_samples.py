"""Small inputs for the console-script checks of test_startup.py and test_packaging.py.

Each hook gets a clean file (exit 0) and, where the hook judges file content, a failing one
(exit 1). Leaking values are synthetic and assembled from parts, so no literal key, session id
or home path sits in this source file.
"""

from __future__ import annotations

import json
from typing import Any

# The privacy hooks select workflow artifacts by path, so the samples live under .workgroup/.
NOTE_PATH = ".workgroup/workgroups/wg1/notes/timeout.md"
CLEAN_NOTE = "# Timeout work\n\nAdd a request timeout to the API handler; keep its response.\n"
_KEY = "sk_" + "live_" + "51Hq8Zt3TestFAKE7rQ2xW9kLp4"
_HOME = "/" + "home" + "/dana/work/api/run.log"
LEAKING_NOTE = f"# Timeout work\n\nReproduced with STRIPE_KEY={_KEY} against staging.\nLogs are in {_HOME}.\n"

DOC_PATH = "docs/notes.md"
CLEAN_DOC = "# Notes\n\nA stable prefix lowers billed cost and rediscovery; it does not shrink the context.\n"
CLAIM_DOC = "# Notes\n\nPrompt caching " + "removes tokens from the context window.\n"

SKILL_PATH = "skills/deploy/SKILL.md"
GOOD_SKILL = "---\nname: deploy\ndescription: Use when the user asks to ship a release.\n---\nShip it.\n"
BAD_SKILL = "---\nname: Bad Skill\n---\nbody\n"  # invalid name, no routing triggers

# The hook scripts and, per hook, (clean file, clean text, failing text or None).
HOOK_SAMPLES: dict[str, tuple[str, str, str | None]] = {
    "workgroup-privacy-hook": (NOTE_PATH, CLEAN_NOTE, LEAKING_NOTE),
    "workgroup-privacy-all-hook": (NOTE_PATH, CLEAN_NOTE, LEAKING_NOTE),
    # the commit-msg hook is given the message file git writes
    "workgroup-privacy-commit-msg-hook": (
        "COMMIT_EDITMSG",
        "Add a request timeout to the API handler\n",
        f"Add a request timeout\n\nReproduced with STRIPE_KEY={_KEY} against staging.\n",
    ),
    "workgroup-docs-claims-hook": (DOC_PATH, CLEAN_DOC, CLAIM_DOC),
    "workgroup-skills-hook": (SKILL_PATH, GOOD_SKILL, BAD_SKILL),
    # verify takes no file names: it judges every committed record against history. Its failing
    # case is a sealed capsule edited after sealing (see seal_capsule / tamper_capsule).
    "workgroup-verify-hook": ("", "", None),
}

CAPSULE_INPUT: dict[str, Any] = {
    "schema": "knowzcode.context-capsule/v1",
    "task_id": "t1",
    "workgroup_id": "wg1",
    "phase": "2A",
    "objective": "Add a request timeout to the API handler.",
    "node_ids": ["ApiHandler"],
    "owned_files": ["src/api.py"],
    "read_files": [],
    "specs": [],
    "approved_decisions": [],
    "checkpoint_sha": None,
    "failures": [],
    "risks": [],
    "constraints": [],
    "next_action": "Write the failing timeout test.",
    "evidence": [],
    "artifact_refs": [],
}
CAPSULE_RECORD = ".workgroup/workgroups/wg1/capsules/t1.json"

ROUTE_REQUEST = {"input": {"task_id": "t1", "role": "builder", "owned_files": ["src/api.py"]}}


def capsule_input_text() -> str:
    return json.dumps(CAPSULE_INPUT, indent=2) + "\n"


def tamper(text: str) -> str:
    """The sealed record with one field changed after sealing, so its hash no longer recomputes."""
    record = json.loads(text)
    record["next_action"] = "Something else entirely."
    return json.dumps(record, indent=2) + "\n"
