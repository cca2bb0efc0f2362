"""Raw transcript detectors: Claude Code and Codex JSONL records, chat-message records and
chat-role dumps, and labels that introduce a pasted raw transcript.

Unlike the reference, words such as "full", "log" or "run" near each other are not enough:
"Run the full test suite and attach the log" is a plain instruction, not a transcript.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolkit.privacy.rules import LineRule, Rule, Tuning, lazy
from toolkit.privacy.scantext import ScanText
from toolkit.privacy.types import Category

T = Category.TRANSCRIPT

# Keys that only Claude Code session files carry.
_CLAUDE = lazy(r"(\"(?:parentUuid|isSidechain|userType|leafUuid|isMeta|toolUseResult)\"[ \t]*:)")
# Codex rollout records (current and older formats).
_CODEX = lazy(
    r"\"type\"[ \t]*:[ \t]*\""
    r"(?:session_meta|response_item|event_msg|turn_context|compacted|input_text|output_text)\""
)
_RAW_LABEL = lazy(
    r"(?<![A-Za-z0-9])((?i:raw|full|verbatim|complete|entire|unredacted)[ \t]+"
    r"(?i:(?:chat|session|agent|model|claude|codex)[ \t]+)?"
    r"(?i:transcript|conversation|chat[ \t]+log|chat[ \t]+history|prompt|session[ \t]+log)s?)"
    r"[ \t]*(?:[:=]|-{1,2}>)[ \t]*(?=[\"'{\[A-Za-z>])"
)
_ROLE_JSON = lazy(
    r"([\"']role[\"'][ \t]*:[ \t]*[\"'](?:system|user|assistant|developer|tool|human|model|function)[\"'])"
)
# the content must be literal data (a string, list or object), not a variable in code
_CONTENT_JSON = lazy(r"[\"'](?:content|text|parts)[\"'][ \t]*:[ \t]*[\"'\[{]")
_USER_ROLES = ("user", "human", "you", "me", "customer")
_MODEL_ROLES = ("assistant", "ai", "claude", "codex", "chatgpt", "gpt", "model", "bot", "gemini", "copilot")
_ROLE_LINE = lazy(
    r"^[ \t>]*(?:\*\*|__|#{1,4}[ \t]*|\[)?"
    r"(?P<role>(?i:user|human|assistant|ai|claude|codex|chatgpt|gpt|model|bot|gemini|copilot|system))"
    r"(?:\*\*|__|\])?[ \t]*(?::|>|\*\*:|:\*\*)",
    re.M,  # searched over the whole text: a match starts at a line's start
)
_NOT_BLANK = lazy(r"\S")
_HUMAN_TURN = lazy(r"((?:Human|User)(?<![A-Za-z0-9]Human)(?<![A-Za-z0-9]User)[ \t]*+:)[ \t]++\S")
_MODEL_TURN = lazy(r"(?<![A-Za-z0-9])(?:Assistant|AI|Claude|Codex)[ \t]*+:[ \t]++\S")
_DUMP_REACH = 400
_WINDOW = 12


class _InlineDumpRule(Rule):
    """``Human: ... Assistant: ...`` on one line, the model's turn within 400 characters.

    Each stretch of text is searched for a model turn once: a later human turn reuses the
    previous search (its hit, or how far it got), so repeated turns cost linear time.
    """

    def spans(self, view: ScanText) -> Iterator[tuple[int, int]]:
        text = view.text
        hit, searched = -1, 0
        model = _MODEL_TURN.compiled
        for match in _HUMAN_TURN.finditer(text):
            turn = match.end() - 1
            if hit < turn:
                newline = text.find("\n", turn, turn + _DUMP_REACH + 1)
                stop = newline if newline != -1 else min(len(text), turn + _DUMP_REACH + 1)
                found = model.search(text, max(turn, searched), stop) if max(turn, searched) < stop else None
                searched = max(searched, stop)
                hit = found.start() if found else -1
            if hit >= turn and hit - turn <= _DUMP_REACH:
                yield match.span(1)


def _chat_records(text: str) -> Iterator[tuple[int, int]]:
    """The first ``"role": "..."`` of each line that also holds a literal ``"content":``. The
    role is searched over the whole text (it never spans a line end), then its line is read
    within its bounds: no list of lines, no copy of one."""
    role, content = _ROLE_JSON.compiled, _CONTENT_JSON.compiled
    match = role.search(text)
    while match is not None:
        head = text.rfind("\n", 0, match.start()) + 1
        tail = text.find("\n", match.end())
        tail = len(text) if tail == -1 else tail
        if content.search(text, head, tail):
            yield match.span(1)
        match = role.search(text, tail + 1) if tail < len(text) else None


def _role_kind(role: str) -> str:
    low = role.lower()
    if low in _USER_ROLES:
        return "user"
    if low in _MODEL_ROLES:
        return "model"
    return "system"


def _chat_dumps(text: str) -> Iterator[tuple[int, int]]:
    """Role-prefixed lines (``User:``/``Assistant:``...) in alternation within a short window.
    The role prefixes are found over the whole text (``^`` at each line start), their line
    numbers counted from the previous one: no list of lines."""
    marks: list[tuple[int, str, int, int]] = []
    not_blank = _NOT_BLANK.compiled
    index, counted = 0, 0
    for match in _ROLE_LINE.compiled.finditer(text):
        index += text.count("\n", counted, match.start())
        counted = match.start()
        tail = text.find("\n", match.end())
        if not_blank.search(text, match.end(), len(text) if tail == -1 else tail):
            marks.append((index, _role_kind(match.group("role")), match.start("role"), match.end("role")))
    emitted: set[int] = set()
    for pos, (index, _kind, start, end) in enumerate(marks):
        near = [m for m in marks[max(0, pos - 6) : pos + 7] if abs(m[0] - index) <= _WINDOW]
        kinds = {m[1] for m in near}
        if "user" in kinds and "model" in kinds and index not in emitted:
            emitted.add(index)
            yield start, end


TRANSCRIPT_RULES: tuple[Rule, ...] = (
    Rule(
        id="claude-code-transcript",
        category=T,
        pattern=_CLAUDE,
        group=1,
        priority=80,
        tuning=Tuning(
            keywords=("parentuuid", "issidechain", "usertype", "leafuuid", "ismeta", "tooluseresult")
        ),
    ),
    Rule(
        id="codex-transcript",
        category=T,
        pattern=_CODEX,
        priority=80,
        tuning=Tuning(
            keywords=(
                "session_meta",
                "response_item",
                "event_msg",
                "turn_context",
                "compacted",
                "input_text",
                "output_text",
            )
        ),
    ),
    Rule(
        id="raw-transcript",
        category=T,
        pattern=_RAW_LABEL,
        group=1,
        priority=50,
        tuning=Tuning(
            keywords=("raw", "full", "verbatim", "complete", "entire", "unredacted"),
            anchor=lazy("raw|full|verbatim|complete|entire|unredacted"),
        ),
    ),
    _InlineDumpRule(
        id="chat-role-dump",
        category=T,
        pattern=_HUMAN_TURN,
        group=1,
        priority=45,
        tuning=Tuning(keywords=("human", "user")),
    ),
)

TRANSCRIPT_LINE_RULES: tuple[LineRule, ...] = (
    LineRule(
        id="chat-message-record",
        category=T,
        find=_chat_records,
        keywords=("role",),
        priority=60,
    ),
    LineRule(
        id="chat-role-dump",
        category=T,
        find=_chat_dumps,
        keywords=(":", ">"),
        priority=45,
    ),
)
