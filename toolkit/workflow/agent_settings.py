"""``workgroup init --agent claude|codex``: our hook entries merged into the agent's project file.

* Claude Code: ``.claude/settings.json`` (the project's shared settings) gets ``SessionStart``,
  ``PreToolUse`` (the file-writing tools), ``PreCompact``, ``Stop`` and ``SessionEnd`` entries that
  run ``workgroup agent-hook EVENT --agent claude``, and the ``statusLine`` entry
  (``workgroup statusline``);
* Codex: ``.codex/hooks.json`` gets ``SessionStart``, ``PreToolUse`` (the shell tool) and ``Stop``.
  Codex runs them only with hooks enabled in its ``config.toml`` (never written here: it may be the
  user's own) and after the user trusted them (``/hooks``).

The merge keeps every key, matcher group and hook already there, in its order; an event that
already runs our command is left as written (a user may have changed its matcher or timeout), so
a re-run adds nothing. A file that is not a JSON object, or whose ``hooks`` is not an object of
lists, is refused and nothing is written. The file is read and written through the confined
layer: a ``.claude`` or ``.codex`` symlink that leads outside the work tree, or a settings file
that is itself a symlink, is refused.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from toolkit.core.errors import InvalidInput, Refused, ToolkitError
from toolkit.core.jsontypes import JsonObject
from toolkit.core.strictjson import json_error_at, loads_strict
from toolkit.infra import confined, confinedwrite
from toolkit.infra.boundedio import NOT_UTF8, FileRefused

AGENTS = ("claude", "codex")
FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json"}
# seconds; the agents' default is 60 and every handler of an event waits for the slowest one
TIMEOUT = 10
STATUS_LINE = "workgroup statusline"
LOCAL_FILE = ".claude/settings.local.json"  # Claude Code's own per-user project file, merged over ours
_MAX_FILE = 1_048_576
# a settings event, its matcher (None: the event takes none, or every source) and our hook's event
_CLAUDE: tuple[tuple[str, str | None, str], ...] = (
    ("SessionStart", "startup|resume|compact|clear", "session-start"),
    ("PreToolUse", "Write|Edit|MultiEdit|NotebookEdit", "pre-tool-use"),
    ("PreCompact", None, "pre-compact"),
    ("Stop", None, "stop"),
    ("SessionEnd", None, "session-end"),
)
_CODEX: tuple[tuple[str, str | None, str], ...] = (
    ("SessionStart", "startup|resume|clear", "session-start"),
    ("PreToolUse", "Bash|apply_patch", "pre-tool-use"),  # the shell tool; newer releases: the patch tool
    ("Stop", None, "stop"),
)
WANTED = {"claude": _CLAUDE, "codex": _CODEX}
# the pre-write gate fails closed: without the toolkit on PATH the agent's shell would answer 127,
# which both agents treat as "go on"; exit 2 blocks the write and tells the model why
_GATE_GUARD = (
    "command -v workgroup >/dev/null 2>&1 || {{ echo 'workgroup is not on PATH: install the "
    "workgroup toolkit, or remove this hook from {file}' >&2; exit 2; }}; "
)
CODEX_NOTE = (
    "Codex runs these hooks only when hooks are enabled in its config.toml: `[features]` "
    "`codex_hooks = true` (newer releases: `hooks`, on by default), and only after you trust them "
    "with /hooks in Codex; init writes no config.toml"
)


def command_for(agent: str, event: str) -> str:
    """The shell command of our hook for ``event`` (a name of ``workgroup agent-hook``)."""
    plain = f"workgroup agent-hook {event} --agent {agent}"
    if event == "pre-tool-use":
        return _GATE_GUARD.format(file=FILES[agent]) + plain
    return plain


def _ours(event: str) -> re.Pattern[str]:
    # the program may be named by a path (``/opt/x/bin/workgroup``) or quoted
    return re.compile(rf"(?:^|[\s;&|'\"/(])workgroup agent-hook {re.escape(event)}(?![\w-])")


class AddedHook(TypedDict):
    """One hook entry the merge added: its event, matcher (None: every tool), command and hook name."""

    event: str
    matcher: str | None
    command: str
    hook: str


class AgentAnswer(TypedDict):
    """What ``AgentMerge.as_json`` returns (the ``agents`` rows of ``init --json``): Claude Code's
    rows carry the status line and the local-settings note, Codex's the hooks note."""

    agent: str
    file: str
    status: str
    added: list[AddedHook]
    present: list[str]
    status_line: NotRequired[str]
    also_in_local_settings: NotRequired[list[str]]
    note: NotRequired[str]


