"""Demo step: privacy. The engine finds a leaking note, leaves harmless prose alone, and the
pre-commit hook installed by `workgroup init` blocks the leak until it is fixed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.infra.git import discover

if TYPE_CHECKING:
    from toolkit.demo.runner import Demo

NOTE = ".workgroup/workgroups/demo-wg/notes/timeout.md"
# Synthetic, non-working values, assembled so no literal key sits in the source.
_KEY = "sk_" + "live_" + "51Hq8Zt3DemoFAKE7rQ2xW9kLp4"
_SESSION = "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f"
LEAKING = (
    "# Timeout work\n\n"
    f"Reproduced with STRIPE_KEY={_KEY} against staging.\n"
    f"Resume from Claude session {_SESSION}.\n"
    "Logs are in /home/dana/work/api/run.log.\n"
)
FIXED = (
    "# Timeout work\n\n"
    "Reproduced with the staging key from the secret store (STRIPE_KEY=${STRIPE_KEY}).\n"
    "Resume from the capsule `api-timeout`, not from a provider session.\n"
    "Logs are in knowzcode/artifacts/ (content-addressed).\n"
)
HARMLESS = (
    "Run the full test suite and attach the log.\n"
    "Use the thread-safe-queue from run-integration-tests.\n"
    "The Codex agent handles retries.\n"
)


def _show(demo: Demo, label: str, proc: Any) -> None:
    demo.say(f"$ {label}   (exit {proc.returncode})")
    for text in (proc.stdout.strip(), proc.stderr.strip()):
        if text:
            demo.say(text)


def _expect(proc: Any, code: int, what: str) -> None:
    if proc.returncode != code:
        raise RuntimeError(f"{what}: expected exit {code}, got {proc.returncode}")


def _pre_commit(demo: Demo, *args: str) -> subprocess.CompletedProcess[str]:
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        **demo.env,
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "PRE_COMMIT_COLOR": "never",
    }
    return subprocess.run(
        [os.path.join(bindir, "pre-commit"), *args],
        cwd=demo.root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )


def _stage(demo: Demo, *paths: str) -> None:

    index = discover(demo.root).raw.index
    for rel in paths:
        index.add(rel)
    index.write()


def _unstage(demo: Demo, rel: str) -> None:

    index = discover(demo.root).raw.index
    index.remove(rel)
    index.write()


def run(demo: Demo) -> None:
    demo.heading("Privacy gate: the engine, `workgroup privacy scan` and the pre-commit hook")
    demo.say("An agent left a note with a live-looking key, a provider session id and a home path.")
    demo.say("The engine reports each with its category, rule and position; values are masked.")
    demo.write(NOTE, LEAKING)
    proc = demo.run("privacy", "scan", NOTE)
    _show(demo, f"workgroup privacy scan {NOTE}", proc)
    _expect(proc, 1, "scan of the leaking note")

    demo.say("Harmless prose that the reference runtime flags passes here.")
    demo.write("tmp/harmless.md", HARMLESS)
    proc = demo.run("privacy", "scan", "--json", "tmp/harmless.md")
    _show(demo, "workgroup privacy scan --json tmp/harmless.md", proc)
    _expect(proc, 0, "scan of harmless prose")

    demo.say("`workgroup init` writes the config and adds the hooks to .pre-commit-config.yaml")
    demo.say("(local hooks calling the installed toolkit; --no-install skips `pre-commit install` here).")
    proc = demo.run("init", "--local", "--no-install")
    _show(demo, "workgroup init --local --no-install", proc)
    _expect(proc, 0, "init")

    demo.say("Staged, the note is blocked by the hook, with file, line and rule.")
    _stage(demo, ".pre-commit-config.yaml", NOTE)
    proc = _pre_commit(demo, "run", "workgroup-privacy-all", "--files", NOTE)
    _show(demo, f"pre-commit run workgroup-privacy-all --files {NOTE}", proc)
    _expect(proc, 1, "hook on the leaking note")

    demo.say("With the key, the session id and the home path replaced, the same hook passes.")
    demo.write(NOTE, FIXED)
    _stage(demo, NOTE)
    proc = _pre_commit(demo, "run", "workgroup-privacy-all", "--files", NOTE)
    _show(demo, f"pre-commit run workgroup-privacy-all --files {NOTE}", proc)
    _expect(proc, 0, "hook on the fixed note")
    _unstage(demo, NOTE)
    (demo.root / NOTE).unlink()
    (demo.root / "tmp" / "harmless.md").unlink()
