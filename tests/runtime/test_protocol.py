"""The runtime protocol: stdin cap while reading, coded errors without echo, one line, --batch."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.harness import cli

from toolkit.runtime.codes import MESSAGES
from toolkit.runtime.deep_query import op_should_deep_query, should_deep_query
from toolkit.runtime.protocol import (
    MAX_REQUEST_BYTES,
    OPERATIONS,
    RuntimeContext,
    execute,
    read_limited,
    render_frame,
    run_batch,
    run_single,
)

CANARY = "SECRETCANARY-7f3a"
VALID_LINEAGE_REQUEST: dict[str, Any] = {
    "lineage": None,
    "current": {},
    "now": "2026-07-30T08:20:00Z",
}


def runtime(
    *args: str, stdin: bytes = b"", cwd: Path | None = None, timeout: float = 60
) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "runtime", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    assert proc.stderr == b"", proc.stderr  # never a traceback
    return proc.returncode, proc.stdout.decode("utf-8").split("\n")[:-1]


def frame_of(lines: list[str]) -> dict[str, Any]:
    assert len(lines) == 1
    value: dict[str, Any] = json.loads(lines[0])
    return value


# ---------------------------------------------------------------- size limit ----------


def test_oversized_endless_stdin_is_refused_while_reading() -> None:
    # A writer that never stops: reading it whole would hang. We must answer and exit early.
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nw = sys.stdout.buffer\ntry:\n    while True: w.write(b' ' * 65536)\n"
            "except BrokenPipeError: pass",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert writer.stdout is not None
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "runtime", "should-deep-query"],
        stdin=writer.stdout,
        capture_output=True,
        timeout=60,
        check=False,
    )
    writer.stdout.close()
    writer.kill()
    writer.wait()
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == {
        "ok": False,
        "code": "REQUEST_TOO_LARGE",
        "message": MESSAGES["REQUEST_TOO_LARGE"],
    }


def test_five_megabytes_refused_with_bounded_reads() -> None:
    class Counting(io.RawIOBase):
        def __init__(self, size: int) -> None:
            self.left, self.served = size, 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            n = min(len(buffer), self.left)
            buffer[:n] = b" " * n
            self.left -= n
            self.served += n
            return n

    source = Counting(5 * 1024 * 1024)
    out = io.StringIO()
    assert run_single("should-deep-query", io.BufferedReader(source), out, RuntimeContext()) == 1
    assert json.loads(out.getvalue())["code"] == "REQUEST_TOO_LARGE"
    assert source.served < MAX_REQUEST_BYTES + 2 * 65536 + 8192  # stopped right after the limit


def test_exact_limit_accepted_one_more_byte_refused() -> None:
    body = b'{"question":"is this long enough?"}'
    padded = body + b" " * (MAX_REQUEST_BYTES - len(body))
    assert len(read_limited(io.BytesIO(padded))) == MAX_REQUEST_BYTES
    code, lines = runtime("should-deep-query", stdin=padded)
    assert code == 0 and frame_of(lines)["result"]["should_deep_query"] is True
    code, lines = runtime("should-deep-query", stdin=padded + b" ")
    assert code == 1 and frame_of(lines)["code"] == "REQUEST_TOO_LARGE"


# ---------------------------------------------------------------- bad input ------------

BAD_BODIES = [
    b"",
    b"   ",
    b"{",
    b"[]",
    b"null",
    b"3",
    b'"' + CANARY.encode() + b'"',
    b'["' + CANARY.encode() + b'"]',
    b'{"a": NaN}',
    b'{"a": Infinity}',
    b'{"a": -Infinity}',
    b'{"a": 1e999}',
    b"\xff\xfe{}",
    b'{"' + CANARY.encode() + b'": }',
    b"{} {}",
    b"{}\n{}",
    b"\xef\xbb\xbf{}",
    b'{"a":' * 100_000,
    b'{"n": ' + b"9" * 5000 + b"}",
    ('{"' + CANARY + '": "\\ud800"').encode(),
]


@pytest.mark.parametrize("body", BAD_BODIES)
def test_malformed_requests_are_invalid_request_without_echo(body: bytes) -> None:
    out = io.StringIO()
    assert run_single("should-deep-query", io.BytesIO(body), out, RuntimeContext()) == 1
    text = out.getvalue()
    assert text.count("\n") == 1 and CANARY not in text
    assert json.loads(text) == {
        "ok": False,
        "code": "INVALID_REQUEST",
        "message": MESSAGES["INVALID_REQUEST"],
    }


@pytest.mark.parametrize("args", [[], ["nope"], ["route", "lineage"], [CANARY], ["--batch"], ["ROUTE"]])
def test_unknown_or_missing_operation(args: list[str]) -> None:
    code, lines = runtime(*args, stdin=b"{}")
    frame = frame_of(lines)
    assert code == 1 and frame["code"] == "UNSUPPORTED_OPERATION" and CANARY not in lines[0]


@pytest.mark.parametrize("op", sorted(OPERATIONS))
@pytest.mark.parametrize(
    "request_value",
    [
        {"input": CANARY},
        {"input": [CANARY]},
        {"lineage": CANARY, "current": CANARY, "now": CANARY},
        {"capsule": {CANARY: CANARY}},
        {"event": {"schema": CANARY}},
        {"routing": CANARY, "rollout": CANARY},
        {
            "input": {
                "rollout": CANARY,
                "tier": CANARY,
                "delta": CANARY,
                "requested_mode": CANARY,
                "nesting_depth": CANARY,
            }
        },
    ],
)
def test_every_op_refuses_wrong_types_without_echo(
    op: str, request_value: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    frame = execute(op, request_value, RuntimeContext(cwd=str(tmp_path)))
    line = render_frame(frame)
    if not frame["ok"]:
        assert frame["code"] in MESSAGES and frame["message"] == MESSAGES[frame["code"]]
        assert CANARY not in line
    assert line.count("\n") == 1


def test_unknown_request_fields_are_ignored_but_closed_records_refuse_them() -> None:
    ctx = RuntimeContext()
    asked = execute("should-deep-query", {"question": "is this long enough?", "extra": {"x": 1}}, ctx)
    assert asked["ok"] and asked["result"]["should_deep_query"] is True
    from support.lineage_fixtures import hot_current, hot_lineage

    closed = execute(
        "lineage",
        {
            "lineage": {**hot_lineage(), "extra": 1},
            "current": hot_current(),
            "now": "2026-07-30T08:20:00Z",
            "unknown_top_level": True,
        },
        ctx,
    )
    assert closed["result"] == {"state": "INVALID", "invalidations": ["UNKNOWN_PROVENANCE"]}


# ---------------------------------------------------------------- output ---------------


def test_render_frame_stays_one_valid_utf8_line() -> None:
    frame = {"ok": True, "operation": "x", "result": {"s": "a\u2028b\u2029c\u0085d\ud800e\n"}}
    line = render_frame(frame)
    assert line.endswith("\n") and line.count("\n") == 1 and len(line[:-1].splitlines()) == 1
    line.encode("utf-8")  # no lone surrogate left
    assert json.loads(line)["result"]["s"] == "a\u2028b\u2029c\u0085d\ud800e\n"


def test_unencodable_result_becomes_invalid_request() -> None:
    assert json.loads(render_frame({"ok": True, "result": {"x": float("nan")}}))["code"] == "INVALID_REQUEST"
    assert json.loads(render_frame({"ok": True, "result": {"x": object()}}))["code"] == "INVALID_REQUEST"


def test_success_frame_shape_and_exit_zero() -> None:
    code, lines = runtime("should-deep-query", stdin=b'{"question": "   short?  "}')
    assert code == 0
    assert frame_of(lines) == {
        "ok": True,
        "operation": "should-deep-query",
        "result": {"should_deep_query": False, "reason": "QUESTION_TOO_SHORT"},
    }


def test_closed_stdin_is_one_coded_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "runtime", "should-deep-query"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and json.loads(proc.stdout)["code"] == "INVALID_REQUEST"


def test_main_in_process_exit_codes() -> None:
    answer = cli("runtime", "should-deep-query", stdin=b'{"question": "what happens here, exactly?"}')
    assert answer.exit_code == 0
    assert json.loads(answer.stdout)["result"]["should_deep_query"] is True
    assert cli("runtime", "-h").exit_code == 0


# ---------------------------------------------------------------- batch ----------------


def test_batch_one_answer_per_request_and_exit_one_when_any_failed() -> None:
    lines = [
        b'{"question": "is the first one a question?"}',
        b"",
        b"not json " + CANARY.encode(),
        b'{"question": "short?"}',
        b"   ",
        b"[]",
    ]
    code, out = runtime("--batch", "should-deep-query", stdin=b"\n".join(lines) + b"\n")
    frames = [json.loads(line) for line in out]
    assert code == 1 and len(frames) == 4
    assert [f.get("code") for f in frames] == [None, "INVALID_REQUEST", None, "INVALID_REQUEST"]
    assert (
        frames[0]["result"]["should_deep_query"] is True and frames[2]["result"]["should_deep_query"] is False
    )
    assert all(CANARY not in line for line in out)


def test_batch_all_ok_exits_zero_and_last_line_needs_no_newline() -> None:
    code, out = runtime(
        "should-deep-query", "--batch", stdin=b'{"question":"a real question, right?"}\n{"question":1}'
    )
    assert code == 0 and len(out) == 2


def test_batch_limit_is_per_line() -> None:
    ok = b'{"question": "what about the next line?"}'
    big = b'{"question": "' + b"x" * MAX_REQUEST_BYTES + b'?"}'
    exact = ok + b" " * (MAX_REQUEST_BYTES - len(ok))
    code, out = runtime("--batch", "should-deep-query", stdin=b"\n".join([ok, big, exact, ok]) + b"\n")
    codes = [json.loads(line).get("code") for line in out]
    assert code == 1 and codes == [None, "REQUEST_TOO_LARGE", None, None]


def test_batch_shares_one_context() -> None:
    seen: list[int] = []
    ctx = RuntimeContext()
    OPERATIONS["_probe"] = "lineage_fixtures:probe_op"
    try:
        run_batch("_probe", io.BytesIO(b"{}\n{}\n"), io.StringIO(), ctx)
    finally:
        del OPERATIONS["_probe"]
    seen.extend(ctx.cache.get("probe", []))
    assert seen == [1, 2]


def test_runtime_never_writes_files(tmp_path: Path) -> None:
    before = set(os.listdir(tmp_path))
    runtime("--batch", "lineage", stdin=json.dumps(VALID_LINEAGE_REQUEST).encode() + b"\n", cwd=tmp_path)
    assert set(os.listdir(tmp_path)) == before


# ---------------------------------------------------------------- lean start-up --------

LEAN_CHECK = """
import io, json, sys
from toolkit.entry import main
op, payload = sys.argv[1], sys.argv[2]
sys.stdin = io.TextIOWrapper(io.BytesIO(payload.encode()), encoding="utf-8")
code = main(["runtime", "--batch", op])
heavy = {"typer", "click", "pydantic", "pygit2", "yaml", "rich"}
heavy = sorted({m.split(".")[0] for m in sys.modules} & heavy)
print(json.dumps({"exit": code, "heavy": heavy}), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "op,payload",
    [
        ("route", {"input": {"role": "builder", "owned_files": ["src/a.py"]}}),
        (
            "dispatch",
            {
                "routing": {"input": {"owned_files": ["src/a.py"]}},
                "rollout": {"input": {"rollout": "shadow"}},
            },
        ),
        ("lineage", VALID_LINEAGE_REQUEST),
    ],
)
def test_runtime_path_imports_no_typer_pydantic_pygit2(
    op: str, payload: dict[str, Any], git_repo: Any
) -> None:
    # inside a real repository, so the router's writer-registry lookup runs too
    git_repo.commit("init", {"src/a.py": "x = 1\n"})
    proc = subprocess.run(
        [sys.executable, "-c", LEAN_CHECK, op, json.dumps(payload) + "\n"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=git_repo.path,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report == {"exit": 0, "heavy": []}, (proc.stdout, proc.stderr)


# ---------------------------------------------------------------- should-deep-query ----


@pytest.mark.parametrize(
    "question,expected",
    [
        ("Which spec covers it?", True),
        ("  Which spec covers it?  \n", True),  # trimmed first
        ("abcdefghij?", False),  # 11 characters
        ("abcdefghijk?", True),  # 12
        ("\U0001f600" * 5 + "ab?", True),  # 13 UTF-16 units, as JavaScript counts
        ("Which spec covers it", False),  # no question mark
        ("Which spec covers it?\u0085", False),  # U+0085 is not JavaScript whitespace
        ("\ufeffWhich spec covers it?\ufeff", True),  # U+FEFF is
        ("Is this a question?!", False),
        (None, False),
        (12, False),
        (["Which spec covers it?"], False),
    ],
)
def test_should_deep_query_reference_rule(question: Any, expected: bool) -> None:
    assert should_deep_query(question) is expected


@pytest.mark.parametrize(
    "extra,expected",
    [
        ({}, (True, "DEEP_QUERY_JUSTIFIED")),
        ({"classification_resolved": False}, (False, "CLASSIFICATION_PENDING")),
        ({"spec_reuse_checked": False}, (False, "SPEC_REUSE_PENDING")),
        ({"classification_resolved": True, "spec_reuse_checked": True}, (True, "DEEP_QUERY_JUSTIFIED")),
        ({"classification_resolved": 0}, (True, "DEEP_QUERY_JUSTIFIED")),  # only an explicit false defers
    ],
)
def test_should_deep_query_ceo02_order(extra: dict[str, Any], expected: tuple[bool, str]) -> None:
    result = op_should_deep_query({"question": "Which spec covers the refresh?", **extra}, RuntimeContext())
    assert (result["should_deep_query"], result["reason"]) == expected


def test_should_deep_query_reasons() -> None:
    ctx = RuntimeContext()
    assert op_should_deep_query({}, ctx)["reason"] == "QUESTION_REQUIRED"
    assert op_should_deep_query({"question": "short?"}, ctx)["reason"] == "QUESTION_TOO_SHORT"
    assert op_should_deep_query({"question": "a long statement."}, ctx)["reason"] == "NOT_A_QUESTION"