@dataclass
class AgentMerge:
    """What the merge did: the new text (None: unchanged) and one line per entry."""

    agent: str
    file: str
    text: str | None
    status: str  # "written" | "updated" | "unchanged"
    added: list[AddedHook] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    status_line: str = ""  # claude: "added" | "present" | "kept yours" ; codex: ""
    local_too: list[str] = field(
        default_factory=list
    )  # claude: events settings.local.json also runs ours for

    def messages(self, dry_run: bool = False) -> list[str]:
        verb = "would be " if dry_run else ""
        head = {"written": f"{verb}written", "updated": f"{verb}updated", "unchanged": "unchanged"}
        lines = [f"{self.file}: {head[self.status]}"]
        lines += [self._added_line(entry, dry_run) for entry in self.added]
        lines += [f"  already present, kept as written: {event}" for event in self.present]
        lines += self._status_line_lines(dry_run)
        if self.local_too:
            lines.append(
                f"  {LOCAL_FILE} also runs our hook for {', '.join(self.local_too)}: Claude Code runs both; "
                "remove one of them"
            )
        if self.status != "unchanged":
            lines.append(
                f"  commit {self.file} to share the hooks: every clone's agent then runs them "
                "(with workgroup on its PATH)"
            )
        if self.agent == "codex":
            lines.append(f"  {CODEX_NOTE}")
        return lines

    def _added_line(self, entry: AddedHook, dry_run: bool) -> str:
        """The line for one added hook entry: its event, matcher and the command it runs."""
        matcher = f" (matcher {entry['matcher']})" if entry.get("matcher") else ""
        shown = f"workgroup agent-hook {entry['hook']} --agent {self.agent}"
        if entry["hook"] == "pre-tool-use":
            shown += " (blocks the write when workgroup is not on PATH)"
        return f"  {'would add' if dry_run else 'added'} {entry['event']}{matcher}: {shown}"

    def _status_line_lines(self, dry_run: bool) -> list[str]:
        """What happened to Claude Code's ``statusLine`` (nothing for Codex)."""
        if self.status_line == "added":
            return [f"  {'would add' if dry_run else 'added'} statusLine: {STATUS_LINE}"]
        if self.status_line == "present":
            return ["  already present, kept as written: statusLine"]
        if self.status_line == "kept yours":
            return [f"  statusLine: yours is kept; ours would be `{STATUS_LINE}`"]
        return []

    def as_json(self) -> AgentAnswer:
        out: AgentAnswer = {
            "agent": self.agent,
            "file": self.file,
            "status": self.status,
            "added": self.added,
            "present": self.present,
        }
        if self.agent == "claude":
            out["status_line"] = self.status_line
            out["also_in_local_settings"] = self.local_too
        else:
            out["note"] = CODEX_NOTE
        return out


def _no_duplicates(pairs: list[tuple[str, object]]) -> JsonObject:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def parse(text: str, file: str) -> JsonObject:
    """The settings object; a coded refusal for anything the merge could not keep whole."""

    try:
        data = loads_strict(text, finite=True)
        # a duplicate key would be lost when the file is written back: refused, not merged
        json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            "AGENT_SETTINGS_INVALID", f"{file} is not valid JSON ({json_error_at(exc)}); nothing written"
        ) from None
    except (ValueError, RecursionError):
        raise InvalidInput(
            "AGENT_SETTINGS_INVALID",
            f"{file} is not standard JSON (a duplicate key, NaN, a number out of range or too "
            "deep nesting); nothing written",
        ) from None
    if not isinstance(data, dict):
        raise Refused("AGENT_SETTINGS_UNMERGEABLE", f"{file} is not a JSON object; add the hooks by hand")
    return data


def _has_ours(groups: list[object], pattern: re.Pattern[str]) -> bool:
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else ():
            command = handler.get("command") if isinstance(handler, dict) else None
            if isinstance(command, str) and pattern.search(command):
                return True
    return False


