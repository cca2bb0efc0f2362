"""``cm-usage-report``: verified model usage of the last N runs, from the private global log.

Drop-in for the public CM report (same options, JSON fields, text lines and exit code 0):

* dedup first by ``event_id`` (fallback ``file:line``), then by (run_id, call_id): a second usage
  row for one call is invalid;
* invalid usage: a malformed row, managed (``openai-compatible`` adapter or ``native-cli-terminal``
  source) usage with no claim, an
  ambiguous claim, usage not after its claim, an identity mismatch; each is counted in
  ``invalid_calls`` and explained on stderr;
* claims without a valid completion are listed as unresolved and never counted as calls;
* observed and unavailable calls are kept apart; missing usage is never guessed and no money is
  ever computed.

Streaming: each run's log is read in two passes (its claims first, then its usage rows judged
on the fly) and folded into bounded aggregates before the next run is opened. Per usage row only
its event id and call id are kept, so memory grows with the largest run, not with the whole log
(the reference keeps every usage row of every run until the end). Large selections are folded
by worker processes (``--jobs``), one run per worker at a time. Because the writer derives
``event_id`` from content that includes the run id, event-id dedup per run is exact for writer
rows. Lines that do not mention a model event are not parsed at all. Additions to the
reference's JSON: ``invalid_reasons`` (count per reason) and ``unreadable_lines`` (torn or
invalid JSON lines that mention a model event).
Standard library only.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO, cast

from toolkit.cm.run_logs import log_home
from toolkit.core import cm_usage_format as usage_format
from toolkit.core.display import shown
from toolkit.core.strictjson import json_depth_exceeds
from toolkit.infra.argparser import QuietArgumentParser
from toolkit.infra.boundedio import FileRefused, json_line, open_regular
from toolkit.infra.output import guarded

TYPE_CHECKING = False  # type checkers read True
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeGuard

    from toolkit.cm.shapes import (
        NativeComponents,
        NativeField,
        ReportSummary,
        UnavailableGroup,
        UnresolvedGroup,
        UsageGroup,
        UsageReport,
    )
    from toolkit.core.jsontypes import JsonObject

PROG = "cm-usage-report"
# the row's format is usage_format's; the reasons this report gives are the reference report's
TOKEN_FIELDS = usage_format.TOTALLED_TOKEN_FIELDS
OUTCOMES = usage_format.OUTCOMES
IDENTITY_FIELDS = usage_format.IDENTITY_FIELDS
CALL_ID = re.compile(usage_format.CALL_ID_PATTERN)
MANAGED_ADAPTER = usage_format.MANAGED_ADAPTER
MANAGED_SOURCE = usage_format.MANAGED_SOURCE  # a native CLI's usage also follows its own claim
# reported per field for native CLI usage: reasoning is a subset of output, cache counts are separate
NATIVE_FIELDS = usage_format.TOKEN_FIELDS
DISCLAIMER = (
    "- 缺失 usage 保持 unavailable；未完成 claim 单独报告且不计调用/Token；未推测缺失用量，也未换算费用。"
)


def _shown(text: object) -> str:
    """Log-controlled text (paths, model names, stages) with control and format characters escaped."""

    return shown(text)


@dataclass
class RunRef:
    run_id: str
    status: str
    updated_at: datetime
    log_file: str


def _parse_at(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


_SCAN: Callable[[str, int], tuple[object, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
# (the C scanner; not in the type stubs)


def _parse_line(raw: bytes) -> object:
    """``json.loads`` of one line, minus its per-call overhead; same strictness (ValueError).

    A line nested deeper than the bounded reader's cap is a ValueError too (skipped and reported),
    never a RecursionError; the check is two C-speed counts on an ordinary line.
    """
    if json_depth_exceeds(raw):
        raise ValueError("nested too deep")
    text = raw.decode("utf-8")
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        return json.loads(text)  # leading whitespace, or invalid: the full parser decides
    if text[end:].strip():
        raise ValueError("extra data after the JSON value")
    return value


def _json_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        handle = open_regular(path, what="a run log")  # a FIFO or a directory is never read
    except FileRefused as exc:
        raise OSError(exc.code) from None  # reported as "cannot read" like any unreadable log
    assert handle is not None  # missing_ok is off: absence raised above
    with handle:
        yield from enumerate(handle, start=1)


def load_run_refs(home: Path, warn: TextIO) -> list[RunRef]:
    """Runs of ``index.jsonl``, newest first (latest record per run; ``done`` is sticky)."""
    refs: dict[str, RunRef] = {}
    index = home / "index.jsonl"
    if not index.is_file():
        return []
    try:
        lines = list(_json_lines(index))
    except OSError as exc:
        warn.write(f"warning: cannot read index.jsonl: {type(exc).__name__}\n")
        return []
    for number, raw in lines:
        row = _index_row(raw, number, warn)
        if row is not None:
            _take_ref(refs, row)
    return sorted(refs.values(), key=lambda ref: ref.updated_at, reverse=True)


def _index_row(raw: bytes, number: int, warn: TextIO) -> JsonObject | None:
    """The JSON object on one line of ``index.jsonl``; None (with a warning when the line is not
    blank and not JSON) for anything else."""
    try:
        row = json_line(raw)
    except ValueError:
        if raw.strip():
            warn.write(f"warning: invalid JSON at index.jsonl:{number}\n")
        return None
    return row if isinstance(row, dict) else None


def _take_ref(refs: dict[str, RunRef], row: JsonObject) -> None:
    """Fold one index record into ``refs``: the latest record of a run wins, ``done`` is sticky;
    a record without a run id, log file or valid time is skipped."""
    run_id, log_file, at = row.get("run_id"), row.get("log_file"), _parse_at(row.get("at"))
    if not isinstance(run_id, str) or not isinstance(log_file, str) or at is None:
        return
    previous = refs.get(run_id)
    status = "done" if row.get("status") == "done" or (previous and previous.status == "done") else "running"
    if previous is None or at >= previous.updated_at:
        refs[run_id] = RunRef(run_id, status, at, log_file)
    elif status == "done":
        previous.status = "done"


def safe_log_path(home: Path, relative: str, warn: TextIO) -> Path | None:
    """``home / relative`` when it stays inside the log home; otherwise a warning and None."""
    candidate = (home / relative).resolve(strict=False)
    try:
        candidate.relative_to(home)
    except ValueError:
        warn.write("warning: ignored log path outside log home\n")
        return None
    return candidate


def _count(value: object) -> TypeGuard[int]:
    return type(value) is int and value >= 0  # JSON booleans are not counts


# (call_id, identity, usage_state, outcome, model, model_source, (in, out, cache read, cache write) | None,
#  duration_ms | None): what a valid usage row keeps; the parsed dict is dropped at once.
Compact = tuple[str, tuple[str, ...], str, str, str, str, "tuple[int, int, int, int] | None", "int | None"]
_USAGE_FIELDS = (
    *IDENTITY_FIELDS,
    "call_id",
    "phase",
    "outcome",
    "duration_ms",
    "usage_state",
    *TOKEN_FIELDS,
    "effective_model",
)
_STR_ONLY = {str}
_UNAVAILABLE_FORBIDDEN = frozenset(usage_format.TOKEN_FIELDS)


def _identity_or_reason(
    row: Mapping[str, object], values: tuple[object, ...] | None = None
) -> tuple[str, ...] | str:
    # map/set/in run in C: this is the hot path of a million-row report
    ident = tuple(map(row.get, IDENTITY_FIELDS)) if values is None else values
    if set(map(type, ident)) == _STR_ONLY and "" not in ident:
        return cast("tuple[str, ...]", ident)
    for name in IDENTITY_FIELDS:
        value = row.get(name)
        if not isinstance(value, str) or not value:
            return f"invalid {name}"
    return "invalid identity"  # pragma: no cover - unreachable: the fast path accepted every field


def _cache_count(row: Mapping[str, object], name: str, value: object) -> int | None:
    if value is None:
        return None if name in row else 0  # absent is 0; an explicit null is malformed
    return value if _count(value) else None


def check_usage(row: Mapping[str, object]) -> Compact | str:
    """A valid ``model_usage`` row in compact form, or the reason it is malformed.

    It runs once per row: the call id and identity checks are inline, one helper call for the rest.
    """
    values = tuple(map(row.get, _USAGE_FIELDS))
    call_id, phase, outcome, duration, state, inp, out, read, write, effective = values[8:]
    if type(call_id) is not str or not CALL_ID.fullmatch(call_id):
        return "invalid call_id"
    if phase != "complete":
        return "invalid phase"
    ident = values[:8]
    if set(map(type, ident)) != _STR_ONLY or "" in ident:
        reason = _identity_or_reason(row)  # a reason, since the fast check failed
        return reason if isinstance(reason, str) else "invalid identity"
    counts = _counts_or_reason(row, outcome, duration, state, inp, out, read, write)
    if isinstance(counts, str):
        return counts
    model: str
    if type(effective) is str and effective:
        model, source = effective, "effective"
    else:  # requested_model is an identity field, so it is a non-empty string here
        model, source = cast(str, ident[5]), "requested"
    return cast(Compact, (call_id, ident, state, outcome, model, source, counts, duration))


def _counts_or_reason(
    row: Mapping[str, object],
    outcome: object,
    duration: object,
    state: object,
    inp: object,
    out: object,
    read: object,
    write: object,
) -> tuple[int, int, int, int] | None | str:
    """Past the call id and identity: why the outcome, duration or counts are malformed (in that
    order), else by usage state an observed row's (input, output, cache read, cache write) counts,
    or None for an unavailable row (which must carry no token count)."""
    if outcome not in OUTCOMES:
        return "invalid outcome"
    if duration is not None and not (type(duration) is int and duration >= 0):
        return "invalid duration"
    if state == "observed":
        return _observed_counts(row, inp, out, read, write)
    if state == "unavailable":
        if not row.keys().isdisjoint(_UNAVAILABLE_FORBIDDEN):
            return "unavailable row contains token counts"
        return None
    return "invalid usage state"


def _observed_counts(
    row: Mapping[str, object], inp: object, out: object, read: object, write: object
) -> tuple[int, int, int, int] | str:
    """The (input, output, cache read, cache write) counts of an observed row, or why they are malformed."""
    if not (type(inp) is int and inp >= 0):
        return "invalid input count"
    if not (type(out) is int and out >= 0):
        return "invalid output count"
    cache = _cache_counts(row, read, write)
    if cache is None:
        return "invalid cache count"
    read, write = cache
    if "reasoning_tokens" in row:  # rare: looked up only when present
        problem = _reasoning_reason(row["reasoning_tokens"], out)
        if problem is not None:
            return problem
    return (inp, out, read, write)


def _cache_counts(row: Mapping[str, object], read: object, write: object) -> tuple[int, int] | None:
    """(cache read, cache write) of an observed row (absent is 0), or None when either is not a
    count (an explicit null included)."""
    if read is None or write is None:  # absent is 0; an explicit null is malformed
        read = _cache_count(row, "cache_read_tokens", read)
        write = _cache_count(row, "cache_write_tokens", write)
    elif not (type(read) is int and read >= 0 and type(write) is int and write >= 0):
        return None
    if read is None or write is None:
        return None
    return read, write


def _reasoning_reason(reasoning: object, out: int) -> str | None:
    """Why a present ``reasoning_tokens`` is malformed: not a count, or more than the output."""
    if not (type(reasoning) is int and reasoning >= 0):
        return "invalid cache count"  # the reference's wording for any bad count
    if reasoning > out:
        return "invalid reasoning subset"
    return None


def usage_row_error(row: Mapping[str, object]) -> str | None:
    """Why a ``model_usage`` row is malformed, or None."""
    result = check_usage(row)
    return result if isinstance(result, str) else None


@dataclass
class Totals:
    """Aggregates across runs: bounded by the number of distinct groups, not by events."""

    summary: ReportSummary
    groups: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    unavailable: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    unresolved: dict[tuple[str, ...], int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    unreadable: int = 0
    # native CLI usage: [calls, then (tokens, observed calls) for each of NATIVE_FIELDS]
    native: list[int] = field(default_factory=lambda: [0] * (1 + 2 * len(NATIVE_FIELDS)))

    @classmethod
    def empty(cls, runs: int) -> Totals:
        return cls(
            {
                "runs": runs,
                "observed_calls": 0,
                "unavailable_calls": 0,
                "unresolved_claims": 0,
                "invalid_calls": 0,
                "outcomes": dict.fromkeys(OUTCOMES, 0),
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
                "duration_ms": 0,
                "duration_observed_calls": 0,
            }
        )

    def invalid(self, reason: str, where: str, warn: TextIO, message: str) -> None:
        self.summary["invalid_calls"] += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        warn.write(f"warning: {_shown(message)} at {_shown(where)}\n")


@dataclass
class _RunState:
    """One run's claims and the ids seen so far; dropped once the run is folded into the totals."""

    claims: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    ambiguous: set[str] = field(default_factory=set)
    seen_ids: set[str] = field(default_factory=set)
    seen_calls: set[str] = field(default_factory=set)
    completed: set[str] = field(default_factory=set)


