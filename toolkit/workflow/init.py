"""The core of ``workgroup init``: idempotent edits of three files and the git hook.

* ``.workgroup/config.yml`` from ``templates/config.yml`` (kept when present);
* ``.gitignore``: the local-state lines, appended once under a marker comment (the CM run
  pointer and lock lines only in a project that uses CM);
* ``.pre-commit-config.yaml``: one repos item with the workgroup hooks, in the remote form
  (``repo:`` the toolkit's repository, ``rev:`` a release tag checked to exist) or the local
  form (``repo: local``, entries that say how to install the toolkit when it is missing). It is
  inserted right under ``repos:`` or replaced in place, as text in the file's own indentation,
  so the user's comments and layout survive; the result is parsed and must equal the old
  configuration with only our item added or replaced, otherwise nothing is written (exit 1);
* ``pre-commit install`` when pre-commit is available.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused, ToolkitError
from toolkit.core.jsontypes import JsonObject
from toolkit.infra import confined, confinedwrite
from toolkit.infra.boundedio import NOT_UTF8, FileRefused
from toolkit.infra.resources import template_text
from toolkit.workflow.hook_source import (
    InstallOrigin,
    check_rev,
    hook_definitions,
    install_hint,
    install_origin,
    release_revs,
    repository_url,
    safe_repo,
    shown,
    validate_repo,
    validate_rev,
)

HOOK_IDS = (
    "workgroup-privacy-all",
    "workgroup-privacy-commit-msg",
    "workgroup-docs-claims",
    "workgroup-verify",
)
# the git hooks a plain `pre-commit install` installs: init writes them as the config's
# default_install_hook_types, or the commit-msg hook would sit in the config and never run
INSTALL_TYPES = ("pre-commit", "commit-msg")
_INSTALL_TYPES_KEY = re.compile(r"^default_install_hook_types[ \t]*:", re.M)
# a config written by an older init names the artifact-only privacy hook: the all-files hook
# checks the same files with the same rules, and every other staged file too
SUPERSEDED = {"workgroup-privacy": "workgroup-privacy-all"}
# what each hook checks and what it does not, printed by init (one line each)
HOOK_NOTES = {
    "workgroup-privacy-all": (
        "every staged file (any type, size or encoding): secrets and credentials everywhere; also "
        "session ids, transcripts, home paths and emails in workflow artifacts (.workgroup/, "
        ".reviews/, handoffs, *.jsonl, privacy.artifact_paths) and chat transcripts in Markdown. "
        "Not checked: the commit message (hook workgroup-privacy-commit-msg), commits made with "
        "--no-verify and what is already in history (`workgroup privacy scan --history`, the CI job)"
    ),
    "workgroup-privacy": (
        "workflow artifacts only (.workgroup/, .reviews/, handoffs, *.jsonl): every privacy rule. "
        "Not checked: any other file (hook workgroup-privacy-all)"
    ),
    "workgroup-privacy-commit-msg": (
        "the commit message, at the commit-msg stage: secrets and credentials, provider session ids. "
        "Not checked: messages of commits made with --no-verify or before the hook was installed"
    ),
    "workgroup-docs-claims": (
        "Markdown, reStructuredText, AsciiDoc and text files: blanket claims that cached input "
        "removes context tokens. Not checked: code, secrets"
    ),
    "workgroup-verify": (
        "on every commit: capsule, lineage and promotion records are bound to a commit in history "
        "and their hashes recompute. Not checked: file contents for secrets"
    ),
}
# the oldest Python the toolkit runs on (pyproject's requires-python): a hook environment built
# with an older interpreter cannot install it
PYTHON_FLOOR = (3, 11)
_PY_VERSION = re.compile(r"(?:^|[/\\]|python|py)(\d+)\.(\d+)(?:\.\d+)?(?:\.exe)?$", re.I)
MARKER = "# workgroup hooks (workgroup init)"
# hook keys copied from .pre-commit-hooks.yaml into a local hook, in this order
_LOCAL_KEYS = (
    "files",
    "exclude",
    "types",
    "types_or",
    "exclude_types",
    "pass_filenames",
    "always_run",
    "stages",  # the commit-msg hook runs on the message only
)
GITIGNORE_MARK = "# workgroup: local state, never committed"
GITIGNORE_LINES = (".workgroup/local/",)
# the CM run pointer and locks, and the caches beside the project log (rebuilt from it when missing)
CM_GITIGNORE_LINES = (
    ".cm-run.json",
    ".cm-run.lock",
    ".cm-write.lock",
    ".cm-runs.ckpt.json",
    ".cm-runs.index.db",
    ".cm-runs.index.db-journal",
)
# What makes a project a CM project: the CM run pointer, its project log, its handoff file, or the
# CM workflow config (the files toolkit/cm reads and writes).
CM_MARKERS = (".cm-run.json", "运行日志.jsonl", ".cm-workflow.yml", ".cm-workflow.yaml")
_REPOS_LINE = re.compile(r"^repos:[ \t]*(?:#.*)?$", re.M)
_REPOS_FLOW_EMPTY = re.compile(r"^repos:[ \t]*\[[ \t]*\][ \t]*(?:#.*)?$", re.M)
_ITEM = re.compile(r"^([ \t]*)-([ \t]+)\S")
_MAX_CONFIG = 1_048_576


@dataclass
class InitOutcome:
    config: str = ""
    gitignore: str = ""
    pre_commit_config: str = ""
    hook: str = ""
    hooks: str = ""
    cm: bool = False
    messages: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, str | bool]:
        return {
            "config": self.config,
            "gitignore": self.gitignore,
            "pre_commit_config": self.pre_commit_config,
            "hook": self.hook,
            "hooks": self.hooks,
            "cm": self.cm,
        }


class RepoEntry(TypedDict):
    """One ``repos`` item of ``.pre-commit-config.yaml`` as ``HookForm.entry`` builds it: ``repo``
    and ``rev`` (remote), or ``repo: local``; then the hooks."""

    repo: str
    rev: NotRequired[str]
    hooks: list[JsonObject]


@dataclass(frozen=True)
class HookForm:
    """Which form of hooks to write: ``remote`` (repo URL + rev) or ``local`` (installed scripts)."""

    kind: str
    repo: str | None
    rev: str
    # where repo and rev came from, said after the file name in init's report ("" when given)
    source: str = ""

    def entry(self, ids: list[str], language_version: str | None = None) -> RepoEntry:
        """The repo entry of ``.pre-commit-config.yaml`` for ``ids``, as pre-commit parses it;
        ``language_version`` pins the remote hooks' Python (local hooks run the installed scripts)."""
        if self.kind == "remote":
            assert self.repo is not None
            pin = {"language_version": language_version} if language_version else {}
            return {"repo": self.repo, "rev": self.rev, "hooks": [{"id": i, **pin} for i in ids]}
        defs = hook_definitions()
        hooks: list[JsonObject] = []
        for hook_id in ids:
            spec = defs[hook_id]
            hook: JsonObject = {
                "id": hook_id,
                "name": spec["name"],
                "entry": guarded_entry(str(spec["entry"]), install_hint(self.repo, self.rev)),
                "language": "system",
            }
            hook.update({key: spec[key] for key in _LOCAL_KEYS if key in spec})
            hooks.append(hook)
        return {"repo": "local", "hooks": hooks}