def merge(text: str | None, agent: str) -> AgentMerge:
    """Our entries merged into ``text`` (None or blank: a new file). Pure: no I/O."""
    file = FILES[agent]
    fresh = text is None or not text.strip()
    data: JsonObject = {} if fresh or text is None else parse(text, file)
    out = AgentMerge(agent, file, None, "unchanged")
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise Refused(
            "AGENT_SETTINGS_UNMERGEABLE", f'"hooks" in {file} is not an object; add the hooks by hand'
        )
    for event, matcher, name in WANTED[agent]:
        _merge_event(hooks, (event, matcher, name), out)
    if agent == "claude":
        out.status_line = _merge_status_line(data)
    if out.added or out.status_line == "added":
        out.text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        out.status = "written" if fresh else "updated"
    return out


def _merge_event(hooks: JsonObject, wanted: tuple[str, str | None, str], out: AgentMerge) -> None:
    """Add our handler for one (event, matcher, hook) to ``hooks`` unless one of ours is there;
    ``out`` records which. Refused when the event's entry is not a list."""
    event, matcher, name = wanted
    groups = hooks.get(event, [])
    if not isinstance(groups, list):
        raise Refused(
            "AGENT_SETTINGS_UNMERGEABLE",
            f'"hooks.{event}" in {out.file} is not a list; add the hooks by hand',
        )
    if _has_ours(groups, _ours(name)):
        out.present.append(event)
        return
    command = command_for(out.agent, name)
    handler: JsonObject = {"type": "command", "command": command, "timeout": TIMEOUT}
    group: JsonObject = {"matcher": matcher} if matcher is not None else {}
    group["hooks"] = [handler]
    hooks[event] = [*groups, group]
    out.added.append({"event": event, "matcher": matcher, "command": command, "hook": name})


def _merge_status_line(data: JsonObject) -> str:
    current = data.get("statusLine")
    if current is None:
        data["statusLine"] = {"type": "command", "command": STATUS_LINE, "padding": 0}
        return "added"
    command = current.get("command") if isinstance(current, dict) else None
    if isinstance(command, str) and re.search(r"(?:^|[\s;&|'\"/])workgroup statusline(?![\w-])", command):
        return "present"
    return "kept yours"


def _local_duplicates(workdir: Path) -> list[str]:
    """Events whose our hook is also in ``.claude/settings.local.json`` (only a note: a local file
    that cannot be read or parsed is left to Claude Code, which reads it)."""
    try:
        text = confined.read_text(
            workdir, workdir / LOCAL_FILE, what=LOCAL_FILE, limit=_MAX_FILE, missing_ok=True
        )
        data = loads_strict(text or "{}")
    except (ToolkitError, ValueError):
        return []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return []
    return [
        event
        for event, _matcher, name in WANTED["claude"]
        if isinstance(hooks.get(event), list) and _has_ours(hooks[event], _ours(name))
    ]


def write_agent_settings(workdir: Path, agent: str, *, dry_run: bool = False) -> AgentMerge:
    """Read, merge and (unless ``dry_run``) atomically write the agent's project file."""

    if agent not in AGENTS:
        raise InvalidInput("INIT_UNKNOWN_AGENT", "--agent must be claude or codex")
    file = FILES[agent]
    path = workdir / file
    folder = path.parent
    if os.path.lexists(folder) and not os.path.isdir(folder):
        # the reader would call the file missing; say what is in the way instead
        raise InvalidInput("NOT_A_FOLDER", f"{folder.name} is not a folder, so {file} cannot be written")
    try:
        text = confined.read_text(workdir, path, what=file, limit=_MAX_FILE, missing_ok=True)
    except FileRefused as exc:
        code = "FILE_NOT_UTF8" if exc.code == NOT_UTF8 else exc.code
        raise InvalidInput(code, exc.message) from None
    result = merge(text, agent)
    if agent == "claude":
        result.local_too = _local_duplicates(workdir)
    if result.text is not None and not dry_run:
        # the folder's layout is checked again at the write (a rename never follows a symlink)
        target = confined.resolve_inside(workdir, path, file)
        mode = os.stat(target).st_mode & 0o777 if text is not None else 0o644
        confinedwrite.atomic_write(workdir, path, result.text, what=file, mode=mode)
    return result
