"""The local vault delta journal behind ``workgroup vault add|flush|list``.

The journal is an append-only JSON Lines file in the local state directory (never committed,
shared by every worktree). Two record kinds:

* ``{"type": "delta", "seq", "at", "action", "reason", "KnowledgeId"?, "severity", "hash",
  "delta"}``: a delta the vault-delta decision kept (``batch``, ``flush``, ``amend``,
  ``update``). It is *pending* until a flush record names its ``seq``.
* ``{"type": "offer", "batch_id", "at", "seqs"}``: ``vault flush --hold`` wrote this batch out;
  its entries stay undelivered until ``vault flush --ack BATCH_ID`` and are offered again.
* ``{"type": "flush", "batch_id", "at", "seqs"}``: these entries were delivered: the batch was
  written out in full (plain ``vault flush``) or acknowledged (``--ack``).

What "write nothing durable" means here, precisely:

* a ``skip`` (empty or duplicate) appends nothing: the journal is byte-identical afterwards;
* a ``batch`` entry is appended as *pending* in the local journal and sent nowhere: the toolkit
  never talks to a vault service, and no committed file changes;
* ``vault flush`` delivers at least once: it writes every undelivered entry out as one JSON batch
  and appends the flush record only after the write succeeded. A failed write (stdout closed, a
  broken pipe) records nothing, so the next flush offers the same entries again. With ``--hold``
  the batch is recorded as an offer and counts as delivered only on ``--ack BATCH_ID``.

Every read-decide-append runs under one file lock, so concurrent ``vault add`` processes see
each other's entries (a duplicate raced by two processes is kept once) and sequence numbers are
unique. The previous deltas and hashes given to the decision are the journal's own entries plus
any the caller passes (for example records with a ``KnowledgeId`` fetched from the vault).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NotRequired, TypedDict

from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused
from toolkit.core.jsontypes import JsonObject
from toolkit.core.timefmt import format_utc
from toolkit.infra.boundedio import FileRefused
from toolkit.infra.store import Layout, append_jsonl, file_lock, read_jsonl
from toolkit.runtime.codes import MESSAGES, RuntimeOpError
from toolkit.runtime.vault_delta import (
    ID_FIELDS,
    delta_hash,
    evaluate_vault_delta,
    parse_severity,
    stable_knowledge_id,
)

if TYPE_CHECKING:
    from toolkit.runtime.op_types import VaultDeltaDecision

BATCH_SCHEMA = "workgroup.vault-batch/v1"
JOURNAL_LOCK = "vault-journal"
KEPT_ACTIONS = frozenset({"batch", "flush", "amend", "update"})
# caller-supplied decision facts; previous_* are merged with the journal's own entries
INPUT_KEYS = frozenset(
    {"delta", "previous_deltas", "previous_hashes", "explicit_save", "interruption_sensitive", "severity"}
)


class VaultDecision(TypedDict):
    """What the vault-delta decision answers: ``{action, reason, KnowledgeId?}``."""

    action: str
    reason: str
    KnowledgeId: NotRequired[str]


class VaultOutcome(VaultDecision):
    """What ``add_delta`` returns (and ``vault add --json`` prints): the decision, then the journal's part."""

    seq: int | None
    journaled: bool
    flush_due: bool


class JournalDeltaRow(TypedDict):
    """A ``delta`` row as ``add_delta`` appends it: the decision's keys between ``at`` and ``severity``."""

    type: str
    seq: int
    at: str
    action: str
    reason: str
    KnowledgeId: NotRequired[str]
    severity: str | None
    hash: str
    delta: JsonObject


class VaultBatch(TypedDict):
    """The batch ``flush`` delivers: the journal's entries as written (``ack_required`` with ``--hold``)."""

    schema: str
    batch_id: str | None
    flushed_at: str
    entries: list[JsonObject]
    ack_required: NotRequired[bool]


