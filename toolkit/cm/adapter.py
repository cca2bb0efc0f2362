"""``cm-openai-compatible-call``: one OpenAI-compatible role call with verified CM usage.

Drop-in for the public CM adapter (same arguments, environment, stdin, files and exit codes):

* 0: the model's text is on stdout and the ``model_usage`` success row is logged;
* 1: the call failed and an error row is logged (an HTTP error prints only ``HTTP <code>``);
* 2: rejected before any HTTP request (bad settings, packet, or a reused/concurrent call id);
* 3: the call completed (and is billed), then something local failed: the text is on stdout but
  logging failed, or the usage row is logged but stdout refused the text (``OUTPUT_UNWRITABLE``);
  do not repeat the call automatically;
* 4: the call failed and could not be logged; the claim stays unresolved.

Order: validate everything, then an atomic ``model_call/claimed`` event (under the writer's
locks, so of N concurrent calls with one call id exactly one passes), then one POST, then
exactly one ``model_usage/complete`` event, and only then the text on stdout. The three ``CM_OPENAI_COMPATIBLE_*`` variables are
read once, never logged, and removed from the environment handed to the event writer.

HTTP is ``http.client`` straight to the configured host: no proxy variables are consulted (the
class never reads them), redirects are not followed (a 3xx is an HTTP error), the response is
read in bounded chunks (8 MiB cap, overall deadline), and JSON deeper than 128 levels is refused.
Standard library only.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import json
import os
import re
import sys
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult

from toolkit.cm.event_error import EventError
from toolkit.cm.event_input import EventArgs, privacy_guard
from toolkit.cm.event_write import WriteResult, write_event
from toolkit.cm.packet import (
    PRIVATE_CODE,
    PacketError,
    parse_packet_bytes,
    private_categories,
    system_message,
    user_message,
    validate_adapter_input,
)
from toolkit.core.errors import InvalidInput, Refused, ToolkitError
from toolkit.core.identifiers import CM_RUN_ID
from toolkit.core.strictjson import json_depth_exceeds, loads_strict
from toolkit.infra.argparser import QuietArgumentParser
from toolkit.infra.output import OutputUnwritable, guarded, write_stdout

TYPE_CHECKING = False  # type checkers read True
if TYPE_CHECKING:
    from typing import IO

    from toolkit.core.jsontypes import JsonObject

PROG = "cm-openai-compatible-call"
ENV_ENABLED = "CM_OPENAI_COMPATIBLE_ENABLED"
ENV_BASE_URL = "CM_OPENAI_COMPATIBLE_BASE_URL"
ENV_API_KEY = "CM_OPENAI_COMPATIBLE_API_KEY"
SECRET_ENV = (ENV_ENABLED, ENV_BASE_URL, ENV_API_KEY)
MAX_PACKET_BYTES = 1024 * 1024
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
MAX_JSON_DEPTH = 128
ADAPTER = "openai-compatible"
IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
CALL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+@-]{0,127}$")
_CHUNK = 64 * 1024


class Rejected(InvalidInput):
    """Refused before HTTP (exit 2). The message is ours and never echoes input."""

    def __init__(self, message: str) -> None:
        super().__init__("CALL_REJECTED", message)


class CallFailed(Refused):
    """The call or its response failed after the claim (exit 1, or 4 when not logged)."""

    def __init__(self, message: str) -> None:
        super().__init__("CALL_FAILED", message)


@dataclass(frozen=True)
class Endpoint:
    scheme: str
    host: str
    port: int | None
    path: str
    api_key: str


@dataclass(frozen=True)
class CallArgs:
    workflow: str
    stage: str
    role: str
    runtime: str
    requested_model: str
    call_id: str
    project_root: str
    specs_dir: str | None
    run_id: str | None
    timeout_seconds: int


# ---------------------------------------------------------------- settings (pure)


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _printable(text: str) -> bool:
    return all(0x21 <= ord(ch) <= 0x7E for ch in text)


def resolve_endpoint(environ: Mapping[str, str]) -> Endpoint:
    """The three variables: authority (exactly ``true``), endpoint, secret."""
    base, key = _settings(environ)
    try:
        parts = urllib.parse.urlsplit(base)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise Rejected(f"{ENV_BASE_URL} must be a valid HTTP(S) URL") from None
    host = _checked_host(base, parts, host)
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        path += "/chat/completions"
    return Endpoint(parts.scheme, host, port, path, key)


def _settings(environ: Mapping[str, str]) -> tuple[str, str]:
    """(base URL, API key) once calls are enabled and both are set and printable."""
    if environ.get(ENV_ENABLED, "") != "true":
        raise Rejected(f"OpenAI-compatible calls are not explicitly enabled; set {ENV_ENABLED}=true")
    base = environ.get(ENV_BASE_URL, "")
    key = environ.get(ENV_API_KEY, "")
    if not base:
        raise Rejected(f"{ENV_BASE_URL} is not configured")
    if not _printable(base):
        raise Rejected(f"{ENV_BASE_URL} contains unsupported characters")
    if not key:
        raise Rejected(f"{ENV_API_KEY} is not configured")
    if len(key) > 4096 or not _printable(key):
        raise Rejected("API key contains unsupported characters")
    return base, key


def _checked_host(base: str, parts: SplitResult, host: str | None) -> str:
    """The host of the base URL; refused when the URL is not HTTP(S) with a host, carries
    credentials, a query or a fragment, or is plain HTTP to a host other than loopback."""
    if parts.scheme not in ("http", "https") or not parts.netloc or not host:
        raise Rejected(f"{ENV_BASE_URL} must be an HTTP(S) URL")
    if _carries_extras(base, parts):
        raise Rejected(f"{ENV_BASE_URL} cannot contain credentials or query data")
    if parts.scheme == "http" and not is_loopback(host):
        raise Rejected("non-loopback OpenAI-compatible endpoints require HTTPS")
    return host


def _carries_extras(base: str, parts: SplitResult) -> bool:
    """True when the base URL holds a user name, password, query or fragment (even an empty one)."""
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        return True
    return "?" in base or "#" in base


def validate_args(args: CallArgs) -> tuple[Path, Path | None]:
    _check_values(args)
    root = _directory("--project-root", args.project_root)
    specs = _directory("--specs-dir", args.specs_dir) if args.specs_dir is not None else None
    if specs is None and args.run_id is None:
        raise Rejected("--run-id is required without --specs-dir")
    _refuse_private_values(args)
    return root, specs


def _check_values(args: CallArgs) -> None:
    """Refuse an identity, model alias, call id, run id or timeout outside its format or range."""
    for label, value in (("--workflow", args.workflow), ("--stage", args.stage), ("--role", args.role)):
        if not IDENTIFIER.fullmatch(value):
            raise Rejected(f"{label} is not a valid identifier")
    if not MODEL_NAME.fullmatch(args.requested_model):
        raise Rejected("--requested-model is not a valid model alias")
    if not CALL_ID.fullmatch(args.call_id):
        raise Rejected("--call-id is not valid")
    if args.run_id is not None and not CM_RUN_ID.fullmatch(args.run_id):
        raise Rejected("--run-id is not valid")
    if not 1 <= args.timeout_seconds <= 600:
        raise Rejected("--timeout-seconds must be between 1 and 600")


def _refuse_private_values(args: CallArgs) -> None:
    """The values this call writes to the logs (run id, call id, identity, model alias) carry no
    secret: the writer would refuse them after the HTTP call; refuse before anything is sent."""
    written = {
        "run_id": args.run_id,
        "call_id": args.call_id,
        "workflow": args.workflow,
        "stage": args.stage,
        "role": args.role,
        "requested_model": args.requested_model,
    }
    try:
        privacy_guard("model call", {}, written)
    except EventError as exc:
        raise Rejected(exc.message) from None


def _directory(label: str, raw: str) -> Path:
    try:
        path = Path(raw).expanduser().resolve(strict=False)
        if path.is_dir():
            return path
    except (OSError, ValueError, RuntimeError):
        pass
    raise Rejected(f"{label} is not an existing directory")


def read_limited(stream: IO[bytes], limit: int) -> bytes:
    """Read at most ``limit + 1`` bytes in chunks: the limit is enforced while reading."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_packet(stream: IO[bytes], args: CallArgs) -> tuple[str, str]:
    """stdin -> (system message, user message); PacketError texts are fixed, never input."""
    raw = read_limited(stream, MAX_PACKET_BYTES)
    try:
        obj = parse_packet_bytes(raw, "stdin")
        stable, dynamic = validate_adapter_input(
            obj, workflow=args.workflow, stage=args.stage, role=args.role, label="stdin"
        )
        private = private_categories(obj)  # before any claim or HTTP request
        if private:
            raise Rejected(f"{PRIVATE_CODE}: role packet contains private content ({', '.join(private)})")
        return system_message(stable), user_message(dynamic)
    except PacketError as exc:
        raise Rejected(exc.reason) from None
    except (ValueError, RecursionError):
        raise Rejected("role packet could not be encoded as strict UTF-8 JSON") from None


