"""The session handoff file: ``<dir>/.reviews/session-handoff.md``, overwritten at a single run's end.

It is reference data for the next session: what was done, what is still open (``tasks.md``
checkboxes) and the next command. It carries no session identity or authorization, uses
project-relative paths only (an absolute path outside the project root refuses the write) and
must pass the privacy engine. Any failure is returned as a reason key for the verdict's last
line (``交接摘要：未写成（…）``); it never stops the verdict.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import Refused
from toolkit.infra import confined, confinedwrite
from toolkit.infra.boundedio import FileRefused, read_regular

HANDOFF_RELPATH = Path(".reviews") / "session-handoff.md"
MAX_TASKS_BYTES = 512 * 1024
MAX_ITEMS = 200
MAX_ITEM_CHARS = 300
MAX_HANDOFF_BYTES = 256 * 1024

_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s+(.+?)\s*$")
# Absolute POSIX paths of two or more segments (a one-segment token such as `/cm-ai` is a
# slash command, not a path), and Windows drive paths.
_PATH_CHAR = r"[^\s\x00-\x1f\x7f/'\"`()<>\[\]]"
_ABS_POSIX = re.compile(rf"(?<![\w.~:/-])/(?:{_PATH_CHAR}+/)+{_PATH_CHAR}*")
_ABS_WINDOWS = re.compile(r"(?<![\w])[A-Za-z]:[\\/][^\s'\"`]*")
_MARKDOWN_ESCAPE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class HandoffError(Refused):
    """The handoff was not written. ``key`` names the fixed reason text in the verdict templates."""

    def __init__(self, key: str) -> None:
        super().__init__("HANDOFF_REFUSED", key)
        self.key = key


@dataclass(frozen=True)
class Tasks:
    done: tuple[str, ...]
    open: tuple[str, ...]


def parse_tasks(text: str) -> Tasks:
    """Checked (``[x]``) and unchecked (``[ ]``) list items of a tasks.md, in file order."""
    done: list[str] = []
    still_open: list[str] = []
    for line in text.splitlines():
        match = _CHECKBOX.match(line)
        if match:
            (done if match.group(1) in "xX" else still_open).append(_clip(match.group(2)))
    return Tasks(tuple(done[:MAX_ITEMS]), tuple(still_open[:MAX_ITEMS]))


def _clip(item: str) -> str:
    clean = _MARKDOWN_ESCAPE.sub(" ", item).strip()
    return clean if len(clean) <= MAX_ITEM_CHARS else clean[: MAX_ITEM_CHARS - 1] + "…"


def relativize(text: str, root: Path) -> str:
    """Rewrite absolute paths under ``root`` relative to it; any other absolute path refuses."""
    root_text = str(root).rstrip("/") or "/"

    def rewrite(match: re.Match[str]) -> str:
        token = match.group(0)
        trail = ""
        while token and token[-1] in ".,;:!?。，；：":
            token, trail = token[:-1], token[-1] + trail
        if token == root_text or token == root_text + "/":
            return "." + trail
        if token.startswith(root_text + "/"):
            rel = os.path.normpath(token[len(root_text) + 1 :])
            if rel.startswith(".."):
                raise HandoffError("fail_outside_root")
            return rel + trail
        raise HandoffError("fail_outside_root")

    if _ABS_WINDOWS.search(text):
        raise HandoffError("fail_outside_root")
    return _ABS_POSIX.sub(rewrite, text)


def _bullets(items: tuple[str, ...] | list[str], empty: str) -> str:
    return "\n".join(f"- {item}" for item in items) if items else empty


def compose(
    template: str,
    *,
    workflow: str,
    event: str,
    verdict: str,
    done: list[str],
    tasks: Tasks | None,
    command: str | None,
    command_known: bool,
) -> str:
    """The handoff text from the template. Pure: no clock, no session identity."""
    done_items = [_clip(item) for item in done] + (list(tasks.done) if tasks else [])
    open_text = (
        _bullets(tasks.open, "- (tasks.md: nothing open / 没有未完成项)")
        if tasks is not None
        else "- (no tasks.md given / 未给出 tasks.md)"
    )
    if command is None:
        command_text = "(none given / 未给出)"
    elif command_known:
        command_text = f"`{command}`"
    else:
        command_text = f"`{command}` (original command; next entry unknown / 原命令，下一单元入口未知)"
    return template.format(
        workflow=workflow,
        event=event,
        verdict=verdict,
        done=_bullets(done_items, "- (not stated / 未说明)"),
        open=open_text,
        command=command_text,
    )


def handoff_path(directory: Path) -> Path:
    return directory / HANDOFF_RELPATH


def write_handoff(
    directory: Path | None,
    text: str,
    *,
    root: Path,
    leaks: Callable[[str], bool],
) -> Path:
    """Privacy-check, relativize and atomically overwrite the handoff; HandoffError on any failure.

    The handoff and the folders above it are the repository's: a symlink that leaves ``root``
    (or stands in the file's place) is refused as ``fail_outside_root`` and nothing is written.
    """

    if directory is None:
        raise HandoffError("fail_no_dir")
    if not directory.is_dir():
        raise HandoffError("fail_not_dir")
    final = relativize(text, root)
    if len(final.encode("utf-8")) > MAX_HANDOFF_BYTES or leaks(final):
        raise HandoffError("fail_privacy")
    target = handoff_path(directory)
    try:
        written = confinedwrite.atomic_write(root, os.path.abspath(target), final, what="the handoff file")
    except confined.PathOutsideRepository:
        raise HandoffError("fail_outside_root") from None
    except OSError:
        raise HandoffError("fail_unwritable") from None
    return Path(written)


def read_tasks(path: Path, root: Path | None = None) -> Tasks:
    """Read tasks.md with a size cap; HandoffError('fail_tasks') when it cannot be read.

    A tasks.md inside ``root`` is the repository's: read through the confined layer (a symlink
    leaving the work tree is refused, so no outside file's lines reach the committed handoff).
    """

    try:
        if root is not None and confined.is_under(root, path):
            raw = confined.read_bytes(root, os.path.abspath(path), what="tasks.md", limit=MAX_TASKS_BYTES)
        else:
            raw = read_regular(path, limit=MAX_TASKS_BYTES, what="tasks.md")
        return parse_tasks((raw or b"").decode("utf-8"))
    except confined.PathOutsideRepository:
        raise HandoffError("fail_outside_root") from None
    except (FileRefused, UnicodeDecodeError):
        raise HandoffError("fail_tasks") from None


def display_path(path: Path, root: Path) -> str:
    """The handoff path as printed: project-relative when inside the root."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return os.path.relpath(path)