class AckOutcome(TypedDict):
    """What ``ack`` returns: the seqs this acknowledgement delivered, ``already`` when none."""

    batch_id: str
    acknowledged: list[int]
    already: bool


class VaultListing(TypedDict):
    """What ``list_entries`` returns; each entry is a journal row as written plus its state."""

    entries: list[JsonObject]  # journal content as written plus at, state, batch_id: on its way out as JSON
    pending: int
    unreadable_lines: int


def _decision(raw: VaultDeltaDecision) -> VaultDecision:
    """The runtime decision's answer as its record (its keys, in its order)."""
    decision: VaultDecision = {"action": raw["action"], "reason": raw["reason"]}
    if "KnowledgeId" in raw:
        decision["KnowledgeId"] = raw["KnowledgeId"]
    return decision


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """A ``delta`` row of the journal, parsed once: its sequence number, the delta it kept (None
    when the row holds none), the ``KnowledgeId`` an amend or update targets (None otherwise), and
    the row as written (what ``flush`` and ``list`` hand on)."""

    seq: int
    delta: JsonObject | None
    target: str | None
    row: Mapping[str, object]

    @classmethod
    def parse(cls, value: Mapping[str, object], seq: int) -> JournalEntry:
        delta = value.get("delta")
        target = value.get("KnowledgeId") if value.get("action") in ("amend", "update") else None
        return cls(
            seq,
            delta if isinstance(delta, dict) else None,
            target if isinstance(target, str) and target else None,
            value,
        )


@dataclass(frozen=True, slots=True)
class BatchRow:
    """A ``flush`` or ``offer`` row: its batch id and the integer seqs it names (others ignored)."""

    kind: str
    batch_id: str
    seqs: list[int]


@dataclass(frozen=True)
class JournalState:
    """The parsed journal: entries in order, which seqs are flushed, and unreadable lines."""

    entries: list[JournalEntry]
    flushed: dict[int, str]  # seq -> batch_id that delivered it
    problems: int
    offered: dict[int, str]  # seq -> latest held batch_id not yet acknowledged
    offers: dict[str, list[int]]  # held batch_id -> its seqs


def read_journal(layout: Layout) -> JournalState:
    """Parse the journal, skipping torn or foreign lines (reported as a count, never fatal)."""
    try:
        rows, problems = read_jsonl(layout.vault_journal, what="the vault journal")
    except FileRefused as exc:
        raise EnvironmentFailure("VAULT_JOURNAL_UNREADABLE", exc.message) from None
    entries: list[JournalEntry] = []
    flushed: dict[int, str] = {}
    offered: dict[int, str] = {}
    offers: dict[str, list[int]] = {}
    bad = len(problems)
    for row in rows:
        parsed = _parse_row(row.value)
        if isinstance(parsed, JournalEntry):
            entries.append(parsed)
        elif parsed is None:
            bad += 1
        else:
            _note_batch(parsed, flushed, offered, offers)
    held = {seq: batch for seq, batch in offered.items() if seq not in flushed}
    return JournalState(entries, flushed, bad, held, offers)