def request_body(model: str, system: str, user: str) -> bytes:
    """``{model, messages, stream:false}`` as strict UTF-8 JSON."""
    try:
        return json.dumps(
            {
                "model": model,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
                "stream": False,
            },
            ensure_ascii=False,
            allow_nan=False,
            separators=(",", ":"),
        ).encode("utf-8")
    except (ValueError, UnicodeError, RecursionError):
        raise Rejected("role packet could not be encoded as strict UTF-8 JSON") from None


# ---------------------------------------------------------------- response handling (pure)


def _depth_ok(value: object) -> bool:
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return False
        if isinstance(current, dict):
            stack.extend((child, depth + 1) for child in current.values())
        elif isinstance(current, list):
            stack.extend((child, depth + 1) for child in current)
        elif isinstance(current, str):
            try:
                current.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True


def parse_response(raw: bytes) -> JsonObject:
    if json_depth_exceeds(raw, MAX_JSON_DEPTH):
        raise CallFailed("provider response exceeds the maximum JSON nesting depth")
    try:
        value = loads_strict(raw)
    except ValueError:
        raise CallFailed("provider response is not valid strict UTF-8 JSON") from None
    if not _depth_ok(value):
        raise CallFailed("provider response exceeds the maximum JSON nesting depth")
    if not isinstance(value, dict):
        raise CallFailed("provider response must be a JSON object")
    return value


