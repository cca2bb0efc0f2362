"""An index beside a CM event log: what ``cm-log-event`` asks the log on every event, at a cost that
does not grow with the log.

On every event the writer asks the authoritative log (and the global mirror) whether a row already
has this event's id (an exact retry), what it holds for the event's call id (the claim, the usage),
and, for a guarded event, the run's lifecycle (its resources and QA invocations). Read plainly,
each answer is a pass over the whole log. The index holds, for a prefix of the log that ends a
whole row:

* ``ids``: each event id and the offset of the first row with it;
* ``calls``: per run and call id, the offsets of the first ``model_usage`` and the first claim;
* ``res``, ``inv``, ``fail``: each run's replayed resources and QA invocations, and per kind the
  first row at which that history could not be replayed (with its reason);
* ``odd``: the lines the plain readers judge by what is asked: lines that are not rows (torn,
  oversized, not JSON, not objects) and rows whose ids are written with escapes (the plain
  readers find lines by their bytes). These few are read again for every question.

The answers are those of the plain readers (``events._scan_plainly``, ``lifecycle.replay``); when
a question needs more than the index holds (a row of the run whose run id is written with escapes
and holds the event's id), the caller asks the plain reader.

It is a SQLite database (standard library) beside the log: ``.cm-runs.index.db`` beside the
project log, ``.{run}.jsonl.idx`` beside a run's global log. Like the run checkpoint it is a cache
checked before every use: its schema exactly ours, the log's device and inode, an offset that ends
a whole row and is not past the log's end, the digest of that prefix (``run_logs._prefix_digest``)
and the row limits it was built with. Anything else and it is deleted and built again from the
log's first byte. Each update is one transaction, so a writer killed mid-update leaves the state
before it (SQLite rolls the journal back). Every row an answer names is read back from the log and
checked; a mismatch means the index is wrong, and it is rebuilt. When it cannot be used at all (a
read-only folder, a directory in its place) the caller reads plainly: the same answers, slower.
The caller holds the log's lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from toolkit.cm import lifecycle, run_logs
from toolkit.core.errors import ToolkitError
from toolkit.core.identifiers import CM_RUN_ID

TYPE_CHECKING = False  # typing costs start-up on every event; type checkers read True
if TYPE_CHECKING:
    from toolkit.cm.shapes import InvocationsValue
    from toolkit.core.jsontypes import JsonObject

    CallRows = tuple[JsonObject | None, JsonObject | None, JsonObject | None]

INDEX_VERSION = 1
# odd line flags: not a row; a row whose event id, call id or run id is not in its bytes as written
_BAD, _ESCAPED_EVENT, _ESCAPED_CALL, _ESCAPED_RUN = 1, 2, 4, 8
# the ids the writer asks about (a UUID event id, a call id): other ids are never asked for
_KEY = re.compile(r"[\x21-\x7e]{1,128}")
_BATCH = 20_000  # rows indexed between two writes to the database
_CHUNK = 1 << 20
_SCHEMA = (
    "CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE ids (event_id TEXT PRIMARY KEY, pos INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE calls (run_id TEXT, call_id TEXT, kind TEXT, pos INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, call_id, kind)) WITHOUT ROWID",
    "CREATE TABLE odd (pos INTEGER PRIMARY KEY, size INTEGER NOT NULL, flags INTEGER NOT NULL)",
    "CREATE TABLE res (run_id TEXT, resource_id TEXT, phase TEXT NOT NULL, kind TEXT NOT NULL,"
    " PRIMARY KEY (run_id, resource_id)) WITHOUT ROWID",
    "CREATE INDEX res_phase ON res (run_id, phase)",
    "CREATE TABLE inv (run_id TEXT PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE fail (run_id TEXT, kind TEXT, pos INTEGER NOT NULL, reason TEXT NOT NULL,"
    " PRIMARY KEY (run_id, kind)) WITHOUT ROWID",
)
_KINDS = ("resource", "test_run")
_expected_schema: list[tuple[object, ...]] = []
T = TypeVar("T")


class _Rebuild(ToolkitError):
    """The index does not match the log: delete it and build it again (never leaves this module)."""

    def __init__(self) -> None:
        super().__init__("CM_INDEX_STALE", "the log index does not match the log")


def index_path(log: Path) -> Path:
    """The index of ``log``: one name beside the project log, ``.{file}.idx`` beside another log."""
    if log.name == run_logs.PROJECT_LOG_NAME:
        return log.parent / run_logs.INDEX_NAME
    return log.parent / f".{log.name}.idx"


def call_rows(log: Path, run_id: str, event_id: str, call_id: str | None) -> CallRows | None:
    """(the first row with ``event_id``, the run's first usage of ``call_id``, its first claim), as
    the plain scan finds them; None when the index cannot answer (ask the plain scan).
    ``OSError`` when the log cannot be read (a FIFO, a directory), as the plain scan."""
    if not _KEY.fullmatch(event_id) or (call_id is not None and not _KEY.fullmatch(call_id)):
        return None
    nothing: CallRows = (None, None, None)
    return _ask(log, lambda index: index.call_rows(run_id, event_id, call_id), nothing)


def run_lifecycle(
    log: Path, run_id: str, event_id: str, kinds: frozenset[str], resource_id: object = None
) -> lifecycle.RunLifecycle | None:
    """``lifecycle.replay`` of the run as far as ``lifecycle.decide`` reads it for the new event:
    every resource left open, and ``resource_id`` (the new event's); its ``duplicate`` left None
    (the writer's scan finds that). None when the index cannot answer. Raises
    ``lifecycle.Unverifiable`` as ``replay`` does."""
    if not _KEY.fullmatch(event_id) or not CM_RUN_ID.fullmatch(run_id):
        return None
    asked = resource_id if isinstance(resource_id, str) else None
    return _ask(
        log, lambda index: index.run_lifecycle(run_id, event_id, kinds, asked), lifecycle.RunLifecycle()
    )


def _ask(log: Path, question: Callable[[_Index], T | None], empty: T) -> T | None:
    handle = run_logs._open_log(log)  # OSError as the plain readers: never read
    if handle is None:
        return empty  # no log: nothing in it
    with handle:
        path = index_path(log)
        for attempt in range(2):
            db = _connect(path, private=log.name != run_logs.PROJECT_LOG_NAME, fresh=attempt > 0)
            if db is None:
                continue  # garbage in its place: removed and made again, once
            try:
                db.execute("BEGIN IMMEDIATE")
                index = _Index(db, handle)
                db.execute("COMMIT")  # the rows read so far stay indexed, whatever the answer
                return question(index)
            except lifecycle.LifecycleError:
                raise  # the answer: the run's history cannot be replayed
            except (_Rebuild, sqlite3.Error, ValueError, TypeError, KeyError):
                continue  # not the index of this log (or not ours): built again from the start, once
            finally:
                db.close()
    return None


def _connect(path: Path, *, private: bool, fresh: bool) -> sqlite3.Connection | None:
    """The index database, created when absent; None when it cannot be used. Only a regular file
    is opened: a link, FIFO or anything else in its place (or its journal's) is removed first."""
    journal = path.with_name(path.name + "-journal")
    try:
        for name in (path, journal):
            info = _lstat(name)
            if fresh or (info is not None and not stat.S_ISREG(info.st_mode)):
                _remove(path)
                _remove(journal)
                break
        if _lstat(path) is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, flags, 0o600 if private else 0o644))
        db = sqlite3.connect(
            path.absolute().as_uri() + "?mode=rw", uri=True, timeout=30, isolation_level=None
        )
    except (OSError, sqlite3.Error, ValueError):
        return None
    try:
        db.execute("PRAGMA synchronous=OFF")  # a cache: a transaction is atomic, durability is the log's
        db.execute("PRAGMA trusted_schema=OFF")
    except (sqlite3.Error, ValueError):  # garbage in its place (some sqlite3 builds raise UnicodeDecodeError)
        db.close()
        return None
    return db


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _schema() -> list[tuple[object, ...]]:
    """What ``sqlite_master`` holds for our schema (read from a database made in memory, once)."""
    if not _expected_schema:
        memory = sqlite3.connect(":memory:")
        try:
            for statement in _SCHEMA:
                memory.execute(statement)
            _expected_schema.extend(
                memory.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")
            )
        finally:
            memory.close()
    return _expected_schema


def _loads(raw: bytes) -> JsonObject | None:
    return run_logs._row(raw, None)


def _ensure_schema(db: sqlite3.Connection) -> dict[str, str]:
    """The index's metadata rows; in an empty database the schema is created first. A database
    with another schema, or with our tables but no metadata, is rebuilt."""
    found = list(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"))
    if not found:
        for statement in _SCHEMA:
            db.execute(statement)
    elif found != _schema():
        raise _Rebuild  # not ours (another schema, a trigger, a view): never used
    meta = dict(db.execute("SELECT k, v FROM meta"))
    if found and not meta:
        raise _Rebuild  # tables without the log they index
    return meta


class _Index:
    """An index brought up to the log's last whole row (in the caller's transaction)."""

    def __init__(self, db: sqlite3.Connection, handle: IO[bytes]) -> None:
        self.db, self.handle = db, handle
        info = os.fstat(handle.fileno())
        meta = _ensure_schema(db)
        expected = {
            "version": str(INDEX_VERSION),
            "limits": f"{run_logs.MAX_ROW_BYTES}/{run_logs.MAX_ROW_DEPTH}",
            "dev": str(info.st_dev),
            "ino": str(info.st_ino),
        }
        offset = self._indexed_offset(meta, expected, info.st_size) if meta else 0
        self.offset = self._catch_up(offset)
        if self.offset != offset or not meta:
            expected["offset"] = str(self.offset)
            expected["digest"] = run_logs._prefix_digest(handle, self.offset)
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", expected.items())

    def _indexed_offset(self, meta: dict[str, str], expected: dict[str, str], log_size: int) -> int:
        """The log offset an existing index has reached, once its metadata matches this log file
        and these limits, the digest of the log up to it matches, and it ends a line."""
        if any(meta.get(key) != value for key, value in expected.items()):
            raise _Rebuild
        raw = meta.get("offset", "")
        offset = int(raw) if raw.isdigit() else -1
        if not 0 <= offset <= log_size or meta.get("digest") != run_logs._prefix_digest(self.handle, offset):
            raise _Rebuild
        if offset:
            self.handle.seek(offset - 1)
            if self.handle.read(1) != b"\n":
                raise _Rebuild
        return offset

    # ------------------------------------------------------------ building

    def _catch_up(self, offset: int) -> int:
        """Index the whole rows after ``offset``; the offset after the last one."""
        adder = _Adder(self.db)
        self.handle.seek(offset)
        for raw, end, whole in run_logs._lines_from(self.handle):
            if not whole:
                break  # a last row without its newline: read at each question, never indexed
            adder.add(offset, raw, end - offset)
            offset = end
            if adder.pending >= _BATCH:
                adder.flush()
        adder.flush()
        adder.flush_runs()
        return offset

    # ------------------------------------------------------------ reading

    def _line(self, pos: int, size: int) -> bytes:
        """A whole line the index names (read back: it must still end where the index says)."""
        self.handle.seek(pos)
        raw = self.handle.read(size)
        if len(raw) != size or not raw.endswith(b"\n"):
            raise _Rebuild
        return raw

    def _holds(self, pos: int, size: int, needles: tuple[bytes, ...]) -> bool:
        """Whether the line at ``pos`` holds one of ``needles`` (read a block at a time)."""
        overlap = max(len(needle) for needle in needles) - 1
        self.handle.seek(pos)
        left, carry = size, b""
        while left > 0:
            block = self.handle.read(min(_CHUNK, left))
            if not block:
                raise _Rebuild
            left -= len(block)
            window = carry + block
            if any(needle in window for needle in needles):
                return True
            carry = window[-overlap:] if overlap else b""
        return False

    def _odd(self, flags: int) -> list[tuple[int, int, int]]:
        rows = self.db.execute("SELECT pos, size, flags FROM odd WHERE flags & ? ORDER BY pos", (flags,))
        return [(int(pos), int(size), int(kind)) for pos, size, kind in rows]

    def _row_at(self, pos: int) -> JsonObject:
        self.handle.seek(pos)
        raw = self.handle.readline(run_logs.MAX_ROW_BYTES + 1)
        row = _loads(raw) if raw.endswith(b"\n") else None
        if row is None:
            raise _Rebuild
        return row

    def _tail(self) -> tuple[bytes | None, int]:
        """The last line when it has no newline (never indexed): (its bytes, or None when over the
        row limit, and its length)."""
        self.handle.seek(0, os.SEEK_END)
        size = self.handle.tell() - self.offset
        if size <= 0 or size > run_logs.MAX_ROW_BYTES:
            return None, max(size, 0)
        self.handle.seek(self.offset)
        return self.handle.read(size), size

    # ------------------------------------------------------------ questions

    def call_rows(self, run_id: str, event_id: str, call_id: str | None) -> CallRows:
        needles = [event_id.encode()] + ([call_id.encode()] if call_id else [])
        found = self._indexed_calls(run_id, event_id, call_id)
        self._add_escaped_calls(found, needles, run_id, event_id, call_id)
        rows = self._rows_checked(found, run_id, event_id, call_id)
        tail, _ = self._tail()
        if (
            tail is not None
            and any(needle in tail for needle in needles)
            and (row := _loads(tail)) is not None
        ):
            for name in _call_matches(row, run_id, event_id, call_id):
                rows.setdefault(name, row)
        return rows.get("duplicate"), rows.get("usage"), rows.get("claim")

    def _indexed_calls(self, run_id: str, event_id: str, call_id: str | None) -> dict[str, int]:
        """Where the plain index puts the row with ``event_id`` ("duplicate") and, with a
        ``call_id``, the usage and claim rows of that call."""
        found: dict[str, int] = {}
        for name, pos in (
            ("duplicate", self._one("SELECT pos FROM ids WHERE event_id = ?", (event_id,))),
            (
                "usage",
                self._one(
                    "SELECT pos FROM calls WHERE run_id=? AND call_id=? AND kind=?",
                    (run_id, call_id, "usage"),
                ),
            ),
            (
                "claim",
                self._one(
                    "SELECT pos FROM calls WHERE run_id=? AND call_id=? AND kind=?",
                    (run_id, call_id, "claim"),
                ),
            ),
        ):
            if pos is not None and (name == "duplicate" or call_id):
                found[name] = pos
        return found

    def _add_escaped_calls(
        self, found: dict[str, int], needles: list[bytes], run_id: str, event_id: str, call_id: str | None
    ) -> None:
        """Add to ``found`` the earliest matching rows among those whose ids are written with
        escapes (so the plain index does not hold them)."""
        for pos, size, _ in self._odd(_ESCAPED_EVENT | _ESCAPED_CALL):
            raw = self._line(pos, size)
            row = _loads(raw)
            if row is None:
                raise _Rebuild
            if any(needle in raw for needle in needles):
                for name in _call_matches(row, run_id, event_id, call_id):
                    found[name] = min(found.get(name, pos), pos)

    def _rows_checked(
        self, found: dict[str, int], run_id: str, event_id: str, call_id: str | None
    ) -> dict[str, JsonObject]:
        """The rows at the positions ``found``, each read back and confirmed to be the row its name
        says (else the index is rebuilt)."""
        rows: dict[str, JsonObject] = {}
        for name, pos in found.items():
            row = self._row_at(pos)
            if name not in _call_matches(row, run_id, event_id, call_id):
                raise _Rebuild  # the index names a row that is not that one
            rows[name] = row
        return rows

    def _one(self, query: str, args: tuple[object, ...]) -> int | None:
        found = self.db.execute(query, args).fetchone()
        return None if found is None else int(found[0])

    def run_lifecycle(
        self, run_id: str, event_id: str, kinds: frozenset[str], resource_id: str | None
    ) -> lifecycle.RunLifecycle | None:
        needles = (run_id.encode(), event_id.encode())
        failures = self._odd_run_failures(run_id, needles)
        if failures is None:
            return None  # a row of the run the replay would apply, not in the index: ask it
        for kind in kinds & set(_KINDS):
            failed = self.db.execute("SELECT pos, reason FROM fail WHERE run_id=? AND kind=?", (run_id, kind))
            failures.extend((int(pos), str(reason)) for pos, reason in failed)
        if failures:
            raise lifecycle.Unverifiable(min(failures)[1])
        state = _Runs(self.db).state(run_id)
        self._replay_tail(state, (run_id, event_id), kinds)
        return _narrowed(state, kinds, resource_id)

    def _odd_run_failures(self, run_id: str, needles: tuple[bytes, bytes]) -> list[tuple[int, str]] | None:
        """The first line that is not a row and holds the run or event id, as (pos, reason) (in log
        order: the replay stops there); None when an escaped row of the run holds the event id (the
        replay would apply it and the index does not hold it)."""
        for pos, size, flags in self._odd(_BAD | _ESCAPED_RUN):
            if flags & _BAD:
                if self._holds(pos, size, needles):
                    reason = lifecycle.TOO_LARGE if size > run_logs.MAX_ROW_BYTES else None
                    reason = reason or lifecycle.check_row(self._line(pos, size))
                    if reason is None:
                        raise _Rebuild  # indexed as not a row, reads as one
                    return [(pos, reason)]
                continue
            raw = self._line(pos, size)
            row = _loads(raw)
            if row is None:
                raise _Rebuild
            if row.get("run_id") == run_id and needles[1] in raw:
                return None
        return []

    def _replay_tail(
        self, state: lifecycle.RunLifecycle, ids: tuple[str, str], kinds: frozenset[str]
    ) -> None:
        """Apply the unindexed last line (no newline yet) to ``state``; an oversized one that holds
        the run or event id (``ids``) makes the answer unverifiable."""
        tail, size = self._tail()
        if tail is not None:
            lifecycle.replay_into(state, [tail], ids[0], ids[1], kinds)
        elif size:  # an oversized last row without its newline
            if self._holds(self.offset, size, (ids[0].encode(), ids[1].encode())):
                raise lifecycle.Unverifiable(lifecycle.TOO_LARGE)


def _narrowed(
    state: lifecycle.RunLifecycle, kinds: frozenset[str], resource_id: str | None
) -> lifecycle.RunLifecycle:
    """``state`` holding only what the replay of the rows of ``kinds`` would: the unclosed
    resources and ``resource_id`` when resources are asked, the invocations when test runs are."""
    view = state.resources.states
    assert isinstance(view, lifecycle.IndexedStates)
    wanted = set(view.unclosed()) | ({resource_id} if resource_id is not None else set())
    kept = {rid: found for rid in wanted if (found := view.get(rid))} if "resource" in kinds else {}
    state.resources = lifecycle.Resources(kept)  # the replay applies only the rows of ``kinds``
    if "test_run" not in kinds:
        state.invocations = lifecycle.Invocations()
    return state


def _call_matches(row: JsonObject, run_id: str, event_id: str, call_id: str | None) -> list[str]:
    """What the plain scan takes this row (one that holds a needle) for."""
    names = []
    if row.get("event_id") == event_id:
        names.append("duplicate")
    if call_id and row.get("run_id") == run_id and row.get("call_id") == call_id:
        if row.get("event") == "model_usage":
            names.append("usage")
        elif row.get("event") == "model_call" and row.get("phase") == "claimed":
            names.append("claim")
    return names


class _Runs:
    """The runs' replayed lifecycles as the index holds them, loaded as needed; ``flush`` writes
    back what changed."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.states: dict[str, lifecycle.RunLifecycle] = {}
        self.failed: dict[tuple[str, str], tuple[int, str]] = {}
        self.checked: set[tuple[str, str]] = set()  # (run, kind) known not failed in the database

    def state(self, run_id: str) -> lifecycle.RunLifecycle:
        if run_id not in self.states:
            found = self.db.execute("SELECT state FROM inv WHERE run_id = ?", (run_id,)).fetchone()
            invocations = _invocations(json.loads(found[0])) if found else lifecycle.Invocations()
            resources = lifecycle.IndexedStates(
                lambda rid: self._resource(run_id, rid), lambda: self._open_resources(run_id)
            )
            self.states[run_id] = lifecycle.RunLifecycle(lifecycle.Resources(resources), invocations)
        return self.states[run_id]

    def _resource(self, run_id: str, resource_id: str) -> tuple[str, str] | None:
        found = self.db.execute(
            "SELECT phase, kind FROM res WHERE run_id=? AND resource_id=?", (run_id, resource_id)
        ).fetchone()
        return None if found is None else (str(found[0]), str(found[1]))

    def _open_resources(self, run_id: str) -> list[str]:
        rows = self.db.execute(
            "SELECT resource_id FROM res WHERE run_id=? AND phase IN (?, ?)",
            (run_id, *sorted(lifecycle.OPEN_RESOURCE_PHASES)),
        )
        return [str(rid) for (rid,) in rows]

    def apply(self, run_id: str, kind: str, pos: int, row: JsonObject) -> None:
        if (run_id, kind) in self.failed or self._failed_before(run_id, kind):
            return  # the history of this kind stops at its first row that cannot be replayed
        try:
            lifecycle.replay_row(self.state(run_id), row, frozenset({kind}))
        except lifecycle.Unverifiable as exc:
            self.failed[(run_id, kind)] = (pos, exc.reason)

    def _failed_before(self, run_id: str, kind: str) -> bool:
        if (run_id, kind) in self.checked:
            return False
        found = self.db.execute(
            "SELECT pos, reason FROM fail WHERE run_id=? AND kind=?", (run_id, kind)
        ).fetchone()
        if found is not None:
            self.failed[(run_id, kind)] = (int(found[0]), str(found[1]))
        self.checked.add((run_id, kind))
        return found is not None

    def flush(self) -> None:
        for run_id, state in self.states.items():
            resources = state.resources.states
            assert isinstance(resources, lifecycle.IndexedStates)
            self.db.executemany(
                "INSERT OR REPLACE INTO res VALUES (?, ?, ?, ?)",
                [(run_id, rid, phase, kind) for rid, (phase, kind) in resources.changed.items()],
            )
            self.db.execute(
                "INSERT OR REPLACE INTO inv VALUES (?, ?)",
                (run_id, json.dumps(_inv_value(state.invocations))),
            )
        self.db.executemany(
            "INSERT OR REPLACE INTO fail VALUES (?, ?, ?, ?)",
            [(run_id, kind, pos, reason) for (run_id, kind), (pos, reason) in self.failed.items()],
        )
        self.states.clear()


def _inv_value(state: lifecycle.Invocations) -> InvocationsValue:
    return {
        "active": state.active,
        "open_cases": sorted(state.open_cases),
        "start": state.start,
        "complete": state.complete,
        "non_pass": state.non_pass,
        "passed_cases": sorted(state.passed_cases),
        "ended": state.ended,
    }


def _invocations(value: InvocationsValue) -> lifecycle.Invocations:
    return lifecycle.Invocations(
        active=bool(value["active"]),
        open_cases=set(value["open_cases"]),
        start=value["start"],
        complete=value["complete"],
        non_pass=bool(value["non_pass"]),
        passed_cases=set(value["passed_cases"]),
        ended=value["ended"],
    )


class _Adder:
    """Indexes whole lines in log order, a batch at a time."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.ids: list[tuple[str, int]] = []
        self.calls: list[tuple[str, str, str, int]] = []
        self.odd: list[tuple[int, int, int]] = []
        self.runs = _Runs(db)
        self.pending = 0

    def add(self, pos: int, raw: bytes | None, size: int) -> None:
        self.pending += 1
        if raw is not None and not raw.strip():
            return  # a blank line: every reader skips it
        row = _loads(raw) if raw is not None else None
        if row is None:
            self.odd.append((pos, size, _BAD))
            return
        assert raw is not None
        flags = self._event_id(pos, raw, row)
        run_id = row.get("run_id")
        if isinstance(run_id, str) and CM_RUN_ID.fullmatch(run_id):
            flags |= self._call(pos, raw, row, run_id)
            flags |= self._lifecycle(pos, raw, row, run_id)
        if flags:
            self.odd.append((pos, size, flags))

    def _event_id(self, pos: int, raw: bytes, row: JsonObject) -> int:
        """Index the row's event id when written plainly; ``_ESCAPED_EVENT`` when written with escapes."""
        event_id = row.get("event_id")
        if isinstance(event_id, str) and _KEY.fullmatch(event_id):
            if event_id.encode() not in raw:
                return _ESCAPED_EVENT
            self.ids.append((event_id, pos))
        return 0

    def _lifecycle(self, pos: int, raw: bytes, row: JsonObject, run_id: str) -> int:
        """Apply a resource or test-run row to its run's lifecycle; ``_ESCAPED_RUN`` instead when the
        run id is written with escapes (the replay applies it only when it holds the asked event id)."""
        event = row.get("event")
        kind = "resource" if event == "resource" else None
        if event == "test_run" and row.get("phase") is not None:
            kind = "test_run"
        if kind is None:
            return 0
        if run_id.encode() not in raw:
            return _ESCAPED_RUN
        self.runs.apply(run_id, kind, pos, row)
        return 0

    def _call(self, pos: int, raw: bytes, row: JsonObject, run_id: str) -> int:
        call_id, event = row.get("call_id"), row.get("event")
        if not isinstance(call_id, str) or not _KEY.fullmatch(call_id):
            return 0
        if event == "model_usage":
            kind = "usage"
        elif event == "model_call" and row.get("phase") == "claimed":
            kind = "claim"
        else:
            return 0
        if call_id.encode() not in raw:
            return _ESCAPED_CALL
        self.calls.append((run_id, call_id, kind, pos))
        return 0

    def flush(self) -> None:
        self.db.executemany("INSERT OR IGNORE INTO ids VALUES (?, ?)", self.ids)
        self.db.executemany("INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?)", self.calls)
        self.db.executemany("INSERT OR REPLACE INTO odd VALUES (?, ?, ?)", self.odd)
        self.ids, self.calls, self.odd, self.pending = [], [], [], 0

    def flush_runs(self) -> None:
        self.runs.flush()


def remove(log: Path) -> None:
    """Delete the index of ``log`` (tests, and a caller that knows it is stale)."""
    path = index_path(log)
    _remove(path)
    _remove(path.with_name(path.name + "-journal"))


__all__ = ["INDEX_VERSION", "call_rows", "index_path", "remove", "run_lifecycle"]
