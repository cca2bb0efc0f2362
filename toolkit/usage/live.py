"""The status line's counts: a session's transcript and ``subagents/`` logs, read from where the
last refresh stopped, counted by the usage reader's rules.

``workgroup statusline`` (``toolkit.agents.statusline``) keeps its line, the files' signature and
this module's state in its cache; it imports this module only when a model call may have been
appended (a refresh that serves the cached line pays for none of it). Here:

* the state: per file, the byte offset read up to, a mark of the bytes before it and the kept line
  of each call read so far (``FileState``, plain JSON); a file that grew is read on from the
  offset, one that shrank, was replaced or changed at the marked places from its start;
* the lines: read by the lean reader (``toolkit.usage.lean``, standard library only), a line it is
  not sure of, and a read longer than ``LEAN_BYTES``, by the typed decoder (``toolkit.usage.claude``,
  imported only then); the counting rules are ``toolkit.usage.rules``, the usage reader's own;
* the session: its files' calls deduplicated as ``dedup.dedup_session`` does, the copies of an
  earlier session's calls dropped (``earlier_sessions``: a resumed session's copied history);
* the line: verified tokens, calls, the re-read share and the list price (``toolkit.usage.cost``).
"""

from __future__ import annotations

import json
import os
import stat

from toolkit.usage import lean, rules
from toolkit.usage.cost import PRICE_TABLE, Estimate
from toolkit.usage.marks import mark
from toolkit.usage.rules import Pick

TYPE_CHECKING = False  # typing is not imported on the status line's path
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any, TypeGuard

    from toolkit.usage.shapes import EarlierDoc, FileStateDoc, KeptCopy, LineFields, Packed, StateDoc

NO_CALLS = "workgroup: no model calls yet"
STATE_VERSION = 1  # the layout of the stored state (a state of another version is read again)
CHUNK = 16 * 1_048_576  # bytes decoded at once (a long transcript is read in pieces)
LEAN_BYTES = 1_048_576  # a longer read goes to the typed decoder (its import costs less than the scan)
MAX_SIBLINGS = 4096  # other transcripts of the project folder looked at for a resumed session's origin
MAX_ORIGIN = 256 * 1_048_576  # bytes of another transcript read when looking for copied history
STAMP_WINDOW = 8192  # bytes first read from either end of a transcript for its first and last time
STAMP_REACH = 16 * 1_048_576  # how far into a transcript a timestamped line is looked for


# --- counting ----------------------------------------------------------------------------------


class Counts:
    """The session's kept calls summed: tokens by kind, calls, and the list-price estimate."""

    __slots__ = ("cache_read", "cache_write", "calls", "cost", "input", "output", "unpriced")

    def __init__(self) -> None:
        self.calls = self.input = self.output = self.cache_write = self.cache_read = 0
        self.cost: float | None = None
        self.unpriced = 0

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read

    @property
    def reread_share(self) -> float | None:
        prompt = self.input + self.cache_write + self.cache_read
        return self.cache_read / prompt if prompt else None


def count(calls: Sequence[Any]) -> Counts:
    """Totals of the calls not dropped by deduplication, and their list price (when priced)."""
    out = Counts()
    kept = [c for c in calls if not c.dropped]
    for call in kept:
        out.calls += 1
        out.input += call.input
        out.output += call.output
        out.cache_write += call.cache_write
        out.cache_read += call.cache_read
    estimate = Estimate(PRICE_TABLE, lambda _call: "session")
    estimate.add_all(kept)
    result = estimate.result()
    out.cost = result["total"]
    out.unpriced = result["unpriced_calls"]
    return out


def short(number: int) -> str:
    """12,345 as ``12.3k``; a value that would round up to 1000 takes the next unit (``1.0M``)."""
    if number < 1000:
        return str(number)
    units = ((1000, "k"), (1_000_000, "M"), (1_000_000_000, "G"))
    size, suffix = next(((s, x) for s, x in units if number / s < 999.5), units[-1])  # .0f shows 1000
    value = number / size
    return f"{value:.1f}{suffix}" if value < 99.95 else f"{value:.0f}{suffix}"


