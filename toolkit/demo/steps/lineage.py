"""Demo step: lineage. Record a worker's lineage bound to HEAD, then see when it may be resumed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from toolkit.core.canonical import sha256_digest
from toolkit.core.timefmt import format_utc
from toolkit.infra.clock import now_utc
from toolkit.infra.git import commit_all, discover

if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject
    from toolkit.demo.runner import Demo

from toolkit.runtime.lineage import CURRENT_KEYS  # the compared fields plus capsule_hash


def _lineage(head: str, now: datetime) -> JsonObject:
    """The builder's lineage record (the demo writes it as JSON for ``lineage record``)."""
    return {
        "schema": "knowzcode.agent-lineage/v1",
        "lineage_id": "builder-api",
        "workgroup_id": "demo-wg",
        "platform": "claude",
        "platform_handle": None,
        "parent_lineage_id": None,
        "role": "builder",
        "scope": "src/api.py handler",
        "phase": "2A",
        "fix_loop_id": None,
        "mode": "fresh-capsule",
        "model": "sonnet",
        "effort": "medium",
        "runtime_prefix_hash": sha256_digest(b"demo runtime prefix"),
        "baseline_hash": None,
        "tools_hash": "tools-v1",
        "permissions_hash": "permissions-v1",
        "spec_hash": "spec-v1",
        "scope_hash": "scope-v1",
        "checkpoint_sha": head,
        "capsule_hash": sha256_digest(b"demo capsule v1"),
        "sensitivity": "normal",
        "created_at": format_utc(now - timedelta(minutes=5)),
        "last_used_at": format_utc(now),
        "resumable": True,
        "lease_expires_at": format_utc(now + timedelta(minutes=20)),  # warm_lease_minutes: 20
    }


def _check(demo: Demo, current: Mapping[str, object], name: str) -> JsonObject:
    path = demo.write(f".scratch/{name}.json", json.dumps(current, indent=2))
    proc = demo.run("lineage", "check", "builder-api", "--current", str(path), "--json")
    demo.say(f"$ workgroup lineage check builder-api --current {name}.json --json   (exit {proc.returncode})")
    demo.say(proc.stdout.strip() or proc.stderr.strip())
    try:
        answer: JsonObject = dict(json.loads(proc.stdout))  # the check's answer as read back
        return answer
    except ValueError:
        return {}


def _dispatch(demo: Demo, record: Mapping[str, object], current: Mapping[str, object]) -> None:
    request = {
        "routing": {
            "input": {
                "role": "builder",
                "owned_files": ["src/api.py"],
                "task_id": "fix-handler",
                # a stale claim from the caller: dispatch trusts the evaluated lineage only
                "lineage": {"compatible": True, "resumable": True},
            }
        },
        "lineage": {"lineage": record, "current": current},
    }
    proc = demo.run("dispatch", "-", stdin=json.dumps(request))
    demo.say(f"$ workgroup dispatch -   (exit {proc.returncode})")
    demo.say(proc.stdout.strip() or proc.stderr.strip())


def run(demo: Demo) -> None:

    demo.heading("Lineage: may a worker's context be resumed?")
    repo = discover(demo.root)
    head = repo.resolve_commit("HEAD")
    record = _lineage(head, now_utc())
    demo.write(".scratch/.gitignore", "*\n")
    path = demo.write(".scratch/lineage.json", json.dumps(record, indent=2))
    proc = demo.run("lineage", "record", str(path), "--json")
    demo.say("A builder worker's lineage is recorded, bound to HEAD and leased for 20 minutes.")
    demo.say(f"$ workgroup lineage record lineage.json --json   (exit {proc.returncode})")
    try:
        demo.say(f"written: {json.loads(proc.stdout)['written']}")
    except (ValueError, KeyError, TypeError):
        demo.say(proc.stdout.strip() or proc.stderr.strip())

    current = {key: record[key] for key in CURRENT_KEYS}
    demo.say("Nothing it depends on has changed, so it is HOT: it may be resumed.")
    _check(demo, current, "current-same")

    demo.say("One more commit lands: the lineage's checkpoint no longer matches, so it is INVALID.")
    demo.write("src/api.py", "def handler():\n    return 'ok, v2'\n")
    new_head = commit_all(discover(demo.root), "handler v2")
    _check(demo, {**current, "checkpoint_sha": str(new_head)}, "current-new-commit")

    demo.say("Same checkpoint, but the task's capsule was re-sealed: reconcile before any reuse.")
    changed_capsule = {**current, "capsule_hash": "sha256:" + "0" * 64}
    _check(demo, changed_capsule, "current-new-capsule")

    demo.say("Dispatch evaluates the lineage first: it resumes the worker only while the lineage is HOT ...")
    _dispatch(demo, record, current)
    demo.say("... and starts a fresh capsule worker once the capsule changed, whatever the caller claims.")
    _dispatch(demo, record, changed_capsule)