def _unreadable(totals: Totals, raw: bytes, where: str, warn: TextIO) -> None:
    totals.unreadable += 1
    kind = "torn last line" if not raw.endswith(b"\n") else "invalid JSON"
    warn.write(f"warning: {kind} at {_shown(where)}\n")


def _read_claims(path: Path, rel: str, run_id: str, totals: Totals, warn: TextIO) -> _RunState:
    """Pass 1: the run's claims (about one line in ten), so pass 2 can judge usage on the fly."""
    state = _RunState()
    for number, raw in _json_lines(path):
        if b'"model_call"' not in raw:
            continue
        try:
            row = _parse_line(raw)
        except ValueError:
            _unreadable(totals, raw, f"{rel}:{number}", warn)
            continue
        if type(row) is dict and row.get("run_id") == run_id and row.get("event") == "model_call":
            _take_claim(state, row, number, f"{rel}:{number}", warn)
    return state


def _fold_run(path: Path, rel: str, run_id: str, totals: Totals, warn: TextIO) -> None:
    """Both passes over one run's log. Nothing per usage row is kept except its two ids.

    Same verdicts as collecting every row first: claims are all known before any usage is judged,
    and usage rows are judged in file order.
    """
    state = _read_claims(path, rel, run_id, totals, warn)
    for number, raw in _json_lines(path):
        row = _usage_row(raw, f"{rel}:{number}", run_id, totals, warn)
        if row is None:
            continue
        event_id = row.get("event_id")
        key = event_id if isinstance(event_id, str) and event_id else f"{rel}:{number}"
        if key in state.seen_ids:
            continue
        state.seen_ids.add(key)
        usage = check_usage(row)
        where = f"{rel}:{number}"
        if isinstance(usage, str):
            totals.invalid(usage, where, warn, f"ignored malformed model_usage ({usage})")
            continue
        if usage[0] in state.seen_calls:
            totals.invalid("duplicate call_id", where, warn, "ignored duplicate model_usage call_id")
            continue
        state.seen_calls.add(usage[0])
        if not _claim_holds(state, usage, number, where, totals, warn):
            continue
        _add_usage(totals, usage)
        if usage[1][6] == MANAGED_SOURCE:
            _add_native(totals.native, row, observed=usage[2] == "observed")
    _count_unresolved(state, totals)


