"""``workgroup telemetry export --otlp [ENDPOINT] [--since ...]``: send the records to a collector.

Registered on the ``telemetry`` group by ``toolkit.commands.telemetry``. Converts the options and
calls ``toolkit.otel.export``; everything OpenTelemetry is imported there, and only when used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(group: typer.Typer) -> None:
    @group.command("export")
    def export_cmd(
        endpoint: Annotated[
            str | None,
            typer.Argument(
                help="OTLP/HTTP base URL (default: OTEL_EXPORTER_OTLP_* or http://localhost:4318)."
            ),
        ] = None,
        otlp: Annotated[bool, typer.Option("--otlp", help="Export as OTLP/HTTP (protobuf).")] = False,
        since: Annotated[
            str | None,
            typer.Option("--since", help="Only records after this RFC 3339 time or 30m/24h/7d ago."),
        ] = None,
        cm_log_home: Annotated[
            Path | None,
            typer.Option(
                "--cm-log-home",
                help="CM global log home (default: CM_WORKFLOW_LOG_HOME or ~/.cm-workflow/logs).",
            ),
        ] = None,
        specs_dir: Annotated[
            Path | None, typer.Option("--specs-dir", help="Also read the CM project log of this specs dir.")
        ] = None,
        workgroup: Annotated[
            str | None, typer.Option("--workgroup", help="workgroup.id resource attribute.")
        ] = None,
        run: Annotated[str | None, typer.Option("--run", help="workgroup.run.id resource attribute.")] = None,
        timeout: Annotated[
            float | None,
            typer.Option(
                "--timeout",
                min=0.1,
                max=600,
                help="Seconds per request (default: OTEL_EXPORTER_OTLP_TIMEOUT or 10).",
            ),
        ] = None,
        all_cm_runs: Annotated[
            bool,
            typer.Option(
                "--all-cm-runs", help="Every run of the CM log home, not only the runs of this work tree."
            ),
        ] = False,
        agent_logs: Annotated[
            bool,
            typer.Option(
                "--agent-logs",
                help="Also the model calls of the Claude Code and Codex logs (this work tree's).",
            ),
        ] = False,
        all_agent_projects: Annotated[
            bool,
            typer.Option(
                "--all-agent-projects",
                help="With --agent-logs: the calls of every project, not only this one.",
            ),
        ] = False,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Map and count, send nothing.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    ) -> None:
        """Export efficiency events, CM model calls and decisions as OTLP spans and metrics."""
        import os

        from toolkit.cm.run_logs import log_home
        from toolkit.commands._common import emit_json, repository, say
        from toolkit.core.errors import InvalidInput
        from toolkit.infra.clock import now_utc
        from toolkit.infra.git import root_commit_ids
        from toolkit.infra.store import safe_segment
        from toolkit.otel.export import ExportRequest, export

        if not otlp:
            raise InvalidInput("EXPORT_FORMAT_REQUIRED", "name the export format: --otlp")
        for value, what in ((workgroup, "--workgroup"), (run, "--run")):
            if value is not None:
                safe_segment(value, what)
        if specs_dir is not None and not specs_dir.is_dir():
            raise InvalidInput("NOT_A_DIRECTORY", "--specs-dir is not an existing directory")
        repo = repository()
        layout = repo.layout
        summary = export(
            ExportRequest(
                telemetry_log=layout.telemetry_log,
                otel_dir=layout.local / "otel",
                environ=os.environ,
                endpoint=endpoint,
                since=since,
                cm_home=log_home(os.environ, str(cm_log_home) if cm_log_home else None),
                specs_dir=specs_dir,
                workgroup=workgroup,
                run=run,
                timeout=timeout,
                dry_run=dry_run,
                workdir=None if all_cm_runs else layout.workdir,
                agent_logs=agent_logs,
                agent_workdir=None if all_agent_projects else layout.workdir,
            ),
            now=now_utc(),
            roots=lambda: root_commit_ids(repo),
        )
        sources = (
            ", ".join(f"{count} {name}" for name, count in sorted(summary["by_source"].items())) or "none"
        )
        skipped = sum(summary["skipped"].values())
        verb = "exported" if summary["exported"] else "would export" if dry_run else "nothing to export:"
        say(f"{verb} {summary['spans']} spans ({sources}), {summary['metric_points']} metric points")
        if skipped:
            say(f"skipped {skipped} records: " + ", ".join(f"{n} {r}" for r, n in summary["skipped"].items()))
        say(
            f"withheld {summary['withheld']} values that failed the telemetry privacy check"
            " (sent as withheld:<pseudonym>)"
        )
        if as_json:
            emit_json(summary)
