"""``workgroup schemas export [--check]``: JSON Schemas in ``schemas/`` generated from the models.

One file per entry of ``toolkit.models.registry`` (sorted keys, indent 2, trailing newline).
``--check`` writes nothing and exits 1 when a committed schema differs from its model, is
missing, or its model cannot be imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolkit.cli import command_group


def register(app: typer.Typer) -> None:
    group = command_group(help="JSON Schemas generated from the pydantic models.", no_args_is_help=True)

    @group.command("export")
    def export_cmd(
        check: Annotated[
            bool, typer.Option("--check", help="Compare only; exit 1 when anything is stale.")
        ] = False,
        out: Annotated[
            Path | None, typer.Option("--out", help="Directory to write (default: the shipped schemas/).")
        ] = None,
    ) -> int:
        """Write schemas/<name> for every model in the registry."""
        from toolkit.commands._common import say
        from toolkit.workflow.schema_files import export, schemas_dir

        directory = out or schemas_dir()
        stale, missing = export(directory, check=check)
        for name in missing:
            say(f"missing model for {name}")
        for name in stale:
            say(("differs: " if check else "wrote: ") + name)
        if check and not stale and not missing:
            say("schemas are up to date")
        return 1 if missing or (check and stale) else 0

    app.add_typer(group, name="schemas")
