"""The capsule format is declared once (toolkit.core.capsule_schema); every derived form follows it.

The derived forms are the runtime's checks and messages (toolkit.runtime.capsule_rules), the
pydantic model (toolkit.models.capsule) and the committed schemas/context-capsule.schema.json.
Each test reads the limits from the declaration and probes a derived form at and just past them,
so a form that stops deriving (a hand-written limit, a stale schema file) fails here.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from test_capsule_support import valid_capsule

from toolkit.core import capsule_schema as spec
from toolkit.core import phases
from toolkit.models.capsule import ContextCapsule
from toolkit.runtime import vocabulary
from toolkit.runtime.capsule_rules import explain_schema, schema_problems

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "schemas" / "context-capsule.schema.json"
PLAIN = "a"


def _model_accepts(value: Any) -> bool:
    try:
        ContextCapsule.model_validate(value)
    except ValidationError:
        return False
    return True


def _text_cases(rule: spec.Text) -> Iterator[tuple[str, Any, bool]]:
    yield "at the lower bound", PLAIN * rule.lo, True
    if rule.lo > 0:
        yield "below the lower bound", PLAIN * (rule.lo - 1), False
    if rule.hi is not None:
        yield "at the upper bound", PLAIN * rule.hi, True
        yield "past the upper bound", PLAIN * (rule.hi + 1), False
        yield "past the upper bound in UTF-16 units", "\U0001f600" * (rule.hi // 2 + 1), False
    if rule.visible:
        yield "with an invisible character", PLAIN * rule.lo + "\u202e", False
    yield "not a string", 7, False


def _item_for(shape: spec.Shape) -> dict[str, Any]:
    return {f.name: _sample(f.rule) for f in shape.fields if not f.optional}


def _sample(rule: spec.Rule) -> Any:
    """One value the rule accepts."""
    if isinstance(rule, spec.Text):
        return PLAIN * rule.lo
    if isinstance(rule, spec.Const):
        return rule.value
    if isinstance(rule, spec.Choice):
        return rule.values[-1]
    if isinstance(rule, spec.Pattern):
        return "sha256:" + "0" * 64
    if isinstance(rule, spec.Nullable):
        return None
    if isinstance(rule, spec.TextList):
        return []
    return [_item_for(rule.shape)]


def _cases(rule: spec.Rule) -> Iterator[tuple[str, Any, bool]]:
    """(what, value, accepted) at and just past each limit the declaration gives the rule."""
    if isinstance(rule, spec.Text):
        yield from _text_cases(rule)
    elif isinstance(rule, spec.Const):
        yield "the constant", rule.value, True
        yield "another string", rule.value + "x", False
    elif isinstance(rule, spec.Choice):
        for value in rule.values:
            yield f"choice {value}", value, True
        yield "not a choice", "zz-not-a-choice", False
    elif isinstance(rule, spec.Pattern):
        yield "matching", "sha256:" + "a" * 64, True
        yield "with a trailing newline", "sha256:" + "a" * 64 + "\n", False
        yield "not matching", "sha256:" + "g" * 64, False
    elif isinstance(rule, spec.Nullable):
        yield "null", None, True
        yield from _cases(rule.inner)
    elif isinstance(rule, spec.TextList):
        item = PLAIN * rule.item.lo
        yield "at most items", [f"{item}{i}" for i in range(rule.most)] if rule.item.hi != 1 else [], True
        yield "past most items", [item] * (rule.most + 1), False
        yield "a repeated item", [item, item], not rule.unique
        for what, value, ok in _text_cases(rule.item):
            yield f"an item {what}", [value], ok
    else:
        sample = _item_for(rule.shape)
        yield "at most objects", [sample] * rule.most, True
        yield "past most objects", [sample] * (rule.most + 1), False
        yield "an object with an unknown key", [{**sample, "zz_unknown": PLAIN}], False
        for field in rule.shape.fields:
            if not field.optional:
                yield (
                    f"an object without {field.name}",
                    [{k: v for k, v in sample.items() if k != field.name}],
                    False,
                )
            for what, value, ok in _cases(field.rule):
                yield f"{field.name} {what}", [{**sample, field.name: value}], ok


CASES = [
    (f"{field.name}: {what}", field.name, value, ok)
    for field in spec.CAPSULE.fields
    for what, value, ok in _cases(field.rule)
]


@pytest.mark.parametrize(("name", "field", "value", "ok"), CASES, ids=[c[0] for c in CASES])
def test_runtime_and_model_follow_the_declared_limits(name: str, field: str, value: Any, ok: bool) -> None:
    capsule = valid_capsule()
    capsule[field] = value
    assert (not schema_problems(capsule)) is ok, name
    assert _model_accepts(capsule) is ok, name
    assert (explain_schema(capsule, sealed=True) == []) is ok, name


def test_the_probe_covers_every_field_and_both_verdicts() -> None:
    fields = {case[1] for case in CASES}
    assert fields == {f.name for f in spec.CAPSULE.fields}
    for name in fields:
        assert {case[3] for case in CASES if case[1] == name} == {True, False}, name


def test_required_and_optional_fields_follow_the_declaration() -> None:
    for field in spec.CAPSULE.fields:
        capsule = valid_capsule()
        del capsule[field.name]
        assert (not schema_problems(capsule)) is field.optional, field.name
        assert _model_accepts(capsule) is field.optional, field.name
        unsealed = explain_schema(capsule, sealed=False)
        assert (unsealed == []) is (field.optional or field.filled_in is not None), field.name


def _json_rule(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    return defs[node["$ref"].rsplit("/", 1)[1]] if "$ref" in node else node


def _check_json(rule: spec.Rule, node: dict[str, Any], defs: dict[str, Any], where: str) -> None:
    if isinstance(rule, spec.Nullable):
        branches = node["anyOf"]
        assert {"type": "null"} in branches, where
        _check_json(rule.inner, next(b for b in branches if b != {"type": "null"}), defs, where)
    elif isinstance(rule, spec.Text):
        assert node["type"] == "string" and node.get("minLength") == rule.lo, where
        assert node.get("maxLength") == rule.hi, where
    elif isinstance(rule, spec.Const):
        assert node["const"] == rule.value, where
    elif isinstance(rule, spec.Choice):
        assert tuple(node["enum"]) == rule.values, where
    elif isinstance(rule, spec.Pattern):
        assert node["pattern"] == rule.regex, where
    elif isinstance(rule, spec.TextList):
        assert node["maxItems"] == rule.most and node.get("uniqueItems", False) is rule.unique, where
        _check_json(rule.item, node["items"], defs, where + "[]")
    else:
        assert node["maxItems"] == rule.most, where
        _check_shape(rule.shape, _json_rule(node["items"], defs), defs)


def _check_shape(shape: spec.Shape, node: dict[str, Any], defs: dict[str, Any]) -> None:
    assert node["title"] == shape.name and node["description"] == shape.doc
    assert node["additionalProperties"] is False
    assert tuple(node["required"]) == shape.required, shape.name
    assert sorted(node["properties"]) == sorted(f.name for f in shape.fields), shape.name
    for field in shape.fields:
        prop = node["properties"][field.name]
        assert prop.get("readOnly", False) is (field.filled_in is not None), field.name
        _check_json(field.rule, prop, defs, f"{shape.name}.{field.name}")


@pytest.mark.parametrize("source", ["committed", "model"])
def test_the_json_schema_says_what_the_declaration_says(source: str) -> None:
    if source == "committed":
        schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    else:
        schema = ContextCapsule.model_json_schema(by_alias=True)
    _check_shape(spec.CAPSULE, schema, schema["$defs"])


def test_explain_messages_quote_the_declared_limits() -> None:
    for field in spec.CAPSULE.fields:
        rule = field.rule
        capsule = valid_capsule()
        if isinstance(rule, spec.Text) and rule.hi is not None:
            capsule[field.name] = PLAIN * (rule.hi + 1)
            expected = f"$.{field.name}: must be a string of {rule.lo}..{rule.hi} characters"
        elif isinstance(rule, spec.TextList | spec.Objects):
            capsule[field.name] = [_sample(rule)] * (rule.most + 1)
            expected = f"$.{field.name}: must have at most {rule.most} items"
        else:
            continue
        assert explain_schema(capsule, sealed=True) == [expected]


# the modules that derive from the declaration spell no limit of their own
DERIVED = ["toolkit/runtime/capsule_rules.py", "toolkit/models/capsule.py"]
LIMITS = {7, 64, 128, 512, 1024, 2048, 4096}
# the privacy walk's byte limit, which is not a schema limit
NOT_SCHEMA = {"MAX_CAPSULE_STRING_BYTES"}


def _limit_literals(source: str) -> list[int]:
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        names = [getattr(t, "id", "") for t in getattr(node, "targets", [])]
        if any(n in NOT_SCHEMA for n in names):
            skip |= {id(inner) for inner in ast.walk(node)}
        if isinstance(node, ast.Compare) and any(getattr(c, "id", "") in NOT_SCHEMA for c in ast.walk(node)):
            skip |= {id(inner) for inner in ast.walk(node)}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and node.value in LIMITS
        and type(node.value) is int
        and id(node) not in skip
    ]


@pytest.mark.parametrize("path", DERIVED)
def test_derived_modules_spell_no_limit(path: str) -> None:
    assert _limit_literals((ROOT / path).read_text(encoding="utf-8")) == []


def test_the_limit_scan_can_fail() -> None:
    assert _limit_literals("def f(v):\n    return _is_str(v, 1, 2048)\n") == [2]
    assert _limit_literals("MAX_CAPSULE_STRING_BYTES = 4096\n") == []


def test_the_route_does_not_load_the_capsule_schema() -> None:
    """The vocabulary (loaded on every route) takes the phases from their own small module."""
    code = (
        "import sys, toolkit.runtime.vocabulary, toolkit.runtime.router; "
        "print('toolkit.core.capsule_schema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_phases_are_one_tuple() -> None:
    assert vocabulary.PHASES is phases.PHASES
    rule = next(f.rule for f in spec.CAPSULE.fields if f.name == "phase")
    assert isinstance(rule, spec.Choice) and rule.values is phases.PHASES