def _parse_row(value: object) -> JournalEntry | BatchRow | None:
    """One journal row: a ``delta`` (with an integer seq), a ``flush`` or ``offer`` (with a seqs
    list and a string batch id); None for a torn or foreign row."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    seq = value.get("seq")
    if kind == "delta" and isinstance(seq, int):
        return JournalEntry.parse(value, seq)
    seqs, batch_id = value.get("seqs"), value.get("batch_id")
    if kind in ("flush", "offer") and isinstance(seqs, list) and isinstance(batch_id, str):
        ints = [seq for seq in seqs if isinstance(seq, int) and not isinstance(seq, bool)]
        return BatchRow(str(kind), batch_id, ints)
    return None


def _note_batch(
    row: BatchRow, flushed: dict[int, str], offered: dict[int, str], offers: dict[str, list[int]]
) -> None:
    """Record a flush row (its seqs delivered by their first batch) or an offer row (its seqs
    held by this batch, the latest offer winning)."""
    if row.kind == "flush":
        for seq in row.seqs:
            flushed.setdefault(seq, row.batch_id)
    else:
        offers[row.batch_id] = row.seqs
        offered.update(dict.fromkeys(row.seqs, row.batch_id))


def _decision_input(request: Mapping[str, object], state: JournalState) -> JsonObject:
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


def current_records(state: JournalState) -> list[JsonObject]:
    """The knowledge the journal describes now: an amend/update replaces the record it targets.

    Without this projection a second amendment of one record would find two prior records
    with its semantic key (the original and the first amendment) and fail as ambiguous.
    """
    records: list[JsonObject] = []
    by_id: dict[str, int] = {}
    for entry in state.entries:
        if entry.delta is None:
            continue
        record, target = _record_and_target(entry, entry.delta)
        if target and target in by_id:
            records[by_id[target]] = record
        else:
            if target:
                by_id[target] = len(records)
            records.append(record)
    return records


def _record_and_target(entry: JournalEntry, delta: JsonObject) -> tuple[JsonObject, str | None]:
    """The knowledge record a journal delta describes and the id it replaces or is known by: an
    amend/update with a ``KnowledgeId`` targets that id (the delta's own ids dropped); any other
    delta is known by its stable id (None when it carries two ids: kept, never replaced)."""
    if entry.target is not None:
        record = {k: v for k, v in delta.items() if k not in ID_FIELDS}
        record["KnowledgeId"] = entry.target
        return record, entry.target
    record = dict(delta)
    try:
        return record, stable_knowledge_id(record)
    except RuntimeOpError:
        return record, None  # two ids on one record: kept, never replaced


def _coded(exc: RuntimeOpError) -> Exception:
    # a refused mutation (no or ambiguous target) is a refusal; malformed input is a usage error
    if exc.code in ("VAULT_TARGET_REQUIRED", "VAULT_TARGET_AMBIGUOUS"):
        return Refused(exc.code, MESSAGES[exc.code])
    return InvalidInput(exc.code, MESSAGES[exc.code])


def add_delta(layout: Layout, request: Mapping[str, object], *, now: datetime) -> VaultOutcome:
    """Decide one delta against the journal and append it when kept; returns the outcome."""
    if not isinstance(request, Mapping):
        raise InvalidInput("VAULT_INPUT_INVALID", "the vault delta input must be a JSON object")
    if "delta" not in request:
        raise InvalidInput("VAULT_INPUT_INVALID", "the vault delta input needs a delta")
    with file_lock(layout.lock(JOURNAL_LOCK)):
        state = read_journal(layout)
        try:
            decision = _decision(evaluate_vault_delta(_decision_input(request, state)))
        except RuntimeOpError as exc:
            raise _coded(exc) from None
        outcome: VaultOutcome = {
            **decision,
            "seq": None,
            "journaled": False,
            "flush_due": decision["action"] == "flush",
        }
        if decision["action"] not in KEPT_ACTIONS:
            return outcome  # a skip appends nothing
        seq = max((e.seq for e in state.entries), default=0) + 1
        delta = request["delta"]
        if not isinstance(delta, dict):  # never: a kept decision checked that the delta is an object
            raise _coded(RuntimeOpError("INVALID_REQUEST"))
        record: JournalDeltaRow = {
            "type": "delta",
            "seq": seq,
            "at": format_utc(now),
            **decision,
            "severity": parse_severity(request.get("severity")),  # checked by the decision above
            "hash": delta_hash(delta),
            "delta": delta,
        }
        append_jsonl(layout.vault_journal, record)
    outcome["seq"] = seq
    outcome["journaled"] = True
    return outcome


def _batch_id(seqs: list[int], at: str) -> str:
    digest = hashlib.sha256(f"{at}|{','.join(map(str, seqs))}".encode()).hexdigest()
    return f"batch-{digest[:16]}"


def _batch_entry(entry: JournalEntry) -> JsonObject:
    keys = ("seq", "action", "reason", "KnowledgeId", "severity", "delta")
    return {k: entry.row[k] for k in keys if k in entry.row}


Deliver = Callable[[VaultBatch], None]


def flush(layout: Layout, *, now: datetime, deliver: Deliver, hold: bool = False) -> VaultBatch:
    """Hand every undelivered entry to ``deliver`` as one batch; record it only if that returned.

    At least once: when ``deliver`` raises (the batch could not be written out), nothing is
    appended and the same entries are offered by the next flush. ``hold`` records the batch as
    an offer instead: it is delivered only when ``ack`` names it, and offered again until then.
    Entries of an earlier un-acknowledged offer are part of every later batch.

    The journal lock is held only to copy the batch and, after ``deliver`` returned, to append
    its record: a slow reader of the batch (``vault flush | slow-consumer``) never holds up
    ``vault add``. The record names exactly the copied entries, so an entry added while the
    batch was being written stays undelivered. Two concurrent flushes may both offer an entry
    (at least once allows it); the first flush record of a seq is the one that counts.
    """
    at = format_utc(now)
    with file_lock(layout.lock(JOURNAL_LOCK)):
        state = read_journal(layout)
        pending = [e for e in state.entries if e.seq not in state.flushed]
    if not pending:
        batch: VaultBatch = {
            "schema": BATCH_SCHEMA,
            "batch_id": None,
            "flushed_at": at,
            "entries": [],
        }
        deliver(batch)
        return batch
    seqs = [e.seq for e in pending]
    batch_id = _batch_id(seqs, at)
    batch = {
        "schema": BATCH_SCHEMA,
        "batch_id": batch_id,
        "flushed_at": at,
        "entries": [_batch_entry(e) for e in pending],
    }
    if hold:
        batch["ack_required"] = True
    deliver(batch)  # outside the lock; raises when the batch could not be written out: nothing is recorded
    record_type = "offer" if hold else "flush"
    with file_lock(layout.lock(JOURNAL_LOCK)):
        append_jsonl(
            layout.vault_journal, {"type": record_type, "batch_id": batch_id, "at": at, "seqs": seqs}
        )
    return batch


def ack(layout: Layout, batch_id: str, *, now: datetime) -> AckOutcome:
    """Mark a held batch delivered. Acknowledging it twice is a no-op; an unknown id is refused."""
    at = format_utc(now)
    with file_lock(layout.lock(JOURNAL_LOCK)):
        state = read_journal(layout)
        if batch_id not in state.offers:
            if batch_id in state.flushed.values():
                return {"batch_id": batch_id, "acknowledged": [], "already": True}
            raise Refused("VAULT_BATCH_UNKNOWN", "no held batch has this id")
        seqs = [seq for seq in state.offers[batch_id] if seq not in state.flushed]
        if seqs:
            append_jsonl(
                layout.vault_journal, {"type": "flush", "batch_id": batch_id, "at": at, "seqs": seqs}
            )
    return {"batch_id": batch_id, "acknowledged": seqs, "already": not seqs}


def list_entries(layout: Layout) -> VaultListing:
    """Every journaled entry with its state (``pending`` or the batch that took it)."""
    state = read_journal(layout)  # readers need no lock: appends are whole lines, torn ones skipped
    rows: list[JsonObject] = []
    for entry in state.entries:
        batch = state.flushed.get(entry.seq)
        held = state.offered.get(entry.seq)
        rows.append(
            {
                **_batch_entry(entry),
                "at": entry.row.get("at"),
                "state": "flushed" if batch else ("offered" if held else "pending"),
                "batch_id": batch or held,
            }
        )
    pending = sum(1 for r in rows if r["state"] != "flushed")
    return {"entries": rows, "pending": pending, "unreadable_lines": state.problems}
