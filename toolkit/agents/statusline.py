"""``workgroup statusline``: Claude Code's status line from the session's own transcript.

Claude Code runs the ``statusLine`` command after each change of the conversation with one JSON
object on stdin (session id, ``transcript_path``, model, workspace, running cost) and shows the
first line it prints. This prints the verified counts of the session: its transcript and its
``subagents/`` logs read with the usage reader's allowlisted fields and counting rules
(``toolkit.usage.live``: the lean reader of ``toolkit.usage.lean`` and the rules of
``toolkit.usage.rules``, which ``workgroup usage`` applies too), a resumed session's copied history
left to the session it was made in, the re-read share (cache reads over all prompt tokens) and the
list-price estimate when its models are priced (``toolkit.usage.cost``; calls of unpriced models
are counted beside it). Nothing from the input is echoed: only numbers and fixed words.

It runs often and the agent waits for it, so the work is cached per transcript under the git
common dir (``workgroup/statusline/``, never committed):

* ``<key>.line``: the line, the (inode, size, mtime) of every file it was computed from, and per
  file the inode, offset and mark the counts were read up to. When nothing changed, that line is
  printed by this module alone (no part of the usage package is imported); likewise when what was
  appended holds no complete line naming ``"usage"`` (prompts and tool results: no model call, so
  no count can have changed).
* ``<key>.state``: ``toolkit.usage.live``'s state: per file, the kept line of each call read so
  far, the byte offset read up to and a mark of the file's first bytes and of the bytes just
  before the offset (``toolkit.usage.marks``). A file that grew is read from that offset only;
  one that shrank, was replaced (another inode) or changed at either place is read again from the
  start. Claude Code only appends to a transcript; a same-length rewrite of its middle would not
  be noticed.

Both are written atomically (a unique temp file renamed into place); a cache that cannot be read
or written is ignored (the counts are then computed from the files). A status line must never
break the agent's screen: any failure prints one short fixed line and exits 0.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from hashlib import blake2b

from toolkit.infra.gitlocation import LOCAL_STATE_NAME, find_git
from toolkit.usage.marks import mark

TYPE_CHECKING = False  # typing is not imported on the status line's path
if TYPE_CHECKING:
    from collections.abc import Mapping

    from toolkit.agents.shapes import LineCache, SigEntry
    from toolkit.core.jsontypes import JsonObject

CACHE_VERSION = 2
MAX_STDIN = 1_048_576
MAX_SUBAGENT_FILES = 512
KEEP_CACHES = 64  # transcripts whose cache is kept (the least recently written go first)
TAIL_SCAN = 4 * 1_048_576  # appended bytes looked through for a model call without the reader
UNAVAILABLE = "workgroup: usage unavailable"
NO_TRANSCRIPT = "workgroup: no transcript yet"


class _Input:
    __slots__ = ("start", "transcript")

    def __init__(self, transcript: str, start: str) -> None:
        self.transcript = transcript
        self.start = start


def parse_input(raw: bytes) -> _Input | None:
    """The transcript path and the folder to find the repository from; None for anything unusable."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    path = data.get("transcript_path")
    if not isinstance(path, str) or not _usable_path(path) or not path.endswith(".jsonl"):
        return None
    return _Input(path, _start_folder(data))


def _start_folder(data: JsonObject) -> str:
    """The folder to find the repository from: the workspace's ``project_dir``, else its
    ``current_dir``, else ``cwd``, the first that is a usable absolute path ("" when none is)."""
    workspace = data.get("workspace")
    for key in ("project_dir", "current_dir"):
        value = workspace.get(key) if isinstance(workspace, dict) else None
        if isinstance(value, str) and _usable_path(value):
            return value
    cwd = data.get("cwd")
    return cwd if isinstance(cwd, str) and _usable_path(cwd) else ""


def _usable_path(value: str) -> bool:
    return 0 < len(value) <= 4096 and "\x00" not in value and os.path.isabs(value)


# --- the files of one session ------------------------------------------------------------------


