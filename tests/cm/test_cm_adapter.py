"""cm-openai-compatible-call against real loopback HTTP servers started here, as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.harness import cli

from toolkit.cm import adapter

RUN_ID = "adapter-run-0001"
API_KEY = "sk-CANARYKEY-0123456789abcdef"
PACKET_CANARY = "CANARY-PACKET-7f3a"
REPLY = "REPLY-CANARY PLAN_OK"

Responder = Callable[[BaseHTTPRequestHandler, dict[str, Any]], None]


@dataclass
class Server:
    """A loopback HTTP server in a thread; ``respond`` decides each reply, ``seen`` records requests."""

    respond: Responder
    seen: list[dict[str, Any]] = field(default_factory=list)
    httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


def _send_json(
    handler: BaseHTTPRequestHandler, status: int, payload: Any, extra: dict[str, str] | None = None
) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for key, value in (extra or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    handler.wfile.write(data)


def ok_reply(usage: dict[str, Any] | None, text: str = REPLY, model: str = "provider-model-v2") -> Responder:
    def respond(handler: BaseHTTPRequestHandler, _: dict[str, Any]) -> None:
        body: dict[str, Any] = {"id": "r1", "model": model, "choices": [{"message": {"content": text}}]}
        if usage is not None:
            body["usage"] = usage
        _send_json(handler, 200, body)

    return respond


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], Server]]:
    servers: list[Server] = []

    def start(respond: Responder) -> Server:
        server = Server(respond)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib API
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                record = {
                    "path": self.path,
                    "authorization": self.headers.get("Authorization"),
                    "body": json.loads(raw.decode("utf-8")) if raw else None,
                }
                server.seen.append(record)
                server.respond(self, record)

            do_GET = do_POST  # noqa: N815 - a redirect target may be fetched with GET

            def log_message(self, *args: Any) -> None:
                return

        server.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=server.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        assert server.httpd is not None
        server.httpd.shutdown()
        server.httpd.server_close()


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "project"
    specs = root / "specs"
    specs.mkdir(parents=True)
    return {"root": root, "specs": specs, "home": Path(os.environ["CM_WORKFLOW_LOG_HOME"])}


def packet(**dynamic: Any) -> dict[str, Any]:
    base = {
        "workflow": "cm-prd",
        "stage": "design_generation",
        "role": "planner",
        "objective": f"create one plan {PACKET_CANARY}",
        "identifiers": {"feature": "1.fixture"},
        "constraints": ["no implementation"],
        "expected_output": "plan",
    }
    base.update(dynamic)
    return {
        "stable_prefix": {
            "safety": "safety boundary",
            "workflow": "cm-prd design generation",
            "project_rules": "stay inside the approved requirement",
            "role": "planner",
            "output_schema": "return the compact plan only",
        },
        "dynamic_packet": base,
    }


def _argv(
    project: dict[str, Path], call_id: str, specs: bool, run_id: str | None, extra: list[str] | None
) -> list[str]:
    argv = [
        "--workflow",
        "cm-prd",
        "--stage",
        "design_generation",
        "--role",
        "planner",
        "--runtime",
        "codex",
        "--requested-model",
        "planner-default",
        "--call-id",
        call_id,
        "--timeout-seconds",
        "5",
        "--project-root",
        str(project["root"]),
        *(extra or []),
    ]
    if specs:
        argv += ["--specs-dir", str(project["specs"])]
    if run_id is not None:
        argv += ["--run-id", run_id]
    return argv


def _env(url: str, env: dict[str, str] | None, drop: tuple[str, ...]) -> dict[str, str]:
    full_env = {
        **os.environ,
        "CM_OPENAI_COMPATIBLE_ENABLED": "true",
        "CM_OPENAI_COMPATIBLE_BASE_URL": url + "/v1",
        "CM_OPENAI_COMPATIBLE_API_KEY": API_KEY,
        **(env or {}),
    }
    for name in drop:
        full_env.pop(name, None)
    return full_env


def call(
    project: dict[str, Path],
    url: str,
    call_id: str = "call-0001",
    *,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    specs: bool = True,
    run_id: str | None = RUN_ID,
    extra: list[str] | None = None,
    drop: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[bytes]:
    """The adapter as a real process, the way a CM skill runs it."""
    cmd = [sys.executable, "-m", "toolkit.cm.adapter", *_argv(project, call_id, specs, run_id, extra)]
    data = stdin if stdin is not None else json.dumps(packet()).encode("utf-8")
    return subprocess.run(
        cmd, input=data, capture_output=True, env=_env(url, env, drop), timeout=60, check=False
    )


def call_inproc(
    project: dict[str, Path],
    url: str,
    call_id: str = "call-0001",
    *,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    specs: bool = True,
    run_id: str | None = RUN_ID,
    extra: list[str] | None = None,
    drop: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[bytes]:
    """The same entry point in-process (fast), for the many refusal cases."""
    data = stdin if stdin is not None else json.dumps(packet()).encode("utf-8")
    wanted = _env(url, env, drop)
    changes: dict[str, str | None] = {k: v for k, v in wanted.items() if os.environ.get(k) != v}
    changes.update((k, None) for k in os.environ if k not in wanted)
    code, out, err = cli(
        *_argv(project, call_id, specs, run_id, extra),
        stdin=data,
        env=changes,
        script="cm-openai-compatible-call",
    )
    return subprocess.CompletedProcess([], code, out.encode(), err.encode())


def rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def project_rows(project: dict[str, Path]) -> list[dict[str, Any]]:
    return rows(project["specs"] / "运行日志.jsonl")


def every_log_text(project: dict[str, Path]) -> str:
    texts = []
    for base in (project["specs"], project["home"]):
        if base.exists():
            texts += [p.read_text(encoding="utf-8", errors="replace") for p in base.rglob("*") if p.is_file()]
    return "\n".join(texts)


# ---------------------------------------------------------------- happy path and usage mapping


def test_happy_path_exact_stdout_path_bearer_and_usage(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    server = serve(
        ok_reply(
            {"prompt_tokens": 123, "completion_tokens": 45, "prompt_tokens_details": {"cached_tokens": 100}}
        )
    )
    proc = call(project, server.url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (REPLY + "\n").encode()
    assert proc.stderr == b""
    assert len(server.seen) == 1
    request = server.seen[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == f"Bearer {API_KEY}"
    body = request["body"]
    assert body["model"] == "planner-default" and body["stream"] is False
    assert body["messages"][0]["content"].startswith("[safety]\nsafety boundary\n\n[workflow]")
    assert json.loads(body["messages"][1]["content"])["objective"].endswith(PACKET_CANARY)
    claim, usage = project_rows(project)
    assert (claim["event"], claim["phase"], usage["event"], usage["phase"]) == (
        "model_call",
        "claimed",
        "model_usage",
        "complete",
    )
    assert claim["adapter"] == "openai-compatible" and claim["source"] == "api"
    assert claim["purpose"] == "cm-prd:design_generation"
    assert usage["usage_state"] == "observed" and usage["outcome"] == "success"
    assert (usage["input_tokens"], usage["output_tokens"], usage["cache_read_tokens"]) == (123, 45, 100)
    assert "cache_write_tokens" not in usage
    assert usage["effective_model"] == "provider-model-v2"
    # the global mirror holds the same two rows
    assert [r["event_id"] for r in rows(next((project["home"] / "runs").glob("*/*.jsonl")))] == [
        claim["event_id"],
        usage["event_id"],
    ]


def test_anthropic_style_usage_fields(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    server = serve(
        ok_reply(
            {
                "input_tokens": 7,
                "output_tokens": 2,
                "cache_read_input_tokens": 5,
                "cache_creation_input_tokens": 3,
                "prompt_tokens": 999,
            }
        )
    )
    assert call_inproc(project, server.url).returncode == 0
    usage = project_rows(project)[-1]
    assert [
        usage[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    ] == [7, 2, 5, 3]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # OpenAI names, cache write from prompt_tokens_details
        (
            {"prompt_tokens": 1, "completion_tokens": 2, "prompt_tokens_details": {"cache_write_tokens": 4}},
            ("observed", {"input_tokens": 1, "output_tokens": 2, "cache_write_tokens": 4}),
        ),
        # Anthropic names win over OpenAI names
        (
            {"input_tokens": 5, "prompt_tokens": 9, "output_tokens": 6, "completion_tokens": 9},
            ("observed", {"input_tokens": 5, "output_tokens": 6}),
        ),
        # a missing output count: unavailable, nothing guessed
        ({"prompt_tokens": 1}, ("unavailable", {})),
        # booleans and negatives are not counts
        ({"prompt_tokens": True, "completion_tokens": 1}, ("unavailable", {})),
        ({"prompt_tokens": -1, "completion_tokens": 1}, ("unavailable", {})),
        # usage that is not an object
        ("lots", ("unavailable", {})),
    ],
)
def test_usage_mapping_table(usage: Any, expected: tuple[str, dict[str, int]]) -> None:
    assert adapter.extract_usage({"usage": usage}) == expected


def test_missing_usage_is_unavailable(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    server = serve(ok_reply(None, text="NO_USAGE_OK"))
    proc = call_inproc(project, server.url)
    assert proc.returncode == 0 and proc.stdout == b"NO_USAGE_OK\n"
    usage = project_rows(project)[-1]
    assert usage["usage_state"] == "unavailable"
    assert not {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"} & set(usage)
    assert isinstance(usage["duration_ms"], int)


# ---------------------------------------------------------------- failures after the claim


def test_http_503_exit_1_body_hidden(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    server = serve(lambda h, _: _send_json(h, 503, {"error": {"message": "DO_NOT_ECHO_PROVIDER_BODY"}}))
    proc = call(project, server.url)
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert b"HTTP 503" in proc.stderr and b"DO_NOT_ECHO" not in proc.stderr
    usage = project_rows(project)[-1]
    assert usage["outcome"] == "error" and usage["usage_state"] == "unavailable"
    assert "DO_NOT_ECHO" not in every_log_text(project)


def test_redirect_is_not_followed_and_credential_not_forwarded(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    target = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}, text="REDIRECTED"))
    source = serve(lambda h, _: _send_json(h, 302, b"", {"Location": target.url + "/v1/chat/completions"}))
    proc = call(project, source.url)
    assert proc.returncode == 1
    assert b"HTTP 302" in proc.stderr and b"REDIRECTED" not in proc.stdout
    assert len(source.seen) == 1 and target.seen == []
    assert project_rows(project)[-1]["outcome"] == "error"


def test_dropped_connection_exit_1(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    def drop(handler: BaseHTTPRequestHandler, _: dict[str, Any]) -> None:
        handler.close_connection = True
        handler.connection.shutdown(2)

    server = serve(drop)
    proc = call(project, server.url)
    assert proc.returncode == 1 and b"request failed" in proc.stderr
    assert len(server.seen) == 1
    assert project_rows(project)[-1]["outcome"] == "error"


def test_deeply_nested_reply_exit_1(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    deep = (
        b'{"model":"deep-model","choices":[{"message":{"content":"DEEP"}}],"extra":'
        + b"[" * 256
        + b"0"
        + b"]" * 256
        + b"}"
    )
    server = serve(lambda h, _: _send_json(h, 200, deep))
    proc = call_inproc(project, server.url)
    assert proc.returncode == 1 and b"DEEP" not in proc.stdout
    assert b"nesting depth" in proc.stderr


def test_very_deep_reply_does_not_crash(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    server = serve(lambda h, _: _send_json(h, 200, deep))
    proc = call_inproc(project, server.url)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr


def test_oversized_reply_exit_1(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    big = b'{"choices":[{"message":{"content":"' + b"x" * (8 * 1024 * 1024) + b'"}}]}'
    server = serve(lambda h, _: _send_json(h, 200, big))
    proc = call_inproc(project, server.url)
    assert proc.returncode == 1 and b"exceeds 8 MiB" in proc.stderr and proc.stdout == b""


def test_reply_without_text_exit_1(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    server = serve(
        lambda h, _: _send_json(
            h,
            200,
            {
                "choices": [{"message": {"content": None}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1},
            },
        )
    )
    proc = call_inproc(project, server.url)
    assert proc.returncode == 1
    usage = project_rows(project)[-1]
    # the provider reported usage for a failed response: it is recorded as observed, never guessed
    assert (usage["outcome"], usage["usage_state"], usage["input_tokens"]) == ("error", "observed", 3)


def test_proxy_variables_are_ignored(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    proxy = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}, text="PROXY_INTERCEPTED"))
    server = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}, text="DIRECT"))
    env = {
        name: proxy.url for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY")
    }
    env.update(NO_PROXY="", no_proxy="")
    proc = call(project, server.url, env=env)
    assert proc.returncode == 0 and proc.stdout == b"DIRECT\n"
    assert proxy.seen == [] and len(server.seen) == 1


def _unwritable(path: Path) -> None:
    """Make a log unwritable even for root: a directory takes the file's place."""
    if os.geteuid() != 0:
        path.chmod(0o400)
        return
    path.rename(path.with_name(path.name + ".moved"))
    path.mkdir()


