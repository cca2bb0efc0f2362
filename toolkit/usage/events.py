"""``--emit-events FILE``: one ``knowzcode.efficiency-event/v1`` record per session, measured from its log.

Each line is ``{"event": <normalized event>, "provenance": {...}}``: the event goes through the
telemetry op's own normalization and privacy gate (``normalize_event``), so it is exactly what
``workgroup telemetry record`` accepts; provenance names the log by a hash of its path, never the
path, the session id or the project. Billed counters are the provider's own numbers as logged
(``provider-reported``); no amount is ever put in an event.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from toolkit.core.errors import InvalidInput
from toolkit.usage.fold import Ledger
from toolkit.usage.model import Call

_LABELS = (("opus", "opus"), ("sonnet", "sonnet"), ("haiku", "haiku"), ("gpt-5", "gpt-5"))


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def model_label(model: str) -> str:
    """The schema's family label where one fits, else a stable anonymous label."""
    lowered = model.lower()
    for needle, label in _LABELS:
        if needle in lowered:
            return label
    return "anon-model-" + _digest("model", model)[:16]


def session_event(source: str, session: str, calls: list[Call], resumed: bool) -> dict[str, Any]:
    models: dict[str, int] = {}
    for call in calls:
        models[call.model] = models.get(call.model, 0) + call.tokens
    main_model = max(models, key=lambda m: models[m])
    return {
        "schema": "knowzcode.efficiency-event/v1",
        "event": "worker_usage",
        "observed_at": max(call.ts for call in calls),
        "task_corpus_id": "anon-" + _digest(source, session)[:32],
        "provider": source,
        "runtime": "cli",
        "model": model_label(main_model),
        "mode": "resume" if resumed else None,
        "logical": {
            "estimated_context_occupancy": max(call.prompt for call in calls),
            "compaction_count": sum(c.compactions + c.compactions_after for c in calls),
        },
        "billed": {
            "uncached_input_tokens": sum(c.input for c in calls),
            "cache_creation_input_tokens": sum(c.cache_write for c in calls),
            "cache_read_input_tokens": sum(c.cache_read for c in calls),
            "output_tokens": sum(c.output for c in calls),
            "accounting_source": "provider-reported",
        },
    }


def build_events(calls: list[Call], ledger: Ledger) -> list[dict[str, Any]]:
    from toolkit.runtime.codes import RuntimeOpError
    from toolkit.runtime.telemetry import normalize_event

    sessions: dict[tuple[str, str], list[Call]] = {}
    for call in calls:
        sessions.setdefault((call.source, call.session), []).append(call)
    out = []
    for (source, session), group in sorted(sessions.items()):
        raw = session_event(
            source, session, group, session in ledger.resumed_from or any(c.resume for c in group)
        )
        try:
            event, _dropped = normalize_event(raw)
        except RuntimeOpError as exc:  # pragma: no cover - our own events are built to pass the gate
            raise InvalidInput(
                exc.code, "an efficiency event built from the logs failed the privacy gate"
            ) from None
        logs = sorted({ledger.logs[c.log].path_hash for c in group})
        out.append(
            {
                "event": event,
                "provenance": {
                    "reader": "workgroup usage",
                    "source": source,
                    "log_files": logs,  # sha256 of each log path, shortened: which logs, not where
                    "calls": len(group),
                    "first_call_at": min(c.ts for c in group),
                    "last_call_at": event["observed_at"],
                    "counts": "verified from the log's usage records",
                },
            }
        )
    return out


def write_events(path: Path, calls: list[Call], ledger: Ledger) -> int:
    from toolkit.infra.store import atomic_write

    events = build_events(calls, ledger)
    text = "".join(json.dumps(e, separators=(",", ":"), sort_keys=True) + "\n" for e in events)
    try:
        atomic_write(path, text)
    except FileNotFoundError:
        raise InvalidInput("USAGE_BAD_OUTPUT", "the folder of --emit-events does not exist") from None
    return len(events)