def _count_unresolved(state: _RunState, totals: Totals) -> None:
    """Count the run's claims that no valid usage row completed, per claimed identity."""
    for call_id, (_, ident) in state.claims.items():
        if call_id not in state.completed:
            key6 = (ident[0], ident[2], ident[3], ident[4], ident[5], ident[6])
            totals.unresolved[key6] = totals.unresolved.get(key6, 0) + 1


def _usage_row(raw: bytes, where: str, run_id: str, totals: Totals, warn: TextIO) -> JsonObject | None:
    """The ``model_usage`` row of ``run_id`` on this line, or None (a torn or undecodable line that
    pass 1 did not report is reported here)."""
    if b'"model_' not in raw:
        _report_if_torn(totals, raw, where, warn)
        return None
    claim_line = b'"model_call"' in raw
    if claim_line and b'"model_usage"' not in raw:
        return None  # pass 1 handled it
    try:
        row = _parse_line(raw)
    except ValueError:
        if not claim_line:  # pass 1 reported the others
            _unreadable(totals, raw, where, warn)
        return None
    if type(row) is not dict or row.get("run_id") != run_id or row.get("event") != "model_usage":
        return None
    return row


def _report_if_torn(totals: Totals, raw: bytes, where: str, warn: TextIO) -> None:
    """Report a line neither pass parses when it is torn (no newline) and not blank."""
    if not raw.endswith(b"\n") and raw.strip():
        _unreadable(totals, raw, where, warn)


