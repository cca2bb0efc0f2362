"""CM run logs: where they live, how they are read and appended, run ids, the run pointer and locks.

Standard library only (the ``cm-*`` console scripts start lean). The rules follow the public
CM event writer: an explicit ``--run-id`` wins; otherwise a running pointer in the specs dir,
then the latest running run of the project log; otherwise a fresh run id. The global mirror
lives under ``${CM_WORKFLOW_LOG_HOME:-~/.cm-workflow/logs}/runs/YYYY-MM/{run_id}.jsonl``.

Deliberate difference: the pointer stores the global log *relative to the log home*, so the
specs dir (which teams commit) never carries an absolute home path.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from toolkit.core.errors import InvalidInput
from toolkit.core.identifiers import CM_RUN_ID
from toolkit.core.strictjson import json_depth_exceeds
from toolkit.infra.appendlog import append_whole
from toolkit.infra.boundedio import FileRefused, open_regular, read_json_bounded
from toolkit.infra.store import atomic_write, file_lock

TYPE_CHECKING = False  # typing costs start-up on every event; type checkers read True
if TYPE_CHECKING:
    from toolkit.cm.shapes import RunPointer
    from toolkit.core.jsontypes import JsonObject

SCHEMA_VERSION = 1
TERMINAL_EVENTS = frozenset({"done", "run_done"})
POINTER_NAME = ".cm-run.json"
RUN_LOCK_NAME = ".cm-run.lock"
WRITE_LOCK_NAME = ".cm-write.lock"
PROJECT_LOG_NAME = "运行日志.jsonl"
DEFAULT_LOG_HOME = "~/.cm-workflow/logs"
_MONTH = re.compile(r"^\d{4}-\d{2}$")
# Logs and the pointer are files anyone with the repository can edit: a row far larger or deeper
# than any the writer produces is not parsed (recursive decoding of a hostile tree is the risk).
MAX_ROW_BYTES = 256 * 1024
MAX_ROW_DEPTH = 64
MAX_POINTER_BYTES = 64 * 1024


def loads_row(raw: bytes) -> object:
    """``json.loads`` for one log row or pointer; ``ValueError`` when too large, deep or invalid."""
    if len(raw) > MAX_ROW_BYTES or json_depth_exceeds(raw, MAX_ROW_DEPTH):
        raise ValueError("row too large or too deeply nested")
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("row too deeply nested") from None


class RunSelectionError(InvalidInput, ValueError):
    """A run id or global log location that cannot be used (the writer exits 2)."""

    def __init__(self, message: str) -> None:
        super().__init__("RUN_SELECTION_INVALID", message)


def log_home(environ: Mapping[str, str], override: str | None = None) -> Path:
    """The private global log home: ``--log-home``, else ``CM_WORKFLOW_LOG_HOME``, else the default."""
    raw = override or environ.get("CM_WORKFLOW_LOG_HOME") or DEFAULT_LOG_HOME
    if raw.startswith("~"):
        home = environ.get("HOME")
        raw = (home + raw[1:]) if home else os.path.expanduser(raw)
    return Path(raw).resolve(strict=False)


def generated_run_id(now: datetime) -> str:
    """``YYYYMMDDTHHMMSSZ-<8 hex>``: sortable, unique enough, a safe file name."""
    return f"{now.astimezone(UTC).strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:8]}"


def iter_json_lines(path: Path, needle: bytes | None = None) -> Iterator[JsonObject]:
    """Stream the JSON objects of a JSONL file, skipping torn or invalid lines.

    ``needle`` is a cheap byte pre-filter: lines without it cannot match and are not parsed.
    """
    handle = _open_log(path)
    if handle is None:
        return
    with handle:
        for raw in handle:
            value = _row(raw, needle)
            if value is not None:
                yield value


def _open_log(path: Path) -> IO[bytes] | None:
    """An event log opened for reading, None when absent; ``OSError`` for a FIFO, a directory or
    anything else that is not a regular file (unreadable, never read)."""
    try:
        return open_regular(path, what="an event log", missing_ok=True)
    except FileRefused as exc:
        raise OSError(exc.code) from None


_BLOCK = 1 << 16  # bytes read at a time, from the end, by ``iter_json_lines_backward``
_CHUNK = 1 << 20  # bytes read at a time by ``iter_lines_with``


def iter_lines_with(path: Path, needles: list[bytes]) -> Iterator[bytes]:
    """The raw lines of a log (newline kept, as a line-by-line read gives them) that hold one of
    ``needles`` and are within the row size limit, in file order.

    The file is read a megabyte at a time and each block is searched whole (in C); only a block
    that holds a needle is cut into lines, so a long log with few matches costs little more than
    reading it. A line longer than the limit is skipped without being kept whole.
    """
    handle = _open_log(path)
    if handle is None:
        return
    with handle:
        carry, oversized = b"", False  # the line begun in earlier blocks, and whether it is too long
        while chunk := handle.read(_CHUNK):
            cut = chunk.rfind(b"\n") + 1
            if not cut:  # no line ends in this block
                if not oversized:
                    carry += chunk
                    oversized = len(carry) > MAX_ROW_BYTES
                continue
            ends = chunk.find(b"\n") + 1
            if not oversized:
                yield from _with(carry + chunk[:ends], needles)
            body = chunk[ends:cut]
            if any(needle in body for needle in needles):
                for piece in body.split(b"\n")[:-1]:
                    yield from _with(piece + b"\n", needles)
            carry = chunk[cut:]
            oversized = len(carry) > MAX_ROW_BYTES
        if carry and not oversized:
            yield from _with(carry, needles)


def _with(raw: bytes, needles: list[bytes]) -> Iterator[bytes]:
    if len(raw) <= MAX_ROW_BYTES and any(needle in raw for needle in needles):
        yield raw


def iter_json_lines_backward(path: Path, needle: bytes | None = None) -> Iterator[JsonObject]:
    """``iter_json_lines`` from the last row to the first, reading the file from its end.

    The same rows pass: each row is judged with its newline, as the forward reader sees it, so the
    size limit is the same; a row longer than the limit is skipped without being kept whole.
    """
    handle = _open_log(path)
    if handle is None:
        return
    with handle:
        end = handle.seek(0, os.SEEK_END)
        row, newline, oversized = b"", b"", False  # the row being put together, from its end
        while end > 0:
            start = max(0, end - _BLOCK)
            handle.seek(start)
            pieces = handle.read(end - start).split(b"\n")
            end = start
            if not oversized:  # the block's last piece is the beginning-side part of that row
                row = pieces[-1] + row
                oversized = len(row) + len(newline) > MAX_ROW_BYTES
            for piece in reversed(pieces[:-1]):  # each newline here completes that row
                value = None if oversized else _row(row + newline, needle)
                if value is not None:
                    yield value
                row, newline = piece, b"\n"
                oversized = len(row) + 1 > MAX_ROW_BYTES
        value = None if oversized else _row(row + newline, needle)
        if value is not None:
            yield value


def _row(raw: bytes, needle: bytes | None) -> JsonObject | None:
    """A log row as ``iter_json_lines`` takes it, or None."""
    if not raw or (needle is not None and needle not in raw):
        return None
    try:
        value = loads_row(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class ProjectRuns:
    """What the project log says about runs: the latest run id and a run's state, read from the
    log's end and only as far as the answer needs (a long-lived project log is not parsed whole on
    every event). The answers are those of one pass from the start: the latest run is that of the
    last row with a valid run id and event; a run is ``done`` when its last start, resume or
    terminal row is terminal, ``running`` when it has rows, else unknown (None)."""

    def __init__(self, project_log: Path | None) -> None:
        self.project_log = project_log
        self._latest: str | None = None
        self._latest_read = project_log is None
        self._states: dict[str, str | None] = {}

    def _rows(self) -> Iterator[tuple[str, str]]:
        """(run id, event) of the valid rows, last first."""
        if self.project_log is None:
            return
        for row in iter_json_lines_backward(self.project_log, b'"run_id"'):
            run_id, event = row.get("run_id"), row.get("event")
            if isinstance(run_id, str) and CM_RUN_ID.fullmatch(run_id) and isinstance(event, str):
                yield run_id, event

    @property
    def latest(self) -> str | None:
        if not self._latest_read:
            self._latest = next((run_id for run_id, _ in self._rows()), None)
            self._latest_read = True
        return self._latest

    def state(self, run_id: str) -> str | None:
        if run_id not in self._states:
            found: str | None = None
            for row_run, event in self._rows():
                if row_run != run_id:
                    continue
                if event in ("run_start", "resume"):
                    found = "running"
                    break
                if event in TERMINAL_EVENTS:
                    found = "done"
                    break
                found = "running"  # rows of the run, but no start, resume or end after them
            self._states[run_id] = found
        return self._states[run_id]


def project_runs(project_log: Path | None, checkpoint: Path | None = None) -> ProjectRuns:
    """The project log's runs; with ``checkpoint``, read through a checkpoint of the log's prefix
    (``CheckpointedRuns``): only the rows after it are parsed."""
    if project_log is not None and checkpoint is not None:
        return CheckpointedRuns(project_log, checkpoint)
    return ProjectRuns(project_log)


CHECKPOINT_NAME = ".cm-runs.ckpt.json"
# the project log's index (``logindex``; a run's global log has its own beside it) and its journal
INDEX_NAME = ".cm-runs.index.db"
INDEX_JOURNAL_NAME = INDEX_NAME + "-journal"
CHECKPOINT_VERSION = 1
MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024
_PROBE = 4096  # bytes hashed at each probe of the prefix: its start, its end and _PROBES between
_PROBES = 8


def _prefix_digest(handle: IO[bytes], offset: int) -> str:
    """A digest of the log's first ``offset`` bytes that costs the same at any length: the first
    and last ``_PROBE`` bytes and ``_PROBES`` evenly spaced blocks between, with ``offset``."""
    digest = hashlib.sha256(str(offset).encode())
    starts = {0, max(0, offset - _PROBE)} | {offset * k // (_PROBES + 1) for k in range(1, _PROBES + 1)}
    for start in sorted(starts):
        handle.seek(start)
        digest.update(handle.read(min(_PROBE, offset - start)))
    return digest.hexdigest()


def _fold(states: dict[str, str], run_id: str, event: str) -> None:
    """One valid row, in log order: a start or resume opens the run, a terminal row closes it,
    any other row leaves it as it was (or running, for its first row)."""
    if event in ("run_start", "resume"):
        states[run_id] = "running"
    elif event in TERMINAL_EVENTS:
        states[run_id] = "done"
    else:
        states.setdefault(run_id, "running")


def _valid_row(raw: bytes) -> tuple[str, str] | None:
    """(run id, event) of a row ``ProjectRuns`` counts, or None (the same rows as its reader)."""
    row = _row(raw, b'"run_id"')
    if row is None:
        return None
    run_id, event = row.get("run_id"), row.get("event")
    if isinstance(run_id, str) and CM_RUN_ID.fullmatch(run_id) and isinstance(event, str):
        return run_id, event
    return None


def _lines_from(handle: IO[bytes]) -> Iterator[tuple[bytes | None, int, bool]]:
    """(line, offset after it, whether it ends with a newline) from the handle's position; a line
    over the row limit is skipped without being kept whole (read in pieces) and given as None."""
    position = handle.tell()
    while True:
        raw = handle.readline(MAX_ROW_BYTES + 1)
        if not raw:
            return
        position += len(raw)
        if len(raw) > MAX_ROW_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # the rest of the oversized row
                raw = handle.readline(_CHUNK)
                position += len(raw)
            yield None, position, raw.endswith(b"\n")
            continue
        yield raw, position, raw.endswith(b"\n")


class CheckpointedRuns(ProjectRuns):
    """``ProjectRuns`` with the same answers, at a cost that does not grow with the log.

    The checkpoint (beside the log) holds the folded states of every run up to a byte offset that
    ends a whole row, the log's identity (device, inode) and a digest of that prefix
    (``_prefix_digest``). It is used only when all of them match the log as it is now; anything
    else (absent, torn, foreign, another file, a shorter log, changed bytes at a probe) and the log
    is folded again from its start. Only rows after the offset are parsed; the checkpoint is
    rewritten (atomically) when the offset moved. A last row without its newline is counted but
    never folded into the checkpoint (a later append ends it first).
    """

    def __init__(self, project_log: Path, checkpoint: Path) -> None:
        super().__init__(project_log)
        self.checkpoint = checkpoint
        self._folded: dict[str, str] | None = None
        self.rebuilt: bool | None = None  # for tests: whether the last read folded from the start

    def _load(self, handle: IO[bytes], info: os.stat_result) -> tuple[int, str | None, dict[str, str]] | None:
        try:
            value = read_json_bounded(
                self.checkpoint, limit=MAX_CHECKPOINT_BYTES, what="the run checkpoint", strict=False
            )
        except FileRefused:
            return None
        if not isinstance(value, dict) or value.get("version") != CHECKPOINT_VERSION:
            return None
        offset, latest, states = value.get("offset"), value.get("latest"), value.get("states")
        if value.get("dev") != info.st_dev or value.get("ino") != info.st_ino:
            return None
        if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= info.st_size:
            return None
        if not isinstance(states, dict) or not all(
            isinstance(k, str) and CM_RUN_ID.fullmatch(k) and v in ("running", "done")
            for k, v in states.items()
        ):
            return None
        if latest is not None and latest not in states:
            return None
        if value.get("digest") != _prefix_digest(handle, offset):
            return None
        if offset:
            handle.seek(offset - 1)
            if handle.read(1) != b"\n":
                return None
        return offset, latest, states

    def _save(
        self, info: os.stat_result, offset: int, latest: str | None, states: dict[str, str], digest: str
    ) -> None:
        value = {
            "version": CHECKPOINT_VERSION,
            "dev": info.st_dev,
            "ino": info.st_ino,
            "offset": offset,
            "digest": digest,
            "latest": latest,
            "states": states,
        }
        data = json.dumps(value, separators=(",", ":")) + "\n"
        if len(data) <= MAX_CHECKPOINT_BYTES:
            with contextlib.suppress(OSError):  # a checkpoint is a cache: not writing it costs time only
                atomic_write(self.checkpoint, data)

    def _read(self) -> None:
        if self._folded is not None:
            return
        handle = _open_log(self.project_log) if self.project_log else None
        if handle is None:
            self._folded, self._latest, self._latest_read = {}, None, True
            return
        with handle:
            info = os.fstat(handle.fileno())
            loaded = self._load(handle, info)
            self.rebuilt = loaded is None
            offset, latest, states = loaded if loaded is not None else (0, None, {})
            start = offset
            handle.seek(offset)
            tail: tuple[str, str] | None = None  # a last row without its newline: counted, not folded
            for raw, end, whole in _lines_from(handle):
                found = _valid_row(raw) if raw is not None else None
                if not whole:
                    tail = found
                    break
                if found is not None:
                    _fold(states, *found)
                    latest = found[0]
                offset = end
            if offset != start or loaded is None:
                self._save(info, offset, latest, states, _prefix_digest(handle, offset))
        if tail is not None:
            states = dict(states)
            _fold(states, *tail)
            latest = tail[0]
        self._folded, self._latest, self._latest_read = states, latest, True

    @property
    def latest(self) -> str | None:
        self._read()
        return self._latest

    def state(self, run_id: str) -> str | None:
        self._read()
        assert self._folded is not None
        return self._folded.get(run_id)


def load_pointer(specs_dir: Path | None) -> JsonObject | None:
    """The run pointer, or None when absent, unreadable or not naming a valid run id."""
    if specs_dir is None:
        return None
    try:
        value = read_json_bounded(
            specs_dir / POINTER_NAME, limit=65_536, what="the run pointer", strict=False
        )
    except FileRefused:
        return None  # absent, not a regular file, too large, too deep or not JSON: no pointer
    if not isinstance(value, dict):
        return None
    run_id = value.get("run_id")
    if not isinstance(run_id, str) or not CM_RUN_ID.fullmatch(run_id):
        return None
    return value


def select_run_id(
    *, explicit: str | None, event: str, pointer: JsonObject | None, project: ProjectRuns, now: datetime
) -> tuple[str, bool]:
    """(run_id, is_new_run) following the reference's precedence."""
    if explicit is not None:
        if not CM_RUN_ID.fullmatch(explicit):
            raise RunSelectionError("invalid --run-id")
        return explicit, event == "run_start"
    if pointer is not None:
        pointed = str(pointer["run_id"])
        if pointer.get("status") == "running" and project.state(pointed) != "done":
            return pointed, False
        if pointer.get("status") == "done" and event in TERMINAL_EVENTS:
            return pointed, False
    if project.latest is not None:
        state = project.state(project.latest)
        if state == "running" or (state == "done" and event in TERMINAL_EVENTS):
            return project.latest, False
    return generated_run_id(now), True


