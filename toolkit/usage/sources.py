"""Where the logs live: default locations, ``CLAUDE_CONFIG_DIR`` / ``CODEX_HOME`` (comma lists), file walk.

The environment is passed in (never read here), so tests and the command see the same rules.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

import msgspec

from toolkit.core.errors import InvalidInput


def hashed(value: str, prefix: str = "p-") -> str:
    """A stable pseudonym for a path or branch: the value itself never reaches output."""
    return prefix + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


_PROJECTS: dict[str, str] = {}


def project_hash(cwd: str) -> str:
    """``hashed(cwd)``, remembered for the few working folders a history has (at most 4,096)."""
    found = _PROJECTS.get(cwd)
    if found is None:
        found = hashed(cwd)
        if len(_PROJECTS) < 4096:
            _PROJECTS[cwd] = found
    return found


class LogFile(msgspec.Struct, frozen=True):
    source: str  # "claude" | "codex"
    path: str  # as the walk found it (a string: no ``Path`` is built per file)
    root: Path  # the projects/ folder (Claude) or the Codex home
    archived: bool = False  # Codex archived_sessions/ copy
    size: int = 0
    mtime: float = 0.0


def _home(environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME")
    return Path(home) if home else Path.home()


def _expand(raw: str, environ: Mapping[str, str]) -> Path:
    if raw == "~":
        return _home(environ)
    if raw.startswith("~/"):
        return _home(environ) / raw[2:]
    return Path(raw)


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def claude_roots(environ: Mapping[str, str]) -> list[Path]:
    """The ``projects/`` folders to read; ``CLAUDE_CONFIG_DIR`` replaces the defaults when set."""
    override = environ.get("CLAUDE_CONFIG_DIR")
    if override is not None and _split(override):
        return _claude_override(override, environ)
    return [path for path in dict.fromkeys(_claude_defaults(environ)) if path.is_dir()]


def _claude_override(override: str, environ: Mapping[str, str]) -> list[Path]:
    """The ``projects/`` folders the entries of ``CLAUDE_CONFIG_DIR`` name (an entry may name the
    ``projects/`` folder itself), each once; a coded error when none of them has one."""
    roots: list[Path] = []
    for raw in _split(override):
        path = _expand(raw, environ)
        projects = path if path.name == "projects" and path.is_dir() else path / "projects"
        if projects.is_dir() and projects not in roots:
            roots.append(projects)
    if not roots:
        raise InvalidInput(
            "USAGE_NO_LOG_DIR", "no entry of CLAUDE_CONFIG_DIR is a Claude config folder with projects/"
        )
    return roots


def _claude_defaults(environ: Mapping[str, str]) -> list[Path]:
    """Where Claude Code keeps its ``projects/`` when ``CLAUDE_CONFIG_DIR`` is not set: below the XDG
    config folder, then below ``~/.claude``."""
    xdg = environ.get("XDG_CONFIG_HOME")
    config = Path(xdg) if xdg else _home(environ) / ".config"
    return [config / "claude" / "projects", _home(environ) / ".claude" / "projects"]


def codex_roots(environ: Mapping[str, str]) -> list[Path]:
    """The Codex homes to read (their ``sessions/`` and ``archived_sessions/``)."""
    override = environ.get("CODEX_HOME")
    if override is not None and _split(override):
        roots = [_expand(raw, environ) for raw in _split(override)]
        found = [
            path
            for path in dict.fromkeys(roots)
            if (path / "sessions").is_dir() or (path / "archived_sessions").is_dir()
        ]
        if not found:
            raise InvalidInput(
                "USAGE_NO_LOG_DIR", "no entry of CODEX_HOME holds sessions/ or archived_sessions/"
            )
        return found
    home = _home(environ) / ".codex"
    return [home] if (home / "sessions").is_dir() or (home / "archived_sessions").is_dir() else []


def _walk(folder: Path) -> list[str]:
    """The ``*.jsonl`` paths below ``folder`` (strings, as ``LogFile`` keeps them), in
    ``os.walk``'s order (a folder's files as listed, then its subfolders sorted, depth first;
    symlinked folders are not entered, an unreadable folder is passed over), with one ``scandir``
    per folder and no second listing."""
    found: list[str] = []
    pending = [os.fspath(folder)]
    while pending:
        top = pending.pop()
        subfolders: list[str] = []
        try:
            with os.scandir(top) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        if entry.name.endswith(".jsonl"):
                            found.append(entry.path)
                    elif not entry.is_symlink():
                        subfolders.append(entry.name)
        except OSError:
            continue
        subfolders.sort(reverse=True)  # popped from the end: the first name is walked next
        pending.extend(os.path.join(top, name) for name in subfolders)
    return found


def _stat(source: str, path: str, root: Path, archived: bool = False) -> LogFile | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):  # a FIFO, socket or device named *.jsonl would block the read
        return None
    return LogFile(source, path, root, archived, info.st_size, info.st_mtime)


def stem(path: str) -> str:
    """``PurePath.stem`` of a file's path, as string work."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def folder_name(path: str) -> str:
    """``PurePath.parent.name`` of a file's path, as string work."""
    return os.path.basename(os.path.dirname(path))


