"""Claude Code session logs (``projects/<enc-cwd>/<session>.jsonl`` and ``<session>/subagents/``).

Lines are decoded only into the typed structs below: ids, timestamp, model, usage numbers, the
sidechain flag, ``version``, ``cwd`` (hashed at once) and compaction metadata. Content, summaries
and tool output are skipped by the decoder and never become Python objects. The whole file goes
through one ``decode_lines`` call; if a line does not fit, only the lines holding a ``"usage"`` key
with an object value (``"usage":{``, also written ``"usage": {`` by tools that re-serialize logs) or
``"compact_boundary"`` are decoded, one by one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from toolkit.usage import rules
from toolkit.usage.model import Boundary, Call, FileLog
from toolkit.usage.rules import SAME_CALL, SKIPPED, Pick, admit_line
from toolkit.usage.sources import LogFile, hashed, project_hash

_UNSET = msgspec.UNSET
_USAGE = rules.USAGE
_COMPACT = b'"compact_boundary"'


class _CacheCreation(msgspec.Struct, gc=False):
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0


class _Usage(msgspec.Struct, gc=False):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = 0
    cache_read_input_tokens: int | None = 0
    cache_creation: _CacheCreation | None = None
    speed: str | None | msgspec.UnsetType = _UNSET


class _Message(msgspec.Struct, gc=False):
    id: str | None | msgspec.UnsetType = _UNSET
    model: str | None | msgspec.UnsetType = _UNSET
    stop_reason: str | None = None
    usage: _Usage | None = None


class _CompactMeta(msgspec.Struct, gc=False):
    trigger: str | None = None
    preTokens: int | None = None  # noqa: N815 - the log's spelling


class _Line(msgspec.Struct, gc=False):
    type: str | None = None
    subtype: str | None = None
    timestamp: str | None = None
    uuid: str | None = None
    logicalParentUuid: str | None = None  # noqa: N815
    sessionId: str | None | msgspec.UnsetType = _UNSET  # noqa: N815
    requestId: str | None | msgspec.UnsetType = _UNSET  # noqa: N815
    version: str | None | msgspec.UnsetType = _UNSET
    cwd: str | None | msgspec.UnsetType = _UNSET
    isSidechain: bool | None = None  # noqa: N815
    message: _Message | None = None
    compactMetadata: _CompactMeta | None = None  # noqa: N815


_DECODER = msgspec.json.Decoder(_Line)


_valid_ts = rules.valid_ts


def _relative_parts(log: LogFile) -> tuple[str, ...]:
    """The file's path below its root, as parts (string work: ``relative_to`` costs more per file)."""
    path, root = log.path, str(log.root)
    if path.startswith(root) and path[len(root) : len(root) + 1] == os.sep:
        return tuple(path[len(root) + 1 :].split(os.sep))
    return Path(path).relative_to(log.root).parts