def test_read_only_log_after_failed_call_exit_4(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    log = project["specs"] / "运行日志.jsonl"

    def fail(handler: BaseHTTPRequestHandler, _: dict[str, Any]) -> None:
        _unwritable(log)
        _send_json(handler, 503, {"error": "x"})

    proc = call(project, serve(fail).url)
    assert proc.returncode == 4 and b"usage log failed" in proc.stderr
    moved = log.with_name(log.name + ".moved")
    claims = rows(moved if moved.exists() else log)
    assert [r["event"] for r in claims] == ["model_call"]  # the claim stays unresolved


def test_read_only_log_after_successful_call_exit_3(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    log = project["specs"] / "运行日志.jsonl"

    def succeed(handler: BaseHTTPRequestHandler, _: dict[str, Any]) -> None:
        _unwritable(log)
        _send_json(
            handler,
            200,
            {
                "model": "m",
                "choices": [{"message": {"content": "RESULT_WITHOUT_LOG"}}],
                "usage": {"prompt_tokens": 2, "completion_tokens": 1},
            },
        )

    proc = call(project, serve(succeed).url)
    assert proc.returncode == 3
    assert proc.stdout == b"RESULT_WITHOUT_LOG\n"
    assert b"do not retry" in proc.stderr


# ---------------------------------------------------------------- rejections before HTTP (exit 2)


def _no_claim_no_request(
    server: Server, project: dict[str, Path], proc: subprocess.CompletedProcess[bytes]
) -> None:
    assert proc.returncode == 2, proc.stderr
    assert server.seen == []
    assert project_rows(project) == []
    assert not (project["home"] / "runs").exists() or not any((project["home"] / "runs").rglob("*.jsonl"))
    assert b"Traceback" not in proc.stderr and proc.stdout == b""


@pytest.mark.parametrize(
    "dynamic",
    [
        {"workflow": "cm-ai"},  # identity must match --workflow
        {"stage": "other_stage"},  # ... --stage
        {"role": "coder"},  # ... --role
        {"objective": ""},  # required text empty
        {"constraints": "not a list"},
        {"constraints": [1]},
        {"identifiers": []},
        {"context": "text"},
        {"unexpected": 1},  # unknown field
    ],
)
def test_malformed_packet_exit_2(
    serve: Callable[[Responder], Server],
    project: dict[str, Path],
    dynamic: dict[str, Any],
) -> None:
    server = serve(ok_reply({}))
    _no_claim_no_request(
        server,
        project,
        call_inproc(project, server.url, stdin=json.dumps(packet(**dynamic)).encode()),
    )


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b'{"stable_prefix": {}, "dynamic_packet": {}}',
        json.dumps({**packet(), "extra": 1}).encode(),  # exactly two keys
        json.dumps({"dynamic_packet": packet()["dynamic_packet"]}).encode(),
        b'{"stable_prefix": NaN}',
        b"\xff\xfe",
        b"[" * 5000 + b"]" * 5000,
        b'{"a":"' + b"x" * (1024 * 1024) + b'"}',  # over 1 MiB
    ],
)
def test_malformed_stdin_exit_2(
    serve: Callable[[Responder], Server],
    project: dict[str, Path],
    raw: bytes,
) -> None:
    server = serve(ok_reply({}))
    _no_claim_no_request(server, project, call_inproc(project, server.url, stdin=raw))


