"""Rule ids are derived from the registered rules, never listed by hand, and the docs agree.

* every rule any ``toolkit.privacy`` module defines (at module level, or inside a module-level
  tuple, list or dict) is one the engine registers, so ``RULE_IDS`` names it;
* docs/privacy.md holds the "Rule ids" table generated from the registry (``catalog.rules_table``);
* every id the docs' other tables name in an id column is a registered id, and the table of gated
  families lists exactly the words a rule of that id is gated on.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import types
from pathlib import Path

import pytest

import toolkit.privacy
from toolkit.privacy import RULE_IDS
from toolkit.privacy.catalog import rules_table
from toolkit.privacy.engine import LINE_RULES, RULES
from toolkit.privacy.keys import KEY_RULES, KeyRule
from toolkit.privacy.rules import LineRule, Rule, Tuning, lazy
from toolkit.privacy.types import Category

DOCS = Path(__file__).resolve().parents[2] / "docs" / "privacy.md"
REGISTERED: tuple[Rule | LineRule | KeyRule, ...] = (*RULES, *LINE_RULES, *KEY_RULES)
_CELL_ID = re.compile(r"`([a-z0-9][a-z0-9-]*)`")


def defined_rules(module: types.ModuleType) -> list[Rule | LineRule | KeyRule]:
    """The rules a module holds at module level, or inside its module-level containers."""
    found: list[Rule | LineRule | KeyRule] = []
    stack: list[object] = list(vars(module).values())
    while stack:
        value = stack.pop()
        if isinstance(value, (Rule, LineRule, KeyRule)):
            found.append(value)
        elif isinstance(value, (tuple, list, frozenset, set)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return found


def unregistered(module: types.ModuleType) -> list[str]:
    registered = {id(rule) for rule in REGISTERED}
    return [rule.id for rule in defined_rules(module) if id(rule) not in registered]


def privacy_modules() -> list[types.ModuleType]:
    names = [info.name for info in pkgutil.iter_modules(toolkit.privacy.__path__, "toolkit.privacy.")]
    return [importlib.import_module(name) for name in sorted(names)]


def test_every_rule_a_module_defines_is_registered() -> None:
    modules = privacy_modules()
    assert len(modules) > 10
    defined = [rule for module in modules for rule in defined_rules(module)]
    assert len({id(rule) for rule in defined}) == len(REGISTERED)  # each registered rule is found once
    for module in modules:
        assert unregistered(module) == [], module.__name__
    assert {rule.id for rule in REGISTERED} == RULE_IDS


def test_a_rule_left_out_of_the_registry_is_caught() -> None:
    """The check above bites: a module with a rule in a tuple the engine does not read."""
    module = types.ModuleType("toolkit.privacy.scratch")
    stray = Rule(id="scratch-unregistered", category=Category.SECRET, pattern=lazy("acme_[a-z]{20}+"))
    tuned = Rule(
        id="scratch-unregistered",
        category=Category.SECRET,
        pattern=lazy("acme_"),
        tuning=Tuning(literals=("acme_",)),
    )
    vars(module).update(SCRATCH_RULES=(stray,), BY_NAME={"acme": [tuned]}, FIRST=RULES[0])
    assert sorted(unregistered(module)) == ["scratch-unregistered", "scratch-unregistered"]
    assert "scratch-unregistered" not in RULE_IDS


def test_the_docs_hold_the_generated_rule_id_table() -> None:
    table = rules_table()
    assert {m.group(1) for m in _CELL_ID.finditer(table)} >= RULE_IDS
    assert table in DOCS.read_text(encoding="utf-8"), (
        "docs/privacy.md's 'Rule ids' table is not the registry's: paste the output of "
        'python -c "from toolkit.privacy.catalog import rules_table; print(rules_table())"'
    )


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each Markdown table: its header cells and its rows' cells (``\\|`` inside a cell kept)."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("|") and index + 1 < len(lines) and lines[index + 1].startswith("|---"):
            rows = []
            for row in lines[index + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(_cells(row))
            tables.append((_cells(line), rows))
    return tables


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row.strip().strip("|"))]


def _id_columns(header: list[str]) -> list[int]:
    if "console script" in header:  # the hooks table: its ids are pre-commit hook ids
        return []
    return [i for i, name in enumerate(header) if name in ("id", "rule ids")]


def test_the_docs_tables_name_only_registered_rule_ids() -> None:
    named: set[str] = set()
    for header, rows in _tables(DOCS.read_text(encoding="utf-8")):
        for column in _id_columns(header):
            for row in rows:
                cell = re.sub(r"\([^)]*\)", "", row[column])  # remarks: (`GR1348941…` only)
                ids = {m.group(1) for m in _CELL_ID.finditer(cell)}
                assert ids, row
                assert ids <= RULE_IDS, (header, ids - RULE_IDS)
                named |= ids
    assert len(named) > 60  # the family tables were read, not skipped


def test_the_gated_families_table_lists_each_rules_gate_words() -> None:
    tables = [
        rows
        for header, rows in _tables(DOCS.read_text(encoding="utf-8"))
        if "runs where the text holds" in header
    ]
    assert len(tables) == 1
    gates: dict[str, list[frozenset[str]]] = {}
    for rule in RULES:
        gates.setdefault(rule.id, []).append(frozenset(rule.tuning.literals))
    for first, words in tables[0]:
        rule_id = _CELL_ID.search(first)
        assert rule_id is not None, first
        listed = frozenset(re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", words)))
        assert listed in gates[rule_id.group(1)], (rule_id.group(1), sorted(listed))


@pytest.mark.parametrize("cell", ["`scratch-unregistered`", "`aws-access-key-id`, `scratch-unregistered`"])
def test_an_unknown_id_in_a_docs_table_fails_the_check(cell: str) -> None:
    header, rows = _tables(f"| id | shape |\n|---|---|\n| {cell} | `acme_` + 20 |\n")[0]
    ids = {m.group(1) for column in _id_columns(header) for m in _CELL_ID.finditer(rows[0][column])}
    assert ids - RULE_IDS == {"scratch-unregistered"}