def render(counts: Counts) -> str:
    """The status line: only numbers and fixed words."""
    if counts.calls == 0:
        return NO_CALLS
    parts = [
        f"{short(counts.tokens)} tok verified",
        f"{counts.calls} call{'' if counts.calls == 1 else 's'}",
    ]
    share = counts.reread_share
    if share is not None:
        parts.append(f"re-read {share:.0%}")
    if counts.cost is not None:
        cost = f"~${counts.cost:.2f} list" if counts.cost >= 1 else f"~${counts.cost:.3f} list"
        if counts.unpriced:
            cost += f" (+{counts.unpriced} unpriced)"
        parts.append(cost)
    return "workgroup: " + " · ".join(parts)


class _Rec:
    """One kept line of a call, as counted: the reader's ``Call`` fields the rules and the sums use."""

    __slots__ = (
        "cache_read",
        "cache_write",
        "cache_write_1h",
        "carried",
        "dropped",
        "final",
        "input",
        "key",
        "model",
        "msg_id",
        "output",
        "sidechain",
    )
    key: str | None
    msg_id: str | None
    sidechain: bool
    final: bool
    input: int
    output: int
    cache_write: int
    cache_write_1h: int
    cache_read: int
    model: str
    dropped: bool
    carried: int

    def __init__(self, pick: Pick | Packed) -> None:
        if isinstance(pick, list):
            self._from_record(pick)
            return
        line = pick.line
        message = line.message
        assert message is not None and message.usage is not None  # a pick is a line with a usage object
        usage = message.usage
        self.key = pick.key
        msg_id = message.id
        self.msg_id = msg_id if isinstance(msg_id, str) else None
        self.sidechain = pick.sidechain
        self.final = message.stop_reason is not None
        self.input = usage.input_tokens
        self.output = usage.output_tokens
        self.cache_write, self.cache_write_1h = rules.cache_write(usage)
        self.cache_read = usage.cache_read_input_tokens or 0
        self.model = rules.model_name(message.model, usage.speed)
        self.dropped = False
        self.carried = 0

    def _from_record(self, record: Packed) -> None:
        """The same fields from a stored kept line (``pack``), without making it a pick again."""
        self.key, _owner, _ts, self.sidechain, self.msg_id, model, speed, self.final = record[:8]
        self.input, self.output, write, read, created = record[8:]
        if created is not None:
            self.cache_write, self.cache_write_1h = created[0] + created[1], created[1]
        else:
            self.cache_write, self.cache_write_1h = write or 0, 0
        self.cache_read = read or 0
        self.model = rules.model_name(model, speed)
        self.dropped = False
        self.carried = 0

    @property
    def tokens(self) -> int:
        total: int = self.input + self.cache_write + self.cache_read + self.output
        return total


def pack(pick: Pick | Packed) -> Packed:
    """A kept line as the state stores it: only what the rules and the sums read again (a stored
    one not read again is stored as it was)."""
    if isinstance(pick, list):
        return pick
    line = pick.line
    message = line.message
    assert message is not None and message.usage is not None  # a pick is a line with a usage object
    usage = message.usage
    created = usage.cache_creation
    return [
        pick.key,
        pick.owner,
        line.timestamp,
        line.isSidechain is True,
        _text_or_none(message.id),
        _text_or_none(message.model),
        _text_or_none(usage.speed),
        message.stop_reason is not None,
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_creation_input_tokens,
        usage.cache_read_input_tokens,
        None if created is None else [created.ephemeral_5m_input_tokens, created.ephemeral_1h_input_tokens],
    ]


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _checked(record: object) -> Packed:
    """A stored kept line as ``pack`` wrote it (``ValueError`` for anything else): the JSON array
    as read, checked (kept a list: made into no other object, see ``Packed``)."""
    if not isinstance(record, list) or len(record) != 13:
        raise ValueError(record)
    key, owner, ts, side, msg_id, model, speed, stop, inp, out, write, read, created = record
    if not (_opt_str(key) and isinstance(owner, str) and _opt_str(ts) and isinstance(side, bool)):
        raise ValueError(record)
    if not (_opt_str(msg_id) and _opt_str(model) and _opt_str(speed) and isinstance(stop, bool)):
        raise ValueError(record)
    if not (_int(inp) and _int(out) and (write is None or _int(write)) and (read is None or _int(read))):
        raise ValueError(record)
    if created is not None and not (
        isinstance(created, list) and len(created) == 2 and all(map(_int, created))
    ):
        raise ValueError(record)
    return record