def test_missing_dynamic_field_exit_2(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    body = packet()
    del body["dynamic_packet"]["expected_output"]
    server = serve(ok_reply({}))
    _no_claim_no_request(server, project, call_inproc(project, server.url, stdin=json.dumps(body).encode()))


@pytest.mark.parametrize(
    ("env", "drop", "url"),
    [
        ({}, ("CM_OPENAI_COMPATIBLE_ENABLED",), None),
        ({"CM_OPENAI_COMPATIBLE_ENABLED": "TRUE"}, (), None),  # exactly "true"
        ({"CM_OPENAI_COMPATIBLE_ENABLED": "1"}, (), None),
        ({}, ("CM_OPENAI_COMPATIBLE_API_KEY",), None),
        ({"CM_OPENAI_COMPATIBLE_API_KEY": "key with space"}, (), None),
        ({"CM_OPENAI_COMPATIBLE_API_KEY": "k" * 5000}, (), None),
        ({}, ("CM_OPENAI_COMPATIBLE_BASE_URL",), None),
        ({}, (), "http://models.example.invalid/v1"),  # plain HTTP to a remote host
        ({}, (), "ftp://127.0.0.1/v1"),
        ({}, (), "http://user:pw@127.0.0.1:9/v1"),  # userinfo; workgroup: allow url-credentials
        ({}, (), "http://127.0.0.1:9/v1?x=1"),  # query
        ({}, (), "http://127.0.0.1:9/v1#frag"),  # fragment
        ({}, (), "http://127.0.0.1:99999/v1"),  # bad port
        ({}, (), "http://127.0.0.1/v1/\u00e9"),  # not printable ASCII
    ],
)
def test_bad_settings_exit_2(
    serve: Callable[[Responder], Server],
    project: dict[str, Path],
    env: dict[str, str],
    drop: tuple[str, ...],
    url: str | None,
) -> None:
    server = serve(ok_reply({}))
    if url is not None:
        env = {**env, "CM_OPENAI_COMPATIBLE_BASE_URL": url}
    proc = call_inproc(project, server.url, env=env, drop=drop)
    _no_claim_no_request(server, project, proc)
    assert API_KEY.encode() not in proc.stderr


@pytest.mark.parametrize(
    ("kwargs", "extra"),
    [
        ({"specs": False, "run_id": None}, []),  # --run-id required without --specs-dir
        ({"run_id": "short"}, []),  # run ids are 8..128 safe characters
        ({"run_id": "../../../escape-run"}, []),
        ({}, ["--timeout-seconds", "0"]),
        ({}, ["--timeout-seconds", "601"]),
        ({"call_id": "bad/call"}, []),
        ({}, ["--runtime", "gpt"]),
    ],
)
def test_bad_arguments_exit_2(
    serve: Callable[[Responder], Server],
    project: dict[str, Path],
    kwargs: dict[str, Any],
    extra: list[str],
) -> None:
    server = serve(ok_reply({}))
    _no_claim_no_request(server, project, call_inproc(project, server.url, extra=extra, **kwargs))


def test_https_is_required_but_loopback_names_pass() -> None:
    env = {"CM_OPENAI_COMPATIBLE_ENABLED": "true", "CM_OPENAI_COMPATIBLE_API_KEY": "k"}
    for base, path in (
        ("https://models.example.invalid/v1", "/v1/chat/completions"),
        ("http://localhost:8080/v1/", "/v1/chat/completions"),
        ("http://[::1]:8080", "/chat/completions"),
        ("https://h.example.invalid/v1/chat/completions", "/v1/chat/completions"),
    ):
        assert adapter.resolve_endpoint({**env, "CM_OPENAI_COMPATIBLE_BASE_URL": base}).path == path
    with pytest.raises(adapter.Rejected):
        adapter.resolve_endpoint({**env, "CM_OPENAI_COMPATIBLE_BASE_URL": "http://10.0.0.1/v1"})


# ---------------------------------------------------------------- call id reuse and races


def test_call_id_reuse_refused_before_http(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    server = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}))
    assert call_inproc(project, server.url).returncode == 0
    again = call_inproc(project, server.url)
    assert again.returncode == 2 and b"already completed" in again.stderr
    assert len(server.seen) == 1


