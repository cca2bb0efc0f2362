"""`workgroup handoff show DIR`: print `<DIR>/.reviews/session-handoff.md`, as a new run does first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from toolkit.cli import command_group

MODES = ("create", "resume")


def register(app: typer.Typer) -> None:
    group = command_group(
        help="The CM session handoff file (reference data for the next session).",
        no_args_is_help=True,
        rich_markup_mode=None,
    )
    app.add_typer(group, name="handoff")

    @group.command("show")
    def show(
        directory: Annotated[Path, typer.Argument(help="The specs dir (cm-ai) or defect archive (cm-fix).")],
        mode: Annotated[
            str | None,
            typer.Option(
                "--mode",
                help="The starting run's mode: `create` prints the handoff (missing is fine), "
                "`resume` prints nothing (a resumed run continues from its own records).",
            ),
        ] = None,
        json_out: Annotated[bool, typer.Option("--json", help="Print {path, mode, shown, text}.")] = False,
    ) -> None:
        """Print the handoff. Without --mode a missing file is an error (exit 1)."""
        from toolkit.cm.handoff import MAX_HANDOFF_BYTES, handoff_path
        from toolkit.commands._common import emit_json, say
        from toolkit.core.errors import InvalidInput, Refused

        if mode is not None and mode not in MODES:
            raise InvalidInput("INVALID_OPTION", "--mode must be one of: create, resume")
        target = handoff_path(directory)
        shown_path = Path(os.path.relpath(target)).as_posix()
        text: str | None = None
        if mode != "resume":
            from toolkit.infra import confined
            from toolkit.infra.boundedio import NOT_FOUND, FileRefused

            # the file and the folders above it are the repository's: a symlink leaving the work tree
            # (or standing in the file's place) is refused, never printed (PATH_OUTSIDE_REPOSITORY)
            absolute = os.path.abspath(target)
            root = confined.root_for(directory)
            try:
                raw = confined.read_bytes(
                    root,
                    absolute,
                    what="the handoff file",
                    limit=MAX_HANDOFF_BYTES,
                    missing_ok=True,
                    allow_over=True,
                )
            except FileRefused as exc:
                if exc.code != NOT_FOUND:
                    raise InvalidInput(exc.code, exc.message) from None
                raw = None
            if raw is not None:
                if len(raw) > MAX_HANDOFF_BYTES:
                    raise InvalidInput("FILE_TOO_LARGE", "the handoff file is larger than a handoff can be")
                text = raw.decode("utf-8", errors="replace")
            elif mode is None:
                raise Refused("NO_HANDOFF", "no session handoff in this directory")
        if json_out:
            emit_json({"path": shown_path, "mode": mode, "shown": text is not None, "text": text})
            return
        if text is None:
            say("no handoff shown" if mode == "resume" else "no session handoff yet")
            return
        # Reference data only: the note on stderr keeps stdout exactly the file.
        say("session handoff (reference only; it never resumes the run it describes):")
        from toolkit.core.display import shown_lines

        typer.echo(shown_lines(text), nl=not text.endswith("\n"))
