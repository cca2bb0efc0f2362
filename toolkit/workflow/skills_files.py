"""Shell side of the skills lint: find the files (the ones git would commit, or given paths) and read
them safely."""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.core.errors import ToolkitError
from toolkit.core.findings import Finding, emit
from toolkit.infra.boundedio import FileRefused, read_regular
from toolkit.infra.boundedio import FileRefused as FileRefusedError
from toolkit.infra.ci import github_actions
from toolkit.infra.git import discover
from toolkit.workflow.skills import LintConfig, LintFinding, is_lint_candidate, lint

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hooks' cold start
    from typing import IO

    from toolkit.core.findings import Finding

MAX_FILE_BYTES = 1_048_576


UNLINTABLE = "FILE_UNLINTABLE"


def _read(path: Path) -> str | None:
    """Text of a corpus file, or None when it cannot be linted (see ``_refusal`` for why)."""
    try:
        return _load(path)
    except (FileRefusedError, UnicodeDecodeError):
        return None


def _load(path: Path) -> str:
    """A regular, non-symlink UTF-8 text file of at most 1 MiB; raises otherwise."""

    raw = read_regular(path, limit=MAX_FILE_BYTES, what="the file", follow_symlinks=False) or b""
    if b"\x00" in raw:
        raise UnicodeDecodeError("utf-8", raw, raw.index(b"\x00"), raw.index(b"\x00") + 1, "binary")
    return raw.decode("utf-8")


def _refusal(path: Path) -> str | None:
    """Why the file argument ``path`` cannot be linted (None when it can)."""

    if path.is_symlink():
        return "is a symlink to nothing" if not path.exists() else "is a symlink; symlinks are not followed"
    try:
        _load(path)
    except FileRefused as exc:
        return exc.message.removeprefix("the file ")
    except UnicodeDecodeError:
        return "is binary or not UTF-8 text"
    return None


def _root() -> tuple[Path, list[str] | None]:
    """The work tree root and the files git would commit (tracked plus untracked, not ignored), or
    the cwd and None outside a repository."""

    try:
        repo = discover()
        return repo.workdir, repo.commit_candidates()
    except ToolkitError:
        return Path.cwd().resolve(), None


def _walk(directory: Path, root: Path) -> list[str]:
    out: list[str] = []
    for base, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".git") and d not in ("node_modules", ".venv"))
        for name in sorted(names):
            if name.endswith(".md"):
                out.append(Path(base, name).resolve().relative_to(root).as_posix())
    return out


def lint_paths(paths: list[str], config: LintConfig) -> list[LintFinding]:
    """Lint ``paths`` (files or folders); with none, every skill/prompt file git would commit."""
    root, tracked = _root()
    corpus_paths = {p for p in (tracked or []) if p.endswith(".md")}
    targets: set[str] = set()
    if not paths:
        if tracked is None:
            corpus_paths = set(_walk(root, root))
        targets = {p for p in corpus_paths if is_lint_candidate(p)}
    refused = _take_arguments(paths, root, corpus_paths, targets)
    corpus_paths.update(config.framework_documents)
    files = _read_all(root, corpus_paths)
    known = set(tracked or []) | set(files)
    return refused + lint(files, targets=targets & set(files), config=config, known_paths=known)


def _take_arguments(
    paths: list[str], root: Path, corpus_paths: set[str], targets: set[str]
) -> list[LintFinding]:
    """Add the repository files each argument names to the corpus and the targets; a finding for
    each argument that cannot be linted (a silent exit 0 would pass a hook)."""
    refused: list[LintFinding] = []
    for given in paths:
        problem, found = _argument(given, root)
        if problem is not None:
            refused.append(LintFinding(given, 0, UNLINTABLE, "error", problem))
        corpus_paths.update(found)
        targets.update(found)
    return refused


def _read_all(root: Path, corpus_paths: set[str]) -> dict[str, str]:
    """The text of each corpus file that can be read, by repository path, in path order."""
    files: dict[str, str] = {}
    for rel in sorted(corpus_paths):
        text = _read(root / rel)
        if text is not None:
            files[rel] = text
    return files


def _argument(given: str, root: Path) -> tuple[str | None, list[str]]:
    """(why ``given`` cannot be linted or None, the repository paths it contributes)."""
    path = Path(given)
    full = Path(os.path.abspath(given))  # the symlink itself, not its target
    try:
        rel = full.relative_to(root).as_posix()
    except ValueError:
        try:
            rel = full.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return "is outside the work tree; only files of the repository are linted", []
    if path.is_dir() and not path.is_symlink():
        found = _walk(full.resolve(), root)
        return (None if found else "is a folder with no Markdown skill or prompt file"), found
    problem = _refusal(path)
    if problem is not None:
        return f"cannot be linted: it {problem}", []
    if not rel.endswith(".md"):
        return "is not a Markdown (.md) skill or prompt file", []
    return None, [rel]


def shared_findings(findings: list[LintFinding]) -> list[Finding]:
    """The findings in the shared convention (toolkit/core/findings.py); lint findings name a line only."""

    return [Finding(f.path, f.line, 0, f.rule, f.message, severity=f.severity) for f in findings]


def emit_findings(findings: list[LintFinding], *, as_json: bool, stdout: IO[str], stderr: IO[str]) -> None:

    emit(
        "skills",
        shared_findings(findings),
        as_json=as_json,
        stdout=stdout,
        stderr=stderr,
        annotate=github_actions(),
    )
