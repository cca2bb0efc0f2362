"""The core of ``workgroup init``: idempotent edits of three files and the git hook.

* ``.workgroup/config.yml`` from ``templates/config.yml`` (kept when present);
* ``.gitignore``: the local-state lines, appended once under a marker comment;
* ``.pre-commit-config.yaml``: a repo block with the workgroup hooks is inserted as text
  right under ``repos:`` so the user's comments and layout survive; the result is parsed
  and must equal the old repos plus ours, otherwise nothing is written (exit 1);
* ``pre-commit install`` when pre-commit is available.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.errors import InvalidInput, Refused
from toolkit.infra.store import atomic_write

HOOK_IDS = ("workgroup-privacy", "workgroup-docs-claims", "workgroup-verify")
_ENTRIES = {
    "workgroup-privacy": (
        "workgroup privacy (workflow artifacts)",
        "workgroup-privacy-hook",
        ["files: '(^|/)(\\.workgroup|\\.reviews)/|(^|/)[^/]*handoff[^/]*\\.md$|\\.jsonl$'", "types: [text]"],
    ),
    "workgroup-docs-claims": (
        "workgroup docs claims",
        "workgroup-docs-claims-hook",
        ["types_or: [markdown, rst, asciidoc, plain-text]"],
    ),
    "workgroup-verify": (
        "workgroup verify (checkpoints)",
        "workgroup-verify-hook",
        ["pass_filenames: false", "always_run: true"],
    ),
}
GITIGNORE_MARK = "# workgroup: local state, never committed"
GITIGNORE_LINES = (".workgroup/local/", ".cm-run.json", ".cm-run.lock", ".cm-write.lock")
_REPOS_LINE = re.compile(r"^repos:[ \t]*(?:#.*)?$", re.M)
_REPOS_FLOW_EMPTY = re.compile(r"^repos:[ \t]*\[[ \t]*\][ \t]*(?:#.*)?$", re.M)
_MAX_CONFIG = 1_048_576


@dataclass
class InitOutcome:
    config: str = ""
    gitignore: str = ""
    pre_commit_config: str = ""
    hook: str = ""
    messages: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, str]:
        return {
            "config": self.config,
            "gitignore": self.gitignore,
            "pre_commit_config": self.pre_commit_config,
            "hook": self.hook,
        }


def hook_block(missing: list[str], indent: str, hook_repo: str | None, hook_rev: str) -> str:
    """YAML text of one repo entry with the ``missing`` hooks, at the sequence's indentation."""
    lines = [f"{indent}# workgroup hooks (workgroup init)"]
    if hook_repo:
        lines += [f"{indent}- repo: {hook_repo}", f"{indent}  rev: {hook_rev}", f"{indent}  hooks:"]
        lines += [f"{indent}    - id: {hook_id}" for hook_id in missing]
        return "\n".join(lines) + "\n"
    # Local hooks call the console scripts of the installed toolkit: no network, same version
    # as `workgroup` itself. `system` is accepted by pre-commit 3.2 and later (4.4 calls it
    # `unsupported` and still reads `system`).
    lines += [f"{indent}- repo: local", f"{indent}  hooks:"]
    for hook_id in missing:
        name, entry, extra = _ENTRIES[hook_id]
        lines += [
            f"{indent}    - id: {hook_id}",
            f"{indent}      name: {name}",
            f"{indent}      entry: {entry}",
            f"{indent}      language: system",
        ]
        lines += [f"{indent}      {item}" for item in extra]
    return "\n".join(lines) + "\n"


