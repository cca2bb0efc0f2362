"""From log files to one verified record per model call, a session at a time, then to groups.

Order of work: the files are planned into sessions (Claude: a session file with its ``subagents/``
files; Codex: a rollout with its forks and spawned threads, parents first), sessions oldest first
(Claude by the first and then the last timestamp inside its logs, so a resumed copy comes after its
original whatever the files' modification times say). Each session is read
whole, its duplicate Claude calls dropped (``dedup``: the full rules inside it, digests across
sessions), each context thread walked in file order for the carried history, and its kept calls
handed on (``stream``) before the next session is read. Nothing per call outlives its session but
the dedup digests, so memory follows the largest session, not the history.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, assert_never

import msgspec

from toolkit.core.errors import InvalidInput
from toolkit.usage import claude, codex
from toolkit.usage.dedup import Probe, Seen, answers_none, dedup_session, fresh
from toolkit.usage.model import Boundary, Call, FileLog
from toolkit.usage.sources import LogFile, discover, folder_name, stem

if TYPE_CHECKING:
    from toolkit.usage.shapes import UsageTotals


class By(StrEnum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    SESSION = "session"
    PROJECT = "project"
    MODEL = "model"


class Ledger(msgspec.Struct):
    """What a run read: the counts always; the kept calls only when collected (``read_logs``).

    ``logs`` keeps one small record per file (its calls are dropped once its session is done).
    """

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


class Unit(msgspec.Struct):
    """One session's files, read and folded together: every file a call of the session can be in."""

    source: str
    files: list[LogFile]
    wanted: set[str] = msgspec.field(default_factory=set)  # Codex ids whose totals the unit's forks need
    first: str = ""  # Claude: the first time inside its logs (a resumed copy shares its original's)
    settle: bool = False  # Claude: its place among the units of the same first time is found as they are
    # read (by their last times, from the bytes read anyway: see ``_fold_units``)


# -- planning: which files make a session, in which order ----------------------------------------------


class Known(msgspec.Struct):
    """What planning reads at the start of files, read beforehand (in worker processes): per file,
    a Claude log's first and last times, a Codex rollout's own id and parent. A file not here is
    read when the plan needs it."""

    stamps: dict[LogFile, tuple[str | None, str | None]] = msgspec.field(default_factory=dict)
    heads: dict[LogFile, tuple[str | None, str | None]] = msgspec.field(default_factory=dict)


def _claude_units(files: list[LogFile], known: Known | None = None, settle: bool = False) -> list[Unit]:
    """A session's file and its subagent files (same session id, any root); older ``agent-*`` files alone."""
    groups: dict[str, list[LogFile]] = {}
    for log in sorted(files, key=lambda f: (f.mtime, f.path)):
        session, _subagent, _folder, name = claude.where(log)
        session = session or name  # ``claude.session_of``
        key = log.path if name.startswith("agent-") and session == name else session
        groups.setdefault(key, []).append(log)
    units = [Unit("claude", group) for group in groups.values()]
    _by_age(units, known or Known(), settle)
    return units


def _by_age(units: list[Unit], known: Known, settle: bool = False) -> None:
    """Sessions in the order of the times written inside their logs: the first, then the last.

    A resumed session's file starts with the history it copied (same ids, same times) and goes on
    past it, so it comes after the session it copied: its first time is no earlier, and on a tie
    its last time is later (read only for sessions whose first times tie). Modification times,
    which a copy or a restore changes, only break a remaining tie or stand in for a log with no
    timestamp. A session's own file speaks for it (its subagents' files when it has none).

    With ``settle``, the last times of sessions whose first times tie (and are not ``known``) are
    not read here: such a run of units is left in order of modification time and path, marked
    ``settle``, and put in order when it is read (``_settled``).
    """
    own = [_own(u) for u in units]
    read = known.stamps
    settle = settle and not read
    firsts = [_first_among(files, read) for files in own]
    count: dict[str, int] = {}
    for first in firsts:
        count[first] = count.get(first, 0) + 1
    lasts = [
        "" if count[first] == 1 or settle else _last_among(files, read)
        for first, files in zip(firsts, own, strict=True)
    ]
    if settle:
        for unit, first in zip(units, firsts, strict=True):
            unit.settle = count[first] > 1
    _sort_by_age(units, firsts, lasts)


def _sort_by_age(units: list[Unit], firsts: list[str], lasts: list[str]) -> None:
    """Each unit given its first time, then all sorted by first time, then ``_age_key``."""
    keys = {
        id(unit): (first, *_age_key(unit, last))
        for unit, first, last in zip(units, firsts, lasts, strict=True)
    }
    for unit, first in zip(units, firsts, strict=True):
        unit.first = first
    units.sort(key=lambda u: keys[id(u)])


def _first_of(log: LogFile, read: Mapping[LogFile, tuple[str | None, str | None]]) -> str:
    """A Claude file's first time: as ``prepare`` read it, else read now; its modification time when
    it has none."""
    found = read.get(log) if read else None
    return (found[0] if found is not None else claude.first_stamp(log.path, log.size)) or _iso(log.mtime)


def _last_of(log: LogFile, read: Mapping[LogFile, tuple[str | None, str | None]]) -> str:
    """A Claude file's last time: as ``prepare`` read it, else read now from its end; its
    modification time when it has none."""
    found = read.get(log) if read else None
    return (found[1] if found is not None else claude.last_stamp(log.path)) or _iso(log.mtime)