def discover(source: str, environ: Mapping[str, str]) -> list[LogFile]:
    """Every log file of ``source`` ("claude", "codex" or "all"), in a stable order."""
    files: list[LogFile] = []
    if source in ("claude", "all"):
        for root in claude_roots(environ):
            files.extend(f for f in (_stat("claude", p, root) for p in _walk(root)) if f)
    if source in ("codex", "all"):
        for home in codex_roots(environ):
            files.extend(_codex_files(home))
    return files


def _codex_files(home: Path) -> list[LogFile]:
    """A Codex home's rollouts: those of ``sessions/``, then the archived ones."""
    files: list[LogFile] = []
    for sub, archived in (("sessions", False), ("archived_sessions", True)):
        folder = home / sub
        if folder.is_dir():
            files.extend(f for f in (_stat("codex", p, home, archived) for p in _walk(folder)) if f)
    return files


def looked_in(source: str, environ: Mapping[str, str]) -> list[str]:
    """The folders ``discover`` reads for ``source``, as a person would type them (the home folder
    as ``~``) with the variable that moves them: what ``workgroup usage`` names when it found no log."""
    home = str(_home(environ))
    places: list[str] = []
    if source in ("claude", "all"):
        places.append(_claude_place(environ, home))
    if source in ("codex", "all"):
        places.append(_codex_place(environ, home))
    return places


def _tilde(path: Path, home: str) -> str:
    """``path`` as a person would type it: the home folder as ``~`` (unless home is empty or /)."""
    text = str(path)
    return "~" + text[len(home) :] if home not in ("", "/") and (text + "/").startswith(home + "/") else text


def _claude_place(environ: Mapping[str, str], home: str) -> str:
    """The Claude folders ``discover`` reads, with the variable that moves them."""
    if environ.get("CLAUDE_CONFIG_DIR") and _split(environ["CLAUDE_CONFIG_DIR"]):
        folders = [_tilde(root, home) for root in claude_roots(environ)]
        return f"{', '.join(folders)} (from CLAUDE_CONFIG_DIR)"
    folders = [_tilde(path, home) for path in _claude_defaults(environ)]
    return f"{', '.join(dict.fromkeys(folders))} (set CLAUDE_CONFIG_DIR to read others)"


def _codex_place(environ: Mapping[str, str], home: str) -> str:
    """The Codex folders ``discover`` reads, with the variable that moves them."""
    if environ.get("CODEX_HOME") and _split(environ["CODEX_HOME"]):
        homes = [_tilde(root, home) for root in codex_roots(environ)]
        suffix = "(from CODEX_HOME)"
    else:
        homes = [_tilde(_home(environ) / ".codex", home)]
        suffix = "(set CODEX_HOME to read others)"
    folders = [f"{root}/{sub}" for root in homes for sub in ("sessions", "archived_sessions")]
    return f"{', '.join(folders)} {suffix}"
