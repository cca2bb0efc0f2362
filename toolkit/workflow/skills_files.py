"""Shell side of the skills lint: find the files (tracked set or given paths) and read them safely."""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.workflow.skills import LintConfig, LintFinding, is_lint_candidate, lint

MAX_FILE_BYTES = 1_048_576


def _read(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _root() -> tuple[Path, list[str] | None]:
    """The work tree root and its tracked files, or the cwd and None outside a repository."""
    from toolkit.core.errors import ToolkitError
    from toolkit.infra.git import discover

    try:
        repo = discover()
        return repo.workdir, repo.tracked_files()
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
    """Lint ``paths`` (files or folders); with none, every tracked skill/prompt file of the repository."""
    root, tracked = _root()
    corpus_paths = {p for p in (tracked or []) if p.endswith(".md")}
    targets: set[str] = set()
    if not paths:
        if tracked is None:
            corpus_paths = set(_walk(root, root))
        targets = {p for p in corpus_paths if is_lint_candidate(p)}
    for given in paths:
        full = Path(given).resolve()
        try:
            rel = full.relative_to(root).as_posix()
        except ValueError:
            continue  # outside the work tree: never followed
        if full.is_dir():
            found = _walk(full, root)
            corpus_paths.update(found)
            targets.update(found)
        elif rel.endswith(".md"):
            corpus_paths.add(rel)
            targets.add(rel)
    for extra in config.framework_documents:
        corpus_paths.add(extra)
    files: dict[str, str] = {}
    for rel in sorted(corpus_paths):
        text = _read(root / rel)
        if text is not None:
            files[rel] = text
    known = set(tracked or []) | set(files)
    return lint(files, targets=targets & set(files), config=config, known_paths=known)


def render_text(findings: list[LintFinding]) -> str:
    return "".join(f"{f.path}:{f.line}: {f.rule} ({f.severity}) {f.message}\n" for f in findings)