def _first_among(files: list[LogFile], read: Mapping[LogFile, tuple[str | None, str | None]]) -> str:
    """The earliest first time of the files that speak for a session."""
    return _first_of(files[0], read) if len(files) == 1 else min(_first_of(f, read) for f in files)


def _last_among(files: list[LogFile], read: Mapping[LogFile, tuple[str | None, str | None]]) -> str:
    """The latest last time of the files that speak for a session."""
    return _last_of(files[0], read) if len(files) == 1 else max(_last_of(f, read) for f in files)


def _own(unit: Unit) -> list[LogFile]:
    """The files that speak for a Claude session's age: its own (its subagents' when it has none)."""
    files = unit.files
    if len(files) == 1:
        return files
    return [f for f in files if folder_name(f.path) != "subagents"] or files


def _age_key(unit: Unit, last: str) -> tuple[str, float, str]:
    """After the first time: the last time, then modification time and path (``_by_age``)."""
    files = unit.files
    if len(files) == 1:
        return last, files[0].mtime, files[0].path
    return last, max(f.mtime for f in files), min(f.path for f in files)


def _iso(mtime: float) -> str:
    """A modification time written as Claude Code writes its timestamps (comparable with them)."""
    try:
        moment = datetime.fromtimestamp(mtime, UTC)
    except (OverflowError, OSError, ValueError):
        moment = datetime.fromtimestamp(0, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _head_of(log: LogFile, keep: dict[LogFile, codex.Head] | None = None) -> codex.Head:
    """The leading ``session_meta`` lines of a rollout, read without reading the whole file (kept in
    ``keep`` when every line it looks at was read whole: the read of the whole file needs no other)."""
    try:
        fd = os.open(log.path, os.O_RDONLY)
    except OSError:
        return codex.Head()
    try:
        data = _read_upto(fd, 1 << 14)
        whole = _head_read(data)
        if not whole:
            data += _read_upto(fd, (1 << 16) - len(data))
            whole = _head_read(data)
        while not whole and len(data) < (1 << 24):
            more = _read_upto(fd, 1 << 20)
            if not more:
                break
            data += more
            whole = _head_read(data)
    except OSError:
        return codex.Head()
    finally:
        os.close(fd)
    found = codex.head(data)
    if keep is not None and whole:
        keep[log] = found
    return found


def _read_upto(fd: int, size: int) -> bytes:
    """``size`` bytes, fewer only at the end of the file (a read may return less)."""
    data = os.read(fd, size)
    while 0 < len(data) < size:
        more = os.read(fd, size - len(data))
        if not more:
            break
        data += more
    return data


def _head_read(data: bytes) -> bool:
    """Whether ``data`` holds every line ``codex.head`` looks at whole: the leading lines up to the
    first one that is no ``session_meta`` line, at most three (a search to each newline)."""
    start = 0
    for _ in range(3):
        end = data.find(b"\n", start)
        if end == -1:
            return False
        if data.find(b'"type":"session_meta"', start, end) == -1:
            return True
        start = end + 1
    return True


def _codex_units(
    files: list[LogFile], known: Known | None = None, keep: dict[LogFile, codex.Head] | None = None
) -> list[Unit]:
    """Families: a rollout, then its forks and spawned threads (depth first), so a child finds its
    parent's totals and the totals are dropped with the family. ``sessions/`` beats an archived copy.
    The heads read here go to ``keep`` (see ``_head_of``)."""
    by_id, first_head = _codex_threads(files, known, keep)
    kids, parent_of = _codex_links(by_id, first_head)
    units: list[Unit] = []
    visited: set[str] = set()
    roots = [sid for sid in by_id if sid not in parent_of]
    leftovers = [sid for sid in by_id if sid in parent_of]  # only reached this way in a cycle
    for root in [*roots, *leftovers]:
        if root not in visited:
            units.append(_codex_family(root, by_id, kids, visited))
    return units


def _codex_threads(
    files: list[LogFile], known: Known | None, keep: dict[LogFile, codex.Head] | None
) -> tuple[dict[str, list[LogFile]], dict[str, tuple[str | None, str | None]]]:
    """Each thread's files (``sessions/`` first, then by path; an archived copy of a live session
    left out) and the (id, parent) its first file's head names, by thread id (the file's stem when
    the head names none)."""
    ordered = sorted(files, key=lambda f: (f.archived, f.path))
    heads = _codex_heads(ordered, known, keep)
    ids = [head[0] or stem(log.path) for head, log in zip(heads, ordered, strict=True)]
    live = {sid for sid, log in zip(ids, ordered, strict=True) if not log.archived}
    by_id: dict[str, list[LogFile]] = {}
    first_head: dict[str, tuple[str | None, str | None]] = {}
    for sid, head, log in zip(ids, heads, ordered, strict=True):
        if log.archived and sid in live:
            continue  # an archived copy of a live session
        found = by_id.get(sid)
        if found is None:
            by_id[sid] = [log]
            first_head[sid] = head
        else:
            found.append(log)
    return by_id, first_head


def _codex_heads(
    ordered: list[LogFile], known: Known | None, keep: dict[LogFile, codex.Head] | None
) -> list[tuple[str | None, str | None]]:
    """Each file's (id, parent), by its place in ``ordered`` (lists, not dicts keyed by the file: no
    hashing): as ``prepare`` found it, else read from its head now."""
    read = (known or Known()).heads
    return [(read.get(log) if read else None) or _id_and_parent(_head_of(log, keep)) for log in ordered]


def _codex_links(
    by_id: dict[str, list[LogFile]], first_head: dict[str, tuple[str | None, str | None]]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(each thread's children, each child's parent): a thread is a child when its head names a
    parent other than itself that is among the threads read."""
    kids: dict[str, list[str]] = {}
    parent_of: dict[str, str] = {}
    for sid in by_id:
        parent = first_head[sid][1]
        if parent and parent != sid and parent in by_id:
            parent_of[sid] = parent
            kids.setdefault(parent, []).append(sid)
    return kids, parent_of


def _codex_family(
    root: str, by_id: dict[str, list[LogFile]], kids: dict[str, list[str]], visited: set[str]
) -> Unit:
    """One family's unit: ``root``'s files, then its descendants' not yet ``visited``, depth first in
    the children's order (marked visited here); the members with children keep their totals."""
    family: list[LogFile] = []
    members: set[str] = set()
    stack = [root]
    while stack:
        sid = stack.pop()
        if sid in visited:
            continue
        visited.add(sid)
        members.add(sid)
        family.extend(by_id[sid])
        stack.extend(reversed(kids.get(sid, [])))
    return Unit("codex", family, {sid for sid in members if sid in kids})


def _id_and_parent(head: codex.Head) -> tuple[str | None, str | None]:
    return head.session, head.parent


def plan(
    files: Iterable[LogFile],
    known: Known | None = None,
    settle: bool = False,
    heads: dict[LogFile, codex.Head] | None = None,
) -> list[Unit]:
    """Every session's files, Claude sessions first (oldest first), then Codex families (``settle``:
    see ``_by_age``; the units are then to be read by ``_fold_units``). The rollout heads read for
    the plan go to ``heads``, for the read of the rollouts (``_parse_unit``)."""
    every = list(files)
    return [
        *_claude_units([f for f in every if f.source == "claude"], known, settle),
        *_codex_units([f for f in every if f.source == "codex"], known, heads),
    ]


_PREPARED: list[LogFile] | None = None  # set before the fork: the files whose starts the workers read
_PREPARE_FILES = 128  # files per task


def _prepare_task(task: int) -> list[tuple[str | None, str | None]]:
    """Worker: what planning needs from each file of one task (see ``Known``)."""
    assert _PREPARED is not None
    out = []
    for log in _PREPARED[task * _PREPARE_FILES : (task + 1) * _PREPARE_FILES]:
        if log.source == "codex":
            out.append(_id_and_parent(_head_of(log)))
        elif folder_name(log.path) != "subagents":
            out.append(claude.stamps(log.path))
        else:  # read only for a session without a file of its own
            out.append((None, None))
    return out


def prepare(files: list[LogFile], jobs: int) -> Known:
    """The starts (and Claude ends) of the files read in ``jobs`` worker processes before planning;
    a task whose result does not arrive is left to the plan, which reads what it needs itself."""
    from toolkit.infra import forkmap

    global _PREPARED
    known = Known()
    count = -(-len(files) // _PREPARE_FILES)
    _PREPARED = files
    results = forkmap.ordered_map(count, _prepare_task, jobs)
    try:
        for task, result in enumerate(results):
            if not isinstance(result, list):
                continue
            for log, found in zip(
                files[task * _PREPARE_FILES : (task + 1) * _PREPARE_FILES], result, strict=True
            ):
                if log.source == "codex":
                    known.heads[log] = found
                elif folder_name(log.path) != "subagents":
                    known.stamps[log] = found
    finally:
        results.close()
        _PREPARED = None
    return known


def auto_jobs(files: list[LogFile]) -> int:
    """Worker processes for ``--jobs 0``: up to 4 (one per CPU) when there is enough to share."""
    if sum(f.size for f in files) < (64 << 20) or not hasattr(os, "fork"):
        return 1
    return max(1, min(4, os.cpu_count() or 1))


# -- parsing a unit ----------------------------------------------------------------------------------------


def _read(log: LogFile) -> bytes | None:
    """The whole file in one read of its size (cheaper than a buffered read for multi-megabyte logs)."""
    try:
        fd = os.open(log.path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = log.size  # as the walk found it (no second stat): a file grown since is read on below
        data = os.read(fd, size + 1)
        if len(data) <= size:
            return data
        parts = [data]  # the file grew (a live session): take what is there
        while more := os.read(fd, 1 << 20):
            parts.append(more)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)


def _parse_one(
    log: LogFile, registry: codex.Registry, heads: dict[LogFile, codex.Head] | None = None
) -> FileLog | None:
    data = _read(log)
    if data is None:
        return None
    if log.source == "claude":
        return claude.read(log, 0, data)
    return codex.read(log, 0, registry, data, heads.pop(log, None) if heads else None)


def _parse_unit(unit: Unit, heads: dict[LogFile, codex.Head] | None = None) -> list[FileLog | None]:
    """The unit's files parsed (``heads``: rollout heads read for the plan, taken out as used)."""
    registry = codex.Registry(wanted=unit.wanted)  # one family's totals, dropped with it
    return [_parse_one(log, registry, heads) for log in unit.files]


_Parsed = list[FileLog | None]


# -- one session: deduplication, threads and carried history ------------------------------------------------


class _Walk:
    """One file's context threads in file order: carried history is the cache read beyond the base
    context B of its segment, B the prompt of the first call after the thread starts, after a
    compaction, or (Claude) after a resumed file's copied history; carried = max(0, cache read - B)."""

    def __init__(self, log: FileLog, resumed: bool) -> None:
        self.log = log
        self.resumed = resumed  # the session's history was copied from another session
        self.base: dict[str, int] = {}
        self.pending = 0  # compactions not yet attached to a call
        self.pending_resume = False  # a resume marker (Codex, same rollout) waiting for the next call
        self.copied = False  # copied history (dropped duplicates) waiting for the first own call
        self.last: Call | None = None

    def boundary(self, item: Boundary) -> None:
        """A compaction starts a new segment of the main thread; a resume marks the next call."""
        if item.dropped:
            return  # a copy of a compaction counted in the session it happened in
        if item.kind == "compaction":
            self.pending += 1
            self.base.pop(self.log.path_hash, None)
        else:
            self.pending_resume = True

    def dropped(self, item: Call) -> None:
        """A duplicate: in a resumed session, copied history that the next own call follows."""
        self.copied = self.copied or (self.resumed and not item.sidechain)

    def call(self, item: Call) -> None:
        """A kept call: its carried history, the compactions before it, whether it resumes."""
        carried = item.cache_read - self.base.setdefault(item.thread, item.context)
        if carried > 0:
            item.carried = carried
        if self.pending and (item.thread == self.log.path_hash or item.source == "codex"):
            item.compactions, self.pending = item.compactions + self.pending, 0
        if (self.copied or self.pending_resume) and not item.subagent:
            item.resume, self.copied, self.pending_resume = True, False, False
        self.last = item

    def finish(self) -> None:
        """Compactions after the last call belong to it (nothing followed them)."""
        if self.pending and self.last is not None:
            self.last.compactions_after += self.pending


def _walk(log: FileLog, index: int, resumed: bool, out: list[Call]) -> None:
    """One file's items in order; its kept calls go to ``out``, pointing at ``ledger.logs[index]``."""
    walk = _Walk(log, resumed)
    call, append = walk.call, out.append
    for item in log.items:
        if isinstance(item, Boundary):
            walk.boundary(item)
        elif item.dropped:
            walk.dropped(item)
        else:
            item.log = index
            call(item)
            append(item)
    walk.finish()
    log.items = []  # the calls go on to the caller; the file keeps only its counts


def _note(ledger: Ledger, log: LogFile, parsed: FileLog) -> int:
    """A file read: its counts join the run's; returns its index in ``ledger.logs``."""
    ledger.files += 1
    ledger.bytes += log.size
    ledger.skipped_lines += parsed.skipped_lines
    ledger.duplicates += parsed.duplicates
    ledger.files_without_usage += parsed.no_usage
    ledger.logs.append(parsed)
    return len(ledger.logs) - 1


def _session(unit: Unit, parsed: _Parsed, ledger: Ledger, seen: Seen) -> list[Call]:
    logs: list[FileLog] = []
    indexes: list[int] = []
    for source, result in zip(unit.files, parsed, strict=True):
        if result is not None:
            indexes.append(_note(ledger, source, result))
            logs.append(result)
    if unit.source == "claude" and logs:
        ledger.duplicates += dedup_session(logs, seen, ledger.resumed_from)
    kept: list[Call] = []
    for log, index in zip(logs, indexes, strict=True):
        _walk(log, index, log.session in ledger.resumed_from, kept)
    return kept


class Sink(Protocol):
    """Where kept calls go: a fold whose state can be taken out in one process and merged in another.

    ``merge`` must give what ``add_all`` of the same calls would have given (``first_log``: where the
    merged unit's files start in the receiving ledger's ``logs``, for calls that point at them).
    """

    def add_all(self, calls: list[Call]) -> None: ...

    def take(self) -> Any: ...

    def merge(self, state: Any, first_log: int) -> None: ...


S = TypeVar("S", bound=Sink)


class _Mergeable(Protocol):
    def merge(self, other: Any, /) -> None: ...


K = TypeVar("K")
M = TypeVar("M", bound=_Mergeable)


def merge_parts(into: dict[K, M], parts: dict[K, M]) -> None:
    """Add parts made in another process, key by key (a key new here takes the part itself)."""
    for name, part in parts.items():
        found = into.get(name)
        if found is None:
            into[name] = part
        else:
            found.merge(part)


class Collect:
    """The sink that keeps the calls themselves (optionally only those ``wanted``) in ``calls``."""

    def __init__(self, calls: list[Call] | None = None, wanted: Callable[[Call], bool] | None = None) -> None:
        self.calls: list[Call] = [] if calls is None else calls
        self.wanted = wanted

    def add_all(self, calls: list[Call]) -> None:
        wanted = self.wanted
        self.calls.extend(calls if wanted is None else [c for c in calls if wanted(c)])

    def take(self) -> list[Call]:
        taken, self.calls = self.calls, []
        return taken

    def merge(self, state: list[Call], first_log: int) -> None:
        for call in state:
            call.log += first_log
        self.calls.extend(state)


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Many small acyclic records: the cyclic collector would only rescan them."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def stream(files: Iterable[LogFile], ledger: Ledger) -> Iterator[list[Call]]:
    """Each session's kept calls as soon as the session is read, in this process; ``ledger`` gets
    the run's counts."""
    seen = Seen()
    with no_cyclic_gc():
        for unit in plan(files):
            yield _session(unit, _parse_unit(unit), ledger, seen)


def fold_logs(files: Iterable[LogFile], ledger: Ledger, sink_for: Callable[[Ledger], S], jobs: int = 1) -> S:
    """Every session's kept calls into ``sink_for(ledger)``; the sink is returned.

    With ``jobs`` > 1 (0: ``auto_jobs``) sessions are read ahead in that many worker processes
    (fork, where the platform has it): each worker reads a whole session, deduplicates it and
    walks its threads, folds its calls into a sink of its own and sends back only that sink's
    state, the counts, and the dedup questions it asked. Here, in plan order, a session's result
    is merged when the earlier sessions answer every one of its questions "not seen" (always, for
    Codex families and for sessions that copy no history); otherwise its parsed files (sent along
    for Claude sessions) are folded here, in its turn, with everything before it known. With
    ``jobs`` 0 and ``by_source`` the Codex rollouts are read in one worker instead while the Claude
    sessions are read here (``_fold_by_source``). The result equals ``jobs=1``.
    """
    every = list(files)
    ahead = jobs if jobs != 0 else auto_jobs(every)
    sink = sink_for(ledger)
    with no_cyclic_gc():
        if ahead <= 1:  # one process
            heads: dict[LogFile, codex.Head] = {}
            _fold_units(plan(every, settle=True, heads=heads), ledger, sink, Seen(), heads)
        elif jobs == 0 and by_source(every, ahead):
            _fold_by_source(every, ledger, sink, sink_for)
        else:
            _fold_sessions_ahead(every, ledger, sink, sink_for, ahead, jobs)
    return sink


def _fold_sessions_ahead(
    every: list[LogFile], ledger: Ledger, sink: Sink, sink_for: Callable[[Ledger], Any], ahead: int, jobs: int
) -> None:
    """The sessions read ahead in worker processes (the files' starts read in ``ahead`` workers
    first when there are many), unless the plan leaves fewer than two workers or one unit: then
    folded here."""
    units = plan(every, prepare(every, ahead) if len(every) > _PREPARE_FILES else None)
    if jobs == 0:
        jobs = auto_jobs([f for u in units for f in u.files])
    if jobs > 1 and len(units) > 1:  # where processes cannot be forked, forkmap hands every task back
        _fold_ahead(units, ledger, sink, sink_for, Seen(), jobs)
    else:
        _fold_units(units, ledger, sink, Seen())


# -- one worker per source: Claude sessions and Codex families never share a call --------------------------

_SPLIT_FILE_BYTES = 1 << 20  # files this small on average: the per-file work outweighs the pool's gain
_SPLIT_SHARE = 0.2  # each source at least this share of the bytes, or the split gains little


def by_source(files: list[LogFile], workers: int) -> bool:
    """Whether ``--jobs 0`` reads the Codex rollouts in one worker process while this one reads the
    Claude sessions, instead of the session pool of ``workers`` processes: both sources carry a
    fair share of the bytes, and either the files are small (their per-file work dominates, and
    the pool's per-session bookkeeping costs more than it saves) or the pool would have two
    workers (one CPU each way, without the pool's bookkeeping)."""
    total = sum(f.size for f in files)
    claude_bytes = sum(f.size for f in files if f.source == "claude")
    return (
        bool(files)
        and min(claude_bytes, total - claude_bytes) >= _SPLIT_SHARE * total
        and (workers <= 2 or total < _SPLIT_FILE_BYTES * len(files))
    )


class _SourceRead(msgspec.Struct, array_like=True):
    """What a worker sends back for one source: its files' counts and its sink's state (pickled)."""

    counts: Ledger
    state: bytes


_SOURCE_WIRE = msgspec.msgpack.Decoder(_SourceRead)


def _fold_units(
    units: list[Unit], ledger: Ledger, sink: Sink, seen: Seen, heads: dict[LogFile, codex.Head] | None = None
) -> None:
    """Every unit read, deduplicated and folded in plan order; a run of units marked ``settle`` is
    put in order as it is read (``_settled``); ``heads``: see ``plan``."""
    index = 0
    while index < len(units):
        unit = units[index]
        if not unit.settle:
            sink.add_all(_session(unit, _parse_unit(unit, heads), ledger, seen))
            index += 1
            continue
        end = index + 1
        while end < len(units) and units[end].settle and units[end].first == unit.first:
            end += 1
        for settled, parsed in _settled(units[index:end]):
            sink.add_all(_session(settled, parsed, ledger, seen))
        index = end


def _settled(run: list[Unit]) -> list[tuple[Unit, _Parsed]]:
    """Claude sessions with the same first time, in the order ``_by_age`` gives them (by their last
    times), each with its parsed files. The last times come from the bytes read for parsing (up to
    ``_TASK_TIES`` bytes of such sessions are held parsed until the run is in order); a longer run
    reads them from the files' ends first, as the plan does, and is parsed in its turn."""
    if sum(f.size for unit in run for f in unit.files) > _TASK_TIES:
        return _settled_from_ends(run)
    keyed: list[tuple[tuple[str, float, str], Unit, _Parsed]] = []
    for unit in run:
        last, parsed = _parsed_with_last(unit)
        keyed.append((_age_key(unit, last), unit, parsed))
    keyed.sort(key=lambda item: item[0])
    return [(unit, parsed) for _key, unit, parsed in keyed]


def _settled_from_ends(run: list[Unit]) -> list[tuple[Unit, _Parsed]]:
    """A run too long to hold parsed: put in order by the last times read from the files' ends,
    then each session parsed in its turn."""
    lasts = {id(unit): max(claude.last_stamp(f.path) or _iso(f.mtime) for f in _own(unit)) for unit in run}
    ordered = sorted(run, key=lambda u: _age_key(u, lasts[id(u)]))
    return [(unit, _parse_unit(unit)) for unit in ordered]


def _parsed_with_last(unit: Unit) -> tuple[str, _Parsed]:
    """(a session's last time, from the bytes of the files that speak for it; each file parsed, None
    for one that could not be read)."""
    own = {id(f) for f in _own(unit)}
    last = ""
    parsed: _Parsed = []
    for log in unit.files:
        data = _read(log)
        if id(log) in own:
            stamp = claude.last_stamp_in(data) if data is not None else None
            last = max(last, stamp or _iso(log.mtime))
        parsed.append(None if data is None else claude.read(log, 0, data))
    return last, parsed


def _read_source(files: list[LogFile], sink_for: Callable[[Ledger], Any]) -> bytes:
    """Worker: one source's files planned, read and folded in plan order, as one process would."""
    counts = Ledger()
    sink = sink_for(counts)
    _fold_source(files, counts, sink, Seen())
    state = pickle.dumps(sink.take(), protocol=pickle.HIGHEST_PROTOCOL)
    return _AHEAD_WIRE.encode(_SourceRead(counts, state))


def _fold_source(files: list[LogFile], ledger: Ledger, sink: Sink, seen: Seen) -> None:
    heads: dict[LogFile, codex.Head] = {}
    _fold_units(plan(files, settle=True, heads=heads), ledger, sink, seen, heads)


def _fold_by_source(
    files: list[LogFile], ledger: Ledger, sink: Sink, sink_for: Callable[[Ledger], Any]
) -> None:
    """Codex families in a worker process while the Claude sessions are read here, merged in plan
    order (Claude first). Deduplication and resume marks are Claude's alone and Codex families
    read only their own files, so each source folded apart gives what one process gives. When the
    worker does not report, the Codex files are read here."""
    claude_files = [f for f in files if f.source == "claude"]
    codex_files = [f for f in files if f.source == "codex"]
    aside = _Aside(lambda: _read_source(codex_files, sink_for))
    seen = Seen()
    try:
        _fold_source(claude_files, ledger, sink, seen)
        result = aside.result()
    finally:
        aside.close()  # stopped early (an error, Ctrl-C): the worker is ended and reaped
    if result is None:
        _fold_source(codex_files, ledger, sink, seen)
        return
    read = _SOURCE_WIRE.decode(result)
    first = len(ledger.logs)
    _merge_counts(ledger, read.counts)
    sink.merge(pickle.loads(read.state), first)


class _Aside:
    """``work()`` run in a forked worker process while this one goes on; ``result()`` waits for
    its bytes. None when there is no fork here, the worker failed or it was killed: the caller
    then does the work itself."""

    def __init__(self, work: Callable[[], bytes]) -> None:
        self.pid, self.fd = 0, -1
        if not hasattr(os, "fork"):
            return
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:  # no process to be had: the work is done here
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # pragma: no cover - the worker's side, after the fork
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it at once
                os.close(read)
                view = memoryview(work())
                while view:
                    view = view[os.write(write, view) :]
                os._exit(0)
            finally:  # an exception: exit 1, no traceback, no flush of the parent's buffers
                os._exit(1)
        os.close(write)
        self.pid, self.fd = pid, read

    def result(self) -> bytes | None:
        """The worker's bytes once it has ended well, else None (waits for it)."""
        if not self.pid:
            return None
        chunks = []
        while chunk := os.read(self.fd, 1 << 20):
            chunks.append(chunk)
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        return b"".join(chunks) if os.waitstatus_to_exitcode(status) == 0 else None

    def close(self) -> None:
        """Ends a worker still running (the caller stopped early) and reaps it; closes the pipe."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = 0
        if self.fd != -1:
            os.close(self.fd)
            self.fd = -1


class _Probed(msgspec.Struct, array_like=True):
    """What one session read ahead asked and leaves (see ``dedup.Probe``), and how it was walked."""

    asked: tuple[list[int], list[int], list[int]]  # its dedup questions the task's sessions did not answer
    left: tuple[str, list[tuple[int, bool]], list[int]] | None  # what it leaves for later sessions
    sessions: list[str]  # the sessions its files name
    walked: list[str]  # those walked as resumed ones
    parsed: bytes | None = None  # Claude: its files as parsed (msgpack), to be folded here if need be


class _Ahead(msgspec.Struct):
    """What a worker sends back for one task: its sessions read in turn, as if the task's sessions
    were the first, folded into one sink."""

    counts: Ledger  # the task's files' counts and small records (no calls)
    units: list[_Probed]  # per session, in plan order
    state: bytes  # the task's sink's state (pickled: its type is the sink's)


# set before the fork, read by the workers: the units, the tasks (consecutive units), the sink factory
_AHEAD: tuple[list[Unit], list[range], Callable[[Ledger], Any]] | None = None
_TASK_BYTES = 1 << 20  # a task is consecutive units of at least this many bytes of logs...
_TASK_UNITS = 32  # ... or this many units (small sessions share a task: fewer reports, fewer wake-ups)
_TASK_TIES = 64 << 20  # Claude sessions with the same first time share a task up to this many bytes
_PARSED = msgspec.msgpack.Decoder(_Parsed)
_AHEAD_WIRE = msgspec.msgpack.Encoder()
_AHEAD_READ = msgspec.msgpack.Decoder(_Ahead)


def _tasks(units: list[Unit]) -> list[range]:
    """The units cut into tasks of consecutive units, in plan order.

    Claude sessions that start at the same time (a resumed session starts with the history it
    copied) are kept in one task (up to ``_TASK_TIES`` bytes), so the worker that reads the copy
    has read its original just before and answers the copy's questions itself.
    """
    tasks: list[range] = []
    start = size = 0
    for index, unit in enumerate(units):
        size += sum(f.size for f in unit.files)
        if size < _TASK_TIES and _tied_to_next(units, index):
            continue
        if size >= _TASK_BYTES or index + 1 - start >= _TASK_UNITS:
            tasks.append(range(start, index + 1))
            start, size = index + 1, 0
    if start < len(units):
        tasks.append(range(start, len(units)))
    return tasks


def _tied_to_next(units: list[Unit], index: int) -> bool:
    """Whether the next unit starts at the same (known) time as the one at ``index``."""
    after = units[index + 1] if index + 1 < len(units) else None
    return after is not None and bool(after.first) and after.first == units[index].first


def _read_ahead(task: int) -> bytes:
    """Worker: one task's units in plan order, each read, deduplicated as if only the sessions
    before it in the same task came before it (``dedup.Probe``), and folded into one sink.

    A Claude session's parsed files go back too (before deduplication marks them): when an earlier
    session outside the task turns out to hold some of its calls, the parent folds the task in
    turn without reading those files again.
    """
    assert _AHEAD is not None
    units, tasks, sink_for = _AHEAD
    counts = Ledger()  # its resumed_from: the task's sessions so far marked resumed (their walk)
    sink = sink_for(counts)
    local = Seen()  # what the task's sessions so far leave for the later ones
    probed: list[_Probed] = []
    for index in tasks[task]:
        unit = units[index]
        probe = Probe(local=local)
        first = len(counts.logs)
        parsed = _parse_unit(unit)
        kept = msgspec.msgpack.encode(parsed) if unit.source == "claude" else None
        sink.add_all(_session(unit, parsed, counts, probe))
        sessions = sorted({log.session for log in counts.logs[first:]})
        walked = [name for name in sessions if name in counts.resumed_from]
        if probe.left is not None:
            local.absorb(*probe.left)
        probed.append(_Probed(probe.asked, probe.left, sessions, walked, kept))
    state = pickle.dumps(sink.take(), protocol=pickle.HIGHEST_PROTOCOL)
    return _AHEAD_WIRE.encode(_Ahead(counts, probed, state))  # msgpack: cheaper to read than a pickle


def _still_right(ahead: _Ahead, ledger: Ledger, seen: Seen) -> bool:
    """Whether a task read ahead came out as it would in its turn, session by session: no session
    before the task holds a call a session asked about (the questions the task's own sessions
    answered are not among them), none holds a key a session leaves (the first holder of a key
    names the session a later copy resumes), and each session's files were walked as resumed ones
    when a session before the task marked them resumed (the task's own marks were seen)."""
    resumed = ledger.resumed_from
    for unit in ahead.units:
        if any(name in resumed and name not in unit.walked for name in unit.sessions):
            return False
        if not answers_none(seen, unit.asked):
            return False
        if unit.left is not None and not fresh(seen, unit.left[1]):
            return False
    return True


def _merge_counts(ledger: Ledger, part: Ledger) -> None:
    ledger.files += part.files
    ledger.bytes += part.bytes
    ledger.skipped_lines += part.skipped_lines
    ledger.duplicates += part.duplicates
    ledger.files_without_usage += part.files_without_usage
    ledger.logs.extend(part.logs)
    for session, earlier in part.resumed_from.items():
        ledger.resumed_from.setdefault(session, earlier)


def _fold_ahead(
    units: list[Unit], ledger: Ledger, sink: Sink, sink_for: Callable[[Ledger], Any], seen: Seen, jobs: int
) -> None:
    """Merge the tasks read ahead, in plan order; one whose read-ahead is wrong or did not arrive
    is read here, in its turn."""
    from toolkit.infra import forkmap

    global _AHEAD
    tasks = _tasks(units)
    _AHEAD = (units, tasks, sink_for)  # the workers' copy of it (taken at the fork) is the one they read
    results = forkmap.ordered_map(len(tasks), _read_ahead, jobs)
    try:
        for task, result in zip(tasks, results, strict=True):
            ahead = _AHEAD_READ.decode(result) if isinstance(result, bytes) else None
            _merge_task([units[index] for index in task], ahead, ledger, sink, seen)
    finally:
        results.close()  # the workers are reaped here, also when the fold stops early
        _AHEAD = None


def _merge_task(units: list[Unit], ahead: _Ahead | None, ledger: Ledger, sink: Sink, seen: Seen) -> None:
    """One task in its turn: its read-ahead merged when still right, else its sessions folded here."""
    if ahead is not None and _still_right(ahead, ledger, seen):
        first = len(ledger.logs)
        _merge_counts(ledger, ahead.counts)
        for read in ahead.units:
            if read.left is not None:
                seen.absorb(*read.left)
        sink.merge(pickle.loads(ahead.state), first)
        return
    done: list[_Probed | None] = list(ahead.units) if ahead is not None else [None] * len(units)
    for unit, probed in zip(units, done, strict=True):  # its parsed files, else the files read here
        parsed = _PARSED.decode(probed.parsed) if probed and probed.parsed is not None else _parse_unit(unit)
        sink.add_all(_session(unit, parsed, ledger, seen))


def read_logs(files: Iterable[LogFile], jobs: int = 1) -> Ledger:
    """Every kept call of every session, collected in ``ledger.calls``."""
    ledger = Ledger()
    fold_logs(files, ledger, lambda led: Collect(led.calls), jobs)
    return ledger


def load(source: str, environ: Mapping[str, str], jobs: int = 1) -> Ledger:
    return read_logs(discover(source, environ), jobs)


# -- filtering and grouping ---------------------------------------------------------------------------------


def resolve_tz(name: str | None) -> tzinfo:
    """``None`` is the machine's local zone (as ccusage); otherwise an IANA name."""
    if name is None:
        local = datetime.now().astimezone().tzinfo
        return local if local is not None else UTC
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # only for --timezone: the default is local

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
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
    text = value.strip()
    if len(text) == 8 and text.isdigit():
        text = f"{text[:4]}-{text[4:6]}-{text[6:]}"
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput("USAGE_BAD_DATE", f"{what} must be a date as YYYY-MM-DD or YYYYMMDD") from None


def selector(
    days: LocalDays,
    since: date | None = None,
    until: date | None = None,
    project: str | None = None,
) -> Callable[[Call], bool] | None:
    """The ``--since``/``--until``/``--project`` test for one call; None when nothing is filtered."""
    if project is None and since is None and until is None:
        return None

    def keep(call: Call) -> bool:
        if project is not None and call.project != project:
            return False
        if since is not None or until is not None:
            day = days(call.ts)
            if (since is not None and day < since) or (until is not None and day > until):
                return False
        return True

    return keep


def select(
    ledger: Ledger,
    days: LocalDays,
    since: date | None = None,
    until: date | None = None,
    project: str | None = None,
) -> list[Call]:
    keep = selector(days, since, until, project)
    return ledger.calls if keep is None else [call for call in ledger.calls if keep(call)]


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

    def add_calls(self, calls: list[Call]) -> None:
        """``add`` for many calls, summed in locals first."""
        inp = out = write = read = carried = compactions = sub = not_final = 0
        reasoning: int | None = None
        for call in calls:
            inp += call.input
            out += call.output
            write += call.cache_write
            read += call.cache_read
            if call.reasoning is not None:
                reasoning = (reasoning or 0) + call.reasoning
            carried += call.carried
            compactions += call.compactions + call.compactions_after
            if call.subagent:
                sub += call.input + call.cache_write + call.cache_read + call.output
            not_final += not call.final
        self.calls += len(calls)
        self.input += inp
        self.output += out
        self.cache_write += write
        self.cache_read += read
        if reasoning is not None:
            self.reasoning = (self.reasoning or 0) + reasoning
        self.carried += carried
        self.compactions += compactions
        self.subagent_tokens += sub
        self.not_final += not_final

    @property
    def prompt(self) -> int:
        return self.input + self.cache_write + self.cache_read

    def as_dict(self) -> UsageTotals:
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

    def merge(self, other: Totals) -> None:
        """Add another group's totals (the report's total row)."""
        self.calls += other.calls
        self.input += other.input
        self.output += other.output
        self.cache_write += other.cache_write
        self.cache_read += other.cache_read
        if other.reasoning is not None:
            self.reasoning = (self.reasoning or 0) + other.reasoning
        self.carried += other.carried
        self.compactions += other.compactions
        self.subagent_tokens += other.subagent_tokens
        self.not_final += other.not_final


class Groups:
    """Totals per group key, filled one call at a time."""

    def __init__(self, key: Callable[[Call], str]) -> None:
        self.key = key
        self.totals: dict[str, Totals] = {}

    def add_all(self, calls: Iterable[Call]) -> None:
        """Bucket the calls by key, then add each bucket at once (a session's calls share few keys)."""
        key = self.key
        buckets: dict[str, list[Call]] = {}
        for call in calls:
            name = key(call)
            bucket = buckets.get(name)
            if bucket is None:
                buckets[name] = [call]
            else:
                bucket.append(call)
        for name, bucket in buckets.items():
            found = self.totals.get(name)
            if found is None:
                found = self.totals[name] = Totals()
            found.add_calls(bucket)

    def by_key(self) -> dict[str, Totals]:
        return dict(sorted(self.totals.items()))

    def take(self) -> dict[str, Totals]:
        taken, self.totals = self.totals, {}
        return taken

    def merge(self, state: dict[str, Totals]) -> None:
        merge_parts(self.totals, state)


def group(calls: Iterable[Call], key: Callable[[Call], str]) -> dict[str, Totals]:
    groups = Groups(key)
    groups.add_all(calls)
    return groups.by_key()


def total(calls: Iterable[Call]) -> Totals:
    out = Totals()
    for call in calls:
        out.add(call)
    return out
