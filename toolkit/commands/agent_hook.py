"""``workgroup agent-hook EVENT``: listed here for ``--help``; the console script dispatches it earlier."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command(
        "agent-hook",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        help="Claude Code / Codex hook: privacy and ownership before writes, handoff, capsule, usage.\n\n"
        "One JSON payload on stdin; `workgroup agent-hook --help` lists the events and options.\n\n"
        "Exit codes: 0 go on, 2 block (the reason on stderr), 1 a non-blocking error (the agents' own).",
    )
    def agent_hook(ctx: typer.Context) -> int:
        from toolkit.agents.main import main

        return main(list(ctx.args))
