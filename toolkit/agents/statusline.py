"""``workgroup statusline``: Claude Code's status line from the session's own transcript.

Claude Code runs the ``statusLine`` command after each change of the conversation with one JSON
object on stdin (session id, ``transcript_path``, model, workspace, running cost) and shows the
first line it prints. This prints the verified counts of the session: its transcript and its
``subagents/`` logs read by the usage reader (``toolkit.usage.claude``: allowlisted fields only)
and deduplicated by the usage rules (``toolkit.usage.dedup``), the re-read share (cache reads over
all prompt tokens) and the list-price estimate when its models are priced
(``toolkit.usage.cost``; calls of unpriced models are counted beside it). Nothing from the input is echoed: only numbers and fixed words.

It runs often and the agent waits for it, so the work is cached per transcript under the git
common dir (``workgroup/statusline/``, never committed):

* ``<key>.line``: the line, the (inode, size, mtime) of every file it was computed from, and per
  file the inode, offset and mark the counts were read up to. When nothing changed, that line is
  printed with the standard library alone; likewise when what was appended holds no complete line
  naming ``"usage"`` (prompts and tool results: no model call, so no count can have changed).
* ``<key>.state``: per file, the calls read so far, the byte offset read up to and a fingerprint
  of the file's first bytes and of the bytes just before the offset. A file that grew is read
  from that offset only (a refresh reads the appended tail); one that shrank, was replaced (another
  inode) or changed at either place is read again from the start. Claude Code only appends to a
  transcript; a same-length rewrite of its middle would not be noticed.

Both are written atomically (a unique temp file renamed into place); a cache that cannot be read
or written is ignored (the counts are then computed from the files). A status line must never
break the agent's screen: any failure prints one short fixed line and exits 0.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # the cached path is standard library only
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from toolkit.usage.model import Call

CACHE_VERSION = 1
MAX_STDIN = 1_048_576
MAX_SUBAGENT_FILES = 512
CHUNK = 16 * 1_048_576  # bytes decoded at once (a long transcript is read in pieces)
MARK = 256  # bytes at the start and just before the offset whose digest says the read part is unchanged
KEEP_CACHES = 64  # transcripts whose cache is kept (the least recently written go first)
TAIL_SCAN = 4 * 1_048_576  # appended bytes looked through for a model call without the reader
UNAVAILABLE = "workgroup: usage unavailable"
NO_TRANSCRIPT = "workgroup: no transcript yet"
NO_CALLS = "workgroup: no model calls yet"


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


def _start_folder(data: dict[str, Any]) -> str:
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


def _signature(files: list[tuple[str, str]]) -> list[list[Any]] | None:
    """(name, inode, size, mtime) of each file; None when the transcript itself is not a file."""
    import stat

    out: list[list[Any]] = []
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
        out.append([name, st.st_ino, st.st_size, st.st_mtime_ns])
    return out


# --- the cache ---------------------------------------------------------------------------------


def cache_dir(start: str) -> str | None:
    """``<git common dir>/workgroup/statusline`` of the repository holding ``start`` (None: no repository)."""
    from toolkit.infra.localstate import LOCAL_STATE_NAME, find_git

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
    from hashlib import blake2b

    return blake2b(transcript.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _read_small(path: str, limit: int) -> bytes | None:
    """Our own cache file: never through a symlink, a regular file only, at most ``limit`` bytes."""
    import stat

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


def _line_doc(folder: str, key: str) -> dict[str, Any] | None:
    """The ``.line`` cache: ``line``, ``sig`` (the files it was computed from) and ``at`` (per file,
    the inode, offset and mark the counts were read up to)."""
    raw = _read_small(os.path.join(folder, key + ".line"), 1_048_576)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("v") != CACHE_VERSION or not isinstance(data.get("line"), str):
        return None
    return data


def _nothing_counted_since(
    doc: dict[str, Any], files: list[tuple[str, str]], signature: list[list[Any]]
) -> bool:
    """Whether what was appended since the cached line holds no model call: no complete new line of
    any file names ``"usage"`` (tool results and prompts only), no file is new and none went away.
    Then the counts are the cached ones, known with the standard library alone."""
    at = doc.get("at")
    old = doc.get("sig")
    if not isinstance(at, dict) or not isinstance(old, list):
        return False
    if {entry[0] for entry in signature} != _cached_names(old):
        return False  # a subagent log appeared or went away
    paths = dict(files)
    for name, ino, size, _mtime in signature:
        if not _appended_without_calls(paths[name], at.get(name), ino, size):
            return False
    return True


def _cached_names(old: list[Any]) -> set[Any]:
    """The file names of a cached signature (entries that are not non-empty lists are skipped)."""
    return {entry[0] for entry in old if isinstance(entry, list) and entry}


def _appended_without_calls(path: str, mark: Any, ino: int, size: int) -> bool:
    """Whether a file only grew past its cached ``mark`` (same inode, an offset not past the end,
    at most ``TAIL_SCAN`` bytes appended) and what was appended names no model call."""
    if not (isinstance(mark, list) and len(mark) == 3 and mark[0] == ino and isinstance(mark[1], int)):
        return False
    if not (mark[1] <= size and size - mark[1] <= TAIL_SCAN):
        return False
    return _tail_without_calls(path, mark)


def _tail_without_calls(path: str, mark: list[Any]) -> bool:
    import stat

    _ino, offset, digest = mark
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_ino != mark[0] or st.st_size < offset:
            return False
        if offset and _mark(fd, offset) != digest:
            return False
        tail = os.pread(fd, min(st.st_size - offset, TAIL_SCAN), offset)
    except OSError:
        return False
    finally:
        os.close(fd)
    # the torn last line waits, as the reader leaves it; a complete one naming "usage" is read
    return b'"usage"' not in tail[: tail.rfind(b"\n") + 1]


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


def count(calls: Sequence[Call]) -> Counts:
    """Totals of the calls not dropped by deduplication, and their list price (when priced)."""
    from toolkit.usage.cost import PRICE_TABLE, Estimate

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


def _short(number: int) -> str:
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
        f"{_short(counts.tokens)} tok verified",
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


_TYPES: Any = None


def _types() -> Any:
    """(FileState, encode, decode): the cache's typed form, built on first use (msgspec is not
    imported on the cached path)."""
    global _TYPES
    if _TYPES is None:
        import msgspec

        from toolkit.usage.model import Call

        # built with defstruct: this module's annotations are strings, which a local class cannot resolve
        file_state = msgspec.defstruct(
            "FileState",
            [
                ("ino", int),
                ("size", int),
                ("mtime_ns", int),
                ("offset", int),  # read up to here (just after a newline)
                ("mark", str),  # digest of the MARK bytes before offset
                ("calls", list[Call]),
            ],
        )
        state_type = msgspec.defstruct("State", [("version", int), ("files", dict[str, file_state])])  # type: ignore[valid-type]

        decoder = msgspec.json.Decoder(state_type)

        def decode(raw: bytes | None) -> dict[str, Any]:
            if not raw:
                return {}
            try:
                state: Any = decoder.decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                return {}
            return state.files if state.version == CACHE_VERSION else {}

        def encode(files: dict[str, Any]) -> bytes:
            return msgspec.json.encode(state_type(CACHE_VERSION, files))

        _TYPES = (file_state, encode, decode)
    return _TYPES


def _read_file_calls(path: str, root: str, previous: Any | None) -> Any | None:
    """The file's state: calls read from the cached offset (or the start) to its last full line.

    None when the file cannot be opened as a regular file."""
    import stat
    from pathlib import Path

    from toolkit.usage import claude
    from toolkit.usage.sources import LogFile

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        state = _resumed_state(fd, st, previous)
        log = LogFile("claude", Path(path), Path(root))
        while state.offset < st.st_size:
            data = os.pread(fd, min(CHUNK, st.st_size - state.offset), state.offset)
            end = _readable_end(data)
            if end == 0:
                break  # nothing more, or a torn last line: read once it is whole
            parsed = claude.read(log, 0, data[:end])
            state.calls += [item for item in parsed.items if not _is_boundary(item)]
            state.offset += end
        if state.offset:
            state.mark = _mark(fd, state.offset)
        state.ino, state.size, state.mtime_ns = st.st_ino, st.st_size, st.st_mtime_ns
        return state
    except OSError:
        return None
    finally:
        os.close(fd)


def _resumed_state(fd: int, st: os.stat_result, previous: Any | None) -> Any:
    """The cached state to read on from when the part it read is still the file's start, else a
    fresh one (this inode, nothing read)."""
    if previous is not None and _still_prefix(fd, st, previous):
        return previous
    return _types()[0](ino=st.st_ino, size=0, mtime_ns=0, offset=0, mark="", calls=[])


def _readable_end(data: bytes) -> int:
    """How many bytes of a chunk to read now: up to its last newline; a chunk without one whole
    when it fills ``CHUNK`` (one line longer than a chunk), else none (a torn last line waits)."""
    end = data.rfind(b"\n") + 1
    if end == 0 and len(data) >= CHUNK:
        return len(data)
    return end


def _is_boundary(item: Any) -> bool:
    from toolkit.usage.model import Boundary

    return isinstance(item, Boundary)


def _still_prefix(fd: int, st: os.stat_result, state: Any) -> bool:
    """Whether the part read before is still the file's start: same inode, not shorter, same first
    and last bytes before the offset. A transcript only grows; a rewrite of its middle that keeps
    every byte around these two places is not noticed."""
    if st.st_ino != state.ino or st.st_size < state.offset:
        return False
    if state.offset == 0:
        return True
    try:
        return bool(_mark(fd, state.offset) == state.mark)
    except OSError:
        return False


def _mark(fd: int, offset: int) -> str:
    """Digest of the first and the last ``MARK`` bytes before ``offset``."""
    from hashlib import blake2b

    start = max(0, offset - MARK)
    head = os.pread(fd, min(MARK, offset), 0)
    return blake2b(head + b"\x00" + os.pread(fd, offset - start, start), digest_size=16).hexdigest()


def compute(
    transcript: str, files: list[tuple[str, str]], folder: str | None, key: str
) -> tuple[str, dict[str, list[Any]]]:
    """(the line, per file the inode, offset and mark read up to), reading only what the cache
    does not hold (and storing what was read)."""
    state_path = os.path.join(folder, key + ".state") if folder else None
    _, encode_state, decode_state = _types()
    previous = decode_state(_read_small(state_path, 256 * 1_048_576)) if state_path else {}
    states = _read_states(files, os.path.dirname(os.path.dirname(transcript)), previous)
    if "" not in states:
        return NO_TRANSCRIPT, {}
    if folder is not None and state_path is not None:
        _store(folder, state_path, encode_state(states), prune=True)
    line = _deduplicated_line(states)
    return line, {name: [state.ino, state.offset, state.mark] for name, state in states.items()}


def _read_states(files: list[tuple[str, str]], root: str, previous: dict[str, Any]) -> dict[str, Any]:
    """Per file name, its state read on from the cached one; a file that cannot be read as a
    regular file is left out."""
    states = {}
    for name, path in files:
        state = _read_file_calls(path, root, previous.get(name))
        if state is not None:
            states[name] = state
    return states


def _deduplicated_line(states: dict[str, Any]) -> str:
    """The status line of the calls of every file, deduplicated across them by the usage rules."""
    from toolkit.usage.dedup import Seen, dedup_session
    from toolkit.usage.model import FileLog

    logs = [FileLog("claude", name, "", "", items=list(s.calls)) for name, s in states.items()]
    dedup_session(logs, Seen(), {})
    return render(count([c for log in logs for c in log.items]))  # type: ignore[misc]


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
    if doc is not None and doc.get("sig") == signature:
        return str(doc["line"])
    line, at = _line_and_marks(doc, given.transcript, files, signature, folder, key)
    if folder is not None and line != NO_TRANSCRIPT:
        payload = json.dumps({"v": CACHE_VERSION, "sig": signature, "line": line, "at": at}).encode()
        _store(folder, os.path.join(folder, key + ".line"), payload)
    return line


def _line_and_marks(
    doc: dict[str, Any] | None,
    transcript: str,
    files: list[tuple[str, str]],
    signature: list[list[Any]],
    folder: str | None,
    key: str,
) -> tuple[str, Any]:
    """The cached line and marks when nothing counted was appended since, else both computed."""
    if doc is not None and _nothing_counted_since(doc, files, signature):
        return str(doc["line"]), doc["at"]
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
