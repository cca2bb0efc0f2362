"""The writes of a pre-tool call (``WriteIntent``: a destination path and the text about to land).

* Claude Code ``Write`` (``content``), ``Edit`` (``new_string``), ``MultiEdit`` (each
  ``edits[].new_string``), ``NotebookEdit`` (``new_source``);
* a shell command (Codex ``Bash``, also Claude's ``Bash``): an ``apply_patch`` body (each file's
  added lines; a deleted or moved file is a write without text) or a redirect / ``tee`` to a file,
  whose text is the whole command (heredoc bodies and echoed words included).

Standard library only: this runs before every tool call. The shell patterns are compiled on first
use (``re`` keeps them), so a ``Write`` or an ``Edit`` never pays for them.
"""

from __future__ import annotations

import re
import shlex

from toolkit.core.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolkit.agents.payload import HookInput
    from toolkit.core.jsontypes import JsonObject

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command"})
PATCH_TOOLS = frozenset({"apply_patch"})


class WriteIntent:
    """One write a tool call is about to make: ``path`` as given (absolute or relative to the
    session's directory), ``text`` that will land there (``None``: no new text, e.g. a deletion),
    ``part`` naming where in the call it came from (``edit 2``) for the answer."""

    __slots__ = ("part", "path", "text")

    def __init__(self, path: str, text: str | None, part: str = "") -> None:
        self.path = path
        self.text = text
        self.part = part

    def __repr__(self) -> str:
        return f"WriteIntent({self.path!r}, part={self.part!r})"


def write_intents(hook: HookInput) -> list[WriteIntent] | None:
    """The writes of a pre-tool call, or ``None`` when the tool writes nothing we gate.

    A write tool whose input lacks its path is ``INVALID_TOOL_INPUT`` (a gate that cannot see
    where the text goes does not pass it).
    """
    name = hook.tool_name or ""
    data = hook.tool_input
    if name in WRITE_TOOLS:
        return _tool_writes(name, data)
    if name in SHELL_TOOLS or name in PATCH_TOOLS:
        command = _shell_command(data)
        if command is None:
            if name in PATCH_TOOLS:
                raise InvalidInput("INVALID_TOOL_INPUT", "the patch tool's input carries no patch text")
            return None
        return shell_writes(command) or None
    return None


def _shell_command(data: JsonObject) -> str | None:
    """The command text of a shell or patch tool's input (``command``, else ``cmd``, else
    ``input``; an argv list joined), or ``None`` when it carries no text."""
    command = data.get("command", data.get("cmd", data.get("input")))
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        command = _joined(command)
    return command if isinstance(command, str) else None


