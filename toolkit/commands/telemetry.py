"""``workgroup telemetry record FILE``: normalize an efficiency event and append it to the local log.

Config ``telemetry: off`` records nothing; ``local`` (and ``provider``) append the normalized
``knowzcode.efficiency-event/v1`` to the local telemetry log (inside the git common dir, never
committed); ``otlp`` appends it too and spools it for the OTLP flusher (``toolkit.otel.live``).
Keys the allowlist projection drops are named on stderr, never silently lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from toolkit.cli import command_group

if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.otel.shapes import EfficiencyEvent, RecordAnswer

# refusals (exit 1) versus malformed input (exit 2)
_REFUSALS = frozenset({"PRIVATE_TELEMETRY"})


def normalize_or_raise(raw: object) -> tuple[EfficiencyEvent, list[str]]:
    """The runtime's normalization with its codes mapped to the CLI's exit codes."""
    from toolkit.core.errors import InvalidInput, Refused
    from toolkit.runtime.codes import RuntimeOpError
    from toolkit.runtime.telemetry import normalize_event

    event = raw.get("event") if isinstance(raw, dict) and isinstance(raw.get("event"), dict) else raw
    try:
        normalized, dropped = normalize_event(event)
    except RuntimeOpError as exc:
        if exc.code in _REFUSALS:
            raise Refused(exc.code, exc.message) from None
        raise InvalidInput(exc.code, exc.message) from None
    return cast("EfficiencyEvent", normalized), dropped  # checked and projected: the schema's shape


def _live_key(log: Path, event: Mapping[str, object]) -> str:
    """The OTLP span key ``telemetry export`` will give this event (live mode spools it now)."""
    import json

    from toolkit.infra.telemetrylog import count_equal_lines
    from toolkit.otel.spans import content_key

    # the export numbers equal records in log order across every segment (spans.Occurrences);
    # the log is streamed, never read whole
    line = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return f"{content_key(event)}#{count_equal_lines(log, line)}"


def register(app: typer.Typer) -> None:
    group = command_group(help="Efficiency events (knowzcode.efficiency-event/v1).", no_args_is_help=True)

    @group.command("record")
    def record(
        file: Annotated[Path, typer.Argument(help='The raw event JSON (or {"event": {...}}).')],
        as_json: Annotated[
            bool, typer.Option("--json", help="Print {recorded, event, dropped_keys} as JSON.")
        ] = False,
    ) -> None:
        """Validate, project and (unless telemetry is off) append one event to the local log."""
        from toolkit.commands._common import emit_json, read_json_file, repository, say
        from toolkit.infra.config import load_config
        from toolkit.infra.store import file_lock
        from toolkit.infra.telemetrylog import append_held

        raw = read_json_file(file, what="event file")
        event, dropped = normalize_or_raise(raw)
        layout = repository().layout
        mode = load_config(layout)["context_efficiency"]["telemetry"]
        recorded = mode != "off"
        live_key = None
        if recorded:
            with file_lock(layout.lock("telemetry")):
                if mode == "otlp":
                    live_key = _live_key(layout.telemetry_log, event)
                append_held(layout.telemetry_log, event)  # rotates by size first when due
        if live_key is not None:
            from toolkit.otel.live import emit_efficiency

            emit_efficiency(str(layout.workdir), event, live_key)
        if dropped:
            say("dropped keys outside the event allowlist: " + ", ".join(dropped))
        say("recorded in the local telemetry log" if recorded else "telemetry is off: nothing recorded")
        if as_json:
            answer: RecordAnswer = {"recorded": recorded, "event": event, "dropped_keys": dropped}
            emit_json(answer)

    from toolkit.commands import telemetry_export

    telemetry_export.register(group)
    app.add_typer(group, name="telemetry")