def _unpack(record: Packed) -> Pick:
    """A stored kept line (``_checked``) back as the pick it was, for a line of the same call."""
    key, owner, ts, side, msg_id, model, speed, stop, inp, out, write, read, created = record
    line = lean.Line()
    line.timestamp, line.isSidechain = ts, side
    message = line.message = lean.Message()
    message.id, message.model, message.stop_reason = msg_id, model, "" if stop else None
    usage = message.usage = lean.Usage()
    usage.input_tokens, usage.output_tokens, usage.speed = inp, out, speed
    usage.cache_creation_input_tokens, usage.cache_read_input_tokens = write, read
    if created is not None:
        usage.cache_creation = lean.CacheCreation()
        usage.cache_creation.ephemeral_5m_input_tokens, usage.cache_creation.ephemeral_1h_input_tokens = (
            created
        )
    return Pick(line, owner, rules.tokens(usage), key)


def _opt_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class FileState:
    """One file's part of the state: where it was read up to, and the kept line of each call."""

    __slots__ = ("first", "ino", "mark", "mtime_ns", "offset", "picks", "session", "size")

    def __init__(self, ino: int, session: str) -> None:
        self.ino, self.size, self.mtime_ns, self.offset, self.mark = ino, 0, 0, 0, ""
        self.session = session
        self.picks: list[Pick | Packed] = []  # a stored record until a line of its call is read
        self.first = _First(self.picks)  # key -> its pick (``rules.admit_line``)

    def to_json(self) -> FileStateDoc:
        return {
            "ino": self.ino,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "offset": self.offset,
            "mark": self.mark,
            "session": self.session,
            "picks": [pack(p) for p in self.picks],
        }

    @classmethod
    def from_json(cls, doc: object) -> FileState:
        """``ValueError`` for anything that is not a state this module wrote."""
        if not isinstance(doc, dict):
            raise ValueError(doc)
        ino, size, mtime, offset = (doc.get(k) for k in ("ino", "size", "mtime_ns", "offset"))
        mark, session, picks = doc.get("mark"), doc.get("session"), doc.get("picks")
        if not (_int(ino) and _int(size) and _int(mtime) and _int(offset) and isinstance(mark, str)):
            raise ValueError(doc)
        if not (isinstance(session, str) and isinstance(picks, list)):
            raise ValueError(doc)
        state = cls(ino, session)
        state.size, state.mtime_ns, state.offset, state.mark = size, mtime, offset, mark
        records = [_checked(p) for p in picks]
        state.picks[:] = records
        state.first.index = {p[0]: n for n, p in enumerate(records) if p[0] is not None}
        return state


class _First:
    """A file's calls by key, for ``rules.admit_line``: a stored record becomes a pick (``_unpack``)
    only when another line of its call is read."""

    __slots__ = ("index", "picks")

    def __init__(self, picks: list[Pick | Packed]) -> None:
        self.picks = picks
        self.index: dict[str, int] = {}

    def get(self, key: str) -> Pick | None:
        at = self.index.get(key)
        if at is None:
            return None
        found = self.picks[at]
        if isinstance(found, list):
            found = self.picks[at] = _unpack(found)
        return found

    def __setitem__(self, key: str, pick: Pick) -> None:
        """A new call, appended to ``picks`` just before or just after (``rules.admit_line``)."""
        picks = self.picks
        self.index[key] = len(picks) - 1 if picks and picks[-1] is pick else len(picks)


class Earlier:
    """What the sessions before this one left (the usage reader's ``dedup.Seen``, by text): the keys
    of their kept calls and the message ids of those calls, each with whether it was a sidechain's.
    A resumed session's transcript starts with a copy of the history it resumed; those calls were
    counted in the session they were made in, and are dropped here as ``workgroup usage`` drops them."""

    __slots__ = ("ids", "keys")

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.ids: set[tuple[str, bool]] = set()

    def copied(self, rec: _Rec) -> bool:
        """``dedup.Seen.copied``: the same key, or a ``/btw`` replay across sessions."""
        if rec.key in self.keys:
            return True
        return (rec.msg_id, True) in self.ids or (rec.sidechain and (rec.msg_id, False) in self.ids)

    def absorb(self, kept: Mapping[str, KeptCopy]) -> None:
        for key, rec in kept.items():
            if rec.dropped:
                continue
            self.keys.add(key)
            if rec.key == key and rec.msg_id is not None:
                self.ids.add((rec.msg_id, rec.sidechain))

    def to_json(self) -> EarlierDoc:
        return {"keys": sorted(self.keys), "ids": sorted([m, s] for m, s in self.ids)}

    @classmethod
    def from_json(cls, doc: object) -> Earlier:
        if (
            not isinstance(doc, dict)
            or not isinstance(doc.get("keys"), list)
            or not isinstance(doc.get("ids"), list)
        ):
            raise ValueError(doc)
        out = cls()
        for key in doc["keys"]:
            if not isinstance(key, str):
                raise ValueError(doc)
            out.keys.add(key)
        for entry in doc["ids"]:
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
                raise ValueError(doc)
            out.ids.add((entry[0], entry[1] is True))
        return out


