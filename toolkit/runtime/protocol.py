"""``workgroup runtime OP``: the KnowzCode-compatible stdin/stdout protocol (stdlib only).

One JSON object on stdin (at most 1 MiB, enforced while reading), exactly one JSON line on
stdout: ``{"ok":true,"operation":OP,"result":{...}}`` (exit 0) or
``{"ok":false,"code":CODE,"message":MSG}`` (exit 1). ``--batch`` reads JSON Lines.
"""

from __future__ import annotations

# Start-up is most of a call's cost (one process per delegation): only json, os, re (which json
# loads anyway), sys and time are imported here, nothing that pulls in typing,
# dataclasses/inspect, contextlib or importlib.
import json
import os
import re
import sys
import time

from toolkit.core.errors import ExitCode, ToolkitError
from toolkit.core.strictjson import loads_strict
from toolkit.runtime.adapter import RuntimeContext as RuntimeContext  # the entry's interface
from toolkit.runtime.codes import MESSAGES, RuntimeOpError
from toolkit.runtime.ops import OPS

TYPE_CHECKING = False  # typing itself costs start-up time; type checkers treat this as True
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import IO, Any

    from toolkit.core.jsontypes import JsonObject
    from toolkit.runtime.adapter import Observer

MAX_REQUEST_BYTES = 1_048_576
LIVE_OPS = frozenset(op.name for op in OPS if op.live)  # decisions that live mode (telemetry: otlp) emits

# op name -> "module:function"; each function is fn(request: Mapping[str, object], ctx: RuntimeContext) -> its
# answer (a JSON object).
# RuntimeContext (toolkit.runtime.adapter) does every read the ops need; the ops themselves do none.
OPERATIONS: dict[str, str] = {op.name: op.function for op in OPS}  # the dispatch table, from the registry


class _TooLarge(ToolkitError):
    def __init__(self) -> None:
        super().__init__("REQUEST_TOO_LARGE", "Request exceeds the one-megabyte stdin limit.")


# built once: json.dumps with options constructs a new encoder on every call
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def parse_request(raw: bytes) -> JsonObject:
    """Decode one request: UTF-8, standard JSON (no NaN/Infinity), an object; else INVALID_REQUEST."""
    try:
        # finite: "1e999" would parse as infinity, which has no JSON form for the answer line
        value = loads_strict(raw, finite=True)
    except ValueError:
        raise RuntimeOpError("INVALID_REQUEST") from None
    if not isinstance(value, dict):
        raise RuntimeOpError("INVALID_REQUEST")
    return value


