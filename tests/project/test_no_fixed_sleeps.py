"""No fixed sleep is a barrier in the tests: wait for an event, a pipe, a lock or a polled condition.

A sleep that is the thing under test (a collector that answers late, a kill landing at some point
inside a write) or the poll interval of a wait bounded by its deadline may stay, and says so with
``# not a barrier: <why>`` on its line or on the comment line right above it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
SLEEP = re.compile(r"\bsleep\(")
MARKER = re.compile(r"#\s*not a barrier:\s*\S")


def unmarked_sleeps(text: str) -> list[int]:
    """Line numbers of the sleep calls without a ``# not a barrier: <why>`` marker."""
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines, start=1):
        if not SLEEP.search(line.split("#", 1)[0]):
            continue
        above = lines[number - 2].strip() if number > 1 else ""
        if MARKER.search(line) or (above.startswith("#") and MARKER.search(above)):
            continue
        found.append(number)
    return found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("time.sleep(0.1)\n", [1]),  # a bare sleep
        ("from time import sleep\nsleep(3)\n", [2]),  # imported by name
        ("while not ready():\n    time.sleep(0.01)\n", [2]),  # a poll without a marker is flagged too
        (
            'CHILD = """\nwhile not os.path.exists(go):\n    time.sleep(0.002)\n"""\n',
            [3],
        ),  # in a child's code
        ("time.sleep(1)  # not a barrier:\n", [1]),  # a marker without a reason
        ("time.sleep(1)  # let it finish\n", [1]),  # a comment that is no marker
        ("# not a barrier: x\nx = 1\ntime.sleep(1)\n", [3]),  # the marker is not on the line above
        ("time.sleep(d)  # not a barrier: where the kill lands\n", []),
        ("# not a barrier: the slowness under test\ntime.sleep(d)\n", []),
        ("event.wait(5)\nsleeper = 1\n", []),  # no sleep call
    ],
)
def test_the_scan_finds_unmarked_sleeps(text: str, found: list[int]) -> None:
    assert unmarked_sleeps(text) == found


def test_no_test_sleeps_as_a_barrier() -> None:
    here = Path(__file__).resolve()
    offenders = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != here
        for number in unmarked_sleeps(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "a fixed sleep used as a barrier (or unmarked): " + ", ".join(offenders)
