"""The gate shared by ``workgroup privacy scan`` and the pre-commit hooks: scan, drop what the
reviewed allowlist suppresses, render text or JSON. Nothing here prints; callers do.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.core.display import shown
from toolkit.privacy.files import FileFinding, ScanReport, scan_paths
from toolkit.privacy.types import Context

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the hooks' cold start
    from toolkit.core.findings import Finding


def apply_allowlist(
    report: ScanReport, root: Path, cwd: Path | None = None, *, committed: bool = True
) -> ScanReport:
    """Remove findings whose fingerprint is in ``.workgroup/privacy-allowlist.yml``: as the index
    holds it (``committed``, the hooks and ``--history``: what every clone and CI have), or the
    work tree's file (``workgroup privacy scan``, on demand).

    Fingerprints carry no per-clone salt, so the file works in every clone and in CI.
    """
    if not report.findings:
        return report  # the common case pays for neither git, hashlib nor YAML
    if not committed and not os.path.lexists(root / ".workgroup" / "privacy-allowlist.yml"):
        return report
    # anything at that path is read through the bounded reader: a FIFO, a directory or a dangling
    # link there is a coded error (ALLOWLIST_UNREADABLE), never silently "no allowlist"
    from toolkit.privacy.allowlist import fingerprint, load_allowlist

    entries = load_allowlist(root, committed=committed)
    if not entries:
        return report
    wanted = {(e.rule, e.path, e.fingerprint) for e in entries}
    kept: list[FileFinding] = []
    for item in report.findings:
        path = item.repo_path
        fp = fingerprint(item.finding.rule, path, item.fingerprint_value)
        if (item.finding.rule, path, fp) not in wanted:
            kept.append(item)
    report.findings = kept
    return report


def run_gate(paths: list[Path], root: Path, context: Context | None = None) -> ScanReport:
    """Scan ``paths`` (files or directories) under ``root`` and apply the allowlist."""
    return apply_allowlist(scan_paths(paths, root, context), root)


def render_text(report: ScanReport) -> str:
    """``path:line:col: RULE category: masked`` lines (col 1-based), as ``toolkit/core/findings.py``."""
    return "\n".join(
        f"{shown(i.path)}:{i.finding.line}:{i.finding.start + 1}: {i.finding.rule} {i.finding.category.value}: "
        f"{shown(i.finding.masked)}"
        for i in report.findings
    )


def shared_findings(report: ScanReport) -> list[Finding]:
    """The findings in the shared convention (toolkit/core/findings.py): ``path:line:col: RULE category:
    masked``; the JSON row keeps category, rule and the 0-based span in ``extra``."""
    from toolkit.core.findings import Finding

    return [
        Finding(
            i.path,
            i.finding.line,
            i.finding.start + 1,
            i.finding.rule,
            f"{i.finding.category.value}: {i.finding.masked}",
            extra={
                "category": i.finding.category.value,
                "rule": i.finding.rule,
                "start": i.finding.start,
                "end": i.finding.end,
            },
        )
        for i in report.findings
    ]


SUPPRESS_HINT = (
    "A false positive? Add `workgroup: allow <rule>` in a comment on that line (works with "
    "pre-commit alone), or, with the toolkit installed, record it with `workgroup privacy allow "
    "PATH --line N --rule RULE --reason WHY` and commit .workgroup/privacy-allowlist.yml (the hooks "
    "and CI read the committed file). A repository with existing findings: `workgroup privacy baseline`."
)
