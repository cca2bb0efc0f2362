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
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.core.errors import InvalidInput
from toolkit.runtime.codes import RuntimeOpError
from toolkit.usage.fold import Ledger, merge_parts
from toolkit.usage.model import Call

if TYPE_CHECKING:
    from toolkit.usage.shapes import EventRecord, SessionEvent

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


class SessionSums:
    """One session's event figures, added up a call at a time."""

    def __init__(self) -> None:
        self.calls = 0
        self.models: dict[str, int] = {}  # model -> tokens
        self.first = ""
        self.last = ""
        self.largest_prompt = 0
        self.compactions = 0
        self.input = 0
        self.cache_write = 0
        self.cache_read = 0
        self.output = 0
        self.resume = False
        self.logs: set[str] = set()

    def add(self, call: Call, log: str) -> None:
        self.calls += 1
        self.models[call.model] = self.models.get(call.model, 0) + call.tokens
        self.first = min(self.first, call.ts) if self.first else call.ts
        self.last = max(self.last, call.ts)
        self.largest_prompt = max(self.largest_prompt, call.prompt)
        self.compactions += call.compactions + call.compactions_after
        self.input += call.input
        self.cache_write += call.cache_write
        self.cache_read += call.cache_read
        self.output += call.output
        self.resume = self.resume or call.resume
        self.logs.add(log)

    def merge(self, other: SessionSums) -> None:
        """Another part of the same session (read in another process): as if its calls came here."""
        self.calls += other.calls
        for model, tokens in other.models.items():
            self.models[model] = self.models.get(model, 0) + tokens
        self.first = min(self.first, other.first) if self.first and other.first else self.first or other.first
        self.last = max(self.last, other.last)
        self.largest_prompt = max(self.largest_prompt, other.largest_prompt)
        self.compactions += other.compactions
        self.input += other.input
        self.cache_write += other.cache_write
        self.cache_read += other.cache_read
        self.output += other.output
        self.resume = self.resume or other.resume
        self.logs |= other.logs


def session_event(source: str, session: str, sums: SessionSums, resumed: bool) -> SessionEvent:
    main_model = max(sums.models, key=lambda m: (sums.models[m], m))  # a tie goes to the later name
    return {
        "schema": "knowzcode.efficiency-event/v1",
        "event": "worker_usage",
        "observed_at": sums.last,
        "task_corpus_id": "anon-" + _digest(source, session)[:32],
        "provider": source,
        "runtime": "cli",
        "model": model_label(main_model),
        "mode": "resume" if resumed else None,
        "logical": {
            "estimated_context_occupancy": sums.largest_prompt,
            "compaction_count": sums.compactions,
        },
        "billed": {
            "uncached_input_tokens": sums.input,
            "cache_creation_input_tokens": sums.cache_write,
            "cache_read_input_tokens": sums.cache_read,
            "output_tokens": sums.output,
            "accounting_source": "provider-reported",
        },
    }


class Events:
    """The events fold: per session sums; ``ledger`` names each call's log file by its path hash."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.sessions: dict[tuple[str, str], SessionSums] = {}

    def add_all(self, calls: Iterable[Call]) -> None:
        logs = self.ledger.logs
        for call in calls:
            sums = self.sessions.get((call.source, call.session))
            if sums is None:
                sums = self.sessions[(call.source, call.session)] = SessionSums()
            sums.add(call, logs[call.log].path_hash)

    def take(self) -> dict[tuple[str, str], SessionSums]:
        taken, self.sessions = self.sessions, {}
        return taken

    def merge(self, state: dict[tuple[str, str], SessionSums]) -> None:
        merge_parts(self.sessions, state)

    def build(self) -> list[EventRecord]:
        from toolkit.runtime.telemetry import normalize_event  # ~30 ms: only when events are written

        out: list[EventRecord] = []
        for (source, session), sums in sorted(self.sessions.items()):
            raw = session_event(source, session, sums, session in self.ledger.resumed_from or sums.resume)
            try:
                event, _dropped = normalize_event(raw)
            except RuntimeOpError as exc:  # pragma: no cover - our own events are built to pass the gate
                raise InvalidInput(
                    exc.code, "an efficiency event built from the logs failed the privacy gate"
                ) from None
            out.append(
                {
                    "event": event,
                    "provenance": {
                        "reader": "workgroup usage",
                        "source": source,
                        "log_files": sorted(
                            sums.logs
                        ),  # sha256 of each log path, shortened: which logs, not where
                        "calls": sums.calls,
                        "first_call_at": sums.first,
                        "last_call_at": event["observed_at"],
                        "counts": "verified from the log's usage records",
                    },
                }
            )
        return out


def build_events(calls: list[Call], ledger: Ledger) -> list[EventRecord]:
    fold = Events(ledger)
    fold.add_all(calls)
    return fold.build()


def write_events(path: Path, events: Events) -> int:
    from toolkit.infra.store import atomic_write

    records = events.build()
    text = "".join(json.dumps(e, separators=(",", ":"), sort_keys=True) + "\n" for e in records)
    try:
        atomic_write(path, text)
    except FileNotFoundError:
        raise InvalidInput("USAGE_BAD_OUTPUT", "the folder of --emit-events does not exist") from None
    return len(records)
