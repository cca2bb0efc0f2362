"""From log files to one verified record per model call, then to groups.

Order of work: read every file (Claude by modification time then path, so a resumed copy comes after
its original; Codex parents before their forks and subagents), drop duplicate Claude calls across
all files (the reference note's rules), then walk each context thread in file order to compute the
carried history, and finally filter and group.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import assert_never

import msgspec

from toolkit.usage import claude, codex
from toolkit.usage.model import Boundary, Call, FileLog, replaces
from toolkit.usage.sources import LogFile, discover


class By(StrEnum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    SESSION = "session"
    PROJECT = "project"
    MODEL = "model"


class Ledger(msgspec.Struct):
    """Every kept call (file order within a file), the logs they came from, and what could not be verified."""

    calls: list[Call] = msgspec.field(default_factory=list)
    logs: list[FileLog] = msgspec.field(default_factory=list)
    duplicates: int = 0
    skipped_lines: int = 0
    files: int = 0
    bytes: int = 0
    files_without_usage: int = 0
    resumed_from: dict[str, str] = msgspec.field(
        default_factory=dict
    )  # session -> the session its history came from


# -- reading -----------------------------------------------------------------------------------------


def _depth(head: codex.Head, by_id: Mapping[str, codex.Head]) -> int:
    level, seen = 0, set()
    while head.parent and head.parent in by_id and head.parent not in seen and level < 64:
        seen.add(head.parent)
        head, level = by_id[head.parent], level + 1
    return level


def _add(ledger: Ledger, log: LogFile, parsed: FileLog | None) -> None:
    if parsed is None:
        return
    ledger.files += 1
    ledger.bytes += log.size
    ledger.skipped_lines += parsed.skipped_lines
    ledger.duplicates += parsed.duplicates
    ledger.files_without_usage += parsed.no_usage
    ledger.logs.append(parsed)


def _read(log: LogFile) -> bytes | None:
    """The whole file in one read of its size (cheaper than a buffered read for multi-megabyte logs)."""
    try:
        fd = os.open(log.path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)
        if len(data) <= size:
            return data
        parts = [data]  # the file grew while being read (a live session): take what is there
        while more := os.read(fd, 1 << 20):
            parts.append(more)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_logs(files: Iterable[LogFile], jobs: int = 1) -> Ledger:
    """Read every file once (a fork or subagent rollout twice: it waits for its parent's totals).

    ``jobs`` > 1 parses the files in that many worker processes (fork, where the platform has it);
    the result is the same as with one, since deduplication and threads run here afterwards.
    """
    # hundreds of thousands of small acyclic records: the cyclic collector would only rescan them
    paused = gc.isenabled()
    gc.disable()
    try:
        return _read_logs(list(files), jobs)
    finally:
        if paused:
            gc.enable()


def _head_of(log: LogFile) -> codex.Head:
    """The leading ``session_meta`` lines of a rollout, read without reading the whole file."""
    try:
        with open(log.path, "rb") as handle:
            data = handle.read(1 << 16)
            while data.count(b"\n") < 3 and len(data) < (1 << 24):
                more = handle.read(1 << 20)
                if not more:
                    break
                data += more
    except OSError:
        return codex.Head()
    return codex.head(data)


def auto_jobs(files: list[LogFile]) -> int:
    """Worker processes for ``--jobs 0``: up to 4 (one per CPU) when there is enough to share."""
    if sum(f.size for f in files) < (64 << 20) or not hasattr(os, "fork"):
        return 1
    return max(1, min(4, os.cpu_count() or 1))


def _read_logs(files: list[LogFile], jobs: int) -> Ledger:
    ledger = Ledger()
    claude_files = sorted((f for f in files if f.source == "claude"), key=lambda f: (f.mtime, str(f.path)))
    codex_files = sorted((f for f in files if f.source == "codex"), key=lambda f: (f.archived, str(f.path)))
    heads = {log: _head_of(log) for log in codex_files}
    live = {heads[f].session or f.path.stem for f in codex_files if not f.archived}
    # an archived copy of a session that is still in sessions/ adds nothing
    codex_files = [f for f in codex_files if not (f.archived and (heads[f].session or f.path.stem) in live)]
    plain = [f for f in codex_files if not heads[f].parent]
    children = [f for f in codex_files if heads[f].parent]
    wanted = {heads[f].parent or "" for f in children}
    work = [*claude_files, *plain]
    if jobs == 0:
        jobs = auto_jobs(work)
    parsed, totals = _parse(work, wanted, jobs)
    for log, result in zip(work, parsed, strict=True):
        _add(ledger, log, result)
    registry = codex.Registry(totals={k: set(v) for k, v in totals.items()})
    by_id = {h.session: h for h in heads.values() if h.session}
    for log in sorted(children, key=lambda f: (_depth(heads[f], by_id), f.archived, str(f.path))):
        data = _read(log)
        if data is not None:
            _add(ledger, log, codex.read(log, 0, registry, data))
    for index, entry in enumerate(ledger.logs):
        for item in entry.items:
            if isinstance(item, Call):
                item.log = index
    _dedup_claude(ledger)
    _threads(ledger)
    return ledger


_WORK: list[LogFile] = []  # the files a forked worker reads (set before the fork; workers only read it)
_WANTED: set[str] = set()
Parsed = tuple[list[FileLog | None], dict[str, list[tuple[int, int, int, int, int]]]]


def _parse_one(log: LogFile, registry: codex.Registry) -> FileLog | None:
    data = _read(log)
    if data is None:
        return None
    return claude.read(log, 0, data) if log.source == "claude" else codex.read(log, 0, registry, data)


def _parse(work: list[LogFile], wanted: set[str], jobs: int) -> Parsed:
    if jobs <= 1 or len(work) < 2:
        registry = codex.Registry()
        done = [_parse_one(log, registry) for log in work]
        return done, {k: list(v) for k, v in registry.totals.items() if k in wanted}
    import multiprocessing

    global _WORK, _WANTED
    _WORK, _WANTED = work, wanted
    # balance by size: biggest files first, dealt round-robin into several chunks per worker
    order = sorted(range(len(work)), key=lambda i: -work[i].size)
    chunks = [order[k :: jobs * 4] for k in range(jobs * 4) if order[k :: jobs * 4]]
    results: list[FileLog | None] = [None] * len(work)
    totals: dict[str, list[tuple[int, int, int, int, int]]] = {}
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for blob in pool.imap_unordered(_work, chunks):
                pairs, part = msgspec.msgpack.decode(blob, type=_Chunk)
                for index, result in pairs:
                    results[index] = result
                for key, values in part.items():
                    totals.setdefault(key, []).extend(values)
    finally:
        _WORK, _WANTED = [], set()
    return results, totals


_Chunk = tuple[list[tuple[int, FileLog]], dict[str, list[tuple[int, int, int, int, int]]]]


def _work(indexes: list[int]) -> bytes:
    """Worker: parse the given files; return them (and the totals forks will need) as msgpack."""
    registry = codex.Registry()
    out = []
    for index in indexes:
        result = _parse_one(_WORK[index], registry)
        if result is not None:
            out.append((index, result))
    totals = {k: list(v) for k, v in registry.totals.items() if k in _WANTED}
    return msgspec.msgpack.encode((out, totals))


def load(source: str, environ: Mapping[str, str], jobs: int = 1) -> Ledger:
    return read_logs(discover(source, environ), jobs)


# -- deduplication -------------------------------------------------------------------------------------


def _dedup_claude(ledger: Ledger) -> None:
    exact: dict[int, Call] = {}
    by_id: dict[int, list[Call]] = {}
    for log in ledger.logs:
        if log.source != "claude":
            continue
        for item in log.items:
            if not isinstance(item, Call) or item.key is None or item.msg_id is None:
                continue
            existing = exact.get(item.key)
            if existing is None:
                # /btw sidechain replays reuse a parent's message id with a new request id
                for other in by_id.get(item.msg_id, ()):
                    if item.sidechain or other.sidechain:
                        existing = other
                        break
            if existing is None:
                exact[item.key] = item
                by_id.setdefault(item.msg_id, []).append(item)
                continue
            ledger.duplicates += 1
            loser, winner = (existing, item) if replaces(item, existing) else (item, existing)
            loser.dropped = True
            if winner is item:
                exact[item.key] = item
                if existing.key is not None:
                    exact[existing.key] = item
                peers = by_id.setdefault(item.msg_id, [])
                peers[:] = [item if c is existing else c for c in peers]
            if loser.session != winner.session and not loser.sidechain and not winner.sidechain:
                later = ledger.logs[max(loser.log, winner.log)].session
                earlier = ledger.logs[min(loser.log, winner.log)].session
                if later != earlier:
                    ledger.resumed_from.setdefault(later, earlier)


# -- threads and carried history --------------------------------------------------------------------------


def _threads(ledger: Ledger) -> None:
    """Carried history per context thread: read beyond the base context B of its segment.

    B is the prompt of the first call after the thread starts, after a compaction, or (Claude) after
    a resumed file's copied history; carried = max(0, cache read - B).
    """
    for log in ledger.logs:
        kept: list[Call | Boundary] = []
        base: dict[str, int] = {}
        pending = 0
        pending_resume = False
        last: Call | None = None
        copied = False
        for item in log.items:
            if isinstance(item, Boundary):
                kept.append(item)
                if item.kind == "compaction":
                    pending += 1
                    base.pop(log.path_hash, None)
                else:
                    pending_resume = True
                continue
            if item.dropped:
                copied = copied or (log.session in ledger.resumed_from and not item.sidechain)
                continue
            if item.thread not in base:
                base[item.thread] = item.context
            item.carried = max(0, item.cache_read - base[item.thread])
            if item.thread == log.path_hash or item.source == "codex":
                item.compactions, pending = item.compactions + pending, 0
            if (copied or pending_resume) and not item.subagent:
                item.resume, copied, pending_resume = True, False, False
            ledger.calls.append(item)
            kept.append(item)
            last = item
        if pending and last is not None:
            last.compactions_after += pending
        log.items = kept  # duplicates are no longer needed: memory follows the kept calls


# -- filtering and grouping ---------------------------------------------------------------------------------


def resolve_tz(name: str | None) -> tzinfo:
    """``None`` is the machine's local zone (as ccusage); otherwise an IANA name."""
    if name is None:
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else UTC
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        from toolkit.core.errors import InvalidInput

        raise InvalidInput("USAGE_BAD_TIMEZONE", "--timezone must be an IANA zone name such as UTC") from None


class LocalDays:
    """UTC timestamps to local dates, memoised per minute (zone offsets are whole minutes)."""

    def __init__(self, zone: tzinfo) -> None:
        self.zone = zone
        self.cache: dict[str, date] = {}
        self.texts: dict[str, str] = {}

    def __call__(self, ts: str) -> date:
        key = ts[:16] if ts[-1:] == "Z" else ts[:16] + ts[-6:]
        day = self.cache.get(key)
        if day is None:
            moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
            day = moment.astimezone(self.zone).date()
            self.cache[key] = day
        return day

    def text(self, ts: str) -> str:
        """The local day as ``YYYY-MM-DD`` (the day grouping's key, memoised the same way)."""
        key = ts[:16] if ts[-1:] == "Z" else ts[:16] + ts[-6:]
        found = self.texts.get(key)
        if found is None:
            found = self.texts[key] = self(ts).isoformat()
        return found


def parse_day(value: str, what: str) -> date:
    from toolkit.core.errors import InvalidInput

    text = value.strip()
    if len(text) == 8 and text.isdigit():
        text = f"{text[:4]}-{text[4:6]}-{text[6:]}"
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput("USAGE_BAD_DATE", f"{what} must be a date as YYYY-MM-DD or YYYYMMDD") from None


def select(
    ledger: Ledger,
    days: LocalDays,
    since: date | None = None,
    until: date | None = None,
    project: str | None = None,
) -> list[Call]:
    if project is None and since is None and until is None:
        return ledger.calls
    out = []
    for call in ledger.calls:
        if project is not None and call.project != project:
            continue
        if since is not None or until is not None:
            day = days(call.ts)
            if (since is not None and day < since) or (until is not None and day > until):
                continue
        out.append(call)
    return out


def key_function(by: By, days: LocalDays) -> Callable[[Call], str]:
    match by:
        case By.DAY:
            return lambda c: days.text(c.ts)
        case By.WEEK:
            return lambda c: (lambda d: (d - timedelta(days=d.weekday())).isoformat())(days(c.ts))
        case By.MONTH:
            return lambda c: days.text(c.ts)[:7]
        case By.SESSION:
            return lambda c: c.session
        case By.PROJECT:
            return lambda c: c.project
        case By.MODEL:
            return lambda c: c.model
        case _:
            assert_never(by)


class Totals(msgspec.Struct):
    calls: int = 0
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    reasoning: int | None = None
    carried: int = 0
    compactions: int = 0
    subagent_tokens: int = 0
    not_final: int = 0
    sources: set[str] = msgspec.field(default_factory=set)

    def add(self, call: Call) -> None:
        self.calls += 1
        self.input += call.input
        self.output += call.output
        self.cache_write += call.cache_write
        self.cache_read += call.cache_read
        if call.reasoning is not None:
            self.reasoning = (self.reasoning or 0) + call.reasoning
        self.carried += call.carried
        self.compactions += call.compactions + call.compactions_after
        if call.subagent:
            self.subagent_tokens += call.tokens
        self.not_final += not call.final
        self.sources.add(call.source)

    @property
    def prompt(self) -> int:
        return self.input + self.cache_write + self.cache_read

    def as_dict(self) -> dict[str, object]:
        tokens = self.prompt + self.output
        return {
            "calls": self.calls,
            "input": self.input,
            "output": self.output,
            "cache_write": self.cache_write,
            "cache_read": self.cache_read,
            "reasoning": self.reasoning,
            "reread_share": round(self.cache_read / self.prompt, 4) if self.prompt else None,
            "carried_history": self.carried,
            "compactions": self.compactions,
            "subagent_share": round(self.subagent_tokens / tokens, 4) if tokens else None,
            "calls_without_final_usage": self.not_final,
        }


def group(calls: Iterable[Call], key: Callable[[Call], str]) -> dict[str, Totals]:
    groups: dict[str, Totals] = {}
    for call in calls:
        name = key(call)
        totals = groups.get(name)
        if totals is None:
            totals = groups[name] = Totals()
        totals.add(call)
    return dict(sorted(groups.items()))


def total(calls: Iterable[Call]) -> Totals:
    out = Totals()
    for call in calls:
        out.add(call)
    return out
