"""Demo step: routing. Register a writer, then route four delegations and say why each went where."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject
    from toolkit.demo.runner import Demo


def _show(demo: Demo, args: tuple[str, ...], proc: subprocess.CompletedProcess[str]) -> None:
    demo.say(f"$ workgroup {' '.join(args)}   (exit {proc.returncode})")
    for text in (proc.stdout.strip(), proc.stderr.strip()):
        if text:
            demo.say(text)


def _route(demo: Demo, facts: Mapping[str, object], expected: str, why: str) -> None:
    request = json.dumps({"input": facts})
    demo.say(f"request: {request}")
    proc = demo.run("route", "-", "--json", stdin=request)
    _show(demo, ("route", "-", "--json"), proc)
    decision: JsonObject = json.loads(proc.stdout) if proc.returncode == 0 else {}
    if decision.get("mode") != expected:
        raise RuntimeError(f"expected {expected}, the router said {decision.get('mode')}")
    demo.say(why)
    demo.say("")


def run(demo: Demo) -> None:
    demo.heading("Routing delegations and writer ownership")
    demo.say("A builder takes a lease on src/api.py. The registry lives in the git common dir, so every")
    demo.say("worktree sees it, and `workgroup route` consults it when a request names no active writers.")
    args = ("owners", "acquire", "builder-api", "--path", "src/api.py")
    _show(demo, args, demo.run(*args))
    demo.say("")

    _route(
        demo,
        {"task_id": "rename-local", "trivial": True},
        "local",
        "A trivial edit stays local: briefing a worker would cost more than doing it (LOCAL_CHEAPER).",
    )
    _route(
        demo,
        {"task_id": "review-api", "role": "reviewer", "independent_reviewer": True},
        "fresh-capsule",
        "An independent reviewer gets a fresh capsule and never inherits the builder's reasoning.",
    )
    _route(
        demo,
        {"task_id": "hotfix-api", "role": "builder", "owned_files": ["./src/api.py"]},
        "local",
        "`./src/api.py` is an alias of the leased src/api.py: a second writer is refused, and the work is\n"
        "serialized locally until builder-api yields (WRITER_OWNERSHIP_CONFLICT).",
    )
    _route(
        demo,
        {
            "task_id": "ui-polish",
            "role": "builder",
            "owned_files": ["src/ui.tsx"],
            "lineage": {"lineage_id": "builder-ui", "compatible": True, "resumable": True},
        },
        "resume",
        "A writer of a different file with a compatible, resumable lineage resumes it (RESUME_COMPATIBLE).",
    )

    args = ("owners", "acquire", "second-builder", "--path", "SRC/api.py")
    proc = demo.run(*args)
    _show(demo, args, proc)
    if proc.returncode != 1:
        raise RuntimeError("an overlapping lease was not refused")
    demo.say("Taking the lease directly is refused too (exit 1), naming the holder and its path.")
    demo.say("")
    for more in (("owners", "list"), ("owners", "release", "builder-api")):
        _show(demo, more, demo.run(*more))
    demo.say(
        "The builder's scope is complete, so its lease is released; expired leases drop out by themselves."
    )
