"""`workgroup route [FILE|-] [--record] [--json]`: the router's decision, with config filling.

The decision is exactly the runtime's (``toolkit.runtime.router.op_route``). On top of it:
``.workgroup/config.yml`` fills absent routing facts (``max_active_inherited``,
``max_nesting_depth``; request values always win), ``enabled: false`` answers ``local`` with
``CAPABILITY_FALLBACK`` and writes nothing, and ``--record`` appends the seed's routing evidence
to the local telemetry log after the privacy engine has passed it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from toolkit.commands._common import emit_json, read_json_request, say
from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused

DISABLED = {"mode": "local", "reason_codes": ["CAPABILITY_FALLBACK"]}


def _routing_input(request: Any) -> dict[str, Any]:
    """``{input: {...}}`` as the runtime takes it (a bare input object is accepted too)."""
    if isinstance(request, dict) and isinstance(request.get("input"), dict):
        return dict(request["input"])
    if isinstance(request, dict) and "input" not in request:
        return dict(request)
    raise InvalidInput("INVALID_REQUEST", 'the route request must be {"input": {...}}')


def _decide(facts: dict[str, Any]) -> dict[str, Any]:
    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.codes import MESSAGES, RuntimeOpError
    from toolkit.runtime.router import op_route

    try:
        return op_route({"input": facts}, RuntimeContext(cwd=os.getcwd()))
    except RuntimeOpError as exc:
        if exc.code == "ENVIRONMENT_ERROR":
            raise EnvironmentFailure(exc.code, MESSAGES[exc.code]) from None
        raise InvalidInput(exc.code, MESSAGES[exc.code]) from None


def _record(layout: Any, facts: dict[str, Any], result: dict[str, Any]) -> None:
    from toolkit.core.timefmt import format_utc, now_utc
    from toolkit.infra.store import append_jsonl, file_lock
    from toolkit.privacy import Context, scan_value
    from toolkit.runtime.router import routing_evidence

    evidence = routing_evidence(facts, result, recorded_at=format_utc(now_utc()))
    findings = scan_value(evidence, Context.GENERIC)
    if findings:
        rules = ", ".join(sorted({f.rule for f in findings}))
        raise Refused("PRIVATE_CONTENT", f"routing evidence not recorded: private content ({rules})")
    with file_lock(layout.lock("telemetry")):
        append_jsonl(layout.telemetry_log, evidence)


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
        from toolkit.infra.config import fill_absent, load_config, routing_defaults
        from toolkit.infra.git import NotARepository, discover

        facts = _routing_input(read_json_request(file, what="route request"))
        try:
            layout = discover().layout
        except NotARepository:
            layout = None
        if record and layout is None:
            raise NotARepository()
        config = load_config(layout if layout is not None else Path.cwd())
        block = config["context_efficiency"]
        if not block["enabled"]:
            result = dict(DISABLED)
            if record:
                say("context efficiency is disabled (enabled: false): nothing recorded")
        else:
            facts = fill_absent(facts, routing_defaults(config))
            result = _decide(facts)
            if record and block["telemetry"] == "off":
                say("telemetry is off in .workgroup/config.yml: nothing recorded")
            elif record:
                _record(layout, facts, result)
                say("routing evidence recorded in the local telemetry log")
        if block["telemetry"] == "otlp" and layout is not None:
            from toolkit.otel.live import emit_decision

            emit_decision(str(layout.workdir), "route", result, 0.0)
        if as_json:
            emit_json(result)
        else:
            typer.echo(f"{result['mode']}  ({', '.join(result['reason_codes'])})")
