"""``workgroup dispatch [FILE|-] [--record] [--json]``: the combined dispatch, with config filling.

The decision is the runtime's (``toolkit.runtime.dispatch``); config filling, ``enabled: false``
and ``--record`` (the routing evidence with the lineage candidate and its invalidation result) are
``toolkit.workflow.delegation.dispatch``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from toolkit.commands._common import echo, emit_json, read_json_request, say


def register(app: typer.Typer) -> None:
    @app.command("dispatch")
    def dispatch_cmd(
        file: Annotated[str, typer.Argument(help="The dispatch request JSON, or - for stdin.")] = "-",
        record: Annotated[
            bool, typer.Option("--record", help="Append the routing evidence to the local telemetry log.")
        ] = False,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print {routing, rollout, lineage, result_policy}.")
        ] = False,
    ) -> None:
        """Dispatch one delegation: lineage first, then routing, rollout and result policy."""
        from toolkit.workflow.delegation import describe, dispatch

        result, notes = dispatch(read_json_request(file, what="dispatch request"), record=record)
        for note in notes:
            say(note)
        if as_json:
            emit_json(result)
        else:
            for line in describe(result):
                echo(line)
