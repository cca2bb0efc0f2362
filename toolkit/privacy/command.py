"""``workgroup privacy scan``: the lean path (standard library only, no typer or pydantic).

``toolkit.entry`` dispatches ``privacy scan`` here before the CLI loads; the typer command
(``--help``, in-process tests) calls the same ``scan_command``. Findings are printed in the
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

USAGE = (
    "usage: workgroup privacy scan [--format text|json|sarif] [--json] [--context CONTEXT] [--all-files] "
    "[--jobs N] [PATH ...]\n"
    "       workgroup privacy scan --history [--all] [--progress] [--format text|json|sarif] [REVS ...]"
)
FORMATS = ("text", "json", "sarif")
CONTEXTS = ("auto", "source", "generic", "capsule", "telemetry", "event_log", "handoff")
PROGRESS_AFTER_S = 2.0


class UsageError(InvalidInput):
    """A malformed command line (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__("USAGE", message)


def parse(argv: list[str]) -> dict[str, object]:
    """Options of ``privacy scan`` (hand-parsed: argparse is a noticeable share of start-up)."""
    opts: dict[str, object] = {
        "paths": [],
        "json": False,
        "format": "text",
        "context": "auto",
        "all_files": False,
        "jobs": 0,
        "history": False,
        "all": False,
        "progress": False,
    }
    paths: list[str] = []
    items = iter(argv)
    for arg in items:
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg == "--":
            paths.extend(items)
            break
        if name in ("--format", "--context", "--jobs"):
            value = inline if eq else next(items, None)
            if value is None:
                raise UsageError(f"{name} needs a value")
            if name == "--format":
                if value not in FORMATS:
                    raise UsageError("--format must be text, json or sarif")
                opts["format"] = value
            elif name == "--context":
                if value not in CONTEXTS:
                    raise UsageError("--context must be one of " + ", ".join(CONTEXTS))
                opts["context"] = value
            else:
                if not value.isdigit():
                    raise UsageError("--jobs must be a whole number")
                opts["jobs"] = int(value)
        elif arg == "--json":
            opts["json"] = True
        elif arg in ("--history", "--all", "--progress"):
            opts[arg[2:]] = True
        elif arg == "--all-files":
            opts["all_files"] = True
        elif arg.startswith("-") and arg != "-":
            from toolkit.core.display import option_name

            raise UsageError(f"unknown option {option_name(arg)}")
        else:
            paths.append(arg)
    if opts["json"] and opts["format"] == "text":  # --json is --format json, in either order
        opts["format"] = "json"
    opts["json"] = opts["format"] == "json"
    if opts["all"] and not opts["history"]:
        raise UsageError("--all goes with --history (every branch and tag)")
    if opts["history"] and opts["all_files"]:
        raise UsageError("--all-files does not go with --history")
    opts["paths"] = paths if opts["history"] else paths or ["."]
    return opts


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
    from toolkit.core.errors import InvalidInput, ToolkitError
    from toolkit.core.findings import emit, write_error_json
    from toolkit.infra.ci import github_actions
    from toolkit.privacy.gate import SUPPRESS_HINT, apply_allowlist
    from toolkit.privacy.selection import scan_targets, select
    from toolkit.privacy.types import Context

    out = stdout or sys.stdout
    err = stderr or sys.stderr
    here = (cwd or Path.cwd()).resolve()
    fmt = fmt or ("json" if as_json else "text")
    as_json = fmt == "json"
    try:
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
    except ToolkitError as exc:
        if as_json:
            write_error_json(out, exc.code, exc.message)
        err.write(exc.diagnostics() + "\n")
        return int(exc.exit_code)
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
    from toolkit.core.errors import EnvironmentFailure, ToolkitError
    from toolkit.core.findings import Finding as Row
    from toolkit.core.findings import emit, write_error_json
    from toolkit.infra.ci import github_actions
    from toolkit.privacy.history import SHORT, scan_history
    from toolkit.privacy.types import Context

    out = stdout or sys.stdout
    err = stderr or sys.stderr
    here = (cwd or Path.cwd()).resolve()
    try:
        from toolkit.privacy.selection import git_toplevel

        root = git_toplevel(here)
        if root is None:
            raise EnvironmentFailure("NOT_A_REPOSITORY", "--history needs a git repository")
        use_team_artifacts(root)
        tty = bool(getattr(err, "isatty", lambda: False)())
        report = scan_history(
            root,
            [*revs, *(["--all"] if every_ref else [])],
            None if context == "auto" else Context(context),
            progress=err,
            show_progress=progress or tty,
        )
    except ToolkitError as exc:
        if fmt == "json":  # with sarif a refusal leaves stdout empty (no log beats a broken one)
            write_error_json(out, exc.code, exc.message)
        err.write(exc.diagnostics() + "\n")
        return int(exc.exit_code)
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


def main(argv: list[str]) -> int:
    """``workgroup privacy scan ARGS`` without loading the CLI, under the stdout guard."""
    from toolkit.infra.output import guarded

    return guarded(lambda: _main(argv))


def _main(argv: list[str]) -> int:
    """``workgroup privacy scan ARGS`` without loading the CLI."""
    try:
        opts = parse(argv)
    except UsageError as exc:
        sys.stderr.write(f"{USAGE}\n{exc.diagnostics()}\n")
        return 2
    try:
        if opts["history"]:
            return history_command(
                opts["paths"],  # type: ignore[arg-type]
                fmt=str(opts["format"]),
                context=str(opts["context"]),
                every_ref=bool(opts["all"]),
                progress=bool(opts["progress"]),
            )
        return scan_command(
            opts["paths"],  # type: ignore[arg-type]
            fmt=str(opts["format"]),
            as_json=bool(opts["json"]),
            context=str(opts["context"]),
            all_files=bool(opts["all_files"]),
            jobs=int(opts["jobs"]),  # type: ignore[call-overload]
        )
    except KeyboardInterrupt:
        return 130
