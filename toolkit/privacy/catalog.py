"""The rule ids, derived from the registered rules: never a list kept by hand.

``rules_table`` renders the table of docs/privacy.md ("Rule ids") from the engine's registry (the
text rules, the line rules and the field-name rules); ``tests/privacy/test_privacy_rule_ids.py``
fails when the docs hold another table. Not imported by the scan or the hooks.
"""

from __future__ import annotations

from toolkit.privacy.engine import LINE_RULES, RULES
from toolkit.privacy.keys import KEY_RULES
from toolkit.privacy.types import Context

_KINDS = ("text", "line", "field name")


def rules_table() -> str:
    """The "Rule ids" table of docs/privacy.md (Markdown): one row per id, every rule of that id
    merged (categories, what it reads, the contexts it applies in, whether it runs on generated
    data files)."""
    rows: dict[str, tuple[set[str], set[str], set[Context], set[bool]]] = {}
    for kind, rules in (("text", RULES), ("line", LINE_RULES), ("field name", KEY_RULES)):
        for rule in rules:
            categories, kinds, contexts, on_data = rows.setdefault(rule.id, (set(), set(), set(), set()))
            categories.add(rule.category.value)
            kinds.add(kind)
            contexts.update(rule.contexts)
            on_data.add(not getattr(rule, "heuristic", False))  # engine.rules_for: DATA skips these
    lines = ["| id | category | reads | contexts | generated data files |", "|---|---|---|---|---|"]
    for rule_id in sorted(rows):
        categories, kinds, contexts, on_data = rows[rule_id]
        where = "all" if contexts == set(Context) else ", ".join(sorted(c.value for c in contexts))
        reads = ", ".join(k for k in _KINDS if k in kinds)
        data = "yes" if True in on_data else "no"
        lines.append(f"| `{rule_id}` | {', '.join(sorted(categories))} | {reads} | {where} | {data} |")
    return "\n".join(lines) + "\n"