def guarded_entry(script: str, hint: str) -> str:
    """A local hook entry that says what to install when the hook script is not on PATH.

    pre-commit runs ``sh -c SCRIPT -- FILES...``; ``$@`` are the files. ``language: system``
    hooks otherwise fail with pre-commit's bare "Executable not found".
    """
    body = (
        f'command -v {script} >/dev/null 2>&1 || {{ echo "{script}: not found on PATH. '
        f'Install the workgroup toolkit: {hint}" >&2; exit 1; }}; exec {script} "$@"'
    )
    return f"sh -c '{body}' --"


@dataclass(frozen=True)
class Layout:
    """How the user's file indents a repos item: ``item`` before the dash, ``gap`` after it,
    ``hooks`` the extra indentation of the hooks list under its key."""

    item: str = "  "
    gap: str = " "
    hooks: str = "  "


def detect_layout(text: str) -> Layout:
    """The indentation style of the first repos item (default: 2 spaces, as pre-commit's docs)."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        item = _ITEM.match(line)
        if not item or not re.match(r"[ \t]*-[ \t]+repo:", line):
            continue
        column = len(item.group(1)) + 1 + len(item.group(2))
        return Layout(item.group(1), item.group(2), _hooks_indent(lines[number + 1 :], column))
    indents = [len(x) - len(x.lstrip(" ")) for x in lines if _is_content(x)]
    step = min((i for i in indents if i > 0), default=2)
    return Layout(" " * step, " ", " " * step)


def _is_content(line: str) -> bool:
    """A line that is neither blank nor a comment."""
    return bool(line.strip()) and not line.lstrip().startswith("#")


def _hooks_indent(lines: list[str], column: int) -> str:
    """How far the first item of the ``hooks:`` list (at ``column``, in ``lines``) is indented
    beyond its key (default: 2 spaces)."""
    for later, line in enumerate(lines):
        if re.match(rf"^[ \t]{{{column}}}hooks:[ \t]*(?:#.*)?$", line):
            nxt = next((x for x in lines[later + 1 :] if _is_content(x)), "")
            dash = re.match(r"^([ \t]*)-", nxt)
            return " " * max(0, len(dash.group(1)) - column) if dash else "  "
    return "  "


def _scalar(value: object) -> str:
    import yaml

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    text = str(value)
    try:
        plain = bool(text) and "#" not in text and yaml.safe_load(f"k: {text}") == {"k": text}
    except yaml.YAMLError:
        plain = False
    if plain:
        return text
    return "'" + text.replace("'", "''") + "'"


def render_entry(entry: RepoEntry, layout: Layout) -> str:
    """YAML text of one repos item, with the marker comment, in the user's indentation."""
    pad = " " * (1 + len(layout.gap))
    base = layout.item
    lines = [f"{base}{MARKER}"]
    fields = [(key, value) for key, value in entry.items() if key != "hooks"]
    lines.append(f"{base}-{layout.gap}{fields[0][0]}: {_scalar(fields[0][1])}")
    lines += [f"{base}{pad}{key}: {_scalar(value)}" for key, value in fields[1:]]
    lines.append(f"{base}{pad}hooks:")
    inner = base + pad + layout.hooks
    for hook in entry["hooks"]:
        items = list(hook.items())
        lines.append(f"{inner}-{layout.gap}{items[0][0]}: {_scalar(items[0][1])}")
        lines += [f"{inner}{pad}{key}: {_scalar(value)}" for key, value in items[1:]]
    return "\n".join(lines) + "\n"


