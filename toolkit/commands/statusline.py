"""``workgroup statusline``: the Claude Code status line (the console script runs it without typer;
this command serves ``--help`` and in-process callers)."""

from __future__ import annotations

from typing import Annotated

import typer

HELP = """Claude Code's status line: verified tokens of the session, the re-read share, the list price.

Reads the status JSON Claude Code passes on stdin (its transcript_path) and prints one line: the
session's tokens counted from its transcript and subagent logs by the usage reader (deduplicated:
streaming partials, split content blocks and /btw replays count once), the calls, the share of
prompt tokens that were cache reads (re-read history), and the list-price estimate when the
models are in the price table. Only numbers and fixed words are printed, never a value from the
input. What was read is cached under the git common dir (workgroup/statusline/), so a refresh reads
only what was appended. `workgroup init --agent claude` adds it to .claude/settings.json.

Exit codes: 0 always for any input (bad input prints one short fixed line); 2 an unknown option.
"""


def register(app: typer.Typer) -> None:
    @app.command("statusline", help=HELP)
    def statusline(
        no_cache: Annotated[
            bool,
            typer.Option("--no-cache", help="Read the whole transcript; neither read nor write the cache."),
        ] = False,
    ) -> int:
        from toolkit.agents.statusline import main

        return main(["--no-cache"] if no_cache else [])
