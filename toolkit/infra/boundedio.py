"""The one bounded reader for files the toolkit does not control (standard library only).

State files, logs and file arguments can hold anything: a FIFO that would block ``open`` forever,
a directory, a dangling symlink, gigabytes, or JSON nested 100,000 deep that would blow the
interpreter's recursion limit inside ``json.loads``. Every such reader goes through here:

* ``read_regular``: opens with ``O_NONBLOCK`` (a FIFO cannot block the open) and, for files in
  our own state directories, ``O_NOFOLLOW``; then ``fstat`` on the open descriptor and only a
  regular file is read (no race between the check and the read); at most ``limit`` bytes.
* ``loads_bounded``: strict UTF-8 JSON whose nesting depth is checked first by a linear scan of
  the brackets outside strings (no recursion, so the check cannot itself overflow).

Every refusal is a ``FileRefused`` with a stable code; callers that own a state file re-raise
it under their own code and exit class. This module imports only ``os``/``re``/``json`` so the
runtime path (stdlib only, fast start-up) can use it too.
"""

from __future__ import annotations

import errno
import json
import os
import stat

from toolkit.core.errors import ExitCode, ToolkitError
from toolkit.core.strictjson import MAX_JSON_DEPTH, json_depth_exceeds, json_error_at, loads_strict

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays off the runtime path, which reads the registry through this module
    from typing import IO, Any

MAX_FILE_BYTES = 1_048_576
MAX_LOG_BYTES = 64 * 1_048_576
# Lowers (never raises) every cap: the tests of the size rule use it instead of writing huge files.
CAP_ENV = "WORKGROUP_MAX_READ_BYTES"

NOT_FOUND = "FILE_NOT_FOUND"
NOT_A_FILE = "NOT_A_FILE"
UNREADABLE = "FILE_UNREADABLE"
TOO_LARGE = "FILE_TOO_LARGE"
INVALID_JSON = "INVALID_JSON"
TOO_DEEP = "JSON_TOO_DEEP"
NOT_UTF8 = "NOT_UTF8"


class FileRefused(ToolkitError):
    """A file that is not read: missing, not a regular file, unreadable, too large, too deep."""

    exit_code = ExitCode.USAGE


def effective_limit(limit: int, environ: os._Environ[str] | dict[str, str] | None = None) -> int:
    """``limit``, or the lower cap from ``WORKGROUP_MAX_READ_BYTES`` when that is set and smaller."""
    raw = (os.environ if environ is None else environ).get(CAP_ENV, "")
    if raw.isascii() and raw.isdigit():
        return min(limit, int(raw))
    return limit


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink, refused here"
    return "not a regular file"


