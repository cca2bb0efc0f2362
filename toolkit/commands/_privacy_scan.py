"""The work of ``workgroup privacy scan`` (standard library only, no typer or pydantic).

The typer command (``toolkit/commands/privacy.py``) parses the command line and calls
``scan_command`` or ``history_command``. Findings are printed in the
shared convention of ``toolkit/core/findings.py``: ``path:line:col: RULE category: masked`` on
stdout, the summary on stderr, or one JSON object with ``--json``/``--format json``.
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

from toolkit.core.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

    from toolkit.core.findings import Finding
    from toolkit.privacy.files import ScanReport
    from toolkit.privacy.history import HistoryReport

PROGRESS_AFTER_S = 2.0


class UsageError(InvalidInput):
    """A malformed command line (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__("USAGE", message)


def repository_root(cwd: Path) -> Path:
    """The work tree containing ``cwd`` (symlinks may not leave it, the allowlist lives there)."""
    from toolkit.privacy.allowlist import git_common_dir

    if git_common_dir(cwd) is None:
        return cwd
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd


class _Progress:
    """``privacy: 40/120 MB`` on stderr, only on a terminal and only once a scan runs over ~2 s."""

    def __init__(self, stream: IO[str], now: float) -> None:
        self.stream = stream
        self.start = now
        self.shown = False
        self.enabled = bool(getattr(stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or time.monotonic() - self.start < PROGRESS_AFTER_S:
            return
        self.shown = True
        self.stream.write(f"\rprivacy: scanned {done / 1e6:.1f}/{total / 1e6:.1f} MB")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def to_findings(report: ScanReport) -> list[Finding]:
    """The report as ``toolkit.core.findings.Finding`` rows (masked values only)."""
    from toolkit.core.findings import Finding

    rows = []
    for item in report.findings:
        f = item.finding
        rows.append(
            Finding(
                item.path,
                f.line,
                f.start + 1,
                f.rule,
                f"{f.category.value}: {f.masked}",
                extra={"category": f.category.value, "rule": f.rule, "start": f.start, "end": f.end},
            )
        )
    return rows


def use_team_artifacts(root: Path) -> None:
    """Files matching ``privacy.artifact_paths`` of the config get every rule (files.context_for)."""
    from toolkit.privacy.artifacts import configured_globs
    from toolkit.privacy.files import set_artifact_paths

    set_artifact_paths(configured_globs(root))


def scan_command(
    paths: list[str],
    *,
    as_json: bool,
    context: str = "auto",
    all_files: bool = False,
    jobs: int = 0,
    cwd: Path | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    fmt: str | None = None,
) -> int:
    """Run the scan and print it; the exit code (0 clean, 1 findings, 2 usage, 3 environment)."""
    from toolkit.core.errors import ToolkitError
    from toolkit.core.findings import write_error_json

    out = stdout or sys.stdout
    err = stderr or sys.stderr
    here = (cwd or Path.cwd()).resolve()
    fmt = fmt or ("json" if as_json else "text")
    try:
        report = _scan_report(paths, here, err, context=context, all_files=all_files, jobs=jobs)
    except ToolkitError as exc:
        if fmt == "json":
            write_error_json(out, exc.code, exc.message)
        err.write(exc.diagnostics() + "\n")
        return int(exc.exit_code)
    return _print_report(report, fmt, out, err)


def _scan_report(
    paths: list[str], here: Path, err: IO[str], *, context: str, all_files: bool, jobs: int
) -> ScanReport:
    """The scan of ``paths`` (resolved from ``here``) with the work tree's allowlist applied and
    its notices; a missing path is refused before anything is read."""
    from toolkit.core.errors import InvalidInput
    from toolkit.privacy.gate import apply_allowlist
    from toolkit.privacy.selection import scan_targets, select
    from toolkit.privacy.types import Context

    missing = [p for p in paths if not (here / p).exists() and not (here / p).is_symlink()]
    if missing:
        raise InvalidInput("PATH_NOT_FOUND", "no such file or directory: " + ", ".join(missing[:5]))
    root = repository_root(here)
    use_team_artifacts(root)
    notices: list[str] = []
    targets = select(paths, here, root, all_files=all_files, notices=notices)
    progress = _Progress(err, time.monotonic())
    try:
        report = scan_targets(
            targets, here, None if context == "auto" else Context(context), jobs=jobs, progress=progress
        )
    finally:
        progress.close()
    report.notices[:0] = notices
    # on demand the work tree's allowlist applies (an entry just added counts), and the scan
    # says when that is not what the hooks and CI read (the committed file)
    report = apply_allowlist(report, root, here, committed=False)
    from toolkit.privacy.allowlist import commit_hint

    hint = commit_hint(root) if (root / ".workgroup").is_dir() else None
    if hint:
        report.notices.append(hint)
    return report


def _print_report(report: ScanReport, fmt: str, out: IO[str], err: IO[str]) -> int:
    """Print the findings as text, JSON or SARIF (the summary on ``err``); 1 when any, else 0."""
    from toolkit.core.findings import emit
    from toolkit.infra.ci import github_actions
    from toolkit.privacy.gate import SUPPRESS_HINT

    rows = to_findings(report)
    if fmt == "sarif":
        # SARIF locations are relative to the repository root (%SRCROOT%), whatever the cwd
        write_sarif(
            out,
            rows,
            [(i.finding.rule, i.repo_path, i.fingerprint_value) for i in report.findings],
            paths=[i.repo_path for i in report.findings],
        )
        emit("privacy", rows, as_json=True, stdout=io.StringIO(), stderr=err, notices=report.notices)
        return 1 if rows else 0
    as_json = fmt == "json"
    emit(
        "privacy",
        rows,
        as_json=as_json,
        stdout=out,
        stderr=err,
        checked=report.files_scanned,
        notices=report.notices,
        annotate=github_actions(),
    )
    if rows and not as_json:
        err.write(SUPPRESS_HINT + "\n")
    return 1 if rows else 0


def sarif_rules(rows: list[Finding]) -> dict[str, tuple[str, str]]:
    """Each rule id found, with a short description (its category) and the way to review it."""
    from toolkit.privacy.gate import SUPPRESS_HINT

    rules: dict[str, tuple[str, str]] = {}
    for row in rows:
        category = str(row.extra.get("category", "secret"))
        rules.setdefault(
            row.code,
            (
                f"Private content ({category}): {row.code.replace('-', ' ')}",
                f"A {category} that must not be committed was found (the value is masked). Remove "
                f"it and rotate it if it was real; the history keeps it until rewritten. {SUPPRESS_HINT}",
            ),
        )
    return rules


def write_sarif(
    out: IO[str],
    rows: list[Finding],
    values: list[tuple[str, str, str]],
    *,
    commits: list[str | None] | None = None,
    paths: list[str] | None = None,
) -> None:
    """The findings as a SARIF log; ``values`` (rule, path, value) give each one's fingerprint."""
    from toolkit.core import sarif
    from toolkit.privacy.allowlist import fingerprint

    prints: list[str | None] = [
        fingerprint(rule, path, value) if value else None for rule, path, value in values
    ]
    doc = sarif.document(
        "privacy", rows, rules=sarif_rules(rows), fingerprints=prints, commits=commits, paths=paths
    )
    sarif.write(out, doc)


def history_command(
    revs: list[str],
    *,
    fmt: str = "text",
    context: str = "auto",
    every_ref: bool = False,
    progress: bool = False,
    cwd: Path | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """``privacy scan --history [REVS]``: the lines each commit in REVS added (default: HEAD's
    history; ``every_ref``: every branch and tag), as ``commit:path:line:col: RULE category:
    masked`` lines, JSON or SARIF. Exit 0 clean, 1 findings, 2 bad range, 3 no repository."""
    from toolkit.core.errors import ToolkitError
    from toolkit.core.findings import emit, write_error_json
    from toolkit.infra.ci import github_actions

    out = stdout or sys.stdout
    err = stderr or sys.stderr
    here = (cwd or Path.cwd()).resolve()
    try:
        report = _history_report(revs, here, err, context=context, every_ref=every_ref, progress=progress)
    except ToolkitError as exc:
        if fmt == "json":  # with sarif a refusal leaves stdout empty (no log beats a broken one)
            write_error_json(out, exc.code, exc.message)
        err.write(exc.diagnostics() + "\n")
        return int(exc.exit_code)
    rows = _history_rows(report)
    if fmt == "sarif":
        write_sarif(
            out,
            rows,
            [(h.item.finding.rule, h.item.repo_path, h.item.fingerprint_value) for h in report.findings],
            commits=[h.commit for h in report.findings],
            paths=[h.item.path for h in report.findings],
        )
    summary = {"commits": report.commits}
    emit(
        "privacy",
        rows,
        as_json=fmt != "text",
        stdout=out if fmt != "sarif" else io.StringIO(),
        stderr=err,
        checked=report.commits,
        unit="commit",
        summary_extra=summary,
        notices=report.notices,
        annotate=github_actions(),
    )
    return 1 if rows else 0


def _history_report(
    revs: list[str], here: Path, err: IO[str], *, context: str, every_ref: bool, progress: bool
) -> HistoryReport:
    """The history scan of the repository around ``here`` (progress on ``err`` when asked or on
    a terminal); outside a git repository an environment failure."""
    from toolkit.core.errors import EnvironmentFailure
    from toolkit.privacy.history import scan_history
    from toolkit.privacy.selection import git_toplevel
    from toolkit.privacy.types import Context

    root = git_toplevel(here)
    if root is None:
        raise EnvironmentFailure("NOT_A_REPOSITORY", "--history needs a git repository")
    use_team_artifacts(root)
    tty = bool(getattr(err, "isatty", lambda: False)())
    return scan_history(
        root,
        [*revs, *(["--all"] if every_ref else [])],
        None if context == "auto" else Context(context),
        progress=err,
        show_progress=progress or tty,
    )


def _history_rows(report: HistoryReport) -> list[Finding]:
    """The history findings as ``commit:path`` rows (masked values only)."""
    from toolkit.core.findings import Finding as Row
    from toolkit.privacy.history import SHORT

    rows = []
    for hit in report.findings:
        f = hit.item.finding
        rows.append(
            Row(
                f"{hit.commit[:SHORT]}:{hit.item.path}",
                f.line,
                f.start + 1,
                f.rule,
                f"{f.category.value}: {f.masked}",
                extra={
                    "commit": hit.commit,
                    "file": hit.item.path,
                    "category": f.category.value,
                    "rule": f.rule,
                    "start": f.start,
                    "end": f.end,
                },
            )
        )
    return rows