def _pointed_global_log(pointer: JsonObject | None, home: Path, run_id: str) -> Path | None:
    if not pointer or pointer.get("run_id") != run_id:
        return None
    pointed = pointer.get("global_log")
    if not isinstance(pointed, str):
        return None
    raw = Path(pointed)
    candidate = (raw if raw.is_absolute() else home / raw).resolve(strict=False)
    try:
        parts = candidate.relative_to(home).parts
    except ValueError:
        return None
    if len(parts) != 3 or parts[0] != "runs" or not _MONTH.match(parts[1]) or parts[2] != f"{run_id}.jsonl":
        return None
    return candidate


def select_global_log(*, home: Path, run_id: str, at: datetime, pointer: JsonObject | None) -> Path:
    """The pointer's log for this run, else the one existing month file, else this month's."""
    pointed = _pointed_global_log(pointer, home, run_id)
    if pointed is not None:
        return pointed
    matches = sorted((home / "runs").glob(f"*/{run_id}.jsonl"))
    if len(matches) > 1:
        raise RunSelectionError("several global log files exist for this run id; repair the mirror first")
    if matches:
        return matches[0].resolve(strict=False)
    return home / "runs" / at.strftime("%Y-%m") / f"{run_id}.jsonl"


def write_pointer(specs_dir: Path, value: RunPointer) -> None:
    atomic_write(
        specs_dir / POINTER_NAME, json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
    )


def ensure_private_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)


@contextlib.contextmanager
def locked(path: Path, *, private: bool) -> Iterator[None]:
    """An exclusive lock file; private ones (in the log home) are readable by the owner only."""
    with file_lock(path):
        if private:
            with contextlib.suppress(OSError):
                os.chmod(path, 0o600)
        yield


def append_line(path: Path, record: Mapping[str, object], *, private: bool) -> None:
    """Append one compact JSON line, whole or not at all; a torn last line is fenced off first.

    The caller holds the log's lock. Private files (the global mirror) are created 0600. A write
    that does not complete is taken back and raised as ``appendlog.WriteFailed`` (``DISK_FULL`` or
    ``WRITE_INCOMPLETE``, exit 3; also an ``OSError``).
    """
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    # O_NOFOLLOW: a symlink in the log's place is never appended through (the specs dir is committed)
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | os.O_NOFOLLOW
    fd = os.open(path, flags, 0o600 if private else 0o644)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "the log is not a regular file")  # a FIFO is never written
        append_whole(fd, line, path.name)  # whole or not at all; a torn last line is fenced off
    finally:
        os.close(fd)
    if private:
        os.chmod(path, 0o600)
