"""Skill and prompt hygiene (VERIFY CEO-08): progressive loading, bounded bodies, one canonical owner.

Pure: takes ``{path: text}`` and returns findings. The shell (``workgroup skills lint`` and the
``workgroup-skills`` hook) finds the files and renders the findings.

Rules (each finding names file, 1-based line and rule):

* ``FRONTMATTER_MISSING`` / ``FRONTMATTER_INVALID``: a SKILL.md starts with a YAML mapping
  between ``---`` lines.
* ``NAME_MISSING`` / ``NAME_INVALID``: the frontmatter names the skill (agents too):
  ``[a-z0-9][a-z0-9-]{0,63}``.
* ``TRIGGERS_MISSING``: the frontmatter advertises when to route to the skill: a non-empty
  ``triggers`` list, or a ``description`` that says when to use it ("Use when ...").
* ``BODY_TOO_LARGE``: the body after the frontmatter keeps to the critical path: at most
  ``max_body_lines`` lines and ``max_body_bytes`` bytes (default 500 / 40,000).
* ``REFERENCE_INLINED``: the body repeats a block of one of its own ``references/`` files instead
  of pointing to it.
* ``REFERENCE_UNLINKED`` (warning): a ``references/`` file the body never points to.
* ``REFERENCE_MISSING``: the body points to a ``references/`` file that does not exist.
* ``DUPLICATE_BLOCK``: a normative block (a paragraph of at least ``min_block_chars``) appears in
  several files. With a canonical owner (the file marking it ``<!-- canonical: NAME -->``) the
  finding sits on each consumer and names the owner; a consumer may carry a copy only when it is
  marked ``<!-- generated-from: NAME -->``. Without an owner every place is reported, naming the
  others.
* ``FRAMEWORK_DUPLICATE``: a prompt body (skill, agent, command) contains most of a whole
  framework document (``framework_overlap`` of its lines, default 0.8).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath
from typing import TypedDict

from toolkit.core.jsontypes import JsonObject


class Rule(StrEnum):
    FRONTMATTER_MISSING = "FRONTMATTER_MISSING"
    FRONTMATTER_INVALID = "FRONTMATTER_INVALID"
    NAME_MISSING = "NAME_MISSING"
    NAME_INVALID = "NAME_INVALID"
    TRIGGERS_MISSING = "TRIGGERS_MISSING"
    BODY_TOO_LARGE = "BODY_TOO_LARGE"
    REFERENCE_INLINED = "REFERENCE_INLINED"
    REFERENCE_UNLINKED = "REFERENCE_UNLINKED"
    REFERENCE_MISSING = "REFERENCE_MISSING"
    DUPLICATE_BLOCK = "DUPLICATE_BLOCK"
    FRAMEWORK_DUPLICATE = "FRAMEWORK_DUPLICATE"


WARNINGS = frozenset({Rule.REFERENCE_UNLINKED})


class Kind(StrEnum):
    SKILL = "skill"
    REFERENCE = "reference"
    AGENT = "agent"
    COMMAND = "command"
    DOCUMENT = "document"


PROMPT_KINDS = frozenset({Kind.SKILL, Kind.AGENT, Kind.COMMAND})


@dataclass(frozen=True)
class LintConfig:
    max_body_lines: int = 500
    max_body_bytes: int = 40_000
    min_block_chars: int = 160
    framework_overlap: float = 0.8
    min_framework_lines: int = 20
    framework_documents: tuple[str, ...] = ()


class LintRow(TypedDict):
    """``LintFinding.as_dict``: one finding as a JSON row."""

    path: str
    line: int
    rule: str
    severity: str
    message: str


@dataclass(frozen=True)
class LintFinding:
    path: str
    line: int
    rule: str
    severity: str
    message: str

    def as_dict(self) -> LintRow:
        return {
            "path": self.path,
            "line": self.line,
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
        }


@dataclass
class _Doc:
    path: str
    text: str
    kind: Kind
    body_start: int = 1  # 1-based line where the body begins
    frontmatter: JsonObject | None = None
    frontmatter_error: str | None = None
    canonical: list[tuple[str, int, int]] = field(default_factory=list)  # (name, first line, last line)
    generated_from: set[str] = field(default_factory=set)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_TRIGGER_PHRASE = re.compile(
    r"\b(use (?:this |it )?(?:skill )?(?:when|for|to|whenever|if)|when (?:the user|you|asked|a user)|"
    r"triggers? (?:on|when)|invoke (?:when|for)|activate (?:when|for)|whenever)\b",
    re.IGNORECASE,
)
_CANONICAL = re.compile(r"<!--\s*canonical:\s*([A-Za-z0-9._-]+)\s*-->")
_CANONICAL_END = re.compile(r"<!--\s*/canonical\s*-->")
_GENERATED = re.compile(r"<!--\s*generated-from:\s*([A-Za-z0-9._-]+)\s*-->")
_FRAMEWORK_MARK = re.compile(r"<!--\s*framework-document\s*-->")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_REF_LINK = re.compile(r"(?<![\w/.-])((?:\./)?references/[A-Za-z0-9._/-]+\.md)")


def classify(path: str) -> Kind:
    p = PurePosixPath(path)
    parts = p.parts
    if p.name == "SKILL.md":
        return Kind.SKILL
    if "references" in parts[:-1]:
        return Kind.REFERENCE
    if "agents" in parts[:-1]:
        return Kind.AGENT
    if "commands" in parts[:-1]:
        return Kind.COMMAND
    return Kind.DOCUMENT


def _parse(path: str, text: str) -> _Doc:
    doc = _Doc(path=path, text=text, kind=classify(path))
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        _read_frontmatter(doc, lines)
    _read_markers(doc, lines)
    return doc


def _read_frontmatter(doc: _Doc, lines: list[str]) -> None:
    """The frontmatter after the opening ``---`` (or why it cannot be read) and where the body starts."""
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        doc.frontmatter_error = "frontmatter is not closed by a '---' line"
        return
    import yaml  # lazy: only files with frontmatter pay for it

    try:
        loaded = yaml.safe_load("\n".join(lines[1:end])) or {}
    except (yaml.YAMLError, ValueError, RecursionError):  # huge integers, deep nesting
        loaded = None
    if isinstance(loaded, dict):
        doc.frontmatter = loaded
    else:
        doc.frontmatter_error = "frontmatter is not a YAML mapping"
    doc.body_start = end + 2


def _read_markers(doc: _Doc, lines: list[str]) -> None:
    """The canonical blocks (name, first line, last line) and the ``generated-from`` names. A
    canonical block runs to its end marker, the next canonical marker, a later heading or the end."""
    open_name: tuple[str, int] | None = None
    for number, line in enumerate(lines, start=1):
        m = _CANONICAL.search(line)
        if m:
            if open_name:
                doc.canonical.append((open_name[0], open_name[1], number - 1))
            open_name = (m.group(1), number)
            continue
        if open_name and _ends_canonical(line, number, open_name[1]):
            doc.canonical.append((open_name[0], open_name[1], number - 1))
            open_name = None
        for g in _GENERATED.finditer(line):
            doc.generated_from.add(g.group(1))
    if open_name:
        doc.canonical.append((open_name[0], open_name[1], len(lines)))


def _ends_canonical(line: str, number: int, opened: int) -> bool:
    """An end marker, or a heading past the line right after the marker (opened on ``opened``)."""
    return bool(_CANONICAL_END.search(line) or (_HEADING.match(line) and number > opened + 1))


def _normalize(line: str) -> str:
    line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line)  # list markers do not change the rule
    return re.sub(r"\s+", " ", line).strip()


def _blocks(doc: _Doc) -> list[tuple[int, str]]:
    """Paragraphs of the body as (first line, normalized text); headings and markers split them."""
    out: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    lines = doc.lines
    in_fence = False
    for number in range(doc.body_start, len(lines) + 1):
        raw = lines[number - 1]
        if raw.strip().startswith("```"):
            in_fence = not in_fence
        boundary = (
            (not raw.strip()) or (_HEADING.match(raw) and not in_fence) or raw.strip().startswith("<!--")
        )
        if boundary:
            if current:
                out.append((start, " ".join(current)))
            current = []
            continue
        if not current:
            start = number
        current.append(_normalize(raw))
    if current:
        out.append((start, " ".join(current)))
    return out


def _body_lines(doc: _Doc) -> list[str]:
    return [n for n in (_normalize(x) for x in doc.lines[doc.body_start - 1 :]) if n]


def _check_frontmatter(doc: _Doc) -> list[LintFinding]:
    out: list[LintFinding] = []
    needs_name = doc.kind in (Kind.SKILL, Kind.AGENT)
    if doc.kind is Kind.SKILL and doc.frontmatter is None and doc.frontmatter_error is None:
        return [
            _f(
                doc.path,
                1,
                Rule.FRONTMATTER_MISSING,
                "SKILL.md must start with YAML frontmatter (name, description with its routing triggers)",
            )
        ]
    if doc.frontmatter_error is not None:
        return [_f(doc.path, 1, Rule.FRONTMATTER_INVALID, doc.frontmatter_error)]
    fm = doc.frontmatter
    if fm is None or not needs_name:
        return out
    name_finding = _name_finding(doc.path, fm.get("name"))
    if name_finding is not None:
        out.append(name_finding)
    if not _advertises_triggers(fm):
        out.append(
            _f(
                doc.path,
                2,
                Rule.TRIGGERS_MISSING,
                "frontmatter does not advertise its routing triggers: "
                "add a 'triggers' list or a description saying 'Use when ...'",
            )
        )
    return out


def _name_finding(path: str, name: object) -> LintFinding | None:
    """A skill's or agent's ``name`` is missing, or not lower-case letters, digits and hyphens."""
    if not isinstance(name, str) or not name.strip():
        return _f(path, 2, Rule.NAME_MISSING, "frontmatter has no 'name' for the skill")
    if not _NAME.match(name):
        return _f(
            path, 2, Rule.NAME_INVALID, "'name' must be lower-case letters, digits and hyphens (max 64)"
        )
    return None


def _advertises_triggers(fm: JsonObject) -> bool:
    """A non-empty ``triggers`` list, or a description of 20+ characters saying when to use it."""
    triggers = fm.get("triggers")
    if isinstance(triggers, list) and any(isinstance(t, str) and t.strip() for t in triggers):
        return True
    description = fm.get("description")
    return (
        isinstance(description, str)
        and len(description.strip()) >= 20
        and bool(_TRIGGER_PHRASE.search(description))
    )


def _check_size(doc: _Doc, config: LintConfig) -> list[LintFinding]:
    if doc.kind not in PROMPT_KINDS:
        return []
    lines = doc.lines[doc.body_start - 1 :]
    if len(lines) > config.max_body_lines:
        return [
            _f(
                doc.path,
                doc.body_start + config.max_body_lines,
                Rule.BODY_TOO_LARGE,
                f"body has {len(lines)} lines (limit {config.max_body_lines}): "
                "keep the critical path here and "
                "move detail to references/",
            )
        ]
    size = len("\n".join(lines).encode("utf-8"))
    if size > config.max_body_bytes:
        return [
            _f(
                doc.path,
                doc.body_start,
                Rule.BODY_TOO_LARGE,
                f"body has {size} bytes (limit {config.max_body_bytes}): move detail to references/",
            )
        ]
    return []


def _skill_dir(path: str) -> str:
    return str(PurePosixPath(path).parent)


def _check_references(doc: _Doc, docs: dict[str, _Doc], known_paths: set[str]) -> list[LintFinding]:
    if doc.kind is not Kind.SKILL:
        return []
    base = _skill_dir(doc.path)
    prefix = "" if base == "." else base + "/"
    linked: set[str] = set()
    out = _link_findings(doc, prefix, known_paths, linked)
    return out + _reference_findings(doc, docs, prefix, linked)


def _link_findings(doc: _Doc, prefix: str, known_paths: set[str], linked: set[str]) -> list[LintFinding]:
    """A finding per reference link in the skill's body whose target does not exist; every
    target (under the skill's folder ``prefix``) goes into ``linked``."""
    out: list[LintFinding] = []
    for number, line in enumerate(doc.lines[doc.body_start - 1 :], start=doc.body_start):
        for m in _REF_LINK.finditer(line):
            target = prefix + m.group(1).removeprefix("./")
            linked.add(target)
            if target not in known_paths:
                out.append(
                    _f(
                        doc.path,
                        number,
                        Rule.REFERENCE_MISSING,
                        f"points to {m.group(1)}, which does not exist",
                    )
                )
    return out


def _reference_findings(doc: _Doc, docs: dict[str, _Doc], prefix: str, linked: set[str]) -> list[LintFinding]:
    """Per file of the skill's ``references/``: never pointed to from the body, or a block of it
    repeated in the body."""
    out: list[LintFinding] = []
    refs = sorted(p for p in docs if p.startswith(prefix + "references/"))
    body = "\n".join(doc.lines[doc.body_start - 1 :])
    body_blocks = {text: line for line, text in _blocks(doc)}
    for ref in refs:
        rel = ref[len(prefix) :]
        if ref not in linked and PurePosixPath(ref).name not in body:
            out.append(
                _f(
                    doc.path,
                    doc.body_start,
                    Rule.REFERENCE_UNLINKED,
                    f"{rel} is never pointed to from the body, so no path loads it",
                )
            )
        for _, block in _blocks(docs[ref]):
            if len(block) >= 80 and block in body_blocks:
                out.append(
                    _f(
                        doc.path,
                        body_blocks[block],
                        Rule.REFERENCE_INLINED,
                        f"repeats a block of {rel}: point to the reference instead of inlining it",
                    )
                )
    return out


def _check_duplicates(docs: dict[str, _Doc], config: LintConfig) -> list[LintFinding]:
    out: list[LintFinding] = []
    for where in _block_places(docs, config).values():
        if len(where) < 2:
            continue
        owners = [
            (path, line, name)
            for path, line in where
            for name, first, last in docs[path].canonical
            if first <= line <= last
        ]
        if owners:
            out += _copies_of_canonical(docs, where, owners[0])
        else:
            out += _unowned_copies(where)
    return out


def _block_places(docs: dict[str, _Doc], config: LintConfig) -> dict[str, list[tuple[str, int]]]:
    """Where each long enough block occurs: (path, line), once per document, in document order."""
    places: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for doc in docs.values():
        seen_here: set[str] = set()
        for line, block in _blocks(doc):
            if len(block) >= config.min_block_chars and block not in seen_here:
                seen_here.add(block)
                places[block].append((doc.path, line))
    return places


def _copies_of_canonical(
    docs: dict[str, _Doc], where: list[tuple[str, int]], owner: tuple[str, int, str]
) -> list[LintFinding]:
    """A finding per copy of a canonical block other than its owner and marked generated copies."""
    out: list[LintFinding] = []
    owner_path, owner_line, name = owner
    for path, line in where:
        if (path, line) == (owner_path, owner_line) or name in docs[path].generated_from:
            continue
        out.append(
            _f(
                path,
                line,
                Rule.DUPLICATE_BLOCK,
                f"repeats canonical block '{name}' owned by {owner_path}:{owner_line}: link to it, "
                f"or generate this copy and mark it <!-- generated-from: {name} -->",
            )
        )
    return out


def _unowned_copies(where: list[tuple[str, int]]) -> list[LintFinding]:
    """A finding at each place of a repeated block that no canonical marker owns, naming the others."""
    out: list[LintFinding] = []
    for path, line in where:
        others = ", ".join(f"{p}:{n}" for p, n in where if (p, n) != (path, line))
        out.append(
            _f(
                path,
                line,
                Rule.DUPLICATE_BLOCK,
                f"normative block also in {others}: give it one canonical owner "
                "(<!-- canonical: NAME -->) and link to it from the others",
            )
        )
    return out


def _check_framework(docs: dict[str, _Doc], config: LintConfig) -> list[LintFinding]:
    frameworks = [d for d in docs.values() if _is_framework(d, config)]
    out: list[LintFinding] = []
    for doc in docs.values():
        if doc.kind not in PROMPT_KINDS:
            continue
        mine = set(_body_lines(doc))
        for fw in frameworks:
            if fw.path == doc.path:
                continue
            finding = _framework_copy(doc, mine, fw, config)
            if finding is not None:
                out.append(finding)
    return out


def _is_framework(doc: _Doc, config: LintConfig) -> bool:
    """A framework document: configured as one, marked as one, or a long plain document."""
    return bool(
        doc.path in config.framework_documents
        or _FRAMEWORK_MARK.search(doc.text)
        or (doc.kind is Kind.DOCUMENT and len(_body_lines(doc)) >= config.min_framework_lines)
    )


def _framework_copy(doc: _Doc, mine: set[str], fw: _Doc, config: LintConfig) -> LintFinding | None:
    """A finding when the prompt's body lines (``mine``) hold the share of the framework document's
    lines the config calls a copy; a short framework document counts only when configured."""
    theirs = [x for x in _body_lines(fw) if len(x) > 3]
    if len(theirs) < min(config.min_framework_lines, 5) and fw.path not in config.framework_documents:
        return None
    if not theirs:
        return None
    shared = sum(1 for x in theirs if x in mine)
    if not shared / len(theirs) >= config.framework_overlap:  # a NaN overlap never matches
        return None
    return _f(
        doc.path,
        doc.body_start,
        Rule.FRAMEWORK_DUPLICATE,
        f"the body duplicates the framework document {fw.path} "
        f"({shared} of {len(theirs)} lines): reference it instead",
    )


def _f(path: str, line: int, rule: Rule, message: str) -> LintFinding:
    return LintFinding(path, line, rule.value, "warning" if rule in WARNINGS else "error", message)


def lint(
    files: dict[str, str],
    *,
    targets: set[str] | None = None,
    config: LintConfig | None = None,
    known_paths: set[str] | None = None,
) -> list[LintFinding]:
    """Lint ``files`` ({repo-relative path: text}); report only findings on ``targets`` (default: all)."""
    cfg = config or LintConfig()
    docs = {path: _parse(path, text) for path, text in files.items()}
    known = set(files) | (known_paths or set())
    findings: list[LintFinding] = []
    for doc in docs.values():
        findings += _check_frontmatter(doc)
        findings += _check_size(doc, cfg)
        findings += _check_references(doc, docs, known)
    findings += _check_duplicates(docs, cfg)
    findings += _check_framework(docs, cfg)
    wanted = targets if targets is not None else set(files)
    return sorted(
        {f for f in findings if f.path in wanted}, key=lambda f: (f.path, f.line, f.rule, f.message)
    )


def is_lint_candidate(path: str) -> bool:
    """Files the linter looks at by default: skills, their references, agent and command prompts."""
    p = PurePosixPath(path)
    if p.suffix.lower() != ".md":
        return False
    return classify(path) is not Kind.DOCUMENT