def _stem(name: str) -> str:
    """``PurePath.stem`` of a file name, as string work."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def where(log: LogFile) -> tuple[str, bool, str, str]:
    """(session id from the path, whether the file is a subagent's, its project folder, the file's
    stem), from one split of the path below its root."""
    rel = _relative_parts(log)
    name = _stem(rel[-1] if rel else os.path.basename(log.path))
    folder = rel[0] if len(rel) > 1 else "unknown"
    if len(rel) >= 4 and rel[-2] == "subagents":
        return rel[-3], True, folder, name
    if name.startswith("agent-"):
        return "", True, folder, name  # older builds: the parent session comes from the lines' sessionId
    return name, False, folder, name


def _placement(log: LogFile) -> tuple[str, bool]:
    """(session id from the path, whether the file is a subagent's)."""
    session, subagent, _folder, _name = where(log)
    return session, subagent


def _line_spans(data: bytes, marker: bytes | re.Pattern[bytes]) -> list[tuple[int, int]]:
    """(start, end) of each line holding ``marker`` (bytes, or a pattern searched for)."""
    spans: list[tuple[int, int]] = []
    find, rfind = data.find, data.rfind
    if isinstance(marker, bytes):

        def at(start: int) -> int:
            return find(marker, start)

    else:
        search = marker.search

        def at(start: int) -> int:
            found = search(data, start)
            return -1 if found is None else found.start()

    pos = at(0)
    while pos != -1:
        start = rfind(b"\n", 0, pos) + 1
        end = find(b"\n", pos)
        if end == -1:
            end = len(data)
        spans.append((start, end))
        pos = at(end)
    return spans


def _all_lines(data: bytes, out: FileLog) -> list[_Line] | None:
    """Every line through the typed decoder in one call (only allowlisted fields become objects).

    None when any complete line does not fit the struct or is malformed: the caller then decodes
    only the candidate lines, one by one, and counts the bad ones. A torn last line (a session
    still being written) is decoded on its own.
    """
    end = data.rfind(b"\n") + 1
    try:
        lines = _DECODER.decode_lines(memoryview(data)[:end]) if end else []
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    tail = data[end:]
    if tail.strip() and (_USAGE.search(tail) is not None or _COMPACT in tail):
        try:
            lines.append(_DECODER.decode(tail))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            out.skipped_lines += 1
    return lines


def decode_line(line: bytes | memoryview) -> _Line | None:
    """One line through the typed decoder; None when it does not fit (the slow path skips it)."""
    try:
        return _DECODER.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None


def _candidates(data: bytes, out: FileLog) -> Iterator[_Line]:
    """The slow path: only lines holding a ``"usage"`` object or ``compact_boundary``, decoded one by one."""
    spans = _line_spans(data, _USAGE)
    if _COMPACT in data:
        spans = sorted(set(spans) | set(_line_spans(data, _COMPACT)))
    view = memoryview(data)
    decode = _DECODER.decode
    for start, end in spans:
        try:
            yield decode(view[start:end])
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            out.skipped_lines += 1


def read(log: LogFile, index: int, data: bytes | None = None) -> FileLog:
    """Parse one Claude Code log file into calls and compaction markers (file order).

    The same call again in this file (streaming partials, one line per content block) keeps one
    line; only that line becomes a ``Call``, after the whole file is read.
    """
    session, subagent, folder, stem = where(log)
    path_hash = hashed(log.path, "f-")
    out = FileLog("claude", path_hash, session, "")
    lines = _lines(log, data, out)
    project = ""
    picks: list[Pick | Boundary] = []
    first: dict[str, Pick] = {}
    for line in lines:
        message = line.message
        if line.subtype == "compact_boundary":
            if not project and isinstance(line.cwd, str):
                project = project_hash(line.cwd)
            boundary = _compaction(line)
            if boundary is not None:
                picks.append(boundary)
            continue
        if message is None or message.usage is None:
            continue  # not a model call (a tool result may carry its own usage object)
        if not project and isinstance(line.cwd, str):
            project = project_hash(line.cwd)
        session, outcome = admit_line(line, message, message.usage, session, picks, first)
        if outcome == SKIPPED:
            out.skipped_lines += 1
        elif outcome == SAME_CALL:
            out.duplicates += 1
    _finish(out, (session, stem), (project, folder), picks, subagent, index)
    return out


def _lines(log: LogFile, data: bytes | None, out: FileLog) -> Iterable[_Line]:
    """The file's lines (``data``, else read from disk): all through the typed decoder in one call,
    else, when one line does not fit it, the candidate lines one by one."""
    if data is None:
        with open(log.path, "rb") as file:
            data = file.read()
    decoded = _all_lines(data, out)
    return decoded if decoded is not None else _candidates(data, out)


def _compaction(line: _Line) -> Boundary | None:
    """A ``compact_boundary`` line's compaction marker; None when its time is not a valid one."""
    if not _valid_ts(line.timestamp):
        return None
    meta = line.compactMetadata or _CompactMeta()
    return Boundary(line.timestamp or "", "compaction", meta.trigger, meta.preTokens, _boundary_key(line))


def _finish(
    out: FileLog,
    session: tuple[str, str],
    project: tuple[str, str],
    picks: list[Pick | Boundary],
    subagent: bool,
    index: int,
) -> None:
    """The file's session (the one its lines name, else the file's stem) and project (the hashed
    working folder its lines name, else its folder's name hashed), then its items in file order:
    each kept line a ``Call`` (made only now, after the whole file is read), the compaction
    markers as they are."""
    out.session = session[0] or session[1]
    out.project = project[0] or hashed(project[1])
    path_hash = out.path_hash
    out.items = [
        item if isinstance(item, Boundary) else _call(item, out, subagent, path_hash, index) for item in picks
    ]


def _boundary_key(line: _Line) -> str | None:
    """What names one compaction across files: its uuid (kept by a resume's copy), else its time and
    the message it compacted after; None when the line has neither."""
    if isinstance(line.uuid, str) and line.uuid:
        return "\x02" + line.uuid
    if isinstance(line.logicalParentUuid, str) and line.logicalParentUuid:
        return "\x03" + (line.timestamp or "") + "\x00" + line.logicalParentUuid
    return None


def _call(pick: Pick, out: FileLog, subagent: bool, path_hash: str, index: int) -> Call:
    line = pick.line
    message = line.message
    assert message is not None and message.usage is not None
    usage = message.usage
    cache_write, write_1h = rules.cache_write(usage)
    sidechain = pick.sidechain
    read_tokens = usage.cache_read_input_tokens or 0
    msg_id = message.id
    return Call(  # positional, in the field order of ``Call`` (source .. sidechain)
        "claude",
        out.session,
        out.project,
        path_hash + ("#side" if sidechain and not subagent else ""),
        subagent or sidechain,
        line.timestamp or "",
        rules.model_name(message.model, usage.speed),
        usage.input_tokens,
        usage.output_tokens,
        cache_write,
        read_tokens,
        None,
        usage.input_tokens + cache_write + read_tokens,
        message.stop_reason is not None,
        write_1h,
        pick.key,
        msg_id if isinstance(msg_id, str) else None,
        sidechain,
        log=index,
    )


class _Stamp(msgspec.Struct, gc=False):
    timestamp: str | None = None


_STAMP = msgspec.json.Decoder(_Stamp)
_TS = b'"timestamp"'
_WINDOW = 1 << 13  # bytes first read from either end of a file
_REACH = 1 << 24  # how far into a file a timestamped line is looked for before giving up


def _stamp_of(line: bytes) -> str | None:
    """The line's own (top-level) timestamp, when it is one Claude Code writes; nested ones are not."""
    if _TS not in line:
        return None
    try:
        ts = _STAMP.decode(line).timestamp
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return ts if _valid_ts(ts) else None


def _first_stamp(fd: int, size: int) -> str | None:
    """The time of the file's first timestamped line (a line is read whole, up to ``_REACH``)."""
    data, start = b"", 0
    while len(data) < size and len(data) < _REACH:
        more = os.pread(fd, max(_WINDOW, len(data)), len(data))
        if not more:
            break
        data += more
        done = len(data) >= size or len(data) >= _REACH
        while start < len(data):
            end = data.find(b"\n", start)
            if end == -1:
                if not done:
                    break  # the line goes on: read more of the file
                end = len(data)
            found = _stamp_of(data[start:end])
            if found is not None:
                return found
            start = end + 1
    return None


def _last_stamp(data: bytes, whole: bool) -> str | None:
    """The last timestamped line's time in ``data`` (the end of the file; ``whole``: all of it)."""
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1 if end > 1 else 0
        if start == 0 and not whole:
            return None  # the first piece starts mid-line
        found = _stamp_of(data[start:end])
        if found is not None:
            return found
        end = start - 1 if start > 0 else 0
    return None


def first_stamp(path: str | os.PathLike[str], size: int | None = None) -> str | None:
    """The time of a log's first timestamped line (a top-level ``timestamp``), read from its start
    only (``size``: the file's size as the walk found it, else asked of the file); None when there
    is none there or the file cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return _first_stamp(fd, os.fstat(fd).st_size if size is None else size)
    except OSError:
        return None
    finally:
        os.close(fd)


def last_stamp(path: str | os.PathLike[str]) -> str | None:
    """The time of a log's last timestamped line, read from its end only (a torn last line, a
    session still being written, is passed over); None when there is none there."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return _last_stamp_of(fd, os.fstat(fd).st_size)
    except OSError:
        return None
    finally:
        os.close(fd)


