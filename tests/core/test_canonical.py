"""Canonical bytes: byte-equal to the reference's capsule canonicalization (JavaScript), digests."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.core.canonical import (
    canonical_bytes,
    capsule_digest,
    js_number_text,
    sha256_digest,
    signing_bytes,
)

FIXTURE = {
    "schema": "knowzcode.context-capsule/v1",
    "task_id": "t-1",
    "capsule_hash": "sha256:" + "0" * 64,
    "objective": "Réparer le gestionnaire — 修复",
    "specs": [{"verify_ids": ["V2", "V1"], "path": "specs/a.md", "capsule_hash": "nested"}],
    "score": 100.0,
    "ratio": 0.5,
}
# what the reference's canonicalJson(FIXTURE, {omit: ['capsule_hash']}) prints
EXPECTED = (
    '{"objective":"Réparer le gestionnaire — 修复","ratio":0.5,"schema":"knowzcode.context-capsule/v1",'
    '"score":100,"specs":[{"path":"specs/a.md","verify_ids":["V2","V1"]}],"task_id":"t-1"}'
)


def test_fixture_bytes_and_digest() -> None:
    data = canonical_bytes(FIXTURE, drop_key="capsule_hash")
    assert data == EXPECTED.encode("utf-8")  # sorted keys, dropped at any depth, 100.0 -> 100, unicode raw
    assert capsule_digest(FIXTURE) == "sha256:" + hashlib.sha256(EXPECTED.encode("utf-8")).hexdigest()
    assert sha256_digest(b"") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_hash_ignores_key_order_and_its_own_hash() -> None:
    # reference contract test 10
    shuffled = dict(reversed(list(FIXTURE.items())))
    assert capsule_digest(shuffled) == capsule_digest(FIXTURE)
    assert capsule_digest({**FIXTURE, "capsule_hash": "sha256:" + "f" * 64}) == capsule_digest(FIXTURE)
    assert capsule_digest({**FIXTURE, "task_id": "t-2"}) != capsule_digest(FIXTURE)


@pytest.mark.parametrize(
    "value,text",
    [
        (100.0, "100"),
        (0.5, "0.5"),
        (-0.0, "0"),
        (1e-05, "0.00001"),
        (1e-06, "0.000001"),
        (1e-07, "1e-7"),
        (1.5e-07, "1.5e-7"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e20, "100000000000000000000"),
        (1.2345678901234568e20, "123456789012345680000"),
        (123.456, "123.456"),
        (-2.5, "-2.5"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),
        (12345678901234567890, "12345678901234567000"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (0.1 + 0.2, "0.30000000000000004"),
    ],
)
def test_numbers_print_as_javascript(value: float, text: str) -> None:
    assert js_number_text(value) == text


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 10**400, object()])
def test_unencodable_values_raise(bad: Any) -> None:
    with pytest.raises((ValueError, TypeError, OverflowError)):
        canonical_bytes({"x": bad})


def test_key_order_follows_javascript() -> None:
    # array-index keys first (numerically), then UTF-16 code-unit order (astral before U+E000..U+FFFF)
    value = {"b": 1, "10": 2, "9": 3, "01": 4, "a": 5, "\uffff": 6, "\U0001f600": 7}
    assert (
        canonical_bytes(value).decode("utf-8")
        == '{"9":3,"10":2,"01":4,"a":5,"b":1,"\U0001f600":7,"\uffff":6}'
    )


def test_lone_surrogates_and_controls_escaped_like_javascript() -> None:
    assert (
        canonical_bytes({"s": 'a\ud800b\x01\n"\\\u2028'}) == b'{"s":"a\\ud800b\\u0001\\n\\"\\\\\xe2\x80\xa8"}'
    )


def test_signing_bytes_are_rfc8785() -> None:
    assert signing_bytes({"b": 1, "a": [1.0, "x"]}) == b'{"a":[1,"x"],"b":1}'


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=4), st.sampled_from(["0", "7", "10", "01"])), inner, max_size=4
        ),
    ),
    max_leaves=10,
)

NODE_CANONICAL = r"""
const sortDeep = (v) => Array.isArray(v) ? v.map(sortDeep)
  : (v && typeof v === 'object')
    ? Object.fromEntries(Object.keys(v).sort().filter((k) => k !== 'capsule_hash')
      .map((k) => [k, sortDeep(v[k])])) : v;
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(input.map((v) => JSON.stringify(sortDeep(v)))));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_byte_equal_to_javascript_on_random_values() -> None:
    samples: list[Any] = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(json_values)
    def collect(value: Any) -> None:
        samples.append(value)

    collect()
    samples.append(FIXTURE)
    proc = subprocess.run(
        ["node", "-e", NODE_CANONICAL],
        input=json.dumps(samples).encode("ascii"),
        capture_output=True,
        timeout=60,
        check=True,
    )
    expected = json.loads(proc.stdout)
    for value, text in zip(samples, expected, strict=True):
        assert canonical_bytes(value, drop_key="capsule_hash") == text.encode("utf-8", "surrogatepass"), value