def decode_state(raw: bytes | None) -> tuple[dict[str, FileState], Earlier | None]:
    """The stored state (per file, and what earlier sessions left); empty when it is not one."""
    if not raw:
        return {}, None
    try:
        doc = json.loads(raw)
        if (
            not isinstance(doc, dict)
            or doc.get("v") != STATE_VERSION
            or not isinstance(doc.get("files"), dict)
        ):
            return {}, None
        files = {str(name): FileState.from_json(value) for name, value in doc["files"].items()}
        earlier = Earlier.from_json(doc.get("earlier"))
    except (ValueError, TypeError, RecursionError):
        return {}, None
    return files, earlier


def encode_state(files: dict[str, FileState], earlier: Earlier) -> bytes:
    doc: StateDoc = {
        "v": STATE_VERSION,
        "files": {n: s.to_json() for n, s in files.items()},
        "earlier": earlier.to_json(),
    }
    return json.dumps(doc, separators=(",", ":")).encode()


# --- reading -----------------------------------------------------------------------------------


def read_lines(data: bytes, end: int, state: FileState, typed: bool = False) -> None:
    """The lines of ``data[:end]`` that hold a usage object, in file order, into the file's kept
    lines (``rules.admit_line``): read by the lean reader, a line it is not sure of by the typed
    decoder (as the usage reader's slow path decodes it; a line that does not decode is skipped).
    ``typed``: every line by the typed decoder (a long read, where importing it costs less than
    the lean reader's scan)."""
    search, find, rfind = rules.USAGE.search, data.find, data.rfind
    found = search(data, 0, end)
    session = state.session
    read = _typed_line if typed else _line_at
    while found is not None:
        start = rfind(b"\n", 0, found.start()) + 1
        stop = find(b"\n", found.start(), end)
        stop = end if stop == -1 else stop
        line = read(data, start, stop)
        found = search(data, stop, end)
        if line is None or line.subtype == "compact_boundary":
            continue
        message = line.message
        if message is None or message.usage is None:
            continue  # not a model call (a tool result may carry its own usage object)
        session, _outcome = rules.admit_line(line, message, message.usage, session, state.picks, state.first)
    state.session = session


def _line_at(data: bytes, start: int, stop: int) -> LineFields | None:
    """One line's allowlisted fields: the lean reader's, else the typed decoder's (None: the line
    does not decode, as the reader skips it)."""
    try:
        return lean.parse_line(data, start, stop)
    except lean.Unsure:
        return _typed_line(data, start, stop)


def _typed_line(data: bytes, start: int, stop: int) -> LineFields | None:
    from toolkit.usage import claude  # msgspec: only for what the lean reader leaves to it

    return claude.decode_line(memoryview(data)[start:stop])