def _count(mapping: Mapping[str, object], *names: str) -> int | None:
    for name in names:
        value = mapping.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def extract_usage(response: Mapping[str, object] | None) -> tuple[str, dict[str, int]]:
    """OpenAI and Anthropic usage fields -> (usage_state, counts); never guesses a count."""
    usage = (response or {}).get("usage")
    if not isinstance(usage, dict):
        return "unavailable", {}
    counts: dict[str, int] = {}
    inp = _count(usage, "input_tokens", "prompt_tokens")
    out = _count(usage, "output_tokens", "completion_tokens")
    if inp is None or out is None:
        return "unavailable", {}
    counts = {"input_tokens": inp, "output_tokens": out}
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    read = _count(usage, "cache_read_input_tokens")
    read = _count(details, "cached_tokens") if read is None else read
    write = _count(usage, "cache_creation_input_tokens")
    write = _count(details, "cache_write_tokens") if write is None else write
    if read is not None:
        counts["cache_read_tokens"] = read
    if write is not None:
        counts["cache_write_tokens"] = write
    return "observed", counts


def extract_text(response: Mapping[str, object]) -> str:
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise CallFailed("provider response has no completion choice")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise CallFailed("provider response has no completion message")
    content = message.get("content")
    if not isinstance(content, str):
        raise CallFailed("provider response content is not text")
    return content


# ---------------------------------------------------------------- I/O


class HttpStatus(CallFailed):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


