"""The live-mode spool (``telemetry: otlp``): where it is, and appending a record to it. Standard
library only: it is written on the runtime path.

A call on the runtime path (a ``workgroup runtime`` decision, ``workgroup route``/``dispatch``,
``workgroup telemetry record``, ``cm-log-event`` and the CM adapter) never imports OpenTelemetry and
never touches the network. It appends one projected JSON line to a spool file in local state
(``<git common dir>/workgroup/otel/spool.jsonl``) and makes sure a detached flusher process is
running; the flusher batches the spool to the collector and deletes a batch only after the
collector accepted it, so a collector that is down or slow loses nothing: the spool waits, and the
next call starts a new flusher when the last one gave up.

This module is the interface between the writers and the exporter: a writer projects its own
record (``toolkit.otel.live`` the runtime decisions and efficiency events, ``toolkit.cm.event_write``
a CM model call, with the fields ``toolkit.core.cm_usage_format`` marks exportable) and appends it here;
the reader is the flusher process (``READER_MODULE``), started by name, never imported, so no
writer depends on the exporter's package.

Locking: writers hold an exclusive ``flock`` on the spool while appending (a record lands whole
or is cut back, ``toolkit.infra.appendlog``); the flusher renames the
spool to a batch file and takes an exclusive lock on it before reading, so an append that raced
the rename lands in the batch before it is read (a writer that opened the old name re-checks the
inode after locking). The flusher holds ``flusher.lock`` for its whole life; a writer that can
take that lock knows no flusher runs and starts one.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import sys
from collections.abc import Mapping

from toolkit.core.errors import ToolkitError
from toolkit.infra import confined
from toolkit.infra.appendlog import append_whole

TYPE_CHECKING = False  # on every runtime decision: typing stays out of start-up
if TYPE_CHECKING:
    from typing import Any

OTEL_DIR = ("workgroup", "otel")  # inside the git common dir (local state, never committed)
SPOOL = "spool.jsonl"
FLUSHER_LOCK = "flusher.lock"
READER_MODULE = "toolkit.otel.flusher"  # the spool's reader, run as a process (``python -m``)
MAX_CONFIG_BYTES = 65_536
# the config key, read without YAML: an indented ``telemetry: otlp`` line (comments allowed);
# compiled at first use (re's cache), since most configs never name otlp and every route asks
_OTLP_LINE = r"""^[ \t]+telemetry:[ \t]*(["']?)otlp\1[ \t]*(#.*)?$"""
_BLOCK = r"^context_efficiency:[ \t]*(#.*)?$"

_TARGETS: dict[str, str | None] = {}  # start dir -> otel dir (None: live mode off), per process


def forget_targets() -> None:
    """Drop the per-process answers of ``otel_target`` (a config that changed is read again)."""
    _TARGETS.clear()


def _git_dirs(start: str) -> tuple[str, str] | None:
    """(work tree, git common dir) of the repository containing ``start``, without pygit2."""
    current = os.path.abspath(start)
    while True:
        dotgit = os.path.join(current, ".git")
        if os.path.isdir(dotgit):
            gitdir = dotgit
            break
        if os.path.isfile(dotgit):
            try:
                with open(dotgit, encoding="utf-8") as handle:
                    line = handle.read(4096).strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            gitdir = os.path.normpath(os.path.join(current, line[7:].strip()))
            break
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    common = gitdir
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
            common = os.path.normpath(os.path.join(gitdir, handle.read(4096).strip()))
    except (OSError, UnicodeDecodeError):
        pass
    return current, common


def config_says_otlp(text: str) -> bool:
    """Whether a ``config.yml`` text selects ``telemetry: otlp`` (a validated config agrees)."""
    if "otlp" not in text:
        return False
    return bool(re.search(_BLOCK, text, re.MULTILINE)) and bool(re.search(_OTLP_LINE, text, re.MULTILINE))


def otel_target(start: str) -> str | None:
    """The otel state dir when the repository of ``start`` is in live mode, else None (cached)."""
    if start in _TARGETS:
        return _TARGETS[start]
    target: str | None = None
    dirs = _git_dirs(start)
    if dirs is not None:
        try:
            # the repository's config, through the confined layer: a symlink leaving the work tree,
            # a FIFO or a directory in its place is never read (live mode stays off)
            raw = confined.read_bytes(
                dirs[0],
                ".workgroup/config.yml",
                what=".workgroup/config.yml",
                limit=MAX_CONFIG_BYTES,
                missing_ok=True,
            )
            if raw is not None and config_says_otlp(raw.decode("utf-8", "replace")):
                target = os.path.join(dirs[1], *OTEL_DIR)
        except (OSError, ToolkitError):
            target = None
    _TARGETS[start] = target
    return target


def _append(otel_dir: str, line: bytes) -> None:
    path = os.path.join(otel_dir, SPOOL)
    for _attempt in range(8):
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            os.makedirs(otel_dir, mode=0o700, exist_ok=True)
            continue
        try:
            # exclusive: a failed append is cut back to the size before it, which must be ours alone
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:  # not renamed by the flusher between our open and our lock
                append_whole(fd, line, SPOOL)  # whole or not at all
                return
        finally:
            os.close(fd)
    raise OSError(errno.EAGAIN, "the OTLP spool kept moving")


def _flusher_running(otel_dir: str) -> bool:
    fd = os.open(os.path.join(otel_dir, FLUSHER_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases the probe lock at once
    return False


def start_flusher(otel_dir: str, environ: Mapping[str, str] | None = None) -> int:
    """Start the detached flusher, the spool's reader (own session, stdio on /dev/null); returns its pid."""
    devnull = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
    ]
    argv = [sys.executable, "-m", READER_MODULE, otel_dir]
    env = dict(os.environ if environ is None else environ)
    return os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)


def emit(otel_dir: str, record: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> None:
    """Spool one record and make sure a flusher will send it. Never raises for I/O trouble:
    the runtime path must not fail because telemetry could not be spooled."""
    try:
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        _append(otel_dir, line)
        if not _flusher_running(otel_dir):
            start_flusher(otel_dir, environ)
    except (OSError, ValueError, TypeError):  # a full device included (appendlog.WriteFailed)
        pass
