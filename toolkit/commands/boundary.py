"""`workgroup boundary WORKFLOW --at EVENT`: the CM session-boundary verdict and the handoff file."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from toolkit.core.errors import ToolkitError

if TYPE_CHECKING:
    from toolkit.cm.boundary import Facts, Lang

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
        run_boundary(
            facts,
            lang=_enum(Lang, lang, "--lang"),
            specs_dir=specs_dir,
            archive_dir=archive_dir,
            tasks=tasks,
            done=done or [],
            project_root=project_root,
            json_out=json_out,
        )


def _enum(kind: type[E], value: str, what: str) -> E:
    from toolkit.core.errors import InvalidInput

    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(member.value) for member in kind)
        raise InvalidInput("INVALID_OPTION", f"{what} must be one of: {choices}") from None


def _project_root(given: Path | None) -> Path:
    if given is not None:
        return given.resolve()
    try:
        from toolkit.infra.git import discover

        return discover().workdir.resolve()
    except ToolkitError:  # not a repository: the current directory is the project root
        return Path.cwd().resolve()


def _leaks(text: str) -> bool:
    """True when the privacy engine finds anything a handoff must not carry."""
    try:
        from toolkit.privacy import Context, scan_text
    except ImportError:  # no engine, no write: fail closed rather than commit unchecked text
        return True
    return bool(scan_text(text, Context.HANDOFF))


def run_boundary(
    facts: Facts,
    *,
    lang: Lang,
    specs_dir: Path | None,
    archive_dir: Path | None,
    tasks: Path | None,
    done: list[str],
    project_root: Path | None,
    json_out: bool,
) -> None:
    """Decide, print the verdict lines on stderr, write the handoff when due, print its line last."""
    from toolkit.cm import handoff as ho
    from toolkit.cm.boundary import decide, reason_text, render, verdict_texts
    from toolkit.commands._common import emit_json, say
    from toolkit.core.errors import InvalidInput
    from toolkit.infra.resources import template_text

    if specs_dir is not None and archive_dir is not None:
        raise InvalidInput("CONFLICTING_OPTIONS", "give --specs-dir or --archive-dir, not both")
    for item in done:
        if not item.strip() or "\n" in item or "\r" in item or len(item) > ho.MAX_ITEM_CHARS:
            raise InvalidInput("INVALID_TEXT", "--done must be one non-empty line of at most 300 characters")
    decision = decide(facts)
    texts = verdict_texts(lang)
    lines = render(decision, facts, texts)
    handoff: dict[str, object] | None = None
    if decision.writes_handoff:
        root = _project_root(project_root)
        # cm-ai writes under its specs dir, cm-fix under its defect archive; either option names it.
        directory = specs_dir if specs_dir is not None else archive_dir
        try:
            parsed = ho.read_tasks(tasks) if tasks is not None else None
            text = ho.compose(
                template_text("handoff.md"),
                workflow=facts.workflow.value,
                event=facts.event.value,
                verdict=decision.verdict.value if decision.verdict else "none",
                done=done or [],
                tasks=parsed,
                command=decision.command,
                command_known=decision.command_known,
            )
            target = ho.write_handoff(directory, text, root=root, leaks=_leaks)
        except ho.HandoffError as exc:
            lines.append(texts["handoff_failed"].format(reason=texts[exc.key]))
            handoff = {"written": False, "path": None, "reason": exc.key.removeprefix("fail_")}
        else:
            shown = ho.display_path(target, root)
            lines.append(texts["handoff_written"].format(path=shown))
            handoff = {"written": True, "path": shown, "reason": None}
    for line in lines:
        say(line)
    if json_out:
        data = {**decision.as_dict(), "reason": reason_text(decision, facts, texts)}
        emit_json({**data, "lang": lang.value, "lines": lines, "handoff": handoff})