def _parse(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        raise InvalidInput(
            "PRE_COMMIT_CONFIG_INVALID", ".pre-commit-config.yaml is not valid YAML; nothing written"
        ) from None


def _existing_ids(data: dict[str, Any]) -> set[str]:
    ids: set[str] = set()
    for repo in data.get("repos") or []:
        for hook in (repo or {}).get("hooks") or [] if isinstance(repo, dict) else []:
            if isinstance(hook, dict) and isinstance(hook.get("id"), str):
                ids.add(hook["id"])
    return ids


def merge_pre_commit_config(text: str | None, hook_repo: str | None, hook_rev: str) -> tuple[str | None, str]:
    """(new text or None when unchanged, what happened). Raises when it cannot merge safely."""
    if text is None or not text.strip():
        return "repos:\n" + hook_block(list(HOOK_IDS), "", hook_repo, hook_rev), "written"
    data = _parse(text)
    if not isinstance(data, dict) or not isinstance(data.get("repos", None), list):
        raise Refused(
            "PRE_COMMIT_CONFIG_UNMERGEABLE",
            ".pre-commit-config.yaml is not a mapping with a repos list; add the hooks by hand",
        )
    missing = [hook_id for hook_id in HOOK_IDS if hook_id not in _existing_ids(data)]
    if not missing:
        return None, "unchanged"
    if _REPOS_FLOW_EMPTY.search(text):
        new = _REPOS_FLOW_EMPTY.sub(
            lambda _: "repos:\n" + hook_block(missing, "", hook_repo, hook_rev).rstrip("\n"), text, count=1
        )
    else:
        match = _REPOS_LINE.search(text)
        if match is None:
            raise Refused(
                "PRE_COMMIT_CONFIG_UNMERGEABLE",
                "could not find a block-style `repos:` line; add the hooks by hand",
            )
        rest = text[match.end() :]
        item = re.search(r"^([ \t]*)- ", rest, re.M)
        indent = item.group(1) if item else ""
        insert = hook_block(missing, indent, hook_repo, hook_rev)
        head = text[: match.end()] + "\n"
        tail = rest.removeprefix("\n")
        new = head + insert + tail
    merged = _parse(new)
    ok = (
        isinstance(merged, dict)
        and isinstance(merged.get("repos"), list)
        and {k: v for k, v in merged.items() if k != "repos"}
        == {k: v for k, v in data.items() if k != "repos"}
        and merged["repos"][1:] == data["repos"]
        and _existing_ids(merged) >= set(HOOK_IDS)
    )
    if not ok:
        raise Refused(
            "PRE_COMMIT_CONFIG_UNMERGEABLE",
            "merging would change the existing configuration; add the hooks by hand",
        )
    return new, "merged"


def merge_gitignore(text: str | None) -> tuple[str | None, str]:
    """Append the local-state lines that are missing (once, under a marker comment)."""
    current = text or ""
    present = {line.strip() for line in current.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in present]
    if not missing:
        return None, "unchanged"
    prefix = current if not current or current.endswith("\n") else current + "\n"
    block = ([GITIGNORE_MARK] if GITIGNORE_MARK not in present else []) + missing
    return prefix + "\n".join(block) + "\n", "updated" if text else "written"


def _read(path: Path) -> str | None:
    from toolkit.infra.boundedio import NOT_UTF8, FileRefused, read_text_bounded

    try:
        return read_text_bounded(path, limit=_MAX_CONFIG, what=path.name, missing_ok=True)
    except FileRefused as exc:
        code = "FILE_NOT_UTF8" if exc.code == NOT_UTF8 else exc.code
        raise InvalidInput(code, exc.message) from None


def _pre_commit_executable() -> str | None:
    sibling = Path(sys.executable).parent / "pre-commit"
    if sibling.is_file() and os.access(sibling, os.X_OK):
        return str(sibling)
    return shutil.which("pre-commit")


def initialize(
    workdir: Path, *, hook_repo: str | None = None, hook_rev: str = "v0.1.0", install: bool = True
) -> InitOutcome:
    """Do every step; all three files are computed before any is written."""
    from toolkit.infra.resources import template_text

    out = InitOutcome()
    config_path = workdir / ".workgroup" / "config.yml"
    gitignore_path = workdir / ".gitignore"
    pre_commit_path = workdir / ".pre-commit-config.yaml"
    new_gitignore, out.gitignore = merge_gitignore(_read(gitignore_path))
    new_pre_commit, out.pre_commit_config = merge_pre_commit_config(
        _read(pre_commit_path), hook_repo, hook_rev
    )
    config_text = None if config_path.exists() else template_text("config.yml")
    out.config = "kept" if config_text is None else "written"
    if config_text is not None:
        atomic_write(config_path, config_text)
    if new_gitignore is not None:
        atomic_write(gitignore_path, new_gitignore)
    if new_pre_commit is not None:
        atomic_write(pre_commit_path, new_pre_commit)
    out.messages += [
        f".workgroup/config.yml: {out.config}",
        f".gitignore: {out.gitignore}",
        f".pre-commit-config.yaml: {out.pre_commit_config}",
    ]
    out.hook = _install_hook(workdir, out) if install else "skipped"
    return out


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
    out.messages.append("git hook: installed (pre-commit install)")
    return "installed"