def read_file(path: str, session: str, previous: FileState | None) -> FileState | None:
    """The file's state: its kept lines read from the cached offset (or the start) to its last
    full line. None when the file cannot be opened as a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        state = previous if previous is not None and _still_prefix(fd, st, previous) else None
        state = state or FileState(st.st_ino, session)
        while state.offset < st.st_size:
            data = os.pread(fd, min(CHUNK, st.st_size - state.offset), state.offset)
            end = _readable_end(data)
            if end == 0:
                break  # nothing more, or a torn last line: read once it is whole
            read_lines(data, end, state, typed=st.st_size - state.offset > LEAN_BYTES)
            state.offset += end
        if state.offset:
            state.mark = mark(fd, state.offset)
        state.ino, state.size, state.mtime_ns = st.st_ino, st.st_size, st.st_mtime_ns
        return state
    except OSError:
        return None
    finally:
        os.close(fd)


def _readable_end(data: bytes) -> int:
    """How many bytes of a chunk to read now: up to its last newline; a chunk without one whole
    when it fills ``CHUNK`` (one line longer than a chunk), else none (a torn last line waits)."""
    end = data.rfind(b"\n") + 1
    if end == 0 and len(data) >= CHUNK:
        return len(data)
    return end


def _still_prefix(fd: int, st: os.stat_result, state: FileState) -> bool:
    """Whether the part read before is still the file's start: same inode, not shorter, same first
    and last bytes before the offset. A transcript only grows; a rewrite of its middle that keeps
    every byte around these two places is not noticed."""
    if st.st_ino != state.ino or st.st_size < state.offset:
        return False
    if state.offset == 0:
        return True
    try:
        return mark(fd, state.offset) == state.mark
    except OSError:
        return False


# --- the session's calls -----------------------------------------------------------------------


def session_calls(files: list[FileState], earlier: Earlier) -> tuple[list[_Rec], dict[str, KeptCopy]]:
    """Every kept line of the session's files (file order) as a call, the duplicates marked dropped
    by the usage reader's rules (``dedup.dedup_session``: inside the session, then the copies of an
    earlier session's calls); and the kept calls by key."""
    state = rules.InSession()
    calls: list[_Rec] = []
    for file in files:
        for pick in file.picks:
            rec = _Rec(pick)
            calls.append(rec)
            if rec.key is None or rec.msg_id is None or rules.settle_local(rec, state):
                continue
            if earlier.copied(rec):
                rec.dropped = True
                continue
            state.keep(rec)
    return calls, state.exact


def session_id(transcript: str) -> str:
    """The session a transcript names by its file name (``<session>.jsonl``), as the reader takes it."""
    return os.path.basename(transcript)[: -len(".jsonl")]


# --- a resumed session: the history it copied ----------------------------------------------------


def earlier_sessions(transcript: str, main: FileState) -> Earlier:
    """What the sessions this one copied history from left: a resumed session's transcript starts
    with a copy of the lines of the session it resumed (same ids, same times). Those are the other
    transcripts that hold this one's first call and come before it in the usage reader's order (the
    first, then the last time inside the log, then modification time and path); each is read and
    deduplicated as the reader would, oldest first. Looked at: the transcripts of this project
    folder, and those of the other project folders written since that call was made (modification
    time; a copy's origin made that call); read whole: those whose times span the call."""
    earlier = Earlier()
    first = next((found for found in map(_id_and_time, main.picks) if found is not None), None)
    if first is None:
        return earlier
    needle = b'"' + first[0].encode("utf-8", "surrogatepass") + b'"'
    made = first[1]
    since = _epoch_ns(made) - 2_000_000_000  # the clock's and the write's slack
    mine = _age(transcript)
    origins: list[tuple[tuple[str, str, int, str], str]] = []
    for path, mtime_ns, here in _siblings(transcript):
        if not here and (since <= 0 or mtime_ns < since):
            continue
        age = _age(path)
        if not (age < mine and age[0] <= made <= age[1]):
            continue
        data = _read_regular(path, MAX_ORIGIN)
        if data is not None and needle in data:
            origins.append((age, path))
    for _age_key, path in sorted(origins):
        state = read_file(path, session_id(path), None)
        if state is not None:
            _calls, kept = session_calls([state], earlier)
            earlier.absorb(kept)
    return earlier


def _epoch_ns(ts: str) -> int:
    """Nanoseconds since 1970 of a ``YYYY-MM-DDTHH:MM:SS...Z`` time (0 when it is not one)."""
    try:
        year, month, day = int(ts[0:4]), int(ts[5:7]), int(ts[8:10])
        hour, minute, second = int(ts[11:13]), int(ts[14:16]), int(ts[17:19])
    except ValueError:
        return 0
    if not (rules.valid_ts(ts) and 1 <= month <= 12 and 1 <= day <= 31):
        return 0
    y = year - (month <= 2)
    era, yoe = divmod(y, 400)
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    days = era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468
    return (((days * 24 + hour) * 60 + minute) * 60 + second) * 1_000_000_000


def _id_and_time(pick: Pick | Packed) -> tuple[str, str] | None:
    """A kept call's message id and time (None without a message id)."""
    msg_id: object
    if isinstance(pick, list):
        msg_id, ts = pick[4], pick[2]
    else:
        message = pick.line.message
        assert message is not None  # a pick is a line with a usage object
        msg_id, ts = message.id, pick.line.timestamp
    return (msg_id, ts or "") if isinstance(msg_id, str) else None