def test_global_only_run(serve: Callable[[Responder], Server], project: dict[str, Path]) -> None:
    server = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}))
    proc = call(project, server.url, specs=False)
    assert proc.returncode == 0
    log = project["home"] / "runs"
    assert [r["event"] for r in rows(next(log.glob(f"*/{RUN_ID}.jsonl")))] == ["model_call", "model_usage"]
    assert project_rows(project) == []
    again = call(project, server.url, specs=False)
    assert again.returncode == 2 and len(server.seen) == 1


def test_sixteen_concurrent_calls_one_request(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    barrier = threading.Event()

    def slow(handler: BaseHTTPRequestHandler, record: dict[str, Any]) -> None:
        barrier.wait(1.0)  # keep the winner in flight while the others try to claim
        ok_reply({"prompt_tokens": 3, "completion_tokens": 2}, text="RACE_OK")(handler, record)

    server = serve(slow)
    with ThreadPoolExecutor(max_workers=16) as pool:
        procs = list(pool.map(lambda _: call(project, server.url, "race-call"), range(16)))
    barrier.set()
    codes = sorted(p.returncode for p in procs)
    assert codes == [0] + [2] * 15, [p.stderr for p in procs]
    assert len(server.seen) == 1
    assert sum(p.stdout == b"RACE_OK\n" for p in procs) == 1
    events = [r["event"] for r in project_rows(project)]
    assert events == ["model_call", "model_usage"]


# ---------------------------------------------------------------- secrets never leak


def test_canaries_never_logged_and_reply_only_on_stdout(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    server = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}))
    results = [call(project, server.url, "leak-1")]
    failing = serve(lambda h, _: _send_json(h, 500, {"echo": PACKET_CANARY}))
    results.append(call(project, failing.url, "leak-2"))
    results.append(call(project, server.url, "leak-1"))  # reuse refusal
    results.append(call(project, server.url, "leak-3", env={"CM_OPENAI_COMPATIBLE_ENABLED": "no"}))
    logs = every_log_text(project)
    assert logs
    for proc in results:
        for canary in (API_KEY.encode(), PACKET_CANARY.encode()):
            assert canary not in proc.stdout and canary not in proc.stderr
    for text in (API_KEY, PACKET_CANARY, "REPLY-CANARY", "CM_OPENAI_COMPATIBLE", server.url):
        assert text not in logs
    assert results[0].stdout == (REPLY + "\n").encode()
    assert all(b"REPLY-CANARY" not in p.stdout for p in results[1:])


