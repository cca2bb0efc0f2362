"""Closed vocabularies are exhaustive both ways: every code a module emits is declared, and every
declared code is emitted somewhere (a declared code nobody emits is dead documentation).

verify rule names against verify's FIXES table (each finding carries its fix), fan-out codes
against FANOUT_CODES, and the router's modes and reason codes against the runtime vocabulary.
"""

from __future__ import annotations

import ast
from pathlib import Path

from toolkit.records.verify import FIXES
from toolkit.runtime.vocabulary import MODES, REASON_CODES
from toolkit.workflow.fanout import FANOUT_CODES

ROOT = Path(__file__).resolve().parents[2] / "toolkit"


def _tree(rel: str) -> ast.AST:
    return ast.parse((ROOT / rel).read_text(encoding="utf-8"))


def _call_literals(tree: ast.AST, name: str, index: int) -> set[str]:
    """String literals passed as positional argument ``index`` to calls of ``name`` (or ``x.name``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called == name and len(node.args) > index:
            arg = node.args[index]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
    return found


def test_every_verify_rule_has_a_fix_and_every_fix_a_rule() -> None:
    emitted = _call_literals(_tree("records/verify.py"), "add", 1)
    assert emitted, "no verify rule found: the scan is broken"
    assert emitted == set(FIXES), (sorted(emitted - set(FIXES)), sorted(set(FIXES) - emitted))


def test_fanout_codes_are_closed() -> None:
    emitted = _call_literals(_tree("workflow/fanout.py"), "FanoutFinding", 0)
    assert emitted, "no fan-out code found: the scan is broken"
    assert emitted == set(FANOUT_CODES), (
        sorted(emitted - set(FANOUT_CODES)),
        sorted(set(FANOUT_CODES) - emitted),
    )


def test_router_modes_and_reasons_are_the_vocabulary() -> None:
    tree = _tree("runtime/router.py")
    modes = _call_literals(tree, "decision", 0)
    assert modes == set(MODES)
    reasons: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in REASON_CODES:
            reasons.add(node.value)
    assert reasons == set(REASON_CODES)
