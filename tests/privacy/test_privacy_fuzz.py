"""Hypothesis, in-process: the engine never raises on arbitrary text or JSON-like values, spans
stay inside their line, and a finding never carries the full matched value."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.privacy import Context, scan_text, scan_value

KEY = "sk_" + "live_" + "4eC39HqLyjWD4rjtT1zdp7dcFAKE"
TOKENS = st.sampled_from(
    [
        KEY,
        "/home/alice/x",
        "bob@fake-corp.io",
        "session_id: 3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f",
        '{"role": "user", "content": "x"}',
        'password = "hunter22x"',
        "thread-safe-queue",
        "\n",
        " ",
        "User: hi",
        "Assistant: ok",
        "workgroup: allow secret",
        "AIza",
        "eyJ",
        "://",
        "@",
        "C:\\Users\\",
        "é",
        "\u2028",
    ]
)
TEXT = st.lists(st.one_of(TOKENS, st.text(max_size=40)), max_size=12).map("".join)
JSON: Any = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.sampled_from(list(Context)))
def test_scan_text_total_and_spans_inside_lines(text: str, context: Context) -> None:
    lines = text.split("\n")
    for finding in scan_text(text, context):
        line = lines[finding.line - 1]
        assert 0 <= finding.start < finding.end <= len(line)
        value = line[finding.start : finding.end]
        assert finding.masked.endswith("********")
        assert len(value) < 12 or value not in finding.masked


@settings(max_examples=100, deadline=None)
@given(JSON, st.sampled_from(list(Context)))
def test_scan_value_total(value: Any, context: Context) -> None:
    for finding in scan_value(value, context):
        assert finding.pointer.startswith("/") or finding.pointer == ""


def test_deep_nesting_is_a_value_error() -> None:
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    try:
        scan_value(deep)
    except ValueError:
        return
    raise AssertionError("expected ValueError")