def _parse(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        raise InvalidInput(
            "PRE_COMMIT_CONFIG_INVALID", ".pre-commit-config.yaml is not valid YAML; nothing written"
        ) from None


def _hook_ids(repo: object) -> list[str]:
    hooks = repo.get("hooks") if isinstance(repo, dict) else None
    return [h["id"] for h in hooks or [] if isinstance(h, dict) and isinstance(h.get("id"), str)]


def _unmergeable(why: str) -> Refused:
    return Refused("PRE_COMMIT_CONFIG_UNMERGEABLE", f"{why}; add the workgroup hooks by hand")


def _item_lines(text: str) -> list[int]:
    """0-based line of each repos item's dash (block style only)."""
    import yaml

    root = yaml.compose(text)
    for key, value in root.value if root is not None else ():
        if key.value == "repos" and isinstance(value, yaml.SequenceNode):
            if value.flow_style:
                raise _unmergeable("`repos:` is a flow-style list")
            return [item.start_mark.line for item in value.value]
    raise _unmergeable("could not find `repos:`")


def _replace_item(text: str, line: int) -> tuple[list[str], int, int, str]:
    """(lines, first, end, indent) of the repos item that starts at ``line``: trailing comments and
    blank lines stay with whatever follows; our marker comment above goes with the item."""
    lines = text.splitlines(keepends=True)
    dash = re.match(r"^([ \t]*)-", lines[line])
    if not dash:
        raise _unmergeable("a repos item does not start on its own line")
    end = _item_end(lines, line, len(dash.group(1)))
    first = line
    if first > 0 and lines[first - 1].strip() == MARKER:
        first -= 1
    return lines, first, end, dash.group(1)


def _item_end(lines: list[str], line: int, column: int) -> int:
    """The line after the repos item whose dash (at ``column``) is on ``line``: it ends before the
    next content line indented no deeper, less the comments and blank lines just above that."""
    end = line + 1
    while end < len(lines):
        body = lines[end]
        if _is_content(body) and len(body) - len(body.lstrip()) <= column:
            break
        end += 1
    while end > line + 1 and not _is_content(lines[end - 1]):
        end -= 1
    return end


def python_pin(text: str | None) -> tuple[str | None, str]:
    """(the ``language_version`` our remote hooks need, the repository's default) : a pin when the
    config's ``default_language_version: python`` names a Python below the toolkit's floor, which
    pre-commit would build our hook environment with. The pin is the Python running this toolkit
    (it is at least the floor and exists on this machine)."""
    if not text or not text.strip():
        return None, ""
    import yaml

    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        return None, ""  # the merge reports the invalid file
    default = data.get("default_language_version") if isinstance(data, dict) else None
    python = default.get("python") if isinstance(default, dict) else None
    if not isinstance(python, str):
        return None, ""
    version = _PY_VERSION.search(python.strip())
    if version is None or (int(version.group(1)), int(version.group(2))) >= PYTHON_FLOOR:
        return None, python
    return f"python{sys.version_info.major}.{sys.version_info.minor}", python


def merge_pre_commit_config(text: str | None, form: HookForm) -> tuple[str | None, str]:
    """(new text or None when unchanged, what happened). Raises when it cannot merge safely.

    Our hooks live in one repos item marked with a comment. A missing item is inserted right
    under ``repos:``; an item in the other form (or with other patterns) is replaced in place.
    Everything else in the file (comments, order, indentation) is kept, and the result is parsed
    back: it must equal the old configuration with only our item added or replaced.
    """
    if text is None or not text.strip():
        return "repos:\n" + render_entry(form.entry(list(HOOK_IDS)), Layout()), "written"
    data = _parse(text)
    pin = python_pin(text)[0] if form.kind == "remote" else None
    if not isinstance(data, dict) or not isinstance(data.get("repos", None), list):
        raise _unmergeable(".pre-commit-config.yaml is not a mapping with a repos list")
    ours = set(hook_definitions())
    holders = [i for i, repo in enumerate(data["repos"]) if ours & set(_hook_ids(repo))]
    layout = detect_layout(text)
    if not holders:
        entry = form.entry(list(HOOK_IDS), pin)
        new = _insert(text, render_entry(entry, layout))
        expected, how = [entry, *data["repos"]], "merged"
    else:
        replaced = _replace_ours(text, data["repos"], (holders, ours), form, pin, layout)
        if replaced is None:
            return None, "unchanged"
        new, expected, how = replaced
    _check_only_key_changed(data, new, "repos", expected)
    return new, how


def _replace_ours(
    text: str,
    repos: list[Any],
    found: tuple[list[int], set[str]],
    form: HookForm,
    pin: str | None,
    layout: Layout,
) -> tuple[str, list[Any], str] | None:
    """(new text, expected repos list, what happened) when our existing repos item is rewritten in
    ``form`` (superseded hook ids renamed, missing ones added), None when it already is. ``found``
    is (the indexes of the repos items holding our hooks, our hook ids). Refused when our hooks sit
    in several items or share one with other hooks."""
    holders, ours = found
    index = holders[0]
    current = repos[index]
    ids = _hook_ids(current)
    if len(holders) > 1 or not set(ids) <= ours:
        raise _unmergeable("the workgroup hooks are spread over several repos or mixed with other hooks")
    ids = list(dict.fromkeys(SUPERSEDED.get(i, i) for i in ids))
    entry = form.entry(ids + [h for h in HOOK_IDS if h not in ids], pin)
    if current == entry:
        return None
    lines, first, end, indent = _replace_item(text, _item_lines(text)[index])
    block = render_entry(entry, Layout(indent, layout.gap, layout.hooks))
    new = "".join(lines[:first]) + block + "".join(lines[end:])
    expected = [*repos[:index], entry, *repos[index + 1 :]]
    was_local = current.get("repo") == "local"
    how = "updated" if was_local == (form.kind == "local") else f"switched to {form.kind} hooks"
    return new, expected, how


def _check_only_key_changed(data: JsonObject, new: str, key: str, expected: object) -> None:
    """Refuse the merge unless ``new`` parses back to ``data`` with only ``key`` set to ``expected``."""
    merged = _parse(new)
    if not (
        isinstance(merged, dict)
        and {k: v for k, v in merged.items() if k != key} == {k: v for k, v in data.items() if k != key}
        and merged.get(key) == expected
    ):
        raise _unmergeable("merging would change the existing configuration")


def merge_install_types(text: str) -> tuple[str | None, str]:
    """(new text or None when unchanged, what to say): ``default_install_hook_types`` names
    ``pre-commit`` and ``commit-msg``, so a plain ``pre-commit install`` (here and in every clone)
    installs the commit-message hook too. Absent: one line is added above ``repos:``; a one-line
    list lacking a type gets it appended; anything else is left as it is and the output says what
    to add. The result is parsed back: only that key may differ, otherwise nothing changes."""
    data = _parse(text)
    if not isinstance(data, dict):
        raise _unmergeable(".pre-commit-config.yaml is not a mapping with a repos list")
    current = data.get("default_install_hook_types")
    if isinstance(current, list) and all(t in current for t in INSTALL_TYPES):
        return None, "default_install_hook_types: " + ", ".join(map(str, current))
    key = _INSTALL_TYPES_KEY.search(text)
    if key is None:
        wanted = list(INSTALL_TYPES)
        new = _add_install_types_line(text, wanted)
    else:
        extended = _extend_install_types(text, key, current)
        if extended is None:
            return None, (
                "default_install_hook_types: left as written; add commit-msg to it, or the "
                "commit-message hook is not installed by `pre-commit install`"
            )
        new, wanted = extended
    _check_only_key_changed(data, new, "default_install_hook_types", wanted)
    return new, "default_install_hook_types: " + ", ".join(wanted) + " (added for the commit-msg hook)"


def _add_install_types_line(text: str, wanted: list[str]) -> str:
    """``text`` with a ``default_install_hook_types`` line inserted above the ``repos:`` line."""
    repos = _REPOS_LINE.search(text) or _REPOS_FLOW_EMPTY.search(text)
    if repos is None:
        raise _unmergeable("could not find a block-style `repos:` line")
    line = f"default_install_hook_types: [{', '.join(wanted)}]  # pre-commit install: both hooks\n"
    return text[: repos.start()] + line + text[repos.start() :]


def _extend_install_types(text: str, key: re.Match[str], current: object) -> tuple[str, list[str]] | None:
    """(new text, the types it lists) with the missing install types appended to a one-line flow
    list after ``key``; None when the value is written some other way (left for the user)."""
    end = text.find("\n", key.end())
    rest = text[key.end() : len(text) if end < 0 else end]
    flow = rest.partition(" #")[0].strip()
    if not (isinstance(current, list) and flow.startswith("[") and flow.endswith("]")):
        return None
    wanted = [*map(str, current), *(t for t in INSTALL_TYPES if t not in current)]
    close = key.end() + rest.index("]") + 1  # the comment after the list stays as written
    return text[: key.end()] + f" [{', '.join(wanted)}]" + text[close:], wanted


def _insert(text: str, block: str) -> str:
    if _REPOS_FLOW_EMPTY.search(text):
        return _REPOS_FLOW_EMPTY.sub(lambda _: "repos:\n" + block.rstrip("\n"), text, count=1)
    match = _REPOS_LINE.search(text)
    if match is None:
        raise _unmergeable("could not find a block-style `repos:` line")
    return text[: match.end()] + "\n" + block + text[match.end() :].removeprefix("\n")


def merge_gitignore(text: str | None, cm: bool = False) -> tuple[str | None, str]:
    """Append the local-state lines that are missing (once, under a marker comment); the CM
    run-pointer and lock lines only when the project uses CM."""
    current = text or ""
    present = {line.strip() for line in current.splitlines()}
    missing = _missing_gitignore_lines(present, cm)
    if not missing:
        return None, "unchanged"
    prefix = current if not current or current.endswith("\n") else current + "\n"
    block = ([GITIGNORE_MARK] if GITIGNORE_MARK not in present else []) + missing
    return prefix + "\n".join(block) + "\n", "updated" if text else "written"


def _missing_gitignore_lines(present: set[str], cm: bool) -> list[str]:
    """The local-state lines (and the CM lines when ``cm``) not in ``present``, in their order."""
    wanted = GITIGNORE_LINES + (CM_GITIGNORE_LINES if cm else ())
    return [line for line in wanted if line not in present]


def uses_cm(workdir: Path) -> bool:
    """True when the project has a CM file: the run pointer, project log or workflow config
    (tracked or not, ignored files included: .cm-run.json is usually ignored), or a CM handoff."""
    proc = subprocess.run(
        [
            "git",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--",
            *(f":(glob)**/{m}" for m in CM_MARKERS),
            ":(glob)**/.reviews/session-handoff.md",
        ],
        cwd=workdir,
        capture_output=True,
        timeout=60,
        check=False,
    )
    return bool(proc.stdout.strip(b"\0")) or any((workdir / m).exists() for m in CM_MARKERS)


def _read(workdir: Path, path: Path) -> str | None:
    """A file init merges into, read through the confined layer: its text is written back into the
    work tree, so a symlink in its place (or a folder leading outside) is refused, never read."""
    try:
        return confined.read_text(workdir, path, what=path.name, limit=_MAX_CONFIG, missing_ok=True)
    except FileRefused as exc:
        code = "FILE_NOT_UTF8" if exc.code == NOT_UTF8 else exc.code
        raise InvalidInput(code, exc.message) from None


def _pre_commit_executable() -> str | None:
    sibling = Path(sys.executable).parent / "pre-commit"
    if sibling.is_file() and os.access(sibling, os.X_OK):
        return str(sibling)
    return shutil.which("pre-commit")


METADATA_SOURCE = "the toolkit's package metadata"
ADVICE = (
    "To write hooks that every clone can install, do one of: install the toolkit from its git "
    "repository (pip install git+URL@TAG; init then writes that URL and the installed commit), "
    "pass --hook-repo URL --hook-rev TAG_OR_COMMIT, or use --local for hooks that call the "
    "installed toolkit."
)


def _origin_note(origin: InstallOrigin | None) -> str:
    if origin is None or origin.shareable or origin.kind == "archive":
        return ""
    return (
        f"The toolkit here was installed from {shown(origin.url)}, a path on this machine only, "
        "which goes into the shared config only when passed as --hook-repo. "
    )


def hook_form(
    *,
    local: bool,
    hook_repo: str | None,
    hook_rev: str | None,
    check: bool = True,
    origin_of: Callable[[], InstallOrigin | None] = install_origin,
) -> HookForm:
    """The form to write; for the remote form the rev is checked against the repository first.

    The hook source, first that applies: ``--hook-repo`` (with ``--hook-rev`` or the release);
    the git URL the toolkit was installed from, at the installed commit (or ``--hook-rev``); the
    repository URL of the package metadata at the release. "The release" is its commit
    (``RELEASE_COMMITS``) when that exists in the repository, else its tag.
    """
    origin = None if hook_repo else origin_of()
    candidate = _hook_source(hook_repo, hook_rev, origin)
    repo, rev, source = candidate.repo, candidate.revs[0], candidate.source
    if local:
        return HookForm("local", repo, rev, source)
    if repo is None:
        raise InvalidInput(
            "HOOK_REPO_UNKNOWN",
            f"the toolkit's repository URL is not in its metadata. {_origin_note(origin)}{ADVICE}",
        )
    if check:
        return _checked_form(repo, candidate, origin)
    return HookForm("remote", repo, rev, source)


@dataclass(frozen=True)
class _Source:
    """Where the hooks would come from: the repository, the revs to try in order, what chose them,
    and whether that repository and first rev are where pip installed this toolkit from."""

    repo: str | None
    revs: list[str]
    source: str
    installed: bool = False


def _hook_source(hook_repo: str | None, hook_rev: str | None, origin: InstallOrigin | None) -> _Source:
    """The first source that applies: ``--hook-repo``; the git URL the toolkit was installed from;
    the repository URL of the package metadata. Without ``--hook-rev`` the revs are the release
    commit, then the release tag (the first that exists is taken), or the installed commit."""
    revs = [validate_rev(hook_rev)] if hook_rev else list(release_revs())
    if hook_repo:
        return _Source(validate_repo(hook_repo), revs, "")
    if origin is not None and origin.kind == "git" and origin.shareable and safe_repo(origin.url):
        assert origin.commit is not None  # parse_direct_url keeps git origins with a commit only
        rev = validate_rev(hook_rev) if hook_rev else origin.commit
        source = "the git URL the toolkit was installed from" + ("" if hook_rev else ", its commit")
        return _Source(origin.url, [rev], source, installed=rev == origin.commit)
    return _Source(repository_url(), revs, METADATA_SOURCE)


def _checked_form(repo: str, candidate: _Source, origin: InstallOrigin | None) -> HookForm:
    """The remote form at the first of the candidate revs that exists in ``repo``. An installed
    commit out of reach now is taken unchecked; a failure of the default source says so."""
    rev, source = candidate.revs[0], candidate.source
    try:
        rev = _first_existing(repo, candidate.revs)
    except EnvironmentFailure as exc:
        if exc.code == "HOOK_REPO_UNREACHABLE" and candidate.installed:
            # pip cloned this very commit from this URL: it exists; only now is it out of reach
            return HookForm("remote", repo, rev, source + "; not reachable now, so not rechecked")
        if source == METADATA_SOURCE:
            raise EnvironmentFailure(exc.code, _default_failed(exc, origin, rev)) from None
        raise
    except Refused as exc:
        if source == METADATA_SOURCE:
            raise Refused(exc.code, _default_failed(exc, origin, rev)) from None
        raise
    return HookForm("remote", repo, rev, source)


def _first_existing(repo: str, revs: list[str]) -> str:
    """The first of ``revs`` that exists in ``repo``; the last one's refusal when none does."""
    for index, rev in enumerate(revs):
        try:
            check_rev(repo, rev)
            return rev
        except Refused as exc:
            if exc.code != "HOOK_REV_NOT_FOUND" or index == len(revs) - 1:
                raise
    raise AssertionError("no rev to check")  # pragma: no cover - revs is never empty


def _default_failed(exc: ToolkitError, origin: InstallOrigin | None, rev: str) -> str:
    """The refusal when the default source (package metadata URL + release tag) cannot be verified."""
    return (
        f"{exc.message.split('; ')[0]}. That is the default hook source: the repository of the "
        f"toolkit's package metadata at the release (commit or tag) {rev}. {_origin_note(origin)}{ADVICE}"
    )


def initialize(workdir: Path, *, form: HookForm, install: bool = True, cm: bool | None = None) -> InitOutcome:
    """Do every step; all three files are computed (and their paths checked) before any is written."""
    out = InitOutcome()
    config_path = workdir / ".workgroup" / "config.yml"
    gitignore_path = workdir / ".gitignore"
    pre_commit_path = workdir / ".pre-commit-config.yaml"
    out.cm = uses_cm(workdir) if cm is None else cm
    new_gitignore, out.gitignore = merge_gitignore(_read(workdir, gitignore_path), cm=out.cm)
    new_pre_commit, out.pre_commit_config, types_note = _merged_pre_commit(
        _read(workdir, pre_commit_path), form
    )
    # a .workgroup/ leading outside the work tree is refused, not taken as "config exists"
    config_there = confined.exists(workdir, config_path, what=".workgroup/config.yml")
    config_text = None if config_there else template_text("config.yml")
    out.config = "kept" if config_text is None else "written"
    if config_text is not None:
        confinedwrite.atomic_write(workdir, config_path, config_text, what=".workgroup/config.yml")
    if new_gitignore is not None:
        confinedwrite.atomic_write(workdir, gitignore_path, new_gitignore, what=".gitignore")
    if new_pre_commit is not None:
        confinedwrite.atomic_write(workdir, pre_commit_path, new_pre_commit, what=".pre-commit-config.yaml")
    out.hooks = form.kind
    out.messages += [
        f".workgroup/config.yml: {out.config}",
        f".gitignore: {out.gitignore}" + ("" if out.cm else " (no CM files found: CM lines left out)"),
        f".pre-commit-config.yaml: {out.pre_commit_config}, {_hooks_from(form)}",
        *_hook_lines(_read(workdir, pre_commit_path) if new_pre_commit is None else new_pre_commit, form),
        f"  {types_note}",
    ]
    out.hook = _install_hook(workdir, out) if install else "skipped"
    return out


def _merged_pre_commit(old: str | None, form: HookForm) -> tuple[str | None, str, str]:
    """(new .pre-commit-config.yaml text or None when unchanged, what happened to it, the note on
    ``default_install_hook_types``): our hooks merged in, then the install types."""
    new, state = merge_pre_commit_config(old, form)
    typed, types_note = merge_install_types(new if new is not None else old or "")
    if typed is not None:
        new = typed
        state = "updated" if state == "unchanged" else state
    return new, state, types_note


def _hooks_from(form: HookForm) -> str:
    """Which hooks were written and, for remote ones, from which repository, rev and source."""
    where = f"{form.kind} hooks" + (
        f" ({form.repo} @ {form.rev})" if form.kind == "remote" and form.repo else ""  # `say` escapes
    )
    return where + (f", from {form.source}" if form.source and form.kind == "remote" else "")


def _hook_lines(text: str | None, form: HookForm) -> list[str]:
    """Per hook in the written config: what it checks and what it does not; then the Python pin."""
    data = _parse(text or "")
    repos = data.get("repos") if isinstance(data, dict) else None
    ours = set(hook_definitions())
    ids = [i for repo in repos or [] for i in _hook_ids(repo) if i in ours]
    lines = [f"  {i}: {HOOK_NOTES[i]}" for i in ids if i in HOOK_NOTES]
    return lines + _pin_lines(text, form)


def _pin_lines(text: str | None, form: HookForm) -> list[str]:
    """The line saying remote hooks are pinned to this Python, when the config's default is too old."""
    pin, default = python_pin(text) if form.kind == "remote" else (None, "")
    if not pin:
        return []
    return [  # printed by `say`, which escapes the default read from the config
        f"  language_version: {pin} on these hooks: the repository's default_language_version "
        f"({default}) is below Python {PYTHON_FLOOR[0]}.{PYTHON_FLOOR[1]}, which the "
        "toolkit needs; every clone needs that Python (or change the pin to another 3.11+)"
    ]


def _install_hook(workdir: Path, out: InitOutcome) -> str:
    exe = _pre_commit_executable()
    if exe is None:
        out.messages.append("git hook: pre-commit not found; install it and run `pre-commit install`")
        return "unavailable"
    proc = subprocess.run(
        [exe, "install"], cwd=workdir, capture_output=True, text=True, check=False, timeout=120
    )
    if proc.returncode != 0:
        out.messages.append("git hook: `pre-commit install` failed:")
        out.messages += [f"  {line}" for line in (proc.stdout + proc.stderr).strip().splitlines()[-5:]]
        return "failed"
    out.messages.append(
        "git hook: installed (pre-commit install): the pre-commit and commit-msg hooks, as "
        "default_install_hook_types says; a plain `pre-commit install` in a clone does the same"
    )
    return "installed"
