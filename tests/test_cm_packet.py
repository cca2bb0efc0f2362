"""toolkit.cm.packet: the one validator shared by `packet check` and the adapter."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.cm.packet import (
    DYNAMIC_REQUIRED,
    STABLE_PREFIX_KEYS,
    PacketError,
    parse_packet_bytes,
    prefix_digest,
    system_message,
    user_message,
    validate_adapter_input,
)

ID = {"workflow": "cm-prd", "stage": "design_generation", "role": "planner"}


def good() -> dict[str, Any]:
    return {
        "stable_prefix": {key: f"{key} text" for key in reversed(STABLE_PREFIX_KEYS)},
        "dynamic_packet": {
            **ID,
            "objective": "plan the change",
            "identifiers": {"task": "T1"},
            "constraints": ["no new deps"],
            "context": {"requirement": "r"},
            "expected_output": "compact plan",
        },
    }


def test_valid_packet_returns_prefix_in_fixed_order() -> None:
    stable, dynamic = validate_adapter_input(good(), **ID)
    assert tuple(stable) == STABLE_PREFIX_KEYS
    assert dynamic["objective"] == "plan the change"


def test_system_message_sections_and_order_do_not_depend_on_key_order() -> None:
    stable, _ = validate_adapter_input(good(), **ID)
    message = system_message(stable)
    assert message == "\n\n".join(f"[{k}]\n{k} text" for k in STABLE_PREFIX_KEYS)
    shuffled = dict(reversed(list(stable.items())))
    assert system_message(shuffled) == message
    assert prefix_digest(shuffled) == prefix_digest(stable)
    assert prefix_digest(stable).startswith("sha256:") and len(prefix_digest(stable)) == 71


def test_user_message_is_compact_sorted_json() -> None:
    _, dynamic = validate_adapter_input(good(), **ID)
    text = user_message(dynamic)
    assert text == json.dumps(dynamic, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    stripped = text.replace("plan the change", "").replace("no new deps", "").replace("compact plan", "")
    assert " " not in stripped


def _mutate(path: tuple[str, ...], value: Any, delete: bool = False) -> dict[str, Any]:
    packet = good()
    target: Any = packet
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return packet


BAD_CASES = [
    # each row: one rule of the adapter's stdin contract
    ("top-level extra key", lambda: {**good(), "extra": 1}, "exactly stable_prefix"),
    ("top-level not an object", lambda: [good()], "exactly stable_prefix"),
    ("prefix missing a key", lambda: _mutate(("stable_prefix", "safety"), None, True), "requires"),
    ("prefix extra key", lambda: _mutate(("stable_prefix", "extra"), "x"), "stable_prefix requires"),
    ("prefix blank value", lambda: _mutate(("stable_prefix", "role"), "  "), "stable_prefix.role"),
    ("prefix non-string", lambda: _mutate(("stable_prefix", "workflow"), 3), "stable_prefix.workflow"),
    ("dynamic not object", lambda: _mutate(("dynamic_packet",), []), "must be a JSON object"),
    ("dynamic missing objective", lambda: _mutate(("dynamic_packet", "objective"), None, True), "objective"),
    ("dynamic unknown field", lambda: _mutate(("dynamic_packet", "secret_field"), 1), "unsupported fields"),
    ("workflow mismatch", lambda: _mutate(("dynamic_packet", "workflow"), "cm-ai"), "must match --workflow"),
    ("stage mismatch", lambda: _mutate(("dynamic_packet", "stage"), "other"), "must match --stage"),
    ("role mismatch", lambda: _mutate(("dynamic_packet", "role"), "coder"), "must match --role"),
    ("identifiers not object", lambda: _mutate(("dynamic_packet", "identifiers"), []), "identifiers"),
    ("constraints not list", lambda: _mutate(("dynamic_packet", "constraints"), "x"), "constraints"),
    ("constraints blank item", lambda: _mutate(("dynamic_packet", "constraints"), [""]), "constraints"),
    ("context not object", lambda: _mutate(("dynamic_packet", "context"), "x"), "context"),
    ("blank expected_output", lambda: _mutate(("dynamic_packet", "expected_output"), ""), "expected_output"),
    ("NaN number", lambda: _mutate(("dynamic_packet", "identifiers"), {"x": float("nan")}), "strict JSON"),
]


@pytest.mark.parametrize(("name", "make", "needle"), BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_packets_are_refused(name: str, make: Any, needle: str) -> None:
    with pytest.raises(PacketError) as info:
        validate_adapter_input(make(), **ID)
    assert needle in info.value.reason


def test_unknown_field_name_is_not_echoed() -> None:
    packet = _mutate(("dynamic_packet", "sk-live-LEAKED"), 1)
    with pytest.raises(PacketError) as info:
        validate_adapter_input(packet, **ID)
    assert "LEAKED" not in str(info.value)


def test_deep_tree_refused() -> None:
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    with pytest.raises(PacketError, match="depth"):
        validate_adapter_input(_mutate(("dynamic_packet", "context"), {"d": deep}), **ID)


def test_parse_packet_bytes_limits() -> None:
    with pytest.raises(PacketError, match="1 MiB"):
        parse_packet_bytes(b" " * (1024 * 1024 + 1))
    with pytest.raises(PacketError, match="strict"):
        parse_packet_bytes(b'{"a": NaN}')
    with pytest.raises(PacketError, match="strict"):
        parse_packet_bytes(b"\xff")
    assert parse_packet_bytes(json.dumps(good()).encode()) == good()


def test_module_is_stdlib_only() -> None:
    code = (
        "import sys, toolkit.cm.packet;"
        "bad=[m for m in ('typer','pydantic','pygit2','yaml','click') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=8))
json_values = st.recursive(
    json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_fuzz_arbitrary_values_only_raise_packet_error(value: Any) -> None:
    try:
        validate_adapter_input(value, **ID)
    except PacketError as exc:
        assert exc.reason


@settings(max_examples=200, deadline=None)
@given(
    key=st.sampled_from(("stable_prefix", "dynamic_packet")),
    field=st.text(min_size=1, max_size=12),
    value=json_values,
)
def test_fuzz_mutated_packets(key: str, field: str, value: Any) -> None:
    packet = copy.deepcopy(good())
    packet[key][field] = value
    try:
        stable, dynamic = validate_adapter_input(packet, **ID)
    except PacketError:
        return
    # Whatever passes must satisfy every rule the adapter relies on.
    assert set(stable) == set(STABLE_PREFIX_KEYS)
    assert set(DYNAMIC_REQUIRED) <= set(dynamic) <= set(DYNAMIC_REQUIRED) | {"context"}
    assert user_message(dynamic)