def _joined(parts: list[str]) -> str:
    """An argv list as one command: ``["bash", "-lc", CMD]`` is CMD, ``["apply_patch", P]`` stays whole."""
    if len(parts) == 3 and parts[1] in ("-c", "-lc") and parts[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh"):
        return parts[2]
    return "\n".join(parts)


def _path_field(data: JsonObject, *names: str) -> str:
    for name in names:
        value = data.get(name)
        if isinstance(value, str) and value:
            return value
    raise InvalidInput("INVALID_TOOL_INPUT", "the write tool's input names no destination path")


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""


def _tool_writes(name: str, data: JsonObject) -> list[WriteIntent]:
    if name == "NotebookEdit":
        path = _path_field(data, "notebook_path", "file_path")
        return [WriteIntent(path, _string(data.get("new_source")))]
    path = _path_field(data, "file_path", "path")
    if name == "Write":
        return [WriteIntent(path, _string(data.get("content")))]
    if name == "Edit":
        return [WriteIntent(path, _string(data.get("new_string")))]
    edits = data.get("edits")
    if not isinstance(edits, list):
        raise InvalidInput("INVALID_TOOL_INPUT", "the multi-edit input carries no list of edits")
    return [
        WriteIntent(path, _string(edit.get("new_string")) if isinstance(edit, dict) else "", f"edit {number}")
        for number, edit in enumerate(edits, 1)
    ]


# patterns, not compiled objects: ``re`` compiles each on first use and keeps it
_PATCH_FILE = r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$"
_PATCH_MOVE = r"^\*\*\* Move to: (.+?)\s*$"
_HEREDOC = r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1"
# `> f`, `>> f`, `2> f`, `&> f`, `>| f` (not `>&2`, not `2>&1`, not a process substitution)
_REDIRECT = r"(?:^|(?<=[^<>&0-9]))(?:[0-9]?|&)>>?\|?[ \t]*(?![&(])((?:'[^']*'|\"[^\"]*\"|[^\s;|&<>()'\"])+)"
_TEE = r"(?:^|[\s;|&(])tee((?:[ \t]+(?:'[^']*'|\"[^\"]*\"|[^\s;|&<>()'\"])+)+)"
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def shell_writes(command: str) -> list[WriteIntent]:
    """The files a shell command writes that we gate: ``apply_patch`` bodies, redirects and ``tee``."""
    if "*** Begin Patch" in command:
        return patch_writes(command)
    targets: list[str] = []
    for line in _outside_heredocs(command):
        targets += _line_targets(line)
    seen: list[str] = []
    for target in targets:
        if target and target not in _NOT_FILES and not target.startswith("/dev/fd/") and target not in seen:
            seen.append(target)
    return [WriteIntent(target, command, "the command") for target in seen]


_OPERATORS = frozenset({"|", "||", "&", "&&", ";", ";;", "(", ")", "<(", ">(", "<", "<<", "<<<", "|&"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})


def _line_targets(line: str, depth: int = 0) -> list[str]:
    """The files one command line redirects or tees into, read by shell tokenization (a quoted
    ``>`` is text, not a redirect); a line the tokenizer cannot read (an open quote) by pattern."""
    words = _shell_words(line)
    if words is None:
        return _pattern_targets(line)
    if not words:
        return []
    targets: list[str] = []
    teeing = False
    for previous, word, following in zip(["", *words[:-1]], words, [*words[1:], ""], strict=True):
        kind = _word_kind(word, following, previous)
        if kind == "redirect" and _names_file(following):
            targets.append(following)
        elif kind == "shell-c":
            targets += _inner_targets(following, depth)
        elif kind == "word" and teeing and _tee_operand(word, previous):
            targets.append(word)
        teeing = _TEEING_AFTER.get(kind, teeing)
    return targets


# whether the words after a word of this kind are ``tee``'s files (kinds not listed leave it as it was)
_TEEING_AFTER = {"redirect": False, "separator": False, "tee": True}


def _shell_words(line: str) -> list[str] | None:
    """The words of one line as the shell splits them (operators apart), or ``None`` when the
    tokenizer cannot read the line (an open quote)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return None


def _word_kind(word: str, following: str, previous: str) -> str:
    """What a word does for the writes of its line, checked in this order: ``redirect`` (output to
    the following word; ``>&`` only before a name, not a descriptor or ``-``), ``separator`` (an
    operator, or ``>&`` before a descriptor), ``tee``, ``shell-c`` (the ``-c`` of ``bash -c CMD``),
    else ``word``."""
    if _is_redirect(word, following):
        return "redirect"
    if word in _OPERATORS or word == ">&":
        return "separator"
    if word == "tee" or word.endswith("/tee"):
        return "tee"
    if word in ("-c", "-lc", "-ic") and previous.rsplit("/", 1)[-1] in _SHELLS:
        return "shell-c"
    return "word"


def _is_redirect(word: str, following: str) -> bool:
    """Whether the word sends output to a file: ``>``, ``>>``, ``>|``, ``&>``, ``&>>``, or ``>&``
    before a name (``>&2`` and ``>&-`` are descriptors, not files)."""
    if word in _REDIRECTS:
        return True
    return word == ">&" and bool(following) and not following.isdigit() and following != "-"


def _tee_operand(word: str, previous: str) -> bool:
    """Whether a word after ``tee`` is one of its files: not an option, not a redirect's target."""
    return not word.startswith("-") and previous not in _REDIRECTS


def _names_file(word: str) -> bool:
    """Whether the word after a redirect is a file name (not missing, not an operator or redirect)."""
    return bool(word) and word not in _OPERATORS and word not in _REDIRECTS


def _inner_targets(command: str, depth: int) -> list[str]:
    """The writes of the command a shell runs with ``-c`` (``bash -c "echo x > f"``), read line by
    line outside heredocs; past four nested shells by pattern only."""
    targets: list[str] = []
    for inner in _outside_heredocs(command):
        targets += _line_targets(inner, depth + 1) if depth < 4 else _pattern_targets(inner)
    return targets


def _pattern_targets(line: str) -> list[str]:
    targets = [_unquoted(match.group(1)) for match in re.finditer(_REDIRECT, line)]
    for match in re.finditer(_TEE, line):
        for word in re.findall(r"'[^']*'|\"[^\"]*\"|[^\s'\"]+", match.group(1)):
            if not word.startswith("-"):
                targets.append(_unquoted(word))
    return targets


def _unquoted(word: str) -> str:
    return "".join(
        part[1:-1] if part[:1] in "'\"" else part for part in re.findall(r"'[^']*'|\"[^\"]*\"|[^'\"]+", word)
    )


def _outside_heredocs(command: str) -> list[str]:
    """The command's lines without heredoc bodies (their text is data, not redirects)."""
    lines: list[str] = []
    waiting: list[str] = []
    for line in command.split("\n"):
        if waiting:
            if line.strip() == waiting[0]:
                waiting.pop(0)
            continue
        lines.append(line)
        waiting.extend(match.group(2) for match in re.finditer(_HEREDOC, line))
    return lines


def patch_writes(text: str) -> list[WriteIntent]:
    """Each file of an ``apply_patch`` body with its added lines (``+`` lines, prefix removed)."""
    found: list[WriteIntent] = []
    current: list[str] | None = None
    path = ""
    for line in text.split("\n"):
        header = _patch_header(line)
        if header is not None:
            if current is not None:
                found.append(WriteIntent(path, "\n".join(current), "the patch"))
            path, current = _after_header(header, path, found)
            continue
        if current is not None and line.startswith("+"):
            current.append(line[1:])
    if current is not None:
        found.append(WriteIntent(path, "\n".join(current), "the patch"))
    return found


def _patch_header(line: str) -> tuple[str, str] | None:
    """A patch line that ends the previous file's lines, as (``Add``/``Update``/``Delete``, path),
    (``Move``, new path) or (``End``, ""); ``None`` for any other line."""
    header = re.match(_PATCH_FILE, line)
    if header:
        return header.group(1), header.group(2)
    move = re.match(_PATCH_MOVE, line)
    if move:
        return "Move", move.group(1)
    if line.startswith("*** End Patch"):
        return "End", ""
    return None


def _after_header(
    header: tuple[str, str], path: str, found: list[WriteIntent]
) -> tuple[str, list[str] | None]:
    """The path the lines after ``header`` land in and their list (``None``: none are collected).
    A deleted file, and the original of a moved one, is recorded in ``found`` as a write without text."""
    kind, name = header
    if kind == "End":
        return path, None
    if kind == "Move":  # the original goes away; the lines that follow land under the new name
        found.append(WriteIntent(path, None, "the patch"))
        return name, []
    if kind == "Delete":
        found.append(WriteIntent(name, None, "the patch"))
        return name, None
    return name, []
