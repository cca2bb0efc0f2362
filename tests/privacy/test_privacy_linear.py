"""Linear time: no rule backtracks. Hostile inputs scan in time proportional to their size,
under 1 s per MB, in the strictest context (every rule) and in source context.

These are the inputs issue 13 names (a 10 MB line of one character, of base64, of ``a=``) plus
one line per rule family made of its own trigger repeated (``sk-sk-sk-...``, ``password=...``),
which is what makes a backtracking pattern retry a bounded body at every repeat.
"""

from __future__ import annotations

import base64
import random
import time

import pytest
from support.privacy_cases import BUDGET_S_PER_MB, MB, TRACED, repeated

from toolkit.privacy import Context, scan_text, scan_value

# CPU time of this process: the figure is about the work a pattern does, not about how many
# other processes share the machine while the test runs.


def _timed(text: str, context: Context) -> float:
    start = time.process_time()
    scan_text(text, context)
    return time.process_time() - start


def _line(unit: str, size: int) -> str:
    return repeated(unit, size)


def _base64(size: int) -> str:
    return base64.b64encode(random.Random(13).randbytes(size)).decode()[:size]


@pytest.mark.parametrize("name", ["one character", "base64", "a="])
def test_ten_megabyte_hostile_lines_scan_under_a_second_per_megabyte(name: str) -> None:
    size = 10 * MB
    text = {"one character": _line("a", size), "base64": _base64(size), "a=": _line("a=", size)}[name]
    for context in (Context.GENERIC, Context.SOURCE):
        elapsed = _timed(text, context)
        assert elapsed < BUDGET_S_PER_MB * size / MB, (name, context, elapsed)


TRIGGERS = [
    "A",
    "0",
    "-",
    "/",
    "_",
    ".",
    "@",
    "=",
    " ",
    "a@",
    "a.",
    "a:b@",
    "://",
    "sk-",
    "sk-ant-api01-",
    "ghp_",
    "github_pat_",
    "xoxb-",
    "AKIA",
    "AIza",
    "hf_",
    "SK",
    "SG.",
    "key-",
    "dp.st.",
    "sl.",
    "eyJ",
    "ops_eyJ",
    "Bearer ",
    "authorization: Basic ",
    "password=",
    "password: ",
    "--password ",
    "-u ",
    "IDENTIFIED BY '",
    "CREATE USER x PASSWORD '",
    "mysql -p",
    "sshpass -p ",
    "login: a / password: ",
    "aws_secret_access_key=",
    "AccountKey=",
    "-----BEGIN PRIVATE KEY-----\n",
    "/home/",
    "/Users/",
    "C:\\Users\\",
    "session_id=",
    "claude session ",
    "thread_",
    "raw transcript: ",
    "Human: ",
    '"role": "user", "content": "',
    "User: hi\nAssistant: ",
    "data:image/png;base64,",
    "M" + "a" * 23 + ".",
    "aaaaaaaaaaaAAAAAAAAAA",
    ".atlasv1.",
]


@pytest.mark.parametrize("unit", TRIGGERS)
def test_every_trigger_repeated_is_linear(unit: str) -> None:
    size = MB
    elapsed = _timed(_line(unit, size), Context.GENERIC)
    assert elapsed < BUDGET_S_PER_MB * size / MB, (unit, elapsed)


def test_time_grows_in_proportion_to_size() -> None:
    # a backtracking rule shows up as super-linear growth: 8x the input, far more than 8x the time
    small, large = _base64(MB // 4), _base64(2 * MB)
    best_small = min(_timed(small, Context.GENERIC) for _ in range(3))
    best_large = min(_timed(large, Context.GENERIC) for _ in range(2))
    assert best_large < 8 * best_small * 2.5 + 0.05, (best_small, best_large)


def test_a_large_telemetry_note_is_scanned_quickly() -> None:
    # the 500 kB note that kept the telemetry op busy for 9.5 s
    event = {"note": _line("a", 500_000), "tags": [_base64(100_000)]}
    start = time.process_time()
    scan_value(event, Context.TELEMETRY)
    assert time.process_time() - start < 0.6 * (3 if TRACED else 1)


RECORD_TRIGGERS = [
    "run_a1",
    "session: a1",
    "Bearer a",
    "verbatim log ",
    "repo-a",
    "C:\\",
    "x@y.z ",
    "sk-",
    "ghp_",
    "eyJ",
    "password: a1",
    "://a:b@",
    "-----BEGIN RSA PRIVATE KEY-----",
    # pasted raw content in either word order, and what the telemetry context withholds
    "raw ",
    "full system ",
    "log kept ",
    "chat, ",
    "~/",
    "/a",
    "a.b:11 ",
    "1.1.1.",
    "+1 (",
    "41 ",
    "4",
]


@pytest.mark.parametrize("context", [Context.CAPSULE, Context.TELEMETRY])
@pytest.mark.parametrize("unit", RECORD_TRIGGERS)
def test_record_shapes_are_linear_too(unit: str, context: Context) -> None:
    # the stricter record rules (toolkit/privacy/strict.py) and the telemetry shapes
    elapsed = _timed(_line(unit, MB), context)
    assert elapsed < BUDGET_S_PER_MB, (unit, context, elapsed)
