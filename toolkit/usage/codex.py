"""Codex rollout logs (``sessions/YYYY/MM/DD/rollout-*.jsonl`` and ``archived_sessions/``).

Used lines: ``session_meta`` (id, cwd, fork/subagent parent ids), ``turn_context`` (model, cwd),
``event_msg`` ``token_count`` numbers and the ``compacted`` marker. Instructions, response items
and compaction messages are skipped by the decoder and never become Python objects (one typed
``decode_lines`` call per file; lines of another shape send the file to a per-line fallback).
Per-call usage is the delta of the running total (a re-emitted, unchanged total is no call);
``last_token_usage`` is used only when the total is missing or drops. Forks and subagent threads
replay their parent's events: those are recognised by the parent's totals and skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import sub
from sys import intern
from typing import Any, TypeGuard

import msgspec
from msgspec.structs import astuple

from toolkit.usage.model import Boundary, Call, FileLog
from toolkit.usage.sources import LogFile, folder_name, hashed, project_hash, stem

_MARKERS = (
    (b'"type":"token_count"', 0),
    (b'"type":"turn_context"', 1),
    (b'"type":"session_meta"', 2),
    (b'"type":"compacted"', 3),
)


class _Counts(msgspec.Struct, gc=False):
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0


class _Info(msgspec.Struct, gc=False):
    total_token_usage: _Counts | None = None
    last_token_usage: _Counts | None = None
    model_context_window: int | None = None
    model: str | None = None


class _Limits(msgspec.Struct, gc=False):
    limit_id: str | None = None


class _TokenPayload(msgspec.Struct, gc=False):
    type: str | None = None
    info: _Info | None = None
    rate_limits: _Limits | None = None
    model: str | None = None


class _TokenLine(msgspec.Struct, gc=False):
    timestamp: str | None = None
    type: str | None = None
    payload: _TokenPayload | None = None


class _Spawn(msgspec.Struct, gc=False):
    parent_thread_id: str | None = None


class _Subagent(msgspec.Struct, gc=False):
    thread_spawn: _Spawn | None = None


class _Source(msgspec.Struct, gc=False):
    subagent: _Subagent | str | None = None


class _MetaPayload(msgspec.Struct, gc=False):
    id: str | None = None
    cwd: str | None = None
    forked_from_id: str | None = None
    source: _Source | str | None = None


class _MetaLine(msgspec.Struct, gc=False):
    timestamp: str | None = None
    type: str | None = None
    payload: _MetaPayload | None = None


class _TurnPayload(msgspec.Struct, gc=False):
    model: str | None = None
    cwd: str | None = None


class _TurnLine(msgspec.Struct, gc=False):
    timestamp: str | None = None
    type: str | None = None
    payload: _TurnPayload | None = None


class _TopLine(msgspec.Struct, gc=False):
    timestamp: str | None = None
    type: str | None = None


class _Payload(msgspec.Struct, gc=False):
    """Every payload field any decoded line kind needs (token counts, turn model, session ids)."""

    type: str | None = None
    info: _Info | None = None
    rate_limits: _Limits | None = None
    model: str | None = None
    id: str | None = None
    cwd: str | None = None
    forked_from_id: str | None = None
    source: _Source | str | None = None


class _Line(msgspec.Struct, gc=False):
    timestamp: str | None = None
    type: str | None = None
    payload: _Payload | None = None


_LINES = msgspec.json.Decoder(_Line)
_TOKEN = msgspec.json.Decoder(_TokenLine)
_TURN = msgspec.json.Decoder(_TurnLine)
_META = msgspec.json.Decoder(_MetaLine)
_TOP = msgspec.json.Decoder(_TopLine)

Totals = tuple[int, int, int, int, int]


class Registry(msgspec.Struct):
    """Running totals seen per thread id, so a child's replay of its parent can be recognised.

    Only the ids in ``wanted`` (threads that have forks or spawned threads among the files) are
    recorded, and a registry lives for one family (a rollout with its descendants).
    """

    totals: dict[str, set[Totals]] = msgspec.field(default_factory=dict)
    wanted: set[str] = msgspec.field(default_factory=set)


class Head(msgspec.Struct):
    """What the first ``session_meta`` lines say: own id, cwd, parent (fork or subagent), and when the
    thread itself started (its own ``session_meta`` time: nothing before it is its own call)."""

    session: str | None = None
    cwd: str | None = None
    parent: str | None = None
    subagent: bool = False
    metas: int = 0
    started: str | None = None


def _scan(data: bytes) -> list[tuple[int, int, int]]:
    """Marker search over the whole buffer (any key order); used when the fast path finds nothing."""
    spans: dict[int, tuple[int, int, int]] = {}
    find, rfind = data.find, data.rfind
    for marker, kind in _MARKERS:
        pos = find(marker)
        while pos != -1:
            start = rfind(b"\n", 0, pos) + 1
            end = find(b"\n", pos)
            if end == -1:
                end = len(data)
            spans.setdefault(start, (start, end, kind))
            pos = find(marker, end)
    return [spans[key] for key in sorted(spans)]


_KINDS = ((b'turn_context"', 1), (b'session_meta"', 2), (b'compacted"', 3))


def _spans(data: bytes) -> list[tuple[int, int, int]]:
    """(start, end, kind) of the lines worth decoding, in file order.

    Codex writes ``{"timestamp":..,"type":..,"payload":{"type":..`` in that order, so the kind is
    read from the first bytes of each line (one newline scan) instead of searching every marker
    through instruction and tool-output text. Any other key order falls back to ``_scan``.
    """
    spans: list[tuple[int, int, int]] = []
    find, startswith = data.find, data.startswith
    size, start, tokens = len(data), 0, 0
    while start < size:
        end = find(b"\n", start)
        if end == -1:
            end = size
        mark = find(b'"type":"', start, min(end, start + 96))
        if mark != -1:
            mark += 8
            if startswith(b'event_msg"', mark):
                if find(b'"type":"token_count"', mark, min(end, mark + 64)) != -1:
                    spans.append((start, end, 0))
                    tokens += 1
            else:
                for name, kind in _KINDS:
                    if startswith(name, mark):
                        spans.append((start, end, kind))
                        break
        start = end + 1
    if not tokens and b'"token_count"' in data:
        return _scan(data)
    return spans


def _valid_ts(value: str | None) -> TypeGuard[str]:
    """Whether a line's time has the shape of an ISO date and time (``YYYY-MM-DDT...``, 20 characters or more)."""
    return value is not None and len(value) >= 20 and value[4] == "-" and value[10] == "T"


def head(data: bytes) -> Head:
    """Decode the leading ``session_meta`` lines only (own and a fork's parent), to order parents first.

    The own line is the one that names another leading line as its parent (in whichever order they
    come), else the first; a file that starts with two threads' lines and names no parent is a fork
    of the other one all the same.
    """
    metas, stamps = _leading_metas(data)
    info = Head(metas=len(metas))
    if not metas:
        return info
    ids = {m.id for m in metas if m.id}
    own = next((i for i, m in enumerate(metas) if _parent_of(m)[0] in ids - {m.id}), 0)
    payload = metas[own]
    info.session, info.cwd, info.started = payload.id, payload.cwd, stamps[own]
    info.parent, info.subagent = _parent_of(payload)
    if info.parent is None:
        info.parent = next((m.id for m in metas if m.id and m.id != payload.id), None)
    return info


def _leading_metas(data: bytes) -> tuple[list[_MetaPayload], list[str | None]]:
    """(the payloads, the times) of the ``session_meta`` lines among the first three lines, up to the
    first line that is not one or does not decode."""
    metas: list[_MetaPayload] = []
    stamps: list[str | None] = []
    start = 0
    for _ in range(3):
        end = data.find(b"\n", start)
        if end == -1:
            end = len(data)
        if data.find(b'"type":"session_meta"', start, end) == -1:
            break
        try:
            meta = _META.decode(data[start:end])
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            break
        if meta.type == "session_meta" and meta.payload is not None:
            metas.append(meta.payload)
            stamps.append(meta.timestamp)
        start = end + 1
    return metas, stamps


def _parent_of(payload: _MetaPayload) -> tuple[str | None, bool]:
    """(the parent thread a ``session_meta`` names, whether it is a spawned subagent's)."""
    source = payload.source
    if isinstance(source, _Source) and isinstance(source.subagent, _Subagent):
        spawn = source.subagent.thread_spawn
        if spawn is not None and spawn.parent_thread_id:
            return spawn.parent_thread_id, True
    return payload.forked_from_id or None, False


def read(
    log: LogFile, index: int, registry: Registry, data: bytes | None = None, info: Head | None = None
) -> FileLog:
    """Parse one rollout (archived copies of live sessions are left out before, in ``fold``;
    ``info``: its ``head``, when the plan read it already)."""
    if data is None:
        with open(log.path, "rb") as file:
            data = file.read()
    if info is None:
        info = head(data)
    session = info.session or stem(log.path)
    path_hash = hashed(log.path, "f-")
    group = info.parent if info.subagent and info.parent else session
    out = FileLog("codex", path_hash, group, project_hash(info.cwd) if info.cwd else "")
    _calls(out, _lines(data, out), info, session, registry)
    _settle_project(out, log)
    return out


def _settle_project(out: FileLog, log: LogFile) -> None:
    """The rollout's project (its folder's name hashed when no line named a working folder), set on
    the calls made before it was known."""
    if not out.project:
        out.project = hashed(folder_name(log.path))
    for item in out.items:
        if isinstance(item, Call) and item.project != out.project:
            item.project = out.project  # calls made before the project was known


class _State(msgspec.Struct):
    model: str | None = None
    cwd: str | None = None
    prev: dict[str | None, Totals] = msgspec.field(default_factory=dict)
    replaying: bool = False
    replay_second: str | None = None
    turns: int = 0
    token_events: int = 0


def _all_lines(data: bytes, out: FileLog) -> list[Any] | None:
    """Every line through the combined typed decoder in one call; None if one does not fit."""
    end = data.rfind(b"\n") + 1
    try:
        lines: list[Any] = _LINES.decode_lines(memoryview(data)[:end]) if end else []
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    tail = data[end:]
    if tail.strip():
        try:
            lines.append(_LINES.decode(tail))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            if b'"token_count"' in tail:
                out.skipped_lines += 1
    return lines


_SLOW = (_TOKEN, _TURN, _META, _TOP)
_TYPE_OF = ("event_msg", "turn_context", "session_meta", "compacted")


def _candidates(data: bytes, out: FileLog) -> Iterator[Any]:
    """The slow path: the candidate lines found by ``_spans``, decoded one by one (a line is used
    only as the kind its marker said, as the fast path reads it by its own type)."""
    view = memoryview(data)
    for start, end, kind in _spans(data):
        try:
            line = _SLOW[kind].decode(view[start:end])
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            out.skipped_lines += 1
            continue
        if line.type == _TYPE_OF[kind]:
            yield line


def _lines(data: bytes, out: FileLog) -> Iterable[Any]:
    lines = _all_lines(data, out)
    return lines if lines is not None else _candidates(data, out)


def _calls(
    out: FileLog,
    lines: Iterable[Any],
    info: Head,
    session: str,
    registry: Registry,
) -> None:
    state = _State(replaying=info.parent is not None)
    parent_totals = registry.totals.get(info.parent or "", set()) if info.parent else set()
    own_totals = registry.totals.setdefault(session, set()) if session in registry.wanted else None
    metas = 0
    for line in lines:
        kind = line.type
        if kind == "response_item":
            continue  # the commonest line: content, never read
        if kind == "event_msg":
            payload = line.payload
            if payload is not None and payload.type == "token_count" and payload.info is not None:
                _token(out, line, state, info, parent_totals, own_totals)
        elif kind == "turn_context":
            if line.payload is not None:
                _turn(out, line.payload, state)
        elif kind == "session_meta":
            metas += 1
            _meta_line(out, line, info, metas)
        elif kind == "compacted":
            _compacted(out, line, state, info)
    out.no_usage = state.turns > 0 and state.token_events == 0


def _turn(out: FileLog, payload: _TurnPayload | _Payload, state: _State) -> None:
    """A turn: the model of the calls that follow (interned once), the project if not known yet."""
    state.turns += 1
    if payload.model:
        state.model = intern(payload.model)
    if not out.project and payload.cwd:
        out.project = project_hash(payload.cwd)


def _meta_line(out: FileLog, line: _MetaLine | _Line, info: Head, metas: int) -> None:
    """The ``metas``-th ``session_meta`` line: past the leading ones and after calls, the rollout
    was resumed (a resume boundary); otherwise nothing."""
    if metas > max(info.metas, 1) and any(isinstance(i, Call) for i in out.items):
        out.items.append(_resume_marker(line.timestamp))


def _compacted(out: FileLog, line: _TopLine | _Line, state: _State, info: Head) -> None:
    """A ``compacted`` line: a compaction boundary, unless its time is invalid or it is the parent's
    compaction replayed at the head of a fork."""
    if not _valid_ts(line.timestamp):
        return
    if not (state.replaying and _replayed_mark(info, state, line.timestamp or "")):
        out.items.append(Boundary(line.timestamp or "", "compaction"))


def _resume_marker(ts: str | None) -> Boundary:
    """A later ``session_meta`` after calls: the rollout was resumed and appended to."""
    return Boundary(ts or "", "resume")


def _token(
    out: FileLog,
    line: _TokenLine | _Line,
    state: _State,
    info: Head,
    parent_totals: set[Totals],
    own_totals: set[Totals] | None,
) -> None:
    """A ``token_count`` event with ``info``: a call when its running total moved."""
    ts = line.timestamp
    if not _valid_ts(ts):
        out.skipped_lines += 1
        return
    payload = line.payload
    assert payload is not None and payload.info is not None
    state.token_events += 1
    meta = payload.info
    counts = meta.total_token_usage
    total = astuple(counts) if counts is not None else None
    last = meta.last_token_usage
    key = payload.rate_limits.limit_id if payload.rate_limits is not None else None
    if total is not None and own_totals is not None:
        own_totals.add(total)
    if _replayed(state, info, ts, total, key, parent_totals):
        return
    delta = _call_delta(state, key, total, last)
    if delta is None:
        return
    d_input, d_cached, d_output, d_reasoning = delta  # the buckets by name, never by position
    if d_input or d_cached or d_output or d_reasoning:
        out.items.append(_call(out, info, ts, state, (payload.model, meta.model), delta, last))


def _call(
    out: FileLog,
    info: Head,
    ts: str,
    state: _State,
    named: tuple[str | None, str | None],
    delta: tuple[int, int, int, int],
    last: _Counts | None,
) -> Call:
    """The call one event's token ``delta`` stands for: its model the turn's (interned once), else
    the one the event or its info ``named``; cached input counted within the input (never more than
    it); the context its ``last`` usage reports (else the delta's input)."""
    d_in, d_cached, d_out, d_reasoning = delta
    cached = d_cached if d_cached < d_in else d_in
    return Call(
        "codex",
        out.session,
        out.project,
        out.path_hash,
        info.subagent,
        ts,
        state.model or (intern(named[0] or named[1] or "unknown")),
        d_in - cached,
        d_out,
        0,
        cached,
        d_reasoning,
        last.input_tokens if last is not None else d_in,
    )


def _replayed(
    state: _State, info: Head, ts: str, total: Totals | None, key: str | None, parent_totals: set[Totals]
) -> bool:
    """Whether a token event is no call of this file's own: a synthetic ``fill_to_context_window``
    total (empty buckets), or an event of the parent's history replayed at the head of a fork (its
    total is the parent's, it predates the fork, or, the parent's file absent, it shares the
    replay's second). A replayed total still becomes the previous total; the first event that is
    not replayed ends the replay."""
    if total is None:
        return _replayed_without_total(state, info, ts, parent_totals)
    if total[4] > 0 and total[:4] == (0, 0, 0, 0):
        return True  # fill_to_context_window: a synthetic total with empty buckets is no call
    if not state.replaying:
        return False
    same = _same_second(state, ts)  # first, so the first event of the file anchors the second
    if total in parent_totals or _before(info, ts) or (not parent_totals and same):
        state.prev[key] = total
        return True
    state.replaying = False
    return False


def _replayed_without_total(state: _State, info: Head, ts: str, parent_totals: set[Totals]) -> bool:
    """``_replayed`` for an event with no running total: replayed when it predates the fork or, the
    parent's file absent, shares the replay's second; else the replay ends here."""
    if state.replaying and ((_same_second(state, ts) and not parent_totals) or _before(info, ts)):
        return True
    state.replaying = False
    return False


def _call_delta(
    state: _State, key: str | None, total: Totals | None, last: _Counts | None
) -> tuple[int, int, int, int] | None:
    """The (input, cached, output, reasoning) tokens of one call: how far the running total of its
    rate-limit ``key`` moved since the previous event (which it becomes), or the event's own
    ``last`` usage when a bucket dropped (a new counter); None when there is no new call."""
    prev = state.prev.get(key)
    if total is not None:
        state.prev[key] = total
    if total is None or prev is None or total == prev:
        delta = _delta(total, prev, last)
        return None if delta is None else (delta[0], delta[1], delta[2], delta[3])
    # the common case, the running total moved: the delta, unless a bucket dropped (a new counter)
    d_in, d_cached, d_out, d_reasoning = (
        total[0] - prev[0],
        total[1] - prev[1],
        total[2] - prev[2],
        total[3] - prev[3],
    )
    if d_in < 0 or d_cached < 0 or d_out < 0 or d_reasoning < 0 or total[4] < prev[4]:
        return _last_counts(last)
    return d_in, d_cached, d_out, d_reasoning


def _last_counts(last: _Counts | None) -> tuple[int, int, int, int] | None:
    """An event's own (input, cached, output, reasoning) usage, when it reports one."""
    if last is None:
        return None
    return last.input_tokens, last.cached_input_tokens, last.output_tokens, last.reasoning_output_tokens


def _before(info: Head, ts: str) -> bool:
    """A replayed parent event that kept its own time: stamped before this thread started."""
    started = info.started
    return started is not None and len(started) >= 19 and ts[:19] < started[:19]


def _replayed_mark(info: Head, state: _State, ts: str) -> bool:
    """A compaction in a fork's replay (before its first own call): the parent's, timed before the
    fork started or in the replay's second (the first replayed event's, else the fork's start)."""
    anchor = state.replay_second or (info.started or "")[:19]
    return _before(info, ts) or ts[:19] == anchor


def _same_second(state: _State, ts: str) -> bool:
    """Fallback when the parent's file is absent: ccusage's rule (leading same-second events replay)."""
    if state.replay_second is None:
        state.replay_second = ts[:19]
    return ts[:19] == state.replay_second


def _delta(total: Totals | None, prev: Totals | None, last: _Counts | None) -> Totals | None:
    if total is None:
        return astuple(last) if last is not None else None
    if prev is None:
        return total
    if total == prev:
        return None  # a re-emitted total: no new call
    delta = tuple(map(sub, total, prev))
    if min(delta) < 0:
        return astuple(last) if last is not None else None  # the total dropped: a new counter
    return delta
