"""``workgroup usage``: verified usage and carried history from Claude Code and Codex session logs.

``workgroup usage [--source] [--since] [--until] [--timezone] [--project] [--by] [--json] [--cost]
[--prices FILE] [--emit-events FILE] [--html FILE]`` and ``workgroup usage session ID``; the work is
``report_command`` and ``session_command`` of ``toolkit.commands._usage_report``.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from toolkit.cli import HelpFlag


class Source(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"
    ALL = "all"


class GroupBy(StrEnum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    SESSION = "session"
    PROJECT = "project"
    MODEL = "model"


class Workflow(StrEnum):
    CM_AI = "cm-ai"
    CM_PRD = "cm-prd"
    CM_FIX = "cm-fix"


# What each command's exit codes mean, as its --help ends; docs/usage.md quotes both word for word
# (tests/usage/test_usage_messages.py holds the three in agreement).
REPORT_EXIT_CODES = (
    "Exit codes: 0 report written; 2 bad option, date, zone or price table, a CLAUDE_CONFIG_DIR or "
    "CODEX_HOME that names no log folder, or an output file whose folder does not exist; 3 a log or "
    "output file the file system refused."
)
SESSION_EXIT_CODES = (
    "Exit codes: 0 session shown; 1 no session with that id in the logs read; 2 bad option, an id "
    "prefix shorter than 4 characters, or a prefix that more than one session starts with; 3 a log "
    "the file system refused."
)

SourceOpt = Annotated[Source, typer.Option("--source", help="Which logs to read.")]
TzOpt = Annotated[
    str | None, typer.Option("--timezone", help="IANA zone for days (default: this machine's zone).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="JSON on stdout.")]
JobsOpt = Annotated[
    int,
    typer.Option(
        "--jobs",
        help="Worker processes (0, the default: once the logs pass 64 MB, one per CPU up to 4, or the Codex "
        "logs in one beside the Claude logs read here; 1: none).",
    ),
]


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Verified token usage and carried history from Claude Code and Codex logs.\n\n"
        + REPORT_EXIT_CODES,
        invoke_without_command=True,
    )

    @group.callback()
    def usage(
        ctx: typer.Context,
        source: SourceOpt = Source.ALL,
        since: Annotated[str | None, typer.Option("--since", help="First day (YYYY-MM-DD).")] = None,
        until: Annotated[str | None, typer.Option("--until", help="Last day (YYYY-MM-DD).")] = None,
        timezone: TzOpt = None,
        project: Annotated[
            str | None, typer.Option("--project", help="Only this working directory (path or its p- hash).")
        ] = None,
        by: Annotated[GroupBy, typer.Option("--by", help="Grouping of the rows.")] = GroupBy.DAY,
        as_json: JsonOpt = False,
        cost: Annotated[bool, typer.Option("--cost", help="Add a list-price estimate (kept apart).")] = False,
        prices: Annotated[
            Path | None, typer.Option("--prices", help="Price table JSON instead of the shipped one.")
        ] = None,
        emit_events: Annotated[
            Path | None,
            typer.Option("--emit-events", help="Write knowzcode.efficiency-event/v1 lines, one per session."),
        ] = None,
        html: Annotated[
            Path | None, typer.Option("--html", help="Write a self-contained HTML report.")
        ] = None,
        jobs: JobsOpt = 0,
        _help: HelpFlag = False,
    ) -> int:
        """Usage per day, week, month, session, project or model; counts verified from the logs."""
        if ctx.invoked_subcommand is not None:
            return 0
        from toolkit.commands._usage_report import report_command

        return report_command(
            os.environ,
            source=source.value,
            since=since,
            until=until,
            timezone=timezone,
            project=project,
            by=by.value,
            as_json=as_json,
            cost=cost,
            prices=prices,
            emit_events=emit_events,
            html=html,
            jobs=jobs,
        )

    @group.command(
        "session",
        help="One session call by call, with compaction and resume points and their boundary verdicts."
        "\n\n" + SESSION_EXIT_CODES,
    )
    def session(
        session_id: Annotated[
            str, typer.Argument(metavar="ID", help="Session id, or a unique prefix of at least 4 characters.")
        ],
        source: SourceOpt = Source.ALL,
        timezone: TzOpt = None,
        workflow: Annotated[
            Workflow, typer.Option("--workflow", help="CM workflow whose boundary rules judge each point.")
        ] = Workflow.CM_AI,
        as_json: JsonOpt = False,
        jobs: JobsOpt = 0,
    ) -> int:
        from toolkit.commands._usage_report import session_command

        return session_command(
            os.environ,
            session_id,
            source=source.value,
            timezone=timezone,
            workflow=workflow.value,
            as_json=as_json,
            jobs=jobs,
        )

    app.add_typer(group, name="usage")
