"""What a CM log already holds for one event and one model call, and the rules it decides.

An event's ``event_id`` is derived from its content (an exact retry has the same id and is
answered deduplicated); a call's claim (``model_call/claimed``) and usage (``model_usage``) must
agree on their identity. Checked under the writer's locks, so a claim is atomic across processes.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from toolkit.cm import logindex, run_logs
from toolkit.cm.event_error import EventError
from toolkit.core.cm_usage_format import IDENTITY_FIELDS, MANAGED_ADAPTER, MANAGED_SOURCE

TYPE_CHECKING = False  # typing costs start-up on every event; type checkers read True
if TYPE_CHECKING:
    from toolkit.core.jsontypes import JsonObject


def event_id_for(event: Mapping[str, object]) -> str:
    """UUIDv5 of the canonical event without ``at`` and ``event_id``: an exact retry has the same id."""
    identity = {k: v for k, v in event.items() if k not in ("at", "event_id")}
    text = json.dumps(identity, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return str(uuid.uuid5(uuid.NAMESPACE_URL, text))


def identity_of(row: Mapping[str, object]) -> tuple[str, ...]:
    return tuple(str(row.get(name, "")) for name in IDENTITY_FIELDS)


@dataclass
class CallFacts:
    """What the authoritative log already holds for one event id and one call id."""

    duplicate: JsonObject | None = None
    usage: JsonObject | None = None
    claim: JsonObject | None = None


def scan(log: Path, run_id: str, event_id: str, call_id: str | None) -> CallFacts:
    """What ``log`` holds for the event id and the call id: from the log's index (``logindex``), or
    read plainly when the index cannot answer (the same answers)."""
    found = logindex.call_rows(log, run_id, event_id, call_id)
    if found is not None:
        return CallFacts(*found)
    return _scan_plainly(log, run_id, event_id, call_id)


def _scan_plainly(log: Path, run_id: str, event_id: str, call_id: str | None) -> CallFacts:
    facts = CallFacts()
    needles = [event_id.encode()] + ([call_id.encode()] if call_id else [])
    # only the lines that name the event or the call (found a block at a time; LOG_UNREADABLE: a
    # FIFO or a directory is never read)
    for raw in run_logs.iter_lines_with(log, needles):
        try:
            row = run_logs.loads_row(raw)
        except ValueError:
            continue  # torn, hostile or foreign: never a row this writer made
        if not isinstance(row, dict):
            continue
        if facts.duplicate is None and row.get("event_id") == event_id:
            facts.duplicate = row
        if call_id and row.get("run_id") == run_id and row.get("call_id") == call_id:
            if facts.usage is None and row.get("event") == "model_usage":
                facts.usage = row
            elif facts.claim is None and row.get("event") == "model_call" and row.get("phase") == "claimed":
                facts.claim = row
    return facts


def check_call(event: Mapping[str, object], facts: CallFacts) -> None:
    """The claim/completion identity rules of the reference, checked under the lock."""
    name, event_id = event["event"], event["event_id"]
    if name == "model_usage":
        if facts.usage is not None and facts.usage.get("event_id") != event_id:
            raise EventError("model_usage call_id already used with different payload", code="CALL_ID_USED")
        managed = event.get("adapter") == MANAGED_ADAPTER or event.get("source") == MANAGED_SOURCE
        if managed and facts.claim is None:
            raise EventError("managed model_usage requires a prior model_call claim", code="CLAIM_MISSING")
        if facts.claim is not None and identity_of(facts.claim) != identity_of(event):
            raise EventError("model_usage identity does not match model_call claim", code="IDENTITY_MISMATCH")
    elif name == "model_call":
        if facts.usage is not None:
            raise EventError("model_call call_id already completed", code="CALL_COMPLETED")
        if facts.claim is not None and facts.claim.get("event_id") != event_id:
            raise EventError("model_call call_id already claimed with different payload", code="CALL_CLAIMED")
