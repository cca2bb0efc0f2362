"""The work behind ``workgroup route`` and ``workgroup dispatch``: the runtime's decision with the
repository's ``.workgroup/config.yml`` filling absent facts, and the routing evidence record.

The decisions are exactly the runtime's (``toolkit.runtime.router.op_route`` and
``toolkit.runtime.dispatch``). On top of them, from the config (request values always win):

* routing facts ``max_active_inherited`` / ``max_nesting_depth``; for dispatch, the rollout stage
  and canary share when the request names none;
* ``enabled: false``: routing answers ``local`` with ``CAPABILITY_FALLBACK``, a dispatch rollout is
  ``off`` and nothing is written; lineage, reviewer isolation and write prohibition still fail
  closed;
* ``record``: the seed's routing evidence is appended to the local telemetry log after the
  privacy engine has passed it (not when disabled or when telemetry is ``off``);
* ``telemetry: otlp``: the decision is also emitted live.

Each entry point returns ``(result, notes)``: the notes are the lines the command says on stderr.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused
from toolkit.core.jsontypes import JsonObject
from toolkit.core.timefmt import format_utc
from toolkit.infra.clock import now_utc
from toolkit.infra.config import fill_absent, load_config, rollout_defaults, routing_defaults
from toolkit.infra.git import NotARepository, discover
from toolkit.infra.store import Layout, file_lock
from toolkit.infra.telemetrylog import append_held
from toolkit.otel.live import emit_decision
from toolkit.privacy import Context, scan_value
from toolkit.runtime.adapter import RuntimeContext
from toolkit.runtime.codes import MESSAGES, RuntimeOpError
from toolkit.runtime.dispatch import dispatch_with_facts
from toolkit.runtime.router import op_route, routing_evidence

if TYPE_CHECKING:
    from toolkit.infra.config_shapes import LoadedConfig
    from toolkit.runtime.op_types import DispatchDecision


class RouteAnswer(TypedDict):
    """The router's answer ``{mode, reason_codes}``."""

    mode: str
    reason_codes: list[str]


DISABLED: RouteAnswer = {"mode": "local", "reason_codes": ["CAPABILITY_FALLBACK"]}
# refusals of a well-formed dispatch request (exit 1); every other runtime code is invalid input (exit 2)
REFUSALS = {"DISPATCH_FACT_MISMATCH", "RESULT_HANDOFF_NOT_AUTHORIZED", "RESULT_ARTIFACT_NOT_AUTHORIZED"}
DISABLED_NOTE = "context efficiency is disabled (enabled: false): nothing recorded"
TELEMETRY_OFF_NOTE = "telemetry is off in .workgroup/config.yml: nothing recorded"
RECORDED_NOTE = "routing evidence recorded in the local telemetry log"


def _coded(code: str, refusals: set[str] | frozenset[str] = frozenset()) -> Exception:
    """The CLI error for a runtime code: environment (exit 3), refusal (exit 1) or invalid input (2)."""

    if code == "ENVIRONMENT_ERROR":
        return EnvironmentFailure(code, MESSAGES[code])
    if code in refusals:
        return Refused(code, MESSAGES[code])
    return InvalidInput(code, MESSAGES[code])


def _layout_and_config(record: bool) -> tuple[Layout | None, LoadedConfig]:
    """The repository's layout (None outside one; ``--record`` needs one) and its config."""

    layout: Layout | None
    try:
        layout = discover().layout
    except NotARepository:
        layout = None
    if record and layout is None:
        raise NotARepository()
    return layout, load_config(layout if layout is not None else Path.cwd())


def _emit_live(
    block: Mapping[str, object], layout: Layout | None, op: str, result: Mapping[str, object]
) -> None:
    if block["telemetry"] == "otlp" and layout is not None:
        emit_decision(str(layout.workdir), op, result, 0.0)


def record_evidence(layout: Layout | None, facts: JsonObject, result: RouteAnswer) -> None:
    """Append the routing evidence of ``facts`` -> ``result``; ``PRIVATE_CONTENT`` refuses it."""

    evidence = routing_evidence(facts, result, recorded_at=format_utc(now_utc()))
    findings = scan_value(evidence, Context.GENERIC)
    if findings:
        rules = ", ".join(sorted({f.rule for f in findings}))
        raise Refused("PRIVATE_CONTENT", f"routing evidence not recorded: private content ({rules})")
    if layout is None:  # never: --record found the repository before deciding (_layout_and_config)
        raise NotARepository()

    with file_lock(layout.lock("telemetry")):
        append_held(layout.telemetry_log, evidence)  # rotates by size first when due


# --- route ---------------------------------------------------------------------------------------


