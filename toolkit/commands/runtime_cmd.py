"""``workgroup runtime OP``: listed here for ``--help``; the console script dispatches it earlier."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command(
        "runtime",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        help="KnowzCode-compatible decision runtime: one JSON request on stdin, one JSON line out.",
    )
    def runtime(ctx: typer.Context) -> int:
        from toolkit.runtime.protocol import main

        return main(list(ctx.args))
