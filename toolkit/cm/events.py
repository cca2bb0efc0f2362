"""``cm-log-event``: append one CM event to the project log and the private global mirror.

Drop-in for the public CM writer (same arguments, stdout object, exit codes and refusals):

* exit 2: invalid input, including every model-call identity refusal (reused call id, usage
  without its claim, identity mismatch, a claim after usage, a changed claim);
* exit 1: a lock could not be taken or the authoritative log could not be written (a write the
  device did not complete is cut back and named: ``(DISK_FULL)``);
* exit 3: the event was written but stdout refused the answer (``OUTPUT_UNWRITABLE``);
* exit 0: written, deduplicated (an exact retry has the same UUIDv5 ``event_id``) or degraded
  (only the global mirror failed; a ``degrade`` event goes to the project log).

This module is the command line only. The work is done by, in order: ``event_input`` (the
options checked into a plan: ``data_json``, ``model_event_rules`` over ``core.cm_usage_format``, the
privacy engine), ``event_write`` (the append under the locks) and ``log_facts`` (what the log
already holds for the event and its call). Standard library only.

Deliberate differences: messages never echo input (no key names, no values); the envelope
leaves out the absolute ``project_path``/``specs_path`` (the project log is committed by many
teams; those paths stay in the private index); a run is always registered in ``index.jsonl``,
so the usage report sees global-only runs started with ``--run-id``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from toolkit.cm.event_error import EventError
from toolkit.cm.event_input import EventArgs
from toolkit.cm.event_write import write_event
from toolkit.infra.argparser import QuietArgumentParser
from toolkit.infra.output import guarded

PROG = "cm-log-event"


def build_parser() -> argparse.ArgumentParser:
    parser = QuietArgumentParser(
        prog=PROG, description="Write one CM Workflow event to the project and global logs."
    )
    for name in ("--workflow", "--event", "--runtime", "--detail"):
        parser.add_argument(name, required=True)
    for name in ("--phase", "--project", "--project-root", "--specs-dir", "--run-id", "--at"):
        parser.add_argument(name)
    parser.add_argument("--data-json", default="{}")
    return parser


def _args_from(ns: argparse.Namespace) -> EventArgs:
    return EventArgs(
        workflow=ns.workflow,
        event=ns.event,
        runtime=ns.runtime,
        detail=ns.detail,
        phase=ns.phase,
        project=ns.project,
        project_root=ns.project_root,
        specs_dir=ns.specs_dir,
        run_id=ns.run_id,
        at=ns.at,
        data_json=ns.data_json,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Console script ``cm-log-event``, under the stdout guard (``toolkit.infra.output``)."""
    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    try:
        ns = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 2
    try:
        written = write_event(_args_from(ns), environ=os.environ)
    except EventError as exc:
        sys.stderr.write(f"{PROG}: {exc.message}\n")
        return exc.exit_code
    for note in written.notes:
        sys.stderr.write(f"{PROG}: {note}\n")
    sys.stdout.write(json.dumps(written.result, ensure_ascii=True, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