def _claim_holds(
    state: _RunState, usage: Compact, number: int, where: str, totals: Totals, warn: TextIO
) -> bool:
    """Whether a valid usage row agrees with its run's claim (a managed call needs one)."""
    call_id, ident = usage[0], usage[1]
    claim = state.claims.get(call_id)
    if claim is None:
        if ident[4] == MANAGED_ADAPTER or ident[6] == MANAGED_SOURCE:
            totals.invalid(
                "managed usage without claim", where, warn, "ignored managed model_usage without prior claim"
            )
            return False
        return True
    if call_id in state.ambiguous:
        reason = "ambiguous claim"
    elif number <= claim[0]:
        reason = "usage before claim"
    elif claim[1] != ident:
        reason = "identity mismatch"
    else:
        state.completed.add(call_id)
        return True
    totals.invalid(reason, where, warn, f"ignored model_usage with mismatched claim identity ({reason})")
    return False


def _take_claim(state: _RunState, row: JsonObject, number: int, where: str, warn: TextIO) -> None:
    call_id = row.get("call_id")
    if type(call_id) is not str or not CALL_ID.fullmatch(call_id):
        _malformed_claim("invalid call_id", where, warn)
        return
    if row.get("phase") != "claimed":
        _malformed_claim("invalid phase", where, warn)
        return
    ident = _identity_or_reason(row)
    if isinstance(ident, str):
        _malformed_claim(ident, where, warn)
        return
    existing = state.claims.get(call_id)
    if existing is None:
        state.claims[call_id] = (number, ident)
    elif existing[1] != ident:
        state.ambiguous.add(call_id)
        warn.write(f"warning: conflicting model_call identity at {_shown(where)}\n")


