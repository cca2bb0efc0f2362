"""One output convention for findings, shared by privacy, verify, skills, docs-claims and fanout.

Text (the default): one ``path:line:col: CODE message`` line per finding on **stdout** (line and
col 1-based, as editors count; ``0`` when the finding is about the whole file or has no
position), then a one-line summary on **stderr**. A finding's suggested fix, when it has one,
follows its line, indented, as ``  fix: ...``.

JSON (``--json``): exactly one object on stdout::

    {"tool": "privacy", "findings": [{"path", "line", "col", "code", "severity", "message",
     "fix"?, "extra"?}], "summary": {"findings": N, "errors": E, "warnings": W, ...}}

An error that stops a command is, with ``--json``, ``{"error": {"code", "message", "path"?}}`` on
stdout as well as the exit code (see :func:`error_object`).

Nothing here imports beyond the standard library; messages must never carry a secret value (the
callers pass masked text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from toolkit.core.display import shown
from toolkit.core.sarif import annotation

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hooks' cold start
    from collections.abc import Mapping
    from typing import IO

    from toolkit.core.finding_shapes import FindingExtra, FindingRow, FindingsDocument, SummaryCounts

SEVERITIES = ("error", "warning", "info")


def _no_extra() -> FindingExtra:
    """A finding's ``extra`` when the tool gives none (a new empty dict each time)."""
    return {}


@dataclass(frozen=True)
class Finding:
    """One finding. ``line``/``col`` are 1-based; 0 means "no position" (the whole file)."""

    path: str
    line: int
    col: int
    code: str
    message: str
    severity: str = "error"
    fix: str | None = None
    extra: FindingExtra = field(default_factory=_no_extra)

    def text(self) -> str:
        """The text line(s); path, code, message and fix pass ``shown`` (no raw control character)."""

        head = f"{shown(self.path)}:{self.line}:{self.col}: {shown(self.code)} {shown(self.message)}"
        return head if not self.fix else f"{head}\n  fix: {shown(self.fix)}"

    def as_json(self) -> FindingRow:
        row: FindingRow = {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }
        if self.fix:
            row["fix"] = self.fix
        if self.extra:
            row["extra"] = self.extra
        return row


def summary_counts(findings: list[Finding]) -> SummaryCounts:
    """``{"findings": N, "errors": E, "warnings": W}``."""
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = sum(1 for f in findings if f.severity == "warning")
    return {"findings": len(findings), "errors": errors, "warnings": warnings}


def summary_line(tool: str, findings: list[Finding], checked: int | None = None, unit: str = "file") -> str:
    """The human summary for stderr, e.g. ``privacy: 3 findings (2 errors, 1 warning) in 40 files``."""
    counts = summary_counts(findings)
    n = counts["findings"]
    parts = f"{n} finding{'s' if n != 1 else ''}"
    if n:
        e, w = counts["errors"], counts["warnings"]
        parts += f" ({e} error{'s' if e != 1 else ''}, {w} warning{'s' if w != 1 else ''})"
    if checked is not None:
        parts += f" in {checked} {unit}{'s' if checked != 1 else ''}"
    return f"{tool}: {parts}"


def emit(
    tool: str,
    findings: list[Finding],
    *,
    as_json: bool,
    stdout: IO[str],
    stderr: IO[str],
    checked: int | None = None,
    unit: str = "file",
    summary_extra: Mapping[str, object] | None = None,
    notices: list[str] | None = None,
    annotate: bool = False,
) -> None:
    """Write findings in the shared convention (text or JSON) and the summary; with ``annotate``
    (the caller found a GitHub Actions job: ``toolkit.infra.ci.github_actions``), text output
    also writes each finding as a workflow annotation."""

    if as_json:
        _write_json(tool, findings, stdout, checked, summary_extra)
    else:
        for f in findings:
            stdout.write(f.text() + "\n")
        if annotate and findings:
            _annotate(findings, stdout)
    for notice in notices or ():
        stderr.write(f"{tool}: {shown(notice)}\n")
    if not as_json or findings:
        stderr.write(summary_line(tool, findings, checked, unit) + "\n")


def _write_json(
    tool: str,
    findings: list[Finding],
    stdout: IO[str],
    checked: int | None,
    summary_extra: Mapping[str, object] | None,
) -> None:
    """The ``--json`` document: the tool, every finding and the summary counts (with the number
    checked when known, and the caller's extra summary fields)."""
    doc: FindingsDocument = {
        "tool": tool,
        "findings": [f.as_json() for f in findings],
        "summary": {
            **summary_counts(findings),
            **({"checked": checked} if checked is not None else {}),
            **(summary_extra or {}),
        },
    }
    stdout.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")


def _annotate(findings: list[Finding], stdout: IO[str]) -> None:
    """Each finding again as a workflow annotation (toolkit/core/sarif.py)."""

    for f in findings:
        stdout.write(annotation(f, f.extra.get("file")) + "\n")


def error_object(code: str, message: str, path: str | None = None) -> dict[str, dict[str, str]]:
    """The ``--json`` form of a refusal: ``{"error": {"code", "message", "path"?}}``."""
    err: dict[str, str] = {"code": code, "message": message}
    if path is not None:
        err["path"] = path
    return {"error": err}


def write_error_json(stdout: IO[str], code: str, message: str, path: str | None = None) -> None:
    stdout.write(
        json.dumps(error_object(code, message, path), ensure_ascii=False, separators=(",", ":")) + "\n"
    )