def stamps(path: str | os.PathLike[str]) -> tuple[str | None, str | None]:
    """``first_stamp`` and ``last_stamp`` of one log, with one open."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None, None
    try:
        try:
            size = os.fstat(fd).st_size
        except OSError:
            return None, None
        try:
            first = _first_stamp(fd, size)
        except OSError:
            first = None
        try:
            return first, _last_stamp_of(fd, size)
        except OSError:
            return first, None
    finally:
        os.close(fd)


def _last_stamp_of(fd: int, size: int) -> str | None:
    reach = _WINDOW
    while True:
        offset = max(0, size - reach)
        last = _last_stamp(os.pread(fd, size - offset, offset), offset == 0)
        if last is not None or offset == 0 or reach >= _REACH:
            return last
        reach *= 4


def last_stamp_in(data: bytes) -> str | None:
    """``last_stamp`` of a log already read whole: the same windows from its end, in memory."""
    size = len(data)
    reach = _WINDOW
    while True:
        offset = max(0, size - reach)
        last = _last_stamp(data[offset:], offset == 0)
        if last is not None or offset == 0 or reach >= _REACH:
            return last
        reach *= 4


def session_of(path: Path, root: Path) -> str:
    """The session a file belongs to by its path alone (used to pick files for ``usage session``)."""
    return _placement(LogFile("claude", os.fspath(path), root))[0] or path.stem
