"""The on-disk layout of ``.workgroup/`` and the local state dir, plus the write primitives.

* ``atomic_write``: temp file (in the local state dir inside a repository, else beside the
  target), fsync, rename, fsync the directory. A reader sees the old file or the new one, never a
  part, and a killed writer leaves no temp in the work tree.
* ``file_lock``: an advisory ``flock`` on a sidecar lock file, with a timeout that raises an
  environment error (exit 3) instead of hanging.
* ``create_exclusive``: claims with ``O_CREAT | O_EXCL``; exactly one process wins.
* ``append_jsonl`` / ``read_jsonl``: append-only logs that tolerate a torn last line: a torn
  line is reported and skipped, and a later append starts on a fresh line.
* Reading goes through ``toolkit.infra.boundedio`` (regular files only, size and depth caps).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.core.errors import EnvironmentFailure, ExitCode, InvalidInput
from toolkit.infra.appendlog import append_whole, write_failed
from toolkit.infra.boundedio import (
    MAX_LOG_BYTES,
    TOO_DEEP,
    FileRefused,
    loads_bounded,
    read_json_bounded,
    read_regular,
)
from toolkit.infra.gitlocation import WORKGROUP_DIR, find_git
from toolkit.infra.ledger import LEDGER_NAME

LOCAL_STATE_NAME = "workgroup"  # inside the git common dir, shared by all worktrees
DEFAULT_ARTIFACT_BOUNDARY = "knowzcode/artifacts"
LOCK_TIMEOUT_SECONDS = 10.0
MAX_INPUT_FILE_BYTES = 1_048_576

_SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def safe_segment(value: object, what: str = "identifier") -> str:
    """Ids used in file names: ``[A-Za-z0-9._-]{1,128}``, never ``.`` or ``..``."""
    # fullmatch: with match(), "$" would also accept a trailing newline ("id\n")
    if not isinstance(value, str) or not _SAFE_SEGMENT.fullmatch(value) or value in (".", ".."):
        raise InvalidInput("UNSAFE_SEGMENT", f"{what} must match [A-Za-z0-9._-]{{1,128}} and not be . or ..")
    return value


@dataclass(frozen=True)
class Layout:
    """Paths of the committed state (under the work tree) and the local state (git common dir)."""

    workdir: Path
    common_dir: Path

    @property
    def workgroup(self) -> Path:
        return self.workdir / WORKGROUP_DIR

    @property
    def config(self) -> Path:
        return self.workgroup / "config.yml"

    @property
    def local(self) -> Path:
        return self.common_dir / LOCAL_STATE_NAME

    def workgroup_dir(self, workgroup_id: str) -> Path:
        return self.workgroup / "workgroups" / safe_segment(workgroup_id, "workgroup_id")

    def capsule_path(self, workgroup_id: str, task_id: str) -> Path:
        return self.workgroup_dir(workgroup_id) / "capsules" / f"{safe_segment(task_id, 'task_id')}.json"

    def lineage_path(self, workgroup_id: str, lineage_id: str) -> Path:
        return (
            self.workgroup_dir(workgroup_id) / "lineages" / f"{safe_segment(lineage_id, 'lineage_id')}.json"
        )

    def result_path(self, workgroup_id: str, task_id: str) -> Path:
        return self.workgroup_dir(workgroup_id) / "results" / f"{safe_segment(task_id, 'task_id')}.md"

    def promotion_path(self, run_id: str) -> Path:
        return self.workgroup / "promotions" / f"{safe_segment(run_id, 'measurement_run_id')}.json"

    # local state (never committed), shared by every worktree of the repository
    @property
    def owners_registry(self) -> Path:
        return self.local / "owners.json"

    @property
    def telemetry_log(self) -> Path:
        return self.local / "telemetry.jsonl"

    @property
    def replay_ledger(self) -> Path:

        return self.local / LEDGER_NAME

    @property
    def probe_cache(self) -> Path:
        return self.local / "probes.json"

    @property
    def vault_journal(self) -> Path:
        return self.local / "vault-journal.jsonl"

    @property
    def pseudonyms(self) -> Path:
        return self.local / "pseudonyms.json"

    def lock(self, name: str) -> Path:
        return self.local / "locks" / f"{safe_segment(name, 'lock name')}.lock"

    def artifact_boundary(self, boundary: str = DEFAULT_ARTIFACT_BOUNDARY) -> Path:
        return self.workdir / boundary


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# Temp files (issue 24): a temp for a file inside a git repository lives in the local state dir
# (``<git common dir>/workgroup/tmp/``), never in the work tree, so a writer killed between the
# write and the rename leaves nothing ``git add -A`` could commit. When the rename (or hard link)
# across to the target fails with EXDEV (a worktree on another mount), the write is redone with a
# temp beside the target named ``.<name>.<random>.workgroup-tmp``, a pattern the writer adds to
# the repository's ``info/exclude`` first. Files outside any repository keep a temp beside them.
# Orphans (a temp older than ``ORPHAN_AGE_SECONDS``) are removed by the next writer that creates a
# temp in the same folder (one bounded listing).
TEMP_DIR_NAME = "tmp"
TEMP_SUFFIX = ".tmp"
BESIDE_SUFFIX = ".workgroup-tmp"
BESIDE_EXCLUDE = "*" + BESIDE_SUFFIX
ORPHAN_AGE_SECONDS = 60.0
_SWEEP_LIMIT = 512  # entries looked at per sweep
_PREFIX_CHARS = 96  # of the target's name in the temp's name (a 255-byte name would not fit)


def _temp_dir_for(parent: Path) -> Path | None:
    """``<git common dir>/workgroup/tmp`` of the repository holding ``parent``, or None outside any."""

    location = find_git(str(parent))
    if location is None:
        return None
    return Path(location.common_dir) / LOCAL_STATE_NAME / TEMP_DIR_NAME


def sweep_orphans(directory: Path, suffix: str, *, now: float | None = None) -> int:
    """Remove temp files (``.*<suffix>``) older than ``ORPHAN_AGE_SECONDS`` in ``directory``."""
    cutoff = (time.time() if now is None else now) - ORPHAN_AGE_SECONDS
    removed = 0
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for seen, entry in enumerate(entries):
            if seen >= _SWEEP_LIMIT:
                break
            name = entry.name
            if not (name.startswith(".") and name.endswith(suffix)):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue
    return removed


def _exclude_beside_temps(parent: Path) -> None:
    """Make sure ``info/exclude`` of the repository holding ``parent`` ignores beside temps."""

    location = find_git(str(parent))
    if location is None:
        return
    exclude = Path(location.common_dir) / "info" / "exclude"
    with contextlib.suppress(OSError, FileRefused, UnicodeDecodeError):
        raw = read_regular(str(exclude), limit=MAX_INPUT_FILE_BYTES, what="info/exclude", missing_ok=True)
        text = "" if raw is None else raw.decode("utf-8")
        if BESIDE_EXCLUDE in text.splitlines():
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        lead = "" if not text or text.endswith("\n") else "\n"
        fd = os.open(exclude, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            os.write(
                fd, f"{lead}# workgroup: temp files of an interrupted write\n{BESIDE_EXCLUDE}\n".encode()
            )
        finally:
            os.close(fd)


def _write_temp(path: Path, payload: bytes, directory: Path, suffix: str) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    sweep_orphans(directory, suffix)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:_PREFIX_CHARS]}.", suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # a full device: coded (exit 3), and the old file is untouched
            raise write_failed(exc, path.name, "the file was not changed") from None
        raise
    return tmp


def _temp_beside(path: Path, data: bytes | str, *, beside: bool = False) -> str:
    """Write ``data`` to a fsynced temp file for ``path``; returns the temp path.

    Inside a git repository the temp is in the local state dir (see above); with ``beside`` (the
    EXDEV retry) or outside any repository it is in ``path``'s directory.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    temp_dir = _temp_dir_for(path.parent)
    if temp_dir is None:
        return _write_temp(path, payload, path.parent, TEMP_SUFFIX)
    if beside:
        _exclude_beside_temps(path.parent)
        return _write_temp(path, payload, path.parent, BESIDE_SUFFIX)
    return _write_temp(path, payload, temp_dir, TEMP_SUFFIX)


