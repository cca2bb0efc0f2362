"""Closed vocabularies are exhaustive both ways: every code a module emits is declared, and every
declared code is emitted somewhere (a declared code nobody emits is dead documentation).

verify's rules (each used, with its kinds), fan-out codes
against FANOUT_CODES, and the router's modes and reason codes against the runtime vocabulary.
"""

from __future__ import annotations

import ast
from pathlib import Path

from toolkit.records import verify
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


# the kinds each method of verify's _Verifier checks, by the start of its name (capsule_*, artifact*,
# lineage*, promotion*); the shared methods serve every kind
_METHOD_KINDS = {
    "capsule": {"capsule"},
    "artifact": {"capsule"},
    "lineage": {"lineage"},
    "promotion": {"promotion"},
}


def _kinds_of(method: str) -> set[str]:
    return next(
        (kinds for start, kinds in _METHOD_KINDS.items() if method.startswith(start)), set(verify.ALL_KINDS)
    )


def _rules_added(tree: ast.AST) -> dict[str, set[str]]:
    """Rule constant -> the kinds of the methods (or functions) whose ``add`` calls pass it."""
    found: dict[str, set[str]] = {}
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef):
            continue
        kinds = _kinds_of(func.name)
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add"
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Name)
            ):
                found.setdefault(node.args[1].id, set()).update(kinds)
    return found


def test_every_verify_rule_is_used_and_only_on_the_kinds_it_names() -> None:
    added = _rules_added(_tree("records/verify.py"))
    assert added, "no verify rule found: the scan is broken"
    declared = {
        name: rule for name in dir(verify) if isinstance(rule := getattr(verify, name), verify.VerifyRule)
    }
    assert set(added) == set(declared)  # every add() passes a declared rule, every rule is added
    assert set(declared.values()) == set(verify.RULES) and len({r.id for r in verify.RULES}) == len(
        verify.RULES
    )
    wrong = {name: sorted(kinds - set(declared[name].applies_to)) for name, kinds in added.items()}
    assert {name: kinds for name, kinds in wrong.items() if kinds} == {}


def test_the_verify_rule_kind_check_can_fail() -> None:
    tree = ast.parse("def lineage(self, rec):\n    self.add(rec.rel, HASH_MISMATCH, 'x')\n")
    assert _rules_added(tree) == {"HASH_MISMATCH": {"lineage"}}
    assert "lineage" not in verify.HASH_MISMATCH.applies_to


def test_the_verify_docs_table_is_the_registry() -> None:
    docs = (ROOT.parent / "docs" / "capsules-verify.md").read_text(encoding="utf-8")
    assert verify.rules_table() in docs


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
