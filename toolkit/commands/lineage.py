"""`workgroup lineage record FILE` and `workgroup lineage check LINEAGE --current FILE [--now T]`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from toolkit.cli import command_group
from toolkit.commands._common import echo, emit_json, repository, say


def register(app: typer.Typer) -> None:
    group = command_group(name="lineage", help="Agent lineages bound to checkpoints.", no_args_is_help=True)

    @group.command("record")
    def record(
        file: Annotated[Path, typer.Argument(help="A knowzcode.agent-lineage/v1 JSON file.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON result object.")] = False,
    ) -> None:
        """Validate a lineage, check its checkpoint commit, pseudonymize its handle, store it."""
        from toolkit.records.lineages import record_lineage

        outcome = record_lineage(repository(), file)
        if as_json:
            emit_json(outcome.as_json())
        else:
            typer.echo(json.dumps(outcome.lineage, indent=2, ensure_ascii=False))
        if outcome.pseudonymized:
            say("platform_handle replaced by a keyed pseudonym; the real handle stays in local state")
        say(f"wrote {outcome.path}")

    @group.command("check")
    def check(
        lineage: Annotated[str, typer.Argument(help="A lineage file, or the id of a recorded lineage.")],
        current: Annotated[Path, typer.Option("--current", help="JSON file with the 16 current facts.")],
        now: Annotated[str | None, typer.Option("--now", help="RFC 3339 time (default: the clock).")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the decision as JSON.")] = False,
    ) -> int:
        """Evaluate a lineage: exit 0 for HOT or COLD_VALID, else 1 (an invalid holder loses its lease)."""
        from toolkit.records.lineages import check_lineage

        outcome = check_lineage(repository(), lineage, current, now)
        if as_json:
            emit_json(outcome.as_json())
        else:
            echo(outcome.state)
        for code in outcome.invalidations:
            say(f"invalidated: {code}")
        if outcome.lease_released:
            say("the holder's writer lease was released")
        return 0 if outcome.accepted else 1

    app.add_typer(group)