def _malformed_claim(reason: str, where: str, warn: TextIO) -> None:
    warn.write(f"warning: ignored malformed model_call at {_shown(where)} ({_shown(reason)})\n")


def _add_usage(totals: Totals, usage: Compact) -> None:
    _, ident, state, outcome, model, source, counts, duration = usage
    summary = totals.summary
    summary["outcomes"][outcome] += 1
    if duration is not None:
        summary["duration_ms"] += duration
        summary["duration_observed_calls"] += 1
    if counts is None:  # unavailable: calls and duration only, never a guessed count
        summary["unavailable_calls"] += 1
        bucket = totals.unavailable.get((ident[0], ident[2], ident[3], outcome))
        if bucket is None:
            bucket = totals.unavailable[(ident[0], ident[2], ident[3], outcome)] = [0, 0, 0]
        bucket[0] += 1
        if duration is not None:
            bucket[1] += duration
            bucket[2] += 1
        return
    key = (ident[0], ident[2], ident[3], ident[4], model, source, outcome)
    group = totals.groups.get(key)
    if group is None:
        group = totals.groups[key] = [0, 0, 0, 0, 0, 0, 0]
    inp, out, read, write = counts
    group[0] += 1
    group[1] += inp
    group[2] += out
    group[3] += read
    group[4] += write
    if duration is not None:
        group[5] += duration
        group[6] += 1
    summary["observed_calls"] += 1
    summary["input_tokens"] += inp
    summary["output_tokens"] += out
    summary["cache_read_tokens"] += read
    summary["cache_write_tokens"] += write


