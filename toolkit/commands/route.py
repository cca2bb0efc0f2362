"""`workgroup route [FILE|-] [--record] [--json]`: the router's decision, with config filling.

The decision is exactly the runtime's (``toolkit.runtime.router.op_route``); config filling,
``enabled: false`` and ``--record`` are ``toolkit.workflow.delegation.route``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from toolkit.commands._common import echo, emit_json, read_json_request, say


def register(app: typer.Typer) -> None:
    @app.command("route")
    def route(
        file: Annotated[
            str, typer.Argument(help='The route request JSON ({"input": {...}}), or - for stdin.')
        ] = "-",
        record: Annotated[
            bool, typer.Option("--record", help="Append the routing evidence to the local telemetry log.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print {mode, reason_codes} as JSON.")] = False,
    ) -> None:
        """Route one delegation: the runtime's decision, with config filling absent facts."""
        from toolkit.workflow.delegation import route as decide_route

        result, notes = decide_route(read_json_request(file, what="route request"), record=record)
        for note in notes:
            say(note)
        if as_json:
            emit_json(result)
        else:
            echo(f"{result['mode']}  ({', '.join(result['reason_codes'])})")
