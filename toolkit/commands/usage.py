"""``workgroup usage``: verified usage and carried history from Claude Code and Codex session logs.

``workgroup usage [--source] [--since] [--until] [--timezone] [--project] [--by] [--json] [--cost]
[--prices FILE] [--emit-events FILE] [--html FILE]`` and ``workgroup usage session ID``.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer


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


SourceOpt = Annotated[Source, typer.Option("--source", help="Which logs to read.")]
TzOpt = Annotated[
    str | None, typer.Option("--timezone", help="IANA zone for days (default: this machine's zone).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="JSON on stdout.")]


def _project_filter(value: str | None) -> str | None:
    from toolkit.usage.sources import hashed

    if value is None:
        return None
    if value.startswith("p-") and len(value) == 14:
        return value  # already the hashed form shown in reports
    return hashed(str(Path(value).expanduser().resolve()))


def _ledger(source: Source) -> Any:
    from toolkit.usage.fold import load

    return load(source.value, os.environ)


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Verified token usage and carried history from Claude Code and Codex logs.",
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
            typer.Option(
                "--emit-events", help="Write knowzcode.efficiency-event/v1 records (JSONL) per session."
            ),
        ] = None,
        html: Annotated[
            Path | None, typer.Option("--html", help="Write a self-contained HTML report.")
        ] = None,
    ) -> None:
        """Usage per day, week, month, session, project or model; counts verified from the logs."""
        if ctx.invoked_subcommand is not None:
            return
        from toolkit.commands._common import emit_json, say
        from toolkit.usage.fold import By, LocalDays, parse_day, resolve_tz
        from toolkit.usage.render import report_table
        from toolkit.usage.report import build, warnings

        zone = resolve_tz(timezone)
        first = parse_day(since, "--since") if since else None
        last = parse_day(until, "--until") if until else None
        table_prices = None
        if cost or prices is not None:
            from toolkit.usage.cost import load_prices

            table_prices = load_prices(prices)
        days = LocalDays(zone)
        ledger = _ledger(source)
        data, calls = build(
            ledger,
            by=By(by.value),
            days=days,
            timezone=timezone or "local",
            since=first,
            until=last,
            project=_project_filter(project),
        )
        if table_prices is not None:
            from toolkit.usage.cost import estimate

            data["estimate"] = estimate(calls, table_prices, by=By(by.value), days=days)
        if emit_events is not None:
            from toolkit.usage.events import write_events

            written = write_events(emit_events, calls, ledger)
            say(f"wrote {written} efficiency event(s)")
        if html is not None:
            from toolkit.usage.html import write_html

            write_html(html, calls, days)
            say("wrote the HTML report")
        for line in warnings(data):
            say("note: " + line)
        if as_json:
            emit_json(data)
            return
        typer.echo(report_table(by.value, data["rows"], data["totals"]), nl=False)
        if "estimate" in data:
            from toolkit.usage.cost import estimate_table

            typer.echo(estimate_table(data["estimate"]), nl=False)

    @group.command("session")
    def session(
        session_id: Annotated[str, typer.Argument(metavar="ID", help="Session id (or a unique prefix).")],
        source: SourceOpt = Source.ALL,
        timezone: TzOpt = None,
        workflow: Annotated[
            str, typer.Option("--workflow", help="CM workflow whose boundary rules judge each point.")
        ] = "cm-ai",
        as_json: JsonOpt = False,
    ) -> None:
        """One session call by call, with compaction and resume points and their boundary verdicts."""
        from toolkit.commands._common import emit_json
        from toolkit.usage.fold import LocalDays, resolve_tz
        from toolkit.usage.session import find_session, session_table, session_view

        zone = resolve_tz(timezone)
        ledger = _ledger(source)
        name = find_session(ledger, session_id)
        view = session_view(ledger, name, LocalDays(zone), zone, workflow)
        if as_json:
            emit_json(view)
            return
        typer.echo(session_table(view), nl=False)

    app.add_typer(group, name="usage")