def post_completion(endpoint: Endpoint, body: bytes, timeout: int) -> JsonObject:
    """One POST; non-2xx (including redirects) is an error and its body is never read out."""
    import http.client  # the call path only: `cm call --help` does not pay for it

    conn: http.client.HTTPConnection
    if endpoint.scheme == "https":
        import ssl

        conn = http.client.HTTPSConnection(
            endpoint.host, endpoint.port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=timeout)
    deadline = time.monotonic() + timeout
    try:
        conn.request(
            "POST",
            endpoint.path,
            body=body,
            headers={
                "Authorization": f"Bearer {endpoint.api_key}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        response = conn.getresponse()
        if not 200 <= response.status < 300:
            raise HttpStatus(response.status)
        chunks: list[bytes] = []
        total = 0
        while total <= MAX_RESPONSE_BYTES:
            if time.monotonic() > deadline:
                raise TimeoutError("response deadline passed")
            chunk = response.read(min(_CHUNK, MAX_RESPONSE_BYTES + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > MAX_RESPONSE_BYTES:
            raise CallFailed("provider response exceeds 8 MiB")
        return parse_response(b"".join(chunks))
    finally:
        conn.close()


def _writer_env(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k not in SECRET_ENV}


def _identity(args: CallArgs) -> dict[str, str]:
    """The claim's fields (``cm_usage_format.CLAIM``): what a claim and its usage row share."""
    return {
        "call_id": args.call_id,
        "stage": args.stage,
        "role": args.role,
        "adapter": ADAPTER,
        "requested_model": args.requested_model,
        "source": "api",
        "purpose": f"{args.workflow}:{args.stage}",
    }


def _log(
    args: CallArgs,
    root: Path,
    specs: Path | None,
    env: Mapping[str, str],
    *,
    event: str,
    phase: str,
    detail: str,
    data: Mapping[str, str | int],
) -> WriteResult:
    return write_event(
        EventArgs(
            workflow=args.workflow,
            event=event,
            phase=phase,
            runtime=args.runtime,
            detail=detail,
            project_root=str(root),
            specs_dir=str(specs) if specs else None,
            run_id=args.run_id,
            data_json=json.dumps(data, ensure_ascii=False, separators=(",", ":")),
        ),
        environ=env,
    )


def claim(args: CallArgs, root: Path, specs: Path | None, env: Mapping[str, str]) -> str:
    """Write the claim; returns its run id. Any refusal or failure is a Rejected (exit 2)."""
    try:
        written = _log(
            args,
            root,
            specs,
            env,
            event="model_call",
            phase="claimed",
            detail=f"{args.role} model call claimed",
            data=_identity(args),
        )
    except EventError as exc:
        if exc.code == "CALL_COMPLETED":
            raise Rejected("call_id already completed; use a new call_id") from None
        if exc.code == "CALL_CLAIMED":
            raise Rejected("call_id already claimed; use a new call_id") from None
        raise Rejected("model call claim could not be recorded") from None
    except (OSError, ToolkitError):
        raise Rejected("model call claim could not be recorded") from None
    if written.result.get("deduplicated") is not False:
        raise Rejected("call_id already claimed; use a new call_id")
    return str(written.result["run_id"])


def log_usage(
    args: CallArgs,
    root: Path,
    specs: Path | None,
    env: Mapping[str, str],
    *,
    outcome: str,
    duration_ms: int,
    response: Mapping[str, object] | None,
) -> bool:
    """Exactly one completion row; False when it could not be written (exit 3 or 4)."""
    try:
        state, counts = extract_usage(response)
        data: dict[str, str | int] = {
            **_identity(args),
            "usage_state": state,
            "duration_ms": duration_ms,
            "outcome": outcome,
        }
        model = (response or {}).get("model")
        if isinstance(model, str) and MODEL_NAME.fullmatch(model):
            data["effective_model"] = model
        data.update(counts)
        _log(
            args,
            root,
            specs,
            env,
            event="model_usage",
            phase="complete",
            detail=f"{args.role} model call {outcome}",
            data=data,
        )
        return True
    except (OSError, ToolkitError):
        return False


def write_result(text: str) -> None:
    """Deliver the text, flushed now; ``OutputUnwritable`` (exit 3 under the entry point's guard)
    when it did not reach stdout (closed, broken pipe, full device). Called after the usage row
    is logged, so a failed print loses no usage."""

    try:
        write_stdout(text + "\n")
    except OutputUnwritable:
        _err("the model call completed, but its text could not be written to stdout")
        raise


def run(args: CallArgs, *, environ: Mapping[str, str], stdin: IO[bytes]) -> int:
    """The whole call; returns the exit code. Writes only the model's text to stdout."""
    import http.client  # named in the except clause below

    try:
        root, specs = validate_args(args)
        endpoint = resolve_endpoint(environ)
        system, user = read_packet(stdin, args)
        body = request_body(args.requested_model, system, user)
        env = _writer_env(environ)
        # the completion goes to the claim's run even if the pointer moves meanwhile
        args = dataclasses.replace(args, run_id=claim(args, root, specs, env))
    except Rejected as exc:
        _err(exc.message)
        return 2
    started = time.monotonic()
    response: JsonObject | None = None
    try:
        response = post_completion(endpoint, body, args.timeout_seconds)
        text = extract_text(response)
    except CallFailed as exc:
        return _failed(args, root, specs, env, started, response, exc.message)
    except (OSError, http.client.HTTPException, TimeoutError):
        return _failed(args, root, specs, env, started, None, "request failed")
    except (ValueError, KeyError, TypeError, IndexError, UnicodeError):  # a response of the wrong shape
        return _failed(args, root, specs, env, started, response, "response handling failed")
    # the usage row first: a stdout that refuses the text afterwards loses nothing billed
    logged = log_usage(args, root, specs, env, outcome="success", duration_ms=_ms(started), response=response)
    if not logged:
        _err("model call completed but usage log failed; do not retry the model call automatically")
    write_result(text)
    return 0 if logged else 3


def _ms(started: float) -> int:
    return max(0, round((time.monotonic() - started) * 1000))


def _failed(
    args: CallArgs,
    root: Path,
    specs: Path | None,
    env: Mapping[str, str],
    started: float,
    response: Mapping[str, object] | None,
    message: str,
) -> int:
    logged = log_usage(
        args,
        root,
        specs,
        env,
        outcome="error",
        duration_ms=_ms(started),
        response=response,
    )
    _err(message)
    if not logged:
        _err("usage log failed")
        return 4
    return 1


def _err(message: str) -> None:
    try:
        sys.stderr.write(f"{PROG}: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def build_parser() -> argparse.ArgumentParser:
    parser = QuietArgumentParser(
        prog=PROG, description="Call an OpenAI-compatible model with a CM role packet."
    )
    for name in ("--workflow", "--stage", "--role", "--requested-model", "--call-id", "--project-root"):
        parser.add_argument(name, required=True)
    parser.add_argument("--runtime", required=True, choices=("codex", "claude", "unknown"))
    parser.add_argument("--specs-dir")
    parser.add_argument("--run-id")
    parser.add_argument("--timeout-seconds", type=int, default=120)
    return parser


def invoke(argv: Sequence[str], *, environ: Mapping[str, str], stdin: IO[bytes]) -> int:
    """Parse ``argv`` and run the call with an explicit environment and stdin stream."""
    try:
        ns = build_parser().parse_args(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    args = CallArgs(
        workflow=ns.workflow,
        stage=ns.stage,
        role=ns.role,
        runtime=ns.runtime,
        requested_model=ns.requested_model,
        call_id=ns.call_id,
        project_root=ns.project_root,
        specs_dir=ns.specs_dir,
        run_id=ns.run_id,
        timeout_seconds=ns.timeout_seconds,
    )
    return run(args, environ=environ, stdin=stdin)


def main(argv: Sequence[str] | None = None) -> int:
    """Console script ``cm-openai-compatible-call``, under the stdout guard (``toolkit.infra.output``)."""

    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(encoding="utf-8", errors="backslashreplace")
    environ = dict(os.environ)
    for name in SECRET_ENV:
        # nothing started from here (or by a later caller in this process) inherits them
        os.environ.pop(name, None)
    return invoke(sys.argv[1:] if argv is None else argv, environ=environ, stdin=sys.stdin.buffer)


if __name__ == "__main__":
    raise SystemExit(main())