def _add_native(native: list[int], row: Mapping[str, object], *, observed: bool) -> None:
    """A field counts as observed only when the row reports it: a missing one is never 0."""
    native[0] += 1
    if not observed:
        return
    for slot, name in enumerate(NATIVE_FIELDS):
        value = row.get(name)
        if type(value) is int:  # check_usage accepted the row: a present value is a count, else None
            native[1 + 2 * slot] += value
            native[2 + 2 * slot] += 1


def native_components(native: Sequence[int]) -> NativeComponents:
    """The reference's ``native_components`` block: per field, tokens (None when never observed)."""
    calls = native[0]
    fields: dict[str, NativeField] = {}
    for slot, name in enumerate(NATIVE_FIELDS):
        tokens, observed = native[1 + 2 * slot], native[2 + 2 * slot]
        fields[name] = {
            "tokens": tokens if observed else None,
            "observed_calls": observed,
            "unavailable_calls": calls - observed,
        }
    return {
        "calls": calls,
        "reasoning_is_output_subset": True,
        "cache_counts_are_separate": True,
        "fields": fields,
    }


PARALLEL_MIN_BYTES = 32 * 1024 * 1024


def _partial(task: tuple[str, str, str]) -> tuple[Totals, str]:
    """One run folded on its own (in a worker process): its totals and its warnings, in order."""
    path, rel, run_id = task
    totals, warn = Totals.empty(0), io.StringIO()
    try:
        _fold_run(Path(path), rel, run_id, totals, warn)
    except OSError as exc:
        warn.write(f"warning: cannot read {_shown(rel)}: {type(exc).__name__}\n")
    return totals, warn.getvalue()


def _merge(into: Totals, part: Totals) -> None:
    _merge_summary(into.summary, part.summary)
    for mine, theirs in ((into.groups, part.groups), (into.unavailable, part.unavailable)):
        for group, counts in theirs.items():
            mine[group] = [a + b for a, b in zip(mine.get(group, [0] * len(counts)), counts, strict=True)]
    for unresolved, n in part.unresolved.items():
        into.unresolved[unresolved] = into.unresolved.get(unresolved, 0) + n
    for reason, n in part.reasons.items():
        into.reasons[reason] = into.reasons.get(reason, 0) + n
    into.unreadable += part.unreadable
    into.native = [a + b for a, b in zip(into.native, part.native, strict=True)]


def _merge_summary(into: ReportSummary, part: ReportSummary) -> None:
    """Add one run's summary counts (outcomes per outcome) to ``into``; the run count stays."""
    into["observed_calls"] += part["observed_calls"]
    into["unavailable_calls"] += part["unavailable_calls"]
    into["unresolved_claims"] += part["unresolved_claims"]
    into["invalid_calls"] += part["invalid_calls"]
    for outcome, n in part["outcomes"].items():
        into["outcomes"][outcome] += n
    into["input_tokens"] += part["input_tokens"]
    into["output_tokens"] += part["output_tokens"]
    into["cache_read_tokens"] += part["cache_read_tokens"]
    into["cache_write_tokens"] += part["cache_write_tokens"]
    into["duration_ms"] += part["duration_ms"]
    into["duration_observed_calls"] += part["duration_observed_calls"]