def open_checked(
    path: str | os.PathLike[str], what: str, follow_symlinks: bool, missing_ok: bool
) -> tuple[int, os.stat_result] | None:
    """(fd, fstat) of a regular file opened non-blocking; None when absent and ``missing_ok``.

    What the path is gets checked before opening it (opening a device can have effects of its
    own) and again on the open descriptor (the path may be swapped between the two calls).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        mode = os.stat(path, follow_symlinks=follow_symlinks).st_mode
        if not stat.S_ISREG(mode):
            raise FileRefused(NOT_A_FILE, f"{what} is {_kind(mode)}; only regular files are read")
        fd = os.open(path, flags)
    except FileNotFoundError:
        if missing_ok and not os.path.islink(path):
            return None
        # a dangling symlink is reported as what it is, not as an absent file
        if os.path.islink(path):
            raise FileRefused(NOT_FOUND, f"{what} is a symlink to nothing") from None
        raise FileRefused(NOT_FOUND, f"{what} does not exist") from None
    except OSError as exc:
        raise _open_refusal(exc, what) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(NOT_A_FILE, f"{what} is {_kind(info.st_mode)}; only regular files are read")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def _open_refusal(exc: OSError, what: str) -> FileRefused:
    """The refusal for a file that exists but cannot be opened: a directory, a symlink where
    none is followed, a socket or device, a path through a non-directory, or no permission."""
    if isinstance(exc, IsADirectoryError):
        return FileRefused(NOT_A_FILE, f"{what} is a directory")
    if isinstance(exc, PermissionError):
        return FileRefused(UNREADABLE, f"{what} cannot be read (permission denied)")
    if exc.errno == errno.ELOOP:
        return FileRefused(NOT_A_FILE, f"{what} is a symlink, refused here")
    if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket (or device) cannot be opened
        return FileRefused(NOT_A_FILE, f"{what} is not a regular file")
    if exc.errno == errno.ENOTDIR:
        return FileRefused(NOT_FOUND, f"{what} does not exist")
    return FileRefused(UNREADABLE, f"{what} cannot be read")


def read_regular(
    path: str | os.PathLike[str],
    *,
    limit: int = MAX_FILE_BYTES,
    what: str = "input file",
    follow_symlinks: bool = True,
    missing_ok: bool = False,
    allow_over: bool = False,
) -> bytes | None:
    """The bytes of a regular file, at most ``limit``; ``None`` when absent and ``missing_ok``.

    ``follow_symlinks=False`` is for files in the toolkit's own state directories, where a
    symlink is never ours. A file argument given by the user may be a symlink to a regular file.
    ``allow_over`` returns up to ``limit + 1`` bytes instead of refusing, for callers that answer
    an oversized input with their own code (no lowered cap applies then).
    """
    opened = open_checked(path, what, follow_symlinks, missing_ok)
    if opened is None:
        return None
    fd, info = opened
    try:
        cap = limit if allow_over else effective_limit(limit)
        if info.st_size > cap and not allow_over:
            raise FileRefused(TOO_LARGE, f"{what} exceeds {cap} bytes")
        chunks: list[bytes] = []
        total = 0
        while total <= cap:  # the size may grow between fstat and read: the cap holds while reading
            chunk = os.read(fd, min(cap + 1 - total, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap and not allow_over:
            raise FileRefused(TOO_LARGE, f"{what} exceeds {cap} bytes")
        return b"".join(chunks)
    except OSError:
        raise FileRefused(UNREADABLE, f"{what} cannot be read") from None
    finally:
        os.close(fd)


def open_regular(
    path: str | os.PathLike[str],
    *,
    what: str = "log",
    follow_symlinks: bool = True,
    missing_ok: bool = False,
) -> IO[bytes] | None:
    """A binary handle on a regular file for streaming (logs read line by line); no size cap.

    The same refusals as ``read_regular`` for what the file is; the caller bounds each line.
    """
    opened = open_checked(path, what, follow_symlinks, missing_ok)
    if opened is None:
        return None
    fd = opened[0]
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def json_line(raw: bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """One JSON Lines record; ``ValueError`` for an invalid or too deeply nested line (skip it)."""
    if len(raw) > effective_limit(MAX_FILE_BYTES) or json_depth_exceeds(raw, max_depth):
        raise ValueError("line too large or nested too deep")
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, RecursionError):
        raise ValueError("not UTF-8 JSON") from None


def loads_bounded(
    raw: bytes | str, *, what: str = "input file", max_depth: int = MAX_JSON_DEPTH, strict: bool = True
) -> Any:
    """Strict UTF-8 JSON with a depth cap; ``FileRefused`` (``INVALID_JSON``/``JSON_TOO_DEEP``) otherwise.

    ``strict`` refuses NaN/Infinity, which standard JSON does not have.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if json_depth_exceeds(data, max_depth):
        raise FileRefused(TOO_DEEP, f"{what} nests JSON deeper than {max_depth} levels")
    try:
        if strict:
            return loads_strict(data)
        return json.loads(data.decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise FileRefused(INVALID_JSON, f"{what} is not valid JSON: {json_error_at(exc)}") from None
    except UnicodeDecodeError as exc:
        raise FileRefused(INVALID_JSON, f"{what} is not valid UTF-8 (byte {exc.start + 1})") from None
    except (ValueError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply for the decoder"
        raise FileRefused(INVALID_JSON, f"{what} is not valid JSON: {reason}") from None


def read_json_bounded(
    path: str | os.PathLike[str],
    *,
    limit: int = MAX_FILE_BYTES,
    what: str = "input file",
    follow_symlinks: bool = True,
    missing_ok: bool = False,
    strict: bool = True,
    default: Any = None,
) -> Any:
    """``read_regular`` then ``loads_bounded``; ``default`` when absent and ``missing_ok``."""
    raw = read_regular(path, limit=limit, what=what, follow_symlinks=follow_symlinks, missing_ok=missing_ok)
    if raw is None:
        return default
    return loads_bounded(raw, what=what, strict=strict)


def read_text_bounded(
    path: str | os.PathLike[str],
    *,
    limit: int = MAX_FILE_BYTES,
    what: str = "input file",
    follow_symlinks: bool = True,
    missing_ok: bool = False,
) -> str | None:
    """A regular UTF-8 text file (``NOT_UTF8`` otherwise); ``None`` when absent and ``missing_ok``."""
    raw = read_regular(path, limit=limit, what=what, follow_symlinks=follow_symlinks, missing_ok=missing_ok)
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FileRefused(NOT_UTF8, f"{what} is not UTF-8 text") from None
