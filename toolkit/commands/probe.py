"""`workgroup probe check|record`: MCP health probes reused within a TTL.

Exit codes of ``check``: 0 when the caller may go on (``reuse`` a healthy result within the TTL,
or ``probe``: run the probe now and record it), 1 when a failure at this phase must not be
retried before a later phase (``wait``), 2 for bad input, 3 for an environment error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import typer

from toolkit.cli import command_group
from toolkit.commands._common import emit_json, moment_or_now, repository, say


def _message(d: Mapping[str, Any]) -> str:
    from toolkit.records.probes import describe_age

    name = d["name"]
    if d["decision"] == "reuse":
        return (
            f"{name}: reusing the healthy result from {describe_age(d['age_seconds'])} ago "
            f"(phase {d['recorded_phase']}, TTL {d['ttl_minutes']} min)"
        )
    if d["decision"] == "wait":
        return (
            f"{name}: failed {describe_age(d['age_seconds'])} ago at phase {d['recorded_phase']}; "
            f"not retried before a later phase"
        )
    if d["reason"] == "EXPIRED":
        return (
            f"{name}: the healthy result is {describe_age(d['age_seconds'])} old, past the "
            f"{d['ttl_minutes']} min TTL; probe again"
        )
    if d["reason"] == "RETRY_AT_LATER_PHASE":
        return f"{name}: failed at phase {d['recorded_phase']}; phase {d['phase']} may retry: probe again"
    if d["reason"] == "RECORDED_IN_FUTURE":
        return f"{name}: the cached result is dated in the future; probe again"
    return f"{name}: no cached result; probe now"


NOW_OPT = typer.Option("--now", help="Current time, strict RFC 3339 (default: the clock).")
PHASE_OPT = typer.Option("--phase", help="Current phase: 1A, 1B, 2A, 2B or 3.")


def register(app: typer.Typer) -> None:
    group = command_group(
        name="probe",
        help="MCP health probes: reuse within a TTL, retry failures at a later phase.",
        no_args_is_help=True,
    )

    @group.command("check")
    def check_cmd(
        name: Annotated[str, typer.Argument(help="Probe name (a safe segment, e.g. knowz-mcp).")],
        phase: Annotated[str, PHASE_OPT],
        ttl_minutes: Annotated[
            int | None,
            typer.Option("--ttl-minutes", min=0, max=1440, help="Override mcp_health_ttl_minutes."),
        ] = None,
        now: Annotated[str | None, NOW_OPT] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON result object.")] = False,
    ) -> int:
        """Decide: reuse (exit 0), probe now (exit 0), or wait for a later phase (exit 1)."""
        from toolkit.infra.config import load_config
        from toolkit.records.probes import check, check_phase, ttl_from_config

        check_phase(phase)
        moment = moment_or_now(now)
        repo = repository()
        ttl = ttl_minutes if ttl_minutes is not None else ttl_from_config(load_config(repo.layout))
        decision = check(repo.layout, name, phase=phase, now=moment, ttl_minutes=ttl).as_dict()
        if as_json:
            emit_json(decision)
        say(_message(decision))
        return 1 if decision["decision"] == "wait" else 0

    @group.command("record")
    def record_cmd(
        name: Annotated[str, typer.Argument(help="Probe name (a safe segment).")],
        phase: Annotated[str, PHASE_OPT],
        healthy: Annotated[
            bool | None, typer.Option("--healthy/--failed", help="Outcome of the probe that just ran.")
        ] = None,
        now: Annotated[str | None, NOW_OPT] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON result object.")] = False,
    ) -> None:
        """Record the outcome of a probe that just ran (replacing the cached one)."""
        from toolkit.core.errors import InvalidInput
        from toolkit.records.probes import check_phase, record

        if healthy is None:
            raise InvalidInput("OUTCOME_REQUIRED", "give --healthy or --failed")
        check_phase(phase)
        entry = record(repository().layout, name, healthy=healthy, phase=phase, now=moment_or_now(now))
        if as_json:
            emit_json(entry)
        say(f"{name}: recorded {entry['status']} at phase {phase}")

    app.add_typer(group)
