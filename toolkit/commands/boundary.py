"""`workgroup boundary WORKFLOW --at EVENT`: the CM session-boundary verdict and the handoff file."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, TypeVar

import typer

E = TypeVar("E", bound=Enum)


def register(app: typer.Typer) -> None:
    @app.command("boundary")
    def boundary(
        workflow: Annotated[str, typer.Argument(help="cm-ai, cm-prd or cm-fix.")],
        at: Annotated[
            str, typer.Option("--at", help="run_done, batch_done (cm-ai), review_stop (cm-prd), mid_run.")
        ],
        same_unit_discussion: Annotated[
            bool,
            typer.Option(
                "--same-unit-discussion",
                help="Order 1: the next step continues this unit and needs "
                "discussion from this session that is not on disk.",
            ),
        ] = False,
        declined: Annotated[
            bool, typer.Option("--declined", help="Order 2: the user declines a fresh session.")
        ] = False,
        host_cannot_open: Annotated[
            bool, typer.Option("--host-cannot-open", help="Order 2: the host cannot open a fresh session.")
        ] = False,
        must_shrink: Annotated[
            bool,
            typer.Option(
                "--must-shrink", help="Order 2: the context must shrink (compact, naming the next unit)."
            ),
        ] = False,
        in_batch: Annotated[
            bool,
            typer.Option("--in-batch", help="cm-ai run_done inside a batch: no verdict until batch_done."),
        ] = False,
        next_command: Annotated[
            str | None,
            typer.Option(
                "--next-command", help="The next unit's documented entry, with its required arguments."
            ),
        ] = None,
        original_command: Annotated[
            str | None,
            typer.Option(
                "--original-command", help="The original command, used when the next entry is unknown."
            ),
        ] = None,
        reason: Annotated[
            str | None, typer.Option("--reason", help="One sentence; a fixed default otherwise.")
        ] = None,
        lang: Annotated[str, typer.Option("--lang", help="zh (default) or en.")] = "zh",
        specs_dir: Annotated[
            Path | None, typer.Option("--specs-dir", help="cm-ai: the specs directory.")
        ] = None,
        archive_dir: Annotated[
            Path | None, typer.Option("--archive-dir", help="cm-fix: the defect archive.")
        ] = None,
        tasks: Annotated[
            Path | None, typer.Option("--tasks", help="tasks.md: its checkboxes fill the handoff.")
        ] = None,
        done: Annotated[
            list[str] | None, typer.Option("--done", help="One line of what was done (repeatable).")
        ] = None,
        project_root: Annotated[
            Path | None,
            typer.Option(
                "--project-root", help="Root for relative paths (default: the git work tree, else cwd)."
            ),
        ] = None,
        json_out: Annotated[
            bool, typer.Option("--json", help="Also print the decision as JSON on stdout.")
        ] = False,
    ) -> None:
        """Print the session-boundary verdict on stderr; at a single run's end, write the handoff."""
        from toolkit.cm.boundary import Event, Facts, Lang, Workflow
        from toolkit.cm.session_boundary import run_boundary
        from toolkit.commands._common import emit_json, say

        facts = Facts(
            workflow=_enum(Workflow, workflow, "WORKFLOW"),
            event=_enum(Event, at, "--at"),
            same_unit_discussion=same_unit_discussion,
            declined=declined,
            host_cannot_open=host_cannot_open,
            must_shrink=must_shrink,
            in_batch=in_batch,
            next_command=next_command,
            original_command=original_command,
            reason=reason,
        )
        lines, report = run_boundary(
            facts,
            lang=_enum(Lang, lang, "--lang"),
            specs_dir=specs_dir,
            archive_dir=archive_dir,
            tasks=tasks,
            done=done or [],
            project_root=project_root,
        )
        for line in lines:
            say(line)  # escaped there: spec and task names come from the repository
        if json_out:
            emit_json(report)


def _enum(kind: type[E], value: str, what: str) -> E:
    from toolkit.core.errors import InvalidInput

    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(member.value) for member in kind)
        raise InvalidInput("INVALID_OPTION", f"{what} must be one of: {choices}") from None