def _jobs(requested: int, paths: Sequence[Path]) -> int:
    """``--jobs 0`` (auto): one worker per core (at most 4) once the selected logs are large."""
    if requested > 0:
        return requested
    if len(paths) < 2 or sum(p.stat().st_size for p in paths) < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(4, os.cpu_count() or 1))


def _fold_items(home: Path, refs: Sequence[RunRef], warn: TextIO) -> list[tuple[str, str, str] | str]:
    """Per run in order: (log path, log file as recorded, run id) to fold, or the warning for a
    run whose log is missing or outside the log home."""
    items: list[tuple[str, str, str] | str] = []
    for ref in refs:
        path = safe_log_path(home, ref.log_file, warn)
        if path is None or not path.is_file():
            items.append(f"warning: missing run log for {ref.run_id}\n")
        else:
            items.append((str(path), ref.log_file, ref.run_id))
    return items


def _fold_in_workers(
    items: list[tuple[str, str, str] | str],
    tasks: list[tuple[str, str, str]],
    workers: int,
    totals: Totals,
    warn: TextIO,
) -> None:
    """Fold the runs in worker processes; merge their totals and write their warnings in run order."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = iter(pool.map(_partial, tasks))
        for item in items:
            if isinstance(item, str):
                warn.write(item)
                continue
            part, text = next(results)
            _merge(totals, part)
            warn.write(text)


def _fold_in_turn(items: list[tuple[str, str, str] | str], totals: Totals, warn: TextIO) -> None:
    """Fold the runs one after the other in this process."""
    for item in items:
        if isinstance(item, str):
            warn.write(item)
            continue
        try:
            _fold_run(Path(item[0]), item[1], item[2], totals, warn)
        except OSError as exc:
            warn.write(f"warning: cannot read {_shown(item[1])}: {type(exc).__name__}\n")


def build_report(home: Path, refs: Sequence[RunRef], warn: TextIO, *, jobs: int = 1) -> UsageReport:
    """Fold each run in turn; the result has the reference's JSON shape (plus two fields).

    With ``jobs > 1`` runs are folded in worker processes (each holds one run at a time) and
    merged in run order, so output and warnings are the same as the sequential fold.
    """
    totals = Totals.empty(len(refs))
    items = _fold_items(home, refs, warn)
    tasks = [item for item in items if isinstance(item, tuple)]
    workers = _jobs(jobs, [Path(t[0]) for t in tasks])
    if workers > 1:
        _fold_in_workers(items, tasks, workers, totals, warn)
    else:
        _fold_in_turn(items, totals, warn)
    groups: list[UsageGroup] = [
        {
            "workflow": k[0],
            "stage": k[1],
            "role": k[2],
            "adapter": k[3],
            "model": k[4],
            "model_source": k[5],
            "outcome": k[6],
            "calls": calls,
            "input_tokens": inp,
            "output_tokens": out,
            "cache_read_tokens": read,
            "cache_write_tokens": write,
            "duration_ms": duration,
            "duration_observed_calls": timed,
        }
        for k, (calls, inp, out, read, write, duration, timed) in sorted(
            totals.groups.items(), key=lambda kv: (*kv[0][:5], kv[0][6])
        )
    ]
    unavailable: list[UnavailableGroup] = [
        {
            "workflow": k[0],
            "stage": k[1],
            "role": k[2],
            "outcome": k[3],
            "calls": calls,
            "duration_ms": duration,
            "duration_observed_calls": timed,
        }
        for k, (calls, duration, timed) in sorted(totals.unavailable.items())
    ]
    unresolved: list[UnresolvedGroup] = [
        {
            "workflow": k[0],
            "stage": k[1],
            "role": k[2],
            "adapter": k[3],
            "requested_model": k[4],
            "source": k[5],
            "claims": n,
        }
        for k, n in sorted(totals.unresolved.items())
    ]
    totals.summary["unresolved_claims"] = sum(totals.unresolved.values())
    report: UsageReport = {
        "schema_version": 1,
        "source": "cm-global-log-mirror",
        "missing_usage_policy": "unavailable-not-guessed",
        "unresolved_claim_policy": "reported-not-counted",
        "summary": totals.summary,
        "groups": groups,
        "unavailable_groups": unavailable,
        "unresolved_groups": unresolved,
    }
    if totals.native[0]:
        report["native_components"] = native_components(totals.native)
    report["invalid_reasons"] = dict(sorted(totals.reasons.items()))
    report["unreadable_lines"] = totals.unreadable
    return report


def render_text(report: UsageReport) -> str:
    """The reference's text lines (plus one line per unavailable group)."""
    s = report["summary"]
    lines = [
        f"CM API Usage（最近 {s['runs']} 次运行）",
        f"- calls: observed {s['observed_calls']} | unavailable {s['unavailable_calls']} | "
        f"unresolved claims {s['unresolved_claims']} | invalid {s['invalid_calls']}",
        f"- tokens: input {s['input_tokens']} | output {s['output_tokens']} | "
        f"cache read {s['cache_read_tokens']} | cache write {s['cache_write_tokens']}",
        "- outcomes: " + " | ".join(f"{o} {s['outcomes'][o]}" for o in OUTCOMES),
    ]
    if s["duration_observed_calls"]:
        lines.append(
            f"- observed duration: {s['duration_ms']} ms across {s['duration_observed_calls']} calls"
        )
    for g in report["groups"]:
        lines.append(
            f"- {g['workflow']}/{g['stage']} | {g['role']} | {g['adapter']} | "
            f"{g['model']} ({g['model_source']}) | "
            f"{g['outcome']} | calls {g['calls']}, in {g['input_tokens']}, out {g['output_tokens']}, "
            f"cache-read {g['cache_read_tokens']}, cache-write {g['cache_write_tokens']}"
        )
    for u in report["unavailable_groups"]:
        lines.append(
            f"- unavailable: {u['workflow']}/{u['stage']} | {u['role']} | {u['outcome']} | calls {u['calls']}"
        )
    for c in report["unresolved_groups"]:
        lines.append(
            f"- unresolved: {c['workflow']}/{c['stage']} | {c['role']} | {c['adapter']} | "
            f"{c['requested_model']} | claims {c['claims']}"
        )
    native = report.get("native_components")
    for name, value in (native["fields"] if native is not None else {}).items():
        known = value["tokens"] if value["tokens"] is not None else "unavailable"
        lines.append(
            f"- native {name}: {known}; observed {value['observed_calls']}, "
            f"unavailable {value['unavailable_calls']}"
        )
    lines.append(DISCLAIMER)
    return "\n".join(map(_shown, lines)) + "\n"  # model names, stages, roles come from the logs


def _positive(value: str) -> int:
    parsed = int(value)
    if parsed < 1:
        raise ValueError("must be at least 1")
    return parsed


def _non_negative(value: str) -> int:
    parsed = int(value)
    if parsed < 0:
        raise ValueError("must be at least 0")
    return parsed


def build_parser() -> argparse.ArgumentParser:
    parser = QuietArgumentParser(prog=PROG, description="Show verified model usage for recent CM runs.")
    parser.add_argument("--last", type=_positive, default=10)
    parser.add_argument("--log-home", help="Override CM_WORKFLOW_LOG_HOME.")
    parser.add_argument("--json", action="store_true", help="Print machine-readable JSON.")
    parser.add_argument(
        "--jobs",
        type=_non_negative,
        default=0,
        help="Worker processes (0: automatic, by log size and cores).",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console script ``cm-usage-report``, under the stdout guard (``toolkit.infra.output``)."""

    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(encoding="utf-8", errors="backslashreplace")
    try:
        ns = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    home = log_home(os.environ, ns.log_home)
    report = build_report(home, load_run_refs(home, sys.stderr)[: ns.last], sys.stderr, jobs=ns.jobs)
    if ns.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        sys.stdout.write(render_text(report))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
