"""The runtime's operations are declared once (toolkit.runtime.ops.OPS) and everything agrees with it."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from toolkit.models.registry import SCHEMA_MODELS
from toolkit.runtime import protocol
from toolkit.runtime.codes import MESSAGES
from toolkit.runtime.ops import BY_NAME, OPS, PROTOCOL_CODES, Op, ops_table

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "toolkit" / "runtime"
RAISED = re.compile(r"RuntimeOpError\(\"([A-Z_]+)\"")


def _module_closure(module: str) -> set[str]:
    """The runtime modules ``module`` imports, itself included (the protocol and adapter aside)."""
    seen: set[str] = set()
    todo = [module.rsplit(".", 1)[1]]
    while todo:
        name = todo.pop()
        if name in seen or name in {"protocol", "adapter", "codes", "ops"}:
            continue
        seen.add(name)
        tree = ast.parse((RUNTIME / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("toolkit.runtime."):
                todo.append((node.module or "").split(".")[2])
    return seen


def _raised_codes(op: Op) -> set[str]:
    return {
        code
        for name in _module_closure(op.module)
        for code in RAISED.findall((RUNTIME / f"{name}.py").read_text(encoding="utf-8"))
    }


def test_the_dispatch_table_and_live_set_come_from_the_registry() -> None:
    assert protocol.OPERATIONS == {op.name: op.function for op in OPS}
    assert protocol.LIVE_OPS == {"route", "dispatch"}
    assert list(BY_NAME) == [op.name for op in OPS] and len(BY_NAME) == len(OPS)
    assert all(op.name in protocol.USAGE for op in OPS)


def test_every_function_resolves_and_is_callable() -> None:
    for op in OPS:
        module, _, name = op.function.partition(":")
        assert callable(getattr(importlib.import_module(module), name)), op


def test_every_code_an_op_declares_has_a_message_and_every_message_is_claimed() -> None:
    declared = set(PROTOCOL_CODES).union(*(op.codes for op in OPS))
    assert declared <= set(MESSAGES)
    assert set(MESSAGES) <= declared  # a message nobody can answer with is a stale entry


def test_the_codes_an_op_can_raise_are_the_ones_it_declares() -> None:
    for op in OPS:
        undeclared = _raised_codes(op) - set(op.codes) - set(PROTOCOL_CODES)
        assert undeclared == set(), (op.name, sorted(undeclared))
        unused = set(op.codes) - _raised_codes(op)
        assert unused == set(), (op.name, sorted(unused))


def test_the_code_check_can_fail() -> None:
    liar = Op(name="budget", function="toolkit.runtime.lineage:op_lineage", summary="x")
    assert _raised_codes(liar) - set(liar.codes) - set(PROTOCOL_CODES) == {"INVALID_DATE_TIME"}


def test_every_request_schema_is_exported() -> None:
    for op in OPS:
        if op.request_schema is not None:
            assert op.request_schema in SCHEMA_MODELS, op.name
            assert (ROOT / "schemas" / op.request_schema).is_file() or (
                ROOT / "toolkit" / "schemas" / op.request_schema
            ).is_file(), op.name


def test_the_docs_table_is_the_registry() -> None:
    """docs/runtime.md carries ``ops_table()`` verbatim; regenerate it with
    ``python -c "from toolkit.runtime.ops import ops_table; print(ops_table())"``."""
    assert ops_table() in (ROOT / "docs" / "runtime.md").read_text(encoding="utf-8")