def test_writer_environment_has_no_adapter_variables() -> None:
    env = adapter._writer_env(
        {
            "CM_OPENAI_COMPATIBLE_API_KEY": "s",
            "CM_OPENAI_COMPATIBLE_ENABLED": "true",
            "CM_OPENAI_COMPATIBLE_BASE_URL": "u",
            "HOME": "/h",
        }
    )
    assert env == {"HOME": "/h"}


def _unwritable_stdout_call(
    how: str, unbuffered: str | None, server: Server, project: dict[str, Path]
) -> subprocess.CompletedProcess[bytes]:
    argv = _argv(project, "out-1", True, None, None)
    env = _env(server.url, None, ())
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered is not None:
        env["PYTHONUNBUFFERED"] = unbuffered
    script = "import os,sys; os.close(1); from toolkit.cm.adapter import main; raise SystemExit(main(sys.argv[1:]))"
    run: dict[str, Any] = {
        "input": json.dumps(packet()).encode(),
        "stderr": subprocess.PIPE,
        "env": env,
        "timeout": 60,
    }
    if how == "closed after start":
        return subprocess.run(
            [sys.executable, "-c", script, *argv], stdout=subprocess.DEVNULL, check=False, **run
        )
    cmd = [sys.executable, "-m", "toolkit.cm.adapter", *argv]
    if how == "closed":  # `cm-openai-compatible-call ... >&-`
        return subprocess.run(["/bin/sh", "-c", 'exec "$@" >&-', "sh", *cmd], check=False, **run)
    if how == "full":
        with open("/dev/full", "wb") as full:
            return subprocess.run(cmd, stdout=full, check=False, **run)
    reader, writer = os.pipe()
    os.close(reader)  # a pipe whose reader has exited
    try:
        return subprocess.run(cmd, stdout=writer, check=False, **run)
    finally:
        os.close(writer)


