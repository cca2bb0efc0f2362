"""The one strict-JSON loader and depth check (toolkit/core/strictjson.py) and the shared
identifier patterns (toolkit/core/identifiers.py)."""

from __future__ import annotations

import pytest

from toolkit.core.identifiers import CM_RUN_ID, FULL_SHA, MEASUREMENT_RUN_ID, PSEUDONYM
from toolkit.core.strictjson import json_depth_exceeds, loads_strict


@pytest.mark.parametrize("raw", [b'{"a": [1, 2.5, "x"]}', '{"a": [1, 2.5, "x"]}'])
def test_standard_json_loads_from_bytes_or_text(raw: bytes | str) -> None:
    assert loads_strict(raw) == {"a": [1, 2.5, "x"]}


@pytest.mark.parametrize("raw", [b"NaN", b"[Infinity]", b"-Infinity", b"\xff", b"{", b"", b"[1,]"])
def test_non_standard_or_broken_input_is_a_value_error(raw: bytes) -> None:
    with pytest.raises(ValueError):
        loads_strict(raw)


def test_finite_refuses_numbers_beyond_a_float() -> None:
    assert loads_strict(b"1e999") == float("inf")  # standard JSON, the plain loader keeps it
    with pytest.raises(ValueError):
        loads_strict(b"[1e999]", finite=True)
    assert loads_strict(b"[1e308]", finite=True) == [1e308]


def test_recursion_in_the_decoder_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        loads_strict(b"[" * 200_000 + b"]" * 200_000)


def test_depth_is_counted_outside_strings() -> None:
    assert json_depth_exceeds(b"[[[1]]]", 2) is True
    assert json_depth_exceeds(b"[[1]]", 2) is False
    assert json_depth_exceeds(b'["[[[[[[", {"k": "{{{{"}]', 2) is False
    assert json_depth_exceeds(b'["\\"[[[["]', 1) is False  # an escaped quote does not end the string


def test_identifier_patterns() -> None:
    assert MEASUREMENT_RUN_ID.match("measurement-" + "a" * 16)
    assert not MEASUREMENT_RUN_ID.match("measurement-" + "a" * 16 + "\n")
    assert not MEASUREMENT_RUN_ID.match("measurement-" + "A" * 16)
    assert FULL_SHA.match("0" * 40) and not FULL_SHA.match("0" * 39) and not FULL_SHA.match("0" * 40 + "\n")
    assert PSEUDONYM.match("anon-" + "f" * 64) and not PSEUDONYM.match("anon-" + "f" * 65)
    assert CM_RUN_ID.fullmatch("run-2026.a_b") and not CM_RUN_ID.fullmatch("short")
    assert not CM_RUN_ID.fullmatch("-leading-dash")