def routing_input(request: object) -> JsonObject:
    """``{input: {...}}`` as the runtime takes it (a bare input object is accepted too)."""
    if isinstance(request, dict) and isinstance(request.get("input"), dict):
        return dict(request["input"])
    if isinstance(request, dict) and "input" not in request:
        return dict(request)
    raise InvalidInput("INVALID_REQUEST", 'the route request must be {"input": {...}}')


def route_decision(facts: JsonObject) -> RouteAnswer:
    """The runtime router's decision in the current directory, its codes as CLI errors."""

    try:
        return op_route({"input": facts}, RuntimeContext(cwd=os.getcwd()))
    except RuntimeOpError as exc:
        raise _coded(exc.code) from None


def route(request: object, *, record: bool) -> tuple[RouteAnswer, list[str]]:
    """``workgroup route``: ``({mode, reason_codes}, notes)``."""

    facts = routing_input(request)
    layout, config = _layout_and_config(record)
    block = config["context_efficiency"]
    notes: list[str] = []
    if not block["enabled"]:
        result = DISABLED.copy()
        if record:
            notes.append(DISABLED_NOTE)
    else:
        facts = fill_absent(facts, routing_defaults(config))
        result = route_decision(facts)
        if record and block["telemetry"] == "off":
            notes.append(TELEMETRY_OFF_NOTE)
        elif record:
            record_evidence(layout, facts, result)
            notes.append(RECORDED_NOTE)
    _emit_live(block, layout, "route", result)
    return result, notes


# --- dispatch ------------------------------------------------------------------------------------


def _section(request: JsonObject, name: str) -> JsonObject | None:
    """The facts of ``request[name]`` (``{input: {...}}`` or the facts themselves), or None."""
    value = request.get(name)
    inner = value.get("input") if isinstance(value, dict) else None
    value = value if inner is None else inner
    return dict(value) if isinstance(value, dict) else None


def fill_request(request: JsonObject, config: LoadedConfig, *, enabled: bool) -> JsonObject:
    """The request with config-filled routing and rollout facts (request values win)."""

    filled = dict(request)
    routing = _section(request, "routing")
    if routing is not None:
        filled["routing"] = {"input": fill_absent(routing, routing_defaults(config))}
    rollout = _section(request, "rollout") if request.get("rollout") is not None else {}
    if rollout is not None:
        # disabled: no measurement stage may execute anything
        stage: Mapping[str, object] = {"rollout": "off"} if not enabled else rollout_defaults(config)
        filled["rollout"] = {"input": {**rollout, **stage} if not enabled else fill_absent(rollout, stage)}
    return filled


def _disabled_route(facts: JsonObject, ctx: RuntimeContext) -> RouteAnswer:
    """``enabled: false``: ``local`` without routing (a fresh copy of ``DISABLED`` each time)."""

    return {"mode": DISABLED["mode"], "reason_codes": list(DISABLED["reason_codes"])}


def dispatch_decision(request: JsonObject, *, enabled: bool) -> tuple[DispatchDecision, JsonObject]:
    """The runtime's dispatch result and the routing facts it was decided on, codes as CLI errors."""

    router = None if enabled else _disabled_route
    try:
        return dispatch_with_facts(request, RuntimeContext(cwd=os.getcwd()), router)
    except RuntimeOpError as exc:
        raise _coded(exc.code, REFUSALS) from None


def evidence_facts(facts: JsonObject, result: DispatchDecision) -> JsonObject:
    """Routing facts plus the lineage candidate's invalidation result, for the evidence record."""
    lineage = result["lineage"]
    if lineage is None:
        return facts
    prior = facts.get("lineage")
    return {**facts, "lineage": {**(prior if isinstance(prior, dict) else {}), **lineage}}


def describe(result: DispatchDecision) -> list[str]:
    """The text summary of a dispatch result, one line per part."""
    routing, rollout, lineage, policy = (
        result["routing"],
        result["rollout"],
        result["lineage"],
        result["result_policy"],
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


def dispatch(request: object, *, record: bool) -> tuple[DispatchDecision, list[str]]:
    """``workgroup dispatch``: ``({routing, rollout, lineage, result_policy}, notes)``."""
    if not isinstance(request, dict):
        raise InvalidInput("INVALID_REQUEST", "the dispatch request must be one JSON object")
    layout, config = _layout_and_config(record)
    block = config["context_efficiency"]
    enabled = bool(block["enabled"])
    result, facts = dispatch_decision(fill_request(request, config, enabled=enabled), enabled=enabled)
    notes: list[str] = []
    if record and not enabled:
        notes.append(DISABLED_NOTE)
    elif record and block["telemetry"] == "off":
        notes.append(TELEMETRY_OFF_NOTE)
    elif record:
        record_evidence(layout, evidence_facts(facts, result), result["routing"])
        notes.append(RECORDED_NOTE)
    _emit_live(block, layout, "dispatch", result)
    return result, notes
