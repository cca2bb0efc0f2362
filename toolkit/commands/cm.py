"""``workgroup cm call|log-event|usage-report``: the three CM console scripts under one command.

Each subcommand hands its arguments untouched to the same ``main`` as the console script, so
options, stdin, stdout and the reference's exit codes are identical either way.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from toolkit.cli import command_group

_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}

_SCRIPTS = {
    "call": (
        "toolkit.cm.adapter",
        "Call an OpenAI-compatible model with a CM role packet on stdin (same as cm-openai-compatible-call).",
    ),
    "log-event": (
        "toolkit.cm.events",
        "Write one CM event to the project log and the private global mirror (same as cm-log-event).",
    ),
    "usage-report": (
        "toolkit.cm.report",
        "Show verified model usage of recent CM runs (same as cm-usage-report).",
    ),
}


def _make(module_name: str) -> Callable[[typer.Context], int]:
    def command(ctx: typer.Context) -> int:
        import importlib

        main = importlib.import_module(module_name).main
        return int(main(list(ctx.args)))

    return command


def register(app: typer.Typer) -> None:
    group = command_group(
        name="cm",
        help="CM model calls: OpenAI-compatible adapter, event writer, usage report.",
        no_args_is_help=True,
        add_completion=False,
    )
    for name, (module_name, help_text) in _SCRIPTS.items():
        group.command(name, help=help_text, context_settings=_PASS_THROUGH, add_help_option=False)(
            _make(module_name)
        )
    app.add_typer(group, name="cm")