def open_temp(path: Path) -> tuple[int, str]:
    """An open temp file (descriptor, name) for a streamed write of ``path``, where ``atomic_write``
    keeps its temps; the caller writes, fsyncs and ends with ``replace_from_temp``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    directory = _temp_dir_for(path.parent) or path.parent
    directory.mkdir(parents=True, exist_ok=True)
    sweep_orphans(directory, TEMP_SUFFIX)
    return tempfile.mkstemp(prefix=f".{path.name[:_PREFIX_CHARS]}.", suffix=TEMP_SUFFIX, dir=directory)


def replace_from_temp(tmp: str, path: Path) -> None:
    """``os.replace(tmp, path)``; across file systems (EXDEV) through a copy to a temp beside ``path``."""
    try:
        os.replace(tmp, path)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise

    _exclude_beside_temps(path.parent)
    fd, beside = tempfile.mkstemp(
        prefix=f".{path.name[:_PREFIX_CHARS]}.", suffix=BESIDE_SUFFIX, dir=path.parent
    )
    try:
        with os.fdopen(fd, "wb") as out, open(tmp, "rb") as src:
            shutil.copyfileobj(src, out)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(beside, stat.S_IMODE(os.stat(tmp).st_mode))
        os.replace(beside, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(beside)
        raise
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def atomic_write(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` atomically (temp + fsync + rename + dir fsync)."""
    tmp = _temp_beside(path, data)
    try:
        os.chmod(tmp, mode)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            os.unlink(tmp)  # the local state dir is on another file system: a temp beside instead
            tmp = _temp_beside(path, data, beside=True)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def write_json_atomic(path: Path, value: Any) -> None:
    atomic_write(path, json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def create_exclusive(path: Path, data: bytes | str) -> bool:
    """Create ``path`` only if absent. Returns False when another writer got there first.

    The content is written to a temp file first and hard-linked into place, so a reader never
    sees a half-written claim.
    """
    tmp = _temp_beside(path, data)
    try:
        try:
            try:
                os.link(tmp, path)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                os.unlink(tmp)  # another file system: link from a temp beside instead
                tmp = _temp_beside(path, data, beside=True)
                os.link(tmp, path)
        except FileExistsError:
            return False
        _fsync_dir(path.parent)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


@contextlib.contextmanager
def file_lock(path: Path, *, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Exclusive advisory lock on ``path`` (created if needed); exit-3 error on timeout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)  # a symlinked lock is never ours
    try:
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() >= deadline:
                    raise EnvironmentFailure(
                        "LOCK_TIMEOUT",
                        f"timed out waiting for lock {path.name}",
                        exit_code=ExitCode.ENVIRONMENT,
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def append_jsonl(path: Path, record: Any) -> None:
    """Append one JSON line. Caller holds the log's lock. A torn last line is fenced off; a write
    that does not complete is taken back and raised as ``DISK_FULL``/``WRITE_INCOMPLETE`` (exit 3)."""
    line = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    # our own log: a symlink or a FIFO in its place is refused, never followed or written
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | os.O_NOFOLLOW, 0o644)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise EnvironmentFailure(
                "LOG_NOT_A_FILE", f"{path.name} is not a regular file; nothing was appended"
            )
        append_whole(fd, line, path.name)  # whole or not at all; a torn last line is fenced off
    finally:
        os.close(fd)


@dataclass(frozen=True)
class JsonlRow:
    line: int
    value: Any


@dataclass(frozen=True)
class JsonlProblem:
    line: int
    reason: str


def read_jsonl(
    path: Path, *, limit: int = MAX_LOG_BYTES, what: str = "log", follow_symlinks: bool = False
) -> tuple[list[JsonlRow], list[JsonlProblem]]:
    """All parseable rows and the problems (torn, invalid or too deeply nested lines).

    Content never raises; the file itself must be a regular file within ``limit`` (``FileRefused``
    otherwise: a FIFO, a directory, a symlink in our state directory, a log past the cap).
    """
    rows: list[JsonlRow] = []
    problems: list[JsonlProblem] = []
    raw = read_regular(path, limit=limit, what=what, follow_symlinks=follow_symlinks, missing_ok=True)
    if raw is None:
        return rows, problems
    lines = raw.split(b"\n")
    for number, chunk in enumerate(lines, start=1):
        if not chunk.strip():
            continue
        torn = number == len(lines)  # no newline after the last line
        try:
            rows.append(JsonlRow(number, loads_bounded(chunk, what=what, strict=False)))
        except FileRefused as exc:
            reason = "torn last line" if torn else "invalid JSON line"
            problems.append(JsonlProblem(number, "nested too deep" if exc.code == TOO_DEEP else reason))
    return rows, problems


def read_json_file(path: Path, *, limit: int = MAX_INPUT_FILE_BYTES, what: str = "input file") -> Any:
    """A JSON file given by the user: regular file, size cap, depth cap; coded errors (exit 2)."""
    return read_json_bounded(path, limit=limit, what=what)


def read_json_request(source: str, *, what: str, stdin_what: str | None = None) -> Any:
    """A command's JSON request: the file ``source``, or stdin for ``-`` (at most
    ``MAX_INPUT_FILE_BYTES``, ``FILE_TOO_LARGE`` beyond; ``stdin_what`` names it in messages)."""
    if source != "-":
        return read_json_file(Path(source), what=what)

    label = what if stdin_what is None else stdin_what
    raw = sys.stdin.buffer.read(MAX_INPUT_FILE_BYTES + 1)
    if len(raw) > MAX_INPUT_FILE_BYTES:
        raise InvalidInput("FILE_TOO_LARGE", f"{label} exceeds {MAX_INPUT_FILE_BYTES} bytes")
    return loads_bounded(raw, what=label, strict=False)
