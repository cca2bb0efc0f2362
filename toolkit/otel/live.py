"""Live mode (``telemetry: otlp``): the runtime path's side, standard library only.

A call on the runtime path (a ``workgroup runtime`` decision, ``workgroup route``/``dispatch``,
``workgroup telemetry record``, ``cm-log-event`` and the CM adapter) never imports OpenTelemetry and
never touches the network. It appends one projected JSON line to a spool file in local state
(``<git common dir>/workgroup/otel/spool.jsonl``) and makes sure a detached flusher process
(``toolkit.otel.flusher``) is running; the flusher batches the spool to the collector and
deletes a batch only after the collector accepted it, so a collector that is down or slow loses
nothing: the spool waits, and the next call starts a new flusher when the last one gave up.

What is spooled is already projected: a decision keeps only its operation, mode, reason codes
and rollout stage; a CM row only the fields of ``spans.CM_ATTRIBUTES`` (never ``detail`` or
``project``); an efficiency event is the normalized event. The flusher maps them with
``toolkit.otel.spans``, through the privacy engine, exactly as ``telemetry export`` does.

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
import time
from collections.abc import Mapping

TYPE_CHECKING = False  # on every runtime decision: typing stays out of start-up
if TYPE_CHECKING:
    from typing import Any

OTEL_DIR = ("workgroup", "otel")  # inside the git common dir (local state, never committed)
SPOOL = "spool.jsonl"
FLUSHER_LOCK = "flusher.lock"
MAX_CONFIG_BYTES = 65_536
# the config key, read without YAML: an indented ``telemetry: otlp`` line (comments allowed)
_OTLP_LINE = re.compile(r"""^[ \t]+telemetry:[ \t]*(["']?)otlp\1[ \t]*(#.*)?$""", re.MULTILINE)
_BLOCK = re.compile(r"^context_efficiency:[ \t]*(#.*)?$", re.MULTILINE)

# the CM row fields that may be spooled (spans.CM_ATTRIBUTES plus what the mapping checks)
CM_SPOOL_FIELDS = frozenset(
    {
        "schema_version",
        "event_id",
        "run_id",
        "at",
        "workflow",
        "event",
        "phase",
        "runtime",
        "call_id",
        "stage",
        "role",
        "adapter",
        "requested_model",
        "source",
        "purpose",
        "effective_model",
        "provider",
        "node",
        "feature",
        "task",
        "usage_state",
        "duration_ms",
        "outcome",
        "attempt",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
    }
)

_TARGETS: dict[str, str | None] = {}  # start dir -> otel dir (None: live mode off), per process


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
    return bool(_BLOCK.search(text)) and bool(_OTLP_LINE.search(text))


def otel_target(start: str) -> str | None:
    """The otel state dir when the repository of ``start`` is in live mode, else None (cached)."""
    if start in _TARGETS:
        return _TARGETS[start]
    target: str | None = None
    dirs = _git_dirs(start)
    if dirs is not None:
        from toolkit.core.errors import ToolkitError
        from toolkit.infra import confined

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
                from toolkit.infra.appendlog import append_whole

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
    """Start the detached flusher (own session, stdio on /dev/null); returns its pid."""
    devnull = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
    ]
    argv = [sys.executable, "-m", "toolkit.otel.flusher", otel_dir]
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


def _stamp() -> str:
    moment = time.time()
    whole = int(moment)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((moment - whole) * 1e6):06d}Z"


def decision_record(op: str, result: Mapping[str, Any], duration_ms: float) -> dict[str, Any] | None:
    """The spooled form of a route or dispatch decision (vocabulary values only)."""
    routing = result.get("routing") if op == "dispatch" else result
    if not isinstance(routing, Mapping):
        return None
    record: dict[str, Any] = {
        "kind": "decision",
        "id": os.urandom(16).hex(),
        "op": op,
        "mode": routing.get("mode"),
        "reason_codes": list(routing.get("reason_codes") or []),
        "at": _stamp(),
        "duration_ms": round(duration_ms, 3),
    }
    rollout = result.get("rollout") if op == "dispatch" else None
    if isinstance(rollout, Mapping) and isinstance(rollout.get("rollout"), str):
        record["rollout"] = rollout["rollout"]
    return record


def emit_decision(start: str, op: str, result: Mapping[str, Any], duration_ms: float) -> None:
    """Spool a decision when the repository of ``start`` is in live mode (the hot path's hook)."""
    target = otel_target(start)
    if target is None:
        return
    record = decision_record(op, result, duration_ms)
    if record is not None:
        emit(target, record)


def emit_cm_row(start: str, row: Mapping[str, Any]) -> None:
    """Spool a completed CM model call (``model_usage``), projected to the exportable fields."""
    if row.get("event") != "model_usage":
        return
    target = otel_target(start)
    if target is None:
        return
    emit(target, {"kind": "cm", "row": {k: v for k, v in row.items() if k in CM_SPOOL_FIELDS}})


def emit_efficiency(start: str, event: Mapping[str, Any], key: str) -> None:
    """Spool a normalized efficiency event with the key ``telemetry export`` gives it too."""
    target = otel_target(start)
    if target is not None:
        emit(target, {"kind": "efficiency", "key": key, "event": dict(event)})
