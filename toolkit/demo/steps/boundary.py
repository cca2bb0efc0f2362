"""Demo step: a cm-ai single-task run ends; the session-boundary verdict and the handoff it writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.demo.runner import Demo

TASKS = "# Tasks\n\n- [x] T1 add the API handler\n- [ ] T2 wire the UI to the API\n- [ ] T3 docs\n"


def _show(demo: Demo, text: str) -> None:
    demo.say("\n".join(f"  {line}" for line in text.rstrip("\n").splitlines()))


def run(demo: Demo) -> None:
    demo.heading("Session boundary: a verdict at the end of a unit, and the handoff it writes")
    demo.write("specs/tasks.md", TASKS)
    args = [
        "boundary",
        "cm-ai",
        "--at",
        "run_done",
        "--specs-dir",
        "specs",
        "--tasks",
        "specs/tasks.md",
        "--next-command",
        "/cm-ai run --task T2",
        "--done",
        "T1 handler returns ok; tests pass",
    ]
    demo.say(
        "Task T1 of a single-task cm-ai run is done. Nothing in the next task needs this conversation, so"
    )
    demo.say(
        "row 3 of the ordered table applies: start a fresh session, with the next unit's documented entry."
    )
    proc = demo.run(*args)
    demo.say(f"$ workgroup {' '.join(args[:4])} ...   (exit {proc.returncode})")
    _show(demo, proc.stderr)
    demo.say("The same verdict in English (texts from templates/verdict.en.txt, one line per Chinese line):")
    proc = demo.run(*args, "--lang", "en")
    _show(demo, proc.stderr)
    demo.say("The closing boundary overwrote specs/.reviews/session-handoff.md (atomically). It is reference")
    demo.say("data only; a new run (mode:create) prints it first:")
    proc = demo.run("handoff", "show", "specs", "--mode", "create")
    _show(demo, proc.stdout)
    before = (demo.root / "specs/.reviews/session-handoff.md").read_bytes()
    demo.say(
        "A task inside a batch gets no verdict and writes no handoff; the batch decides once at batch_done:"
    )
    proc = demo.run("boundary", "cm-ai", "--at", "run_done", "--in-batch", "--specs-dir", "specs", "--json")
    _show(demo, proc.stdout)
    proc = demo.run(
        "boundary",
        "cm-ai",
        "--at",
        "batch_done",
        "--specs-dir",
        "specs",
        "--original-command",
        "/cm-ai batch specs/tasks.md",
    )
    _show(demo, proc.stderr)
    unchanged = (demo.root / "specs/.reviews/session-handoff.md").read_bytes() == before
    demo.say("The handoff file is " + ("unchanged by the batch." if unchanged else "CHANGED (unexpected)."))
    if not unchanged:
        raise RuntimeError("a batch boundary rewrote the handoff")
