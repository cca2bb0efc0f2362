"""``workgroup dispatch [FILE|-] [--record] [--json]``: the combined dispatch, with config filling.

The decision is the runtime's (``toolkit.runtime.dispatch``). On top of it, from
``.workgroup/config.yml`` (request values always win, config fills absent fields):

* the rollout stage and canary share when the request names none;
* ``max_active_inherited`` / ``max_nesting_depth`` in the routing facts;
* ``enabled: false``: routing answers ``local`` with ``CAPABILITY_FALLBACK``, rollout is ``off``
  and nothing is written; lineage, reviewer isolation and write prohibition still fail closed.

``--record`` appends the seed's routing evidence (with the lineage candidate and its
invalidation result) to the local telemetry log, exactly like ``workgroup route --record``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from toolkit.commands._common import emit_json, read_json_request, say
from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused

DISABLED = {"mode": "local", "reason_codes": ["CAPABILITY_FALLBACK"]}
# refusals of a well-formed request (exit 1); every other runtime code is invalid input (exit 2)
REFUSALS = {"DISPATCH_FACT_MISMATCH", "RESULT_HANDOFF_NOT_AUTHORIZED", "RESULT_ARTIFACT_NOT_AUTHORIZED"}


def _section(request: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The facts of ``request[name]`` (``{input: {...}}`` or the facts themselves), or None."""
    value = request.get(name)
    inner = value.get("input") if isinstance(value, dict) else None
    value = value if inner is None else inner
    return dict(value) if isinstance(value, dict) else None


def fill_request(request: dict[str, Any], config: dict[str, Any], *, enabled: bool) -> dict[str, Any]:
    """The request with config-filled routing and rollout facts (request values win)."""
    from toolkit.infra.config import fill_absent, rollout_defaults, routing_defaults

    filled = dict(request)
    routing = _section(request, "routing")
    if routing is not None:
        filled["routing"] = {"input": fill_absent(routing, routing_defaults(config))}
    rollout = _section(request, "rollout") if request.get("rollout") is not None else {}
    if rollout is not None:
        # disabled: no measurement stage may execute anything
        stage = {"rollout": "off"} if not enabled else rollout_defaults(config)
        filled["rollout"] = {"input": {**rollout, **stage} if not enabled else fill_absent(rollout, stage)}
    return filled


def decide(request: dict[str, Any], *, enabled: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    from toolkit.runtime.adapter import RuntimeContext
    from toolkit.runtime.codes import MESSAGES, RuntimeOpError
    from toolkit.runtime.dispatch import dispatch_with_facts

    router = (
        None if enabled else (lambda facts, ctx: dict(DISABLED, reason_codes=list(DISABLED["reason_codes"])))
    )
    try:
        return dispatch_with_facts(request, RuntimeContext(cwd=os.getcwd()), router)
    except RuntimeOpError as exc:
        if exc.code == "ENVIRONMENT_ERROR":
            raise EnvironmentFailure(exc.code, MESSAGES[exc.code]) from None
        if exc.code in REFUSALS:
            raise Refused(exc.code, MESSAGES[exc.code]) from None
        raise InvalidInput(exc.code, MESSAGES[exc.code]) from None


def evidence_facts(facts: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """Routing facts plus the lineage candidate's invalidation result, for the evidence record."""
    lineage = result["lineage"]
    if lineage is None:
        return facts
    prior = facts.get("lineage")
    return {**facts, "lineage": {**(prior if isinstance(prior, dict) else {}), **lineage}}


def describe(result: dict[str, Any]) -> list[str]:
    routing, rollout, lineage, policy = (
        result[k] for k in ("routing", "rollout", "lineage", "result_policy")
    )
    lines = [f"routing: {routing['mode']}  ({', '.join(routing['reason_codes'])})"]
    if lineage is not None:
        lines.append(
            f"lineage: {lineage['state']}"
            + (f"  ({', '.join(lineage['invalidations'])})" if lineage["invalidations"] else "")
        )
    executes = "executes the recommendation" if rollout["execute_recommendation"] else "records only"
    lines.append(f"rollout: {rollout['rollout']}, selected {rollout['selected_mode']} ({executes})")
    if policy is not None:
        writes = ", ".join(name for name, allowed in policy["writes"].items() if allowed) or "none"
        lines.append(f"result policy: {policy['mode']}, writes: {writes}")
    return lines


def register(app: typer.Typer) -> None:
    @app.command("dispatch")
    def dispatch_cmd(
        file: Annotated[str, typer.Argument(help="The dispatch request JSON, or - for stdin.")] = "-",
        record: Annotated[
            bool, typer.Option("--record", help="Append the routing evidence to the local telemetry log.")
        ] = False,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print {routing, rollout, lineage, result_policy}.")
        ] = False,
    ) -> None:
        """Dispatch one delegation: lineage first, then routing, rollout and result policy."""
        from toolkit.commands.route import _record
        from toolkit.infra.config import load_config
        from toolkit.infra.git import NotARepository, discover

        request = read_json_request(file, what="dispatch request")
        if not isinstance(request, dict):
            raise InvalidInput("INVALID_REQUEST", "the dispatch request must be one JSON object")
        try:
            layout = discover().layout
        except NotARepository:
            layout = None
        if record and layout is None:
            raise NotARepository()
        config = load_config(layout if layout is not None else Path.cwd())
        block = config["context_efficiency"]
        enabled = bool(block["enabled"])
        result, facts = decide(fill_request(request, config, enabled=enabled), enabled=enabled)
        if record and not enabled:
            say("context efficiency is disabled (enabled: false): nothing recorded")
        elif record and block["telemetry"] == "off":
            say("telemetry is off in .workgroup/config.yml: nothing recorded")
        elif record:
            _record(layout, evidence_facts(facts, result), result["routing"])
            say("routing evidence recorded in the local telemetry log")
        if block["telemetry"] == "otlp" and layout is not None:
            from toolkit.otel.live import emit_decision

            emit_decision(str(layout.workdir), "dispatch", result, 0.0)
        if as_json:
            emit_json(result)
        else:
            for line in describe(result):
                typer.echo(line)