def session_files(transcript: str) -> list[tuple[str, str]]:
    """(name in the cache, path) of the transcript and its ``<session>/subagents/*.jsonl``."""
    files = [("", transcript)]
    folder = os.path.join(transcript[: -len(".jsonl")], "subagents")
    try:
        with os.scandir(folder) as entries:
            names = sorted(
                e.name for e in entries if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)
            )
    except OSError:
        return files
    files += [("subagents/" + name, os.path.join(folder, name)) for name in names[:MAX_SUBAGENT_FILES]]
    return files


def _signature(files: list[tuple[str, str]]) -> list[SigEntry] | None:
    """(name, inode, size, mtime) of each file; None when the transcript itself is not a file."""
    out: list[SigEntry] = []
    for name, path in files:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            if not name:
                return None
            continue
        if not stat.S_ISREG(st.st_mode):
            if not name:
                return None
            continue
        out.append((name, st.st_ino, st.st_size, st.st_mtime_ns))
    return out


def _rows(signature: list[SigEntry]) -> list[list[str | int]]:
    """The signature as the ``.line`` cache stores it: JSON lists, which a cached one is compared to."""
    return [list(entry) for entry in signature]


# --- the cache ---------------------------------------------------------------------------------


def cache_dir(start: str) -> str | None:
    """``<git common dir>/workgroup/statusline`` of the repository holding ``start`` (None: no repository)."""
    if not start:
        return None
    try:
        found = find_git(start)
    except OSError:
        return None
    if found is None:
        return None
    return os.path.join(found.common_dir, LOCAL_STATE_NAME, "statusline")


