"""The local vault delta journal behind ``workgroup vault add|flush|list``.

The journal is an append-only JSON Lines file in the local state directory (never committed,
shared by every worktree). Two record kinds:

* ``{"type": "delta", "seq", "at", "action", "reason", "KnowledgeId"?, "severity", "hash",
  "delta"}``: a delta the vault-delta decision kept (``batch``, ``flush``, ``amend``,
  ``update``). It is *pending* until a flush record names its ``seq``.
* ``{"type": "flush", "batch_id", "at", "seqs"}``: the coordinator took these pending entries.

What "write nothing durable" means here, precisely:

* a ``skip`` (empty or duplicate) appends nothing: the journal is byte-identical afterwards;
* a ``batch`` entry is appended as *pending* in the local journal and sent nowhere: the toolkit
  never talks to a vault service, and no committed file changes;
* ``vault flush`` prints every pending entry once, as one JSON batch for the coordinator to send,
  after durably appending the flush record; a second flush prints an empty batch.

Every read-decide-append runs under one file lock, so concurrent ``vault add`` processes see
each other's entries (a duplicate raced by two processes is kept once) and sequence numbers are
unique. The previous deltas and hashes given to the decision are the journal's own entries plus
any the caller passes (for example records with a ``KnowledgeId`` fetched from the vault).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from toolkit.core.errors import InvalidInput, Refused
from toolkit.core.timefmt import format_utc
from toolkit.infra.store import Layout, append_jsonl, file_lock, read_jsonl
from toolkit.runtime.codes import MESSAGES, RuntimeOpError
from toolkit.runtime.vault_delta import ID_FIELDS, delta_hash, evaluate_vault_delta, stable_knowledge_id

BATCH_SCHEMA = "workgroup.vault-batch/v1"
JOURNAL_LOCK = "vault-journal"
KEPT_ACTIONS = frozenset({"batch", "flush", "amend", "update"})
# caller-supplied decision facts; previous_* are merged with the journal's own entries
INPUT_KEYS = frozenset(
    {"delta", "previous_deltas", "previous_hashes", "explicit_save", "interruption_sensitive", "severity"}
)


@dataclass(frozen=True)
class JournalState:
    """The parsed journal: entries in order, which seqs are flushed, and unreadable lines."""

    entries: list[dict[str, Any]]
    flushed: dict[int, str]  # seq -> batch_id
    problems: int


def read_journal(layout: Layout) -> JournalState:
    """Parse the journal, skipping torn or foreign lines (reported as a count, never fatal)."""
    rows, problems = read_jsonl(layout.vault_journal)
    entries: list[dict[str, Any]] = []
    flushed: dict[int, str] = {}
    bad = len(problems)
    for row in rows:
        value = row.value
        if not isinstance(value, dict):
            bad += 1
        elif value.get("type") == "delta" and isinstance(value.get("seq"), int):
            entries.append(value)
        elif value.get("type") == "flush" and isinstance(value.get("seqs"), list):
            for seq in value["seqs"]:
                if isinstance(seq, int):
                    flushed.setdefault(seq, str(value.get("batch_id")))
        else:
            bad += 1
    return JournalState(entries, flushed, bad)


def _decision_input(request: Mapping[str, Any], state: JournalState) -> dict[str, Any]:
    unknown = set(request) - INPUT_KEYS
    if unknown:
        raise InvalidInput("VAULT_INPUT_INVALID", "unknown key in the vault delta input")
    facts = dict(request)
    caller_prior = facts.get("previous_deltas") or []
    caller_hashes = facts.get("previous_hashes") or []
    if not isinstance(caller_prior, list) or not isinstance(caller_hashes, list):
        raise InvalidInput("VAULT_INPUT_INVALID", "previous_deltas and previous_hashes must be lists")
    journal_records = current_records(state)
    facts["previous_deltas"] = [*caller_prior, *journal_records]
    # the journal's records are passed whole, so their hashes need not be passed again
    facts["previous_hashes"] = list(caller_hashes)
    return facts


def current_records(state: JournalState) -> list[dict[str, Any]]:
    """The knowledge the journal describes now: an amend/update replaces the record it targets.

    Without this projection a second amendment of one record would find two prior records
    with its semantic key (the original and the first amendment) and fail as ambiguous.
    """
    records: list[dict[str, Any]] = []
    by_id: dict[str, int] = {}
    for entry in state.entries:
        delta = entry.get("delta")
        if not isinstance(delta, dict):
            continue
        target = entry.get("KnowledgeId") if entry.get("action") in ("amend", "update") else None
        if isinstance(target, str) and target:
            record = {k: v for k, v in delta.items() if k not in ID_FIELDS}
            record["KnowledgeId"] = target
        else:
            record = dict(delta)
            try:
                target = stable_knowledge_id(record)
            except RuntimeOpError:
                target = None  # two ids on one record: kept, never replaced
        if target and target in by_id:
            records[by_id[target]] = record
        else:
            if target:
                by_id[target] = len(records)
            records.append(record)
    return records


def _coded(exc: RuntimeOpError) -> Exception:
    # a refused mutation (no or ambiguous target) is a refusal; malformed input is a usage error
    if exc.code in ("VAULT_TARGET_REQUIRED", "VAULT_TARGET_AMBIGUOUS"):
        return Refused(exc.code, MESSAGES[exc.code])
    return InvalidInput(exc.code, MESSAGES[exc.code])


def add_delta(layout: Layout, request: Mapping[str, Any], *, now: datetime) -> dict[str, Any]:
    """Decide one delta against the journal and append it when kept; returns the outcome."""
    if not isinstance(request, Mapping):
        raise InvalidInput("VAULT_INPUT_INVALID", "the vault delta input must be a JSON object")
    if "delta" not in request:
        raise InvalidInput("VAULT_INPUT_INVALID", "the vault delta input needs a delta")
    with file_lock(layout.lock(JOURNAL_LOCK)):
        state = read_journal(layout)
        try:
            decision = evaluate_vault_delta(_decision_input(request, state))
        except RuntimeOpError as exc:
            raise _coded(exc) from None
        outcome: dict[str, Any] = {
            **decision,
            "seq": None,
            "journaled": False,
            "flush_due": decision["action"] == "flush",
        }
        if decision["action"] not in KEPT_ACTIONS:
            return outcome  # a skip appends nothing
        seq = max((e["seq"] for e in state.entries), default=0) + 1
        delta = request["delta"]
        record = {
            "type": "delta",
            "seq": seq,
            "at": format_utc(now),
            **decision,
            "severity": _severity(request.get("severity")),
            "hash": delta_hash(delta),
            "delta": delta,
        }
        append_jsonl(layout.vault_journal, record)
    outcome.update(seq=seq, journaled=True)
    return outcome


def _severity(value: Any) -> str | None:
    return value.strip().upper() if isinstance(value, str) else None


def _batch_id(seqs: list[int], at: str) -> str:
    digest = hashlib.sha256(f"{at}|{','.join(map(str, seqs))}".encode()).hexdigest()
    return f"batch-{digest[:16]}"


def _batch_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("seq", "action", "reason", "KnowledgeId", "severity", "delta")
    return {k: entry[k] for k in keys if k in entry}


def flush(layout: Layout, *, now: datetime) -> dict[str, Any]:
    """Mark every pending entry flushed (durably) and return them as one batch, once."""
    at = format_utc(now)
    with file_lock(layout.lock(JOURNAL_LOCK)):
        state = read_journal(layout)
        pending = [e for e in state.entries if e["seq"] not in state.flushed]
        if not pending:
            return {"schema": BATCH_SCHEMA, "batch_id": None, "flushed_at": at, "entries": []}
        seqs = [e["seq"] for e in pending]
        batch_id = _batch_id(seqs, at)
        append_jsonl(layout.vault_journal, {"type": "flush", "batch_id": batch_id, "at": at, "seqs": seqs})
    return {
        "schema": BATCH_SCHEMA,
        "batch_id": batch_id,
        "flushed_at": at,
        "entries": [_batch_entry(e) for e in pending],
    }


def list_entries(layout: Layout) -> dict[str, Any]:
    """Every journaled entry with its state (``pending`` or the batch that took it)."""
    state = read_journal(layout)  # readers need no lock: appends are whole lines, torn ones skipped
    rows = []
    for entry in state.entries:
        batch = state.flushed.get(entry["seq"])
        rows.append(
            {
                **_batch_entry(entry),
                "at": entry.get("at"),
                "state": "flushed" if batch else "pending",
                "batch_id": batch,
            }
        )
    pending = sum(1 for r in rows if r["state"] == "pending")
    return {"entries": rows, "pending": pending, "unreadable_lines": state.problems}
