"""The engine: run every rule of a context over a text or a JSON-like value.

One pass per rule over the whole text (not per line), offsets mapped back to (line, column)
with a bisect over the line starts; columns are code points. Overlapping findings of the
secret and identifier categories keep only the most specific rule (a ``sk-proj-`` key is one
``openai-api-key`` finding, not also a high-entropy string and an assignment).

Suppression visible in review: a ``workgroup: allow <rule>[, <rule>...]`` comment on the line
(or alone on the line just above) suppresses those rules (rule ids or category names) there.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator

from toolkit.privacy.configs import CONFIG_RULES
from toolkit.privacy.identity import IDENTITY_RULES
from toolkit.privacy.keys import KEY_RULES, key_findings
from toolkit.privacy.rules import LineRule, Rule, lazy
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.secrets import SECRET_RULES
from toolkit.privacy.strict import STRICT_RULES
from toolkit.privacy.transcripts import TRANSCRIPT_LINE_RULES, TRANSCRIPT_RULES
from toolkit.privacy.types import Category, Context, FileKind, Finding, mask

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hook's cold start
    from typing import Any

RULES: tuple[Rule, ...] = SECRET_RULES + CONFIG_RULES + IDENTITY_RULES + TRANSCRIPT_RULES + STRICT_RULES
LINE_RULES: tuple[LineRule, ...] = TRANSCRIPT_LINE_RULES
_PRIORITY: dict[str, int] = {}
_ALL_RULES: tuple[Rule | LineRule, ...] = (*RULES, *LINE_RULES)
for _any_rule in _ALL_RULES:  # a rule id shared by a strict shape keeps its higher priority
    _PRIORITY[_any_rule.id] = max(_PRIORITY.get(_any_rule.id, 0), _any_rule.priority)
# every id a finding can carry: the text rules, the line rules and the key rules of structured values
RULE_IDS: frozenset[str] = frozenset(_PRIORITY) | frozenset(rule.id for rule in KEY_RULES)
_EXCLUSIVE = frozenset({Category.SECRET, Category.IDENTIFIER})
_ALLOW = lazy(r"workgroup:[ \t]*allow[ \t]+([A-Za-z0-9_, \t-]+)")
_COMMENT_ONLY = lazy(r"^[ \t]*(?:#|//|/\*|<!--|--|;|\*|%|REM\b)[ \t]*workgroup:[ \t]*allow\b", re.I)
_JSON_KEY = lazy(r"\"((?:[^\"\\\n]|\\.){1,128})\"[ \t]*:")
_MAX_VALUE_DEPTH = 64
# One finding blocks a commit; thousands of one rule in one text are hostile input, and past
# this many the rule stops early so the work per finding stays bounded.
MAX_FINDINGS_PER_RULE = 1000
_CHECKPOINT_EVERY = 64 * 1024  # characters between the located offsets a scan keeps
# In source and docs only secrets and credentials are findings (workflow artifacts: everything).
CATEGORIES: dict[Context, frozenset[Category]] = {
    ctx: frozenset({Category.SECRET}) if ctx is Context.SOURCE else frozenset(Category) for ctx in Context
}
_DATA_URI = lazy(
    r"data:[A-Za-z]{1,20}+/[A-Za-z0-9.+-]{1,60}+(?:;[A-Za-z0-9=.+-]{1,60}+)*+;base64,([A-Za-z0-9+/]++=*+)"
)


def _allow_lines(view: ScanText) -> Iterator[tuple[int, str]]:
    """(index, text) of each line holding ``workgroup:``, found from the marker's occurrences
    (no list of every line: one long line is not copied, many short ones are not made objects)."""
    text = view.text
    line, counted = 0, 0
    at = view.find("workgroup:")
    while at != -1:
        line += text.count("\n", counted, at)
        head = text.rfind("\n", counted, at) + 1  # past ``counted`` there is always one (its line's end)
        tail = text.find("\n", at)
        tail = len(text) if tail == -1 else tail
        yield line, text[head:tail]
        counted = tail
        at = view.find("workgroup:", tail)


def _allowed_rules(lines: Iterable[tuple[int, str]]) -> dict[int, frozenset[str]]:
    """Line index -> rule ids/categories allowed there by inline comments."""
    allowed: dict[int, set[str]] = {}
    for index, line in lines:
        if "workgroup:" not in line:
            continue
        match = _ALLOW.search(line)
        if not match:
            continue
        names = {n for n in re.split(r"[,\s]+", match.group(1)) if n}
        allowed.setdefault(index, set()).update(names)
        if _COMMENT_ONLY.match(line):
            allowed.setdefault(index + 1, set()).update(names)
    return {k: frozenset(v) for k, v in allowed.items()}


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """Keep the most specific finding where secret/identifier spans overlap on one line.

    Kept spans of a line are non-overlapping and kept sorted, so one bisect finds the only
    neighbour that could overlap: linear-logarithmic even with thousands of findings on a line.
    """
    ranked = sorted(findings, key=lambda x: (-_PRIORITY.get(x.rule, 0), x.line, x.start))
    kept: list[Finding] = []
    taken: dict[int, tuple[list[int], list[int]]] = {}
    seen: set[tuple[int, int, int, str]] = set()
    for item in ranked:
        key = (item.line, item.start, item.end, item.rule)
        if key in seen:
            continue
        if item.category in _EXCLUSIVE:
            starts, ends = taken.setdefault(item.line, ([], []))
            index = bisect.bisect_left(starts, item.end)
            if index and ends[index - 1] > item.start:
                continue  # the kept span starting before this one's end reaches into it
            if index < len(starts) and starts[index] < item.end:
                continue
            starts.insert(index, item.start)
            ends.insert(index, item.end)
        seen.add(key)
        kept.append(item)
    return sorted(kept, key=lambda x: (x.line, x.start, x.rule))


def data_uri_spans(text: str, view: ScanText | None = None) -> list[tuple[int, int]]:
    """(start, end) of the base64 bodies of ``data:`` URIs: an embedded file, never a secret.
    ``view``, the text as the rules read it, makes the pre-check a search of its ASCII view."""
    if (not view.contains("base64,")) if view is not None else ("base64," not in text):
        return []
    return [m.span(1) for m in _DATA_URI.finditer(text)]


def _outside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    index = bisect.bisect_right(spans, (start, 1 << 62)) - 1
    return index < 0 or not (spans[index][0] <= start and end <= spans[index][1])


def scan_text(text: str, context: Context = Context.GENERIC, kind: FileKind = FileKind.TEXT) -> list[Finding]:
    """Every finding in ``text`` that applies in ``context``, sorted by (line, start).

    Findings carry the masked match, never the value. Inline ``workgroup: allow`` comments
    are honoured. In structured contexts JSON field names (``"session_id":``) are checked too.
    ``kind`` ``DATA`` (generated files) runs only the fixed-format provider rules.
    """
    return [f for f, _ in scan_text_with_values(text, context, kind)]


def scan_text_with_values(
    text: str, context: Context = Context.GENERIC, kind: FileKind = FileKind.TEXT, *, cap: int = 0
) -> list[tuple[Finding, str]]:
    """Like ``scan_text`` but pairs each finding with the matched value, for fingerprinting.

    Internal to the toolkit (allowlist): the value must never be printed or stored. ``cap``
    overrides ``MAX_FINDINGS_PER_RULE`` (a batch of many files allows as many per file).

    The scan in named steps: prepare the text once (``ScanText``: an ASCII view every needle
    and anchor searches), collect the spans of the rules that apply (``_rule_spans``), of the
    line rules and of JSON field names, then keep the most specific finding per span and drop
    what inline comments allow (``_finish``). Lines and columns are computed only for findings.
    """
    if not isinstance(text, str) or not text:
        return []
    view = ScanText(text)
    found = _Collector(text, data_uri_spans(text, view))
    limit = cap or MAX_FINDINGS_PER_RULE
    _rule_spans(view, context, kind, limit, found)
    _line_rule_spans(view, context, limit, found)
    if context not in (Context.GENERIC, Context.SOURCE):
        _json_key_spans(text, context, found)
    return _finish(found.raw, view)


class _Collector:
    """Findings as they are found: offsets turned into (line, column) by counting newlines from
    the nearest offset already located before them (the last one: a rule's findings come in
    order; or a checkpoint, kept at most one per 64 KB of text). No list of every line: for one
    long line that list was a copy of it, for many short lines an object per line."""

    __slots__ = ("text", "embedded", "raw", "marks", "cursor")

    def __init__(self, text: str, embedded: list[tuple[int, int]]) -> None:
        self.text = text
        self.embedded = embedded
        self.raw: list[tuple[Finding, str]] = []
        self.marks: list[tuple[int, int, int]] = [(0, 0, 0)]  # (offset, line, line start), ascending
        self.cursor = (0, 0, 0)

    def locate(self, offset: int) -> tuple[int, int]:
        """(line index, offset of that line's start) of ``offset``."""
        marks = self.marks
        index = bisect.bisect_right(marks, (offset, 1 << 62, 0)) - 1
        near = marks[index]
        if near[0] < self.cursor[0] <= offset:
            near = self.cursor
        at, line, head = near
        newlines = self.text.count("\n", at, offset)
        if newlines:
            line += newlines
            head = self.text.rfind("\n", at, offset) + 1
        self.cursor = (offset, line, head)
        if offset - marks[index][0] >= _CHECKPOINT_EVERY:
            marks.insert(index + 1, self.cursor)  # ascending, and at least this far from the one before
        return line, head

    def add(self, offset: int, end: int, rule_id: str, category: Category) -> None:
        if self.embedded and not _outside(self.embedded, offset, end):
            return  # inside the base64 body of a data: URI (the data-uri filter)
        line, head = self.locate(offset)
        col = offset - head
        newline = self.text.find("\n", offset, end)  # a value ends with its line
        value = self.text[offset : end if newline == -1 else newline]
        self.raw.append((Finding(line + 1, col, col + len(value), category, rule_id, mask(value)), value))


def rules_for(context: Context, kind: FileKind) -> tuple[Rule, ...]:
    """The regex rules that run in ``context`` on a file of ``kind`` (cached: a scan of many
    files asks the same question for each)."""
    key = (context, kind)
    rules = _RULES_FOR.get(key)
    if rules is None:
        wanted = CATEGORIES[context]
        rules = _RULES_FOR[key] = tuple(
            rule
            for rule in RULES
            if context in rule.contexts
            and rule.category in wanted
            and not (rule.heuristic and kind is FileKind.DATA)
        )
    return rules


_RULES_FOR: dict[tuple[Context, FileKind], tuple[Rule, ...]] = {}


def _rule_spans(view: ScanText, context: Context, kind: FileKind, limit: int, found: _Collector) -> None:
    """Every span of the rules that apply and whose keywords and literals occur in the text."""
    for rule in rules_for(context, kind):
        if not rule.applies(view):
            continue
        for count, (start, end) in enumerate(rule.spans(view)):
            if count >= limit:
                break
            found.add(start, end, rule.id, rule.category)


def _line_rule_spans(view: ScanText, context: Context, limit: int, found: _Collector) -> None:
    """Spans of the rules that read whole lines (each finds its lines in the text itself)."""
    wanted = CATEGORIES[context]
    for line_rule in LINE_RULES:
        if (
            context not in line_rule.contexts
            or line_rule.category not in wanted
            or (line_rule.keywords and not view.has_keyword(line_rule.keywords))
        ):
            continue
        for count, (start, end) in enumerate(line_rule.find(view.text)):
            if count >= limit:
                break
            found.add(start, end, line_rule.id, line_rule.category)


def _json_key_spans(text: str, context: Context, found: _Collector) -> None:
    """Private field names (``"session_id":``) in structured contexts."""
    for match in _JSON_KEY.finditer(text):
        for key_rule in key_findings(match.group(1), context):
            found.add(match.start(1), match.end(1), key_rule.id, key_rule.category)


def _finish(raw: list[tuple[Finding, str]], view: ScanText) -> list[tuple[Finding, str]]:
    """The most specific finding per span, less what ``workgroup: allow`` comments allow."""
    if not raw:
        return []
    values = {(f.line, f.start, f.end, f.rule): v for f, v in raw}
    kept = _dedupe([f for f, _ in raw])
    if view.contains("workgroup:"):
        allowed = _allowed_rules(_allow_lines(view))
        kept = [f for f in kept if not _is_allowed(f, allowed.get(f.line - 1))]
    return [(f, values[(f.line, f.start, f.end, f.rule)]) for f in kept]


def _is_allowed(finding: Finding, names: frozenset[str] | None) -> bool:
    return bool(names) and (finding.rule in names or finding.category.value in names)  # type: ignore[operator]


def _pointer_part(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def scan_value(value: Any, context: Context = Context.GENERIC) -> list[Finding]:
    """Walk a JSON-like value (dict keys and values, lists, tuples) and scan every string.

    Field names are checked against the private-field rules of ``context`` (not in GENERIC).
    Each finding's ``pointer`` is the JSON pointer of the string; ``line``/``start``/``end``
    are positions inside that string (for a field name: line 1, the whole name).
    """
    found: list[Finding] = []
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, pointer, depth = stack.pop()
        if depth > _MAX_VALUE_DEPTH:
            raise ValueError("value nested too deeply to scan")
        if isinstance(node, str):
            found.extend(_with_pointer(scan_text(node, context), pointer))
        elif isinstance(node, dict):
            for key, item in node.items():
                child = f"{pointer}/{_pointer_part(key)}"
                if isinstance(key, str):
                    if context not in (Context.GENERIC, Context.SOURCE):
                        for rule in key_findings(key, context):
                            found.append(Finding(1, 0, len(key), rule.category, rule.id, mask(key), child))
                    found.extend(_with_pointer(scan_text(key, context), child))
                stack.append((item, child, depth + 1))
        elif isinstance(node, (list, tuple)):
            for index, item in enumerate(node):
                stack.append((item, f"{pointer}/{index}", depth + 1))
    return sorted(found, key=lambda x: (x.pointer, x.line, x.start, x.rule))


def _with_pointer(findings: Iterable[Finding], pointer: str) -> list[Finding]:
    return [Finding(f.line, f.start, f.end, f.category, f.rule, f.masked, pointer) for f in findings]