def read_limited(stream: IO[bytes], limit: int = MAX_REQUEST_BYTES) -> bytes:
    """Read all of ``stream`` but stop as soon as it exceeds ``limit`` bytes."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        total += len(chunk)
        if total > limit:
            raise _TooLarge()
        chunks.append(chunk)
    return b"".join(chunks)


if TYPE_CHECKING:
    # the request as parsed (each operation checks the fields it reads), its answer a JSON object
    OpFunction = Callable[[Mapping[str, object], RuntimeContext], Mapping[str, object]]
_RESOLVED: dict[str, OpFunction] = {}  # "module:function" -> function, so --batch imports once


def resolve_operation(op: str) -> OpFunction:
    """The function of ``op`` (imported on first use: each run loads only its own operation)."""
    target = OPERATIONS.get(op)
    if target is None:
        raise RuntimeOpError("UNSUPPORTED_OPERATION")
    func = _RESOLVED.get(target)
    if func is None:
        module_name, func_name = target.split(":")
        # __import__ with a fromlist returns the submodule itself; importlib would cost an import
        func = getattr(__import__(module_name, fromlist=[func_name]), func_name)
        _RESOLVED[target] = func
    return func


def failure(code: str) -> dict[str, str | bool]:
    return {"ok": False, "code": code, "message": MESSAGES.get(code, MESSAGES["INVALID_REQUEST"])}


def execute(op: str, request: Mapping[str, object], ctx: RuntimeContext) -> dict[str, Any]:
    """Run one operation and return the output frame (never raises for bad input).

    The frame is the answer line's JSON as it leaves (``dict[str, Any]``: its readers index the result).
    """
    try:
        func = resolve_operation(op)
        started = time.perf_counter()
        result = func(request, ctx)
        if ctx.observer is not None and op in LIVE_OPS:
            ctx.observer(op, result, (time.perf_counter() - started) * 1000, ctx.cwd)
        return {"ok": True, "operation": op, "result": result}
    except RuntimeOpError as exc:
        return failure(exc.code)
    except OSError:
        return failure("ENVIRONMENT_ERROR")
    except ToolkitError as exc:
        return failure("ENVIRONMENT_ERROR" if exc.exit_code == ExitCode.ENVIRONMENT else "INVALID_REQUEST")
    except Exception:  # the reference's frame: an uncoded failure is INVALID_REQUEST, never a traceback
        return failure("INVALID_REQUEST")


# Characters that some readers treat as line breaks (Python's str.splitlines, JavaScript source)
# plus lone surrogates, which have no UTF-8 form: escaped so that the answer stays one line of
# valid UTF-8 whatever the request contained. The parsed value is unchanged. Only a non-ASCII
# answer can hold one, so the regular expression is compiled on first need.
_UNSAFE_IN_LINE: list[re.Pattern[str]] = []


def _escape_unsafe(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _line_safe(text: str) -> str:
    if text.isascii():
        return text
    if not _UNSAFE_IN_LINE:
        _UNSAFE_IN_LINE.append(re.compile("[\u0085\u2028\u2029\ud800-\udfff]"))
    return _UNSAFE_IN_LINE[0].sub(_escape_unsafe, text)


def render_frame(frame: Mapping[str, object]) -> str:
    """The answer line for ``frame`` (always one line; a frame that cannot be encoded becomes
    the INVALID_REQUEST failure instead of a traceback)."""
    try:
        text = _ENCODER.encode(frame)
    except (TypeError, ValueError, RecursionError):
        text = json.dumps(failure("INVALID_REQUEST"), separators=(",", ":"))
    return _line_safe(text) + "\n"


def _emit(out: IO[str], frame: Mapping[str, object]) -> None:
    out.write(render_frame(frame))


def run_single(op: str, stdin: IO[bytes], out: IO[str], ctx: RuntimeContext) -> int:
    try:
        raw = read_limited(stdin)
    except _TooLarge:
        _emit(out, failure("REQUEST_TOO_LARGE"))
        return 1
    try:
        request = parse_request(raw)
    except RuntimeOpError as exc:
        _emit(out, failure(exc.code))
        return 1
    frame = execute(op, request, ctx)
    line = render_frame(frame)
    out.write(line)
    return 0 if line.startswith('{"ok":true') else 1


def _drain_line(stdin: IO[bytes], line: bytes) -> None:
    """Read past the rest of an oversized line without keeping it (the rare path of a batch)."""
    while line and not line.endswith(b"\n"):
        line = stdin.readline(65536)


def run_batch(op: str, stdin: IO[bytes], out: IO[str], ctx: RuntimeContext) -> int:
    """JSON Lines in, one answer line per non-empty input line, exit 1 if any failed."""
    status = 0
    while True:
        line = stdin.readline(MAX_REQUEST_BYTES + 2)
        if not line:
            break
        if len(line) > MAX_REQUEST_BYTES + 1 or (
            len(line) == MAX_REQUEST_BYTES + 1 and not line.endswith(b"\n")
        ):
            _drain_line(stdin, line)
            _emit(out, failure("REQUEST_TOO_LARGE"))
            status = 1
            continue
        if not line.strip():
            continue
        try:
            request = parse_request(line)
        except RuntimeOpError as exc:
            _emit(out, failure(exc.code))
            status = 1
            continue
        answer = render_frame(execute(op, request, ctx))
        out.write(answer)
        if not answer.startswith('{"ok":true'):
            status = 1
    out.flush()
    return status


USAGE = "usage: workgroup runtime [--batch] OP < request.json\noperations: " + ", ".join(OPERATIONS) + "\n"


def main(argv: list[str] | None = None, observer: Observer | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    batch = False
    if "--batch" in args:
        batch = True
        args.remove("--batch")
    if args and args[0] in ("-h", "--help"):
        sys.stderr.write(USAGE)
        return 0
    out = sys.stdout
    if out is None:  # started with stdout closed: no frame can be written
        return 1
    try:
        code = _main(args, batch, out, observer)
        out.flush()
        return code
    except OSError:
        # the reader went away or the device is full: nothing more can be said; keep the
        # interpreter's final flush quiet
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        except (OSError, ValueError):
            pass
        return 1


def _main(
    args: list[str],
    batch: bool,
    out: IO[str],
    observer: Observer | None = None,
) -> int:
    # exactly one operation; a missing one is UNSUPPORTED_OPERATION, as in the reference
    if len(args) != 1 or args[0] not in OPERATIONS:
        _emit(out, failure("UNSUPPORTED_OPERATION"))
        return 1
    op = args[0]
    ctx = RuntimeContext(observer=observer)
    stdin = getattr(sys.stdin, "buffer", None)
    if stdin is None:  # stdin closed: no request
        _emit(out, failure("INVALID_REQUEST"))
        return 1
    try:
        if batch:
            return run_batch(op, stdin, out, ctx)
        return run_single(op, stdin, out, ctx)
    except OSError:  # stdin unreadable (a directory, a failing device ...)
        # when it was stdout that failed, this write fails too and main() ends quietly (exit 1)
        _emit(out, failure("ENVIRONMENT_ERROR"))
        return 1