@pytest.mark.parametrize("how", ["closed after start", "closed", "full", "gone reader"])
@pytest.mark.parametrize("unbuffered", ["1", None], ids=["unbuffered", "block-buffered"])
def test_stdout_failure_after_the_billed_call_keeps_its_usage(
    serve: Callable[[Responder], Server], project: dict[str, Path], how: str, unbuffered: str | None
) -> None:
    """stdout refuses the text: the usage row was logged before the print, so nothing billed is
    lost, and the exit is 3 (the call completed; do not repeat it) with the coded line.

    Both stdout modes: block-buffered (a pipe, PYTHONUNBUFFERED unset) used to fail only at
    interpreter shutdown, exit 120 after logging success.
    """
    if how == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    server = serve(ok_reply({"prompt_tokens": 7, "completion_tokens": 3}))
    proc = _unwritable_stdout_call(how, unbuffered, server, project)
    assert proc.returncode == 3, proc.stderr
    assert b"error[OUTPUT_UNWRITABLE]" in proc.stderr
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr
    assert len(server.seen) == 1
    usage = [row for row in project_rows(project) if row["event"] == "model_usage"]
    assert [(r["outcome"], r["input_tokens"], r["output_tokens"]) for r in usage] == [("success", 7, 3)]


def test_lean_imports(tmp_path: Path) -> None:
    """The three cm-* scripts never load typer, pydantic, pygit2 or yaml, even after a real write."""
    code = (
        "import sys, io, contextlib, toolkit.cm.adapter, toolkit.cm.events, toolkit.cm.report\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert toolkit.cm.events.main(['--workflow', 'cm-prd', '--event', 'note',\n"
        "        '--runtime', 'codex', '--run-id', 'lean-run-0001', '--detail', 'lean start']) == 0\n"
        "    assert toolkit.cm.report.main(['--json']) == 0\n"
        "heavy = {'typer', 'pydantic', 'pygit2', 'yaml', 'click'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    env = {**os.environ, "CM_WORKFLOW_LOG_HOME": str(tmp_path / "logs")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


def test_demo_step_runs_and_narrates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.demo.runner import Demo
    from toolkit.demo.steps import model_calls
    from toolkit.infra.git import commit_all, init_repository

    root = tmp_path / "demo"
    root.mkdir()
    repo = init_repository(root)
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    commit_all(repo, "init")
    demo = Demo(root=root, env={"CM_WORKFLOW_LOG_HOME": str(tmp_path / "logs")})
    model_calls.run(demo)
    out = capsys.readouterr().out
    assert "cm-openai-compatible-call exit 0" in out
    assert "event model_call/claimed" in out and "event model_usage/complete" in out
    assert "Same call_id again: exit 2" in out and "1 request(s) in total" in out
    assert "- calls: observed 1 | unavailable 0 | unresolved claims 0 | invalid 0" in out


def test_completion_stays_in_the_claims_run_when_the_pointer_moves(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    """Without --run-id the pointer picks the run; a run_done landing mid-call must not split the call."""
    from toolkit.cm import events

    def finish_run_then_reply(handler: BaseHTTPRequestHandler, record: dict[str, Any]) -> None:
        code = events.main(
            [
                "--workflow",
                "cm-prd",
                "--event",
                "run_done",
                "--runtime",
                "codex",
                "--specs-dir",
                str(project["specs"]),
                "--detail",
                "run finished meanwhile",
            ]
        )
        assert code == 0
        ok_reply({"prompt_tokens": 4, "completion_tokens": 2})(handler, record)

    server = serve(finish_run_then_reply)
    proc = call(project, server.url, run_id=None)
    assert proc.returncode == 0, proc.stderr
    claim, done, usage = project_rows(project)
    assert (claim["event"], done["event"], usage["event"]) == ("model_call", "run_done", "model_usage")
    assert claim["run_id"] == done["run_id"] == usage["run_id"]


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def test_https_verifies_the_certificate(
    serve: Callable[[Responder], Server], project: dict[str, Path], tmp_path: Path
) -> None:
    import ssl

    server = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}, text="TLS_OK"))
    cert, key = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    assert server.httpd is not None
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    url = server.url.replace("http://", "https://")
    untrusted = call(project, url, "tls-1")
    assert untrusted.returncode == 1 and b"request failed" in untrusted.stderr and server.seen == []
    trusted = call(project, url, "tls-2", env={"SSL_CERT_FILE": str(cert)})
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout == b"TLS_OK\n" and len(server.seen) == 1