def cache_key(transcript: str) -> str:
    return blake2b(transcript.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _read_small(path: str, limit: int) -> bytes | None:
    """Our own cache file: never through a symlink, a regular file only, at most ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return os.read(fd, limit + 1)[:limit]
    except OSError:
        return None
    finally:
        os.close(fd)


def _write_atomic(path: str, data: bytes) -> None:
    """A unique temp file beside ``path``, then one rename: a reader sees the old or the new file."""
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _line_doc(folder: str, key: str) -> JsonObject | None:
    """The ``.line`` cache: ``line``, ``sig`` (the files it was computed from) and ``at`` (per file,
    the inode, offset and mark the counts were read up to)."""
    raw = _read_small(os.path.join(folder, key + ".line"), 1_048_576)
    if raw is None:
        return None
    try:
        data: object = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("v") != CACHE_VERSION or not isinstance(data.get("line"), str):
        return None
    return data


def _unchanged_marks(
    doc: JsonObject, files: list[tuple[str, str]], signature: list[SigEntry]
) -> JsonObject | None:
    """The cached marks (``at``) when what was appended since the cached line holds no model call:
    no complete new line of any file names ``"usage"`` (tool results and prompts only), no file is
    new and none went away. Then the counts are the cached ones, known with the standard library
    alone. None otherwise."""
    at = doc.get("at")
    old = doc.get("sig")
    if not isinstance(at, dict) or not isinstance(old, list):
        return None
    if {entry[0] for entry in signature} != _cached_names(old):
        return None  # a subagent log appeared or went away
    paths = dict(files)
    for name, ino, size, _mtime in signature:
        if not _appended_without_calls(paths[name], at.get(name), ino, size):
            return None
    return at


def _cached_names(old: list[object]) -> set[object]:
    """The file names of a cached signature (entries that are not non-empty lists are skipped)."""
    return {entry[0] for entry in old if isinstance(entry, list) and entry}


def _appended_without_calls(path: str, at: object, ino: int, size: int) -> bool:
    """Whether a file only grew past its cached mark ``at`` (same inode, an offset not past the end,
    at most ``TAIL_SCAN`` bytes appended) and what was appended names no model call."""
    if not (isinstance(at, list) and len(at) == 3 and at[0] == ino and isinstance(at[1], int)):
        return False
    offset: int = at[1]
    if not (offset <= size and size - offset <= TAIL_SCAN):
        return False
    return _tail_without_calls(path, ino, offset, at[2])


def _tail_without_calls(path: str, ino: int, offset: int, digest: object) -> bool:
    """Whether the file is still the one read (``ino``), its bytes before ``offset`` still carry the
    mark ``digest``, and what follows names no model call."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_ino != ino or st.st_size < offset:
            return False
        if offset and mark(fd, offset) != digest:
            return False
        tail = os.pread(fd, min(st.st_size - offset, TAIL_SCAN), offset)
    except OSError:
        return False
    finally:
        os.close(fd)
    # the torn last line waits, as the reader leaves it; a complete one naming "usage" is read
    return b'"usage"' not in tail[: tail.rfind(b"\n") + 1]


# --- the line ----------------------------------------------------------------------------------


def compute(
    transcript: str, files: list[tuple[str, str]], folder: str | None, key: str
) -> tuple[str, Mapping[str, object]]:
    """(the line, per file the inode, offset and mark read up to), reading only what the cache
    does not hold (and storing what was read)."""
    from toolkit.usage import live  # the reader, the rules and the prices: only when a call may be new

    state_path = os.path.join(folder, key + ".state") if folder else None
    raw = _read_small(state_path, 256 * 1_048_576) if state_path else None
    line, marks, state = live.counted_line(transcript, files, raw)
    if state is None:
        return NO_TRANSCRIPT, {}
    if folder is not None and state_path is not None:
        _store(folder, state_path, state, prune=True)
    return line, marks


def _store(folder: str, path: str, data: bytes, *, prune: bool = False) -> None:
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if prune:
            _prune(folder)
        _write_atomic(path, data)
    except OSError:
        pass  # a cache that cannot be written costs time, never the answer


def _prune(folder: str) -> None:
    """Keep the caches of the ``KEEP_CACHES`` transcripts written last (and stray temp files go)."""
    with os.scandir(folder) as entries:
        found = [
            (e.stat(follow_symlinks=False).st_mtime, e.name)
            for e in entries
            if e.is_file(follow_symlinks=False)
        ]
    states = sorted((m, n) for m, n in found if n.endswith(".state"))
    for _mtime, name in states[: max(0, len(states) - KEEP_CACHES)]:
        for suffix in (".state", ".line"):
            try:
                os.unlink(os.path.join(folder, name[: -len(".state")] + suffix))
            except OSError:
                pass


def status_line(raw: bytes, *, use_cache: bool = True) -> str:
    """The line for one status-line input (never raises for bad input)."""
    given = parse_input(raw)
    if given is None:
        return UNAVAILABLE
    files = session_files(given.transcript)
    signature = _signature(files)
    if signature is None:
        return NO_TRANSCRIPT
    folder = cache_dir(given.start) if use_cache else None
    key = cache_key(given.transcript)
    doc = _line_doc(folder, key) if folder is not None else None
    rows = _rows(signature)
    if doc is not None and doc.get("sig") == rows:
        return str(doc["line"])
    line, at = _line_and_marks(doc, given.transcript, files, signature, folder, key)
    if folder is not None and line != NO_TRANSCRIPT:
        cache: LineCache = {"v": CACHE_VERSION, "sig": rows, "line": line, "at": at}
        payload = json.dumps(cache).encode()
        _store(folder, os.path.join(folder, key + ".line"), payload)
    return line


def _line_and_marks(
    doc: JsonObject | None,
    transcript: str,
    files: list[tuple[str, str]],
    signature: list[SigEntry],
    folder: str | None,
    key: str,
) -> tuple[str, Mapping[str, object]]:
    """The cached line and marks when nothing counted was appended since, else both computed."""
    if doc is not None:
        at = _unchanged_marks(doc, files, signature)
        if at is not None:
            return str(doc["line"]), at
    return compute(transcript, files, folder, key)


def main(argv: list[str] | None = None) -> int:
    """Console entry: one line on stdout, exit 0 whatever the input (2 for an unknown option)."""
    args = list(sys.argv[1:] if argv is None else argv)
    unknown = [a for a in args if a != "--no-cache"]
    if unknown:
        sys.stderr.write("error[USAGE]: workgroup statusline takes only --no-cache (input on stdin)\n")
        return 2
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1)
        line = UNAVAILABLE if len(raw) > MAX_STDIN else status_line(raw, use_cache="--no-cache" not in args)
    except Exception:  # noqa: BLE001 - a status line prints a fixed line instead of a traceback
        line = UNAVAILABLE
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except OSError:
        pass  # the agent stopped reading: nothing to tell it
    return 0