def _siblings(transcript: str) -> list[tuple[str, int, bool]]:
    """(path, modification time, whether in this project folder) of the other session transcripts
    of every project folder (regular files and folders, never through a link; at most
    ``MAX_SIBLINGS``, this folder's first)."""
    own = os.path.dirname(transcript)
    projects = os.path.dirname(own)
    try:
        with os.scandir(projects) as entries:
            folders = sorted(e.path for e in entries if e.is_dir(follow_symlinks=False) and e.path != own)
    except OSError:
        folders = []
    out: list[tuple[str, int, bool]] = []
    for folder in [own, *folders]:
        try:
            with os.scandir(folder) as entries:
                found = sorted(
                    (e.path, e.stat(follow_symlinks=False).st_mtime_ns, folder == own)
                    for e in entries
                    if e.name.endswith(".jsonl") and e.path != transcript and e.is_file(follow_symlinks=False)
                )
        except OSError:
            continue
        out += found[: MAX_SIBLINGS - len(out)]
    return out


def _read_regular(path: str, limit: int, offset: int = 0) -> bytes | None:
    """Up to ``limit`` bytes of a regular file from ``offset`` (never through a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.pread(fd, limit, offset)
    except OSError:
        return None
    finally:
        os.close(fd)


def _age(path: str) -> tuple[str, str, int, str]:
    """The usage reader's order of sessions (``fold._by_age``): the first and the last time inside
    the log (its modification time when it has none), then modification time, then path."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return ("", "", 0, path)
    iso = _iso(st.st_mtime_ns)
    first = _edge_stamp(path, st.st_size, True) or iso
    return (first, _edge_stamp(path, st.st_size, False) or iso, st.st_mtime_ns, path)


def _edge_stamp(path: str, size: int, first: bool) -> str | None:
    """The first (or last) timestamped line's time, looked for in the first (last) ``STAMP_WINDOW``
    bytes, then in windows 16 times larger up to ``STAMP_REACH``."""
    window = STAMP_WINDOW
    while True:
        whole = window >= size
        data = _read_regular(path, min(window, size), 0 if first or whole else size - window) or b""
        lines = data.split(b"\n")
        if first:
            found = _stamp(lines if whole else lines[:-1])  # a cut last line waits for a larger window
        else:
            found = _stamp(reversed(lines if whole else lines[1:]))
        if found is not None or whole or window >= STAMP_REACH:
            return found
        window *= 16


def _stamp(lines: Iterable[bytes]) -> str | None:
    """The first of these lines' own top-level ``timestamp`` that Claude Code would write."""
    for line in lines:
        if b'"timestamp"' in line:
            found = lean.stamp_of(line)
            if found is not None and rules.valid_ts(found):
                return found
    return None


def _iso(ns: int) -> str:
    """A modification time as Claude Code writes its timestamps (comparable with them)."""
    seconds, rest = divmod(ns // 1_000_000, 1000)
    days, secs = divmod(seconds, 86_400)
    year, month, day = _civil(days)
    return f"{year:04d}-{month:02d}-{day:02d}T{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{rest:03d}Z"


def _civil(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a count of days since 1970-01-01 (proleptic Gregorian)."""
    days += 719_468
    era, doe = divmod(days, 146_097)
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def counted_line(
    transcript: str, files: list[tuple[str, str]], raw_state: bytes | None
) -> tuple[str, dict[str, list[int | str]], bytes | None]:
    """(the line, per file the inode, offset and mark read up to, the state to store; None: the
    transcript could not be read) from the stored state (``raw_state``), reading only what it does
    not hold."""
    previous, earlier = decode_state(raw_state)
    session = session_id(transcript)
    states: dict[str, FileState] = {}
    for name, path in files:
        state = read_file(path, session, previous.get(name))
        if state is not None:
            states[name] = state
    main = states.get("")
    if main is None:
        return "", {}, None
    if earlier is None or main is not previous.get(""):
        earlier = earlier_sessions(transcript, main)  # read from the start: look for copied history
    calls, _kept = session_calls(list(states.values()), earlier)
    line = render(count(calls))
    marks: dict[str, list[int | str]] = {
        name: [state.ino, state.offset, state.mark] for name, state in states.items()
    }
    return line, marks, encode_state(states, earlier)