# --- the packet passes the privacy engine before anything is sent (issue 15) ---

PRIVATE_ITEMS = [
    ("objective", "deploy with key sk-proj-" + "Ab3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA3cE5"),  # a credential
    ("objective", "ask ops at alice.maintainer@acme-corp.io"),  # an email, a workflow artifact finding
    ("constraints", ["read /home/alice/projects/secret-notes.txt"]),  # a home path
    ("identifiers", {"feature": "1.fixture", "api_key": "not-a-real-value"}),  # a credential field name
]


@pytest.mark.parametrize(("key", "value"), PRIVATE_ITEMS)
def test_private_packet_is_rejected_before_any_request(
    serve: Callable[[Responder], Server],
    project: dict[str, Path],
    key: str,
    value: Any,
) -> None:
    server = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}))
    data = json.dumps(packet(**{key: value})).encode("utf-8")
    proc = call_inproc(project, server.url, stdin=data)
    assert proc.returncode == 2, proc.stderr
    assert b"PACKET_PRIVATE" in proc.stderr
    assert server.seen == []  # the endpoint received nothing
    assert proc.stdout == b""
    # the secret itself is never echoed
    text = value if isinstance(value, str) else json.dumps(value)
    assert text.encode() not in proc.stderr
    # no claim was logged either: nothing names this call
    logs = list(project["home"].rglob("*.jsonl")) + list(project["specs"].rglob("*.jsonl"))
    assert not any(b"call-0001" in p.read_bytes() for p in logs)


def test_private_packet_rejected_as_a_real_process(
    serve: Callable[[Responder], Server], project: dict[str, Path]
) -> None:
    server = serve(ok_reply({"prompt_tokens": 1, "completion_tokens": 1}))
    leaked = "sk-proj-" + "Zz9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8"
    proc = call(project, server.url, stdin=json.dumps(packet(objective=f"use {leaked}")).encode())
    assert proc.returncode == 2 and b"PACKET_PRIVATE" in proc.stderr
    assert leaked.encode() not in proc.stderr + proc.stdout
    assert server.seen == []
    # the same packet without the secret goes through to the endpoint
    ok = call(project, server.url, call_id="call-0002")
    assert ok.returncode == 0, ok.stderr
    assert len(server.seen) == 1
