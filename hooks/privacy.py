"""pre-commit hook ``workgroup-privacy``: blocks secrets, provider session ids, raw transcripts,
home paths and emails in workflow artifacts (the manifest's ``files`` selects them)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def run(argv: Sequence[str] | None, description: str) -> int:
    """Shared body of the privacy hooks: scan the named files, print findings, exit 1 on any."""
    parser = argparse.ArgumentParser(prog="workgroup-privacy-hook", description=description)
    parser.add_argument("filenames", nargs="*")
    args = parser.parse_args(argv)
    from pathlib import Path

    from toolkit.errors import ToolkitError
    from toolkit.privacy.gate import SUPPRESS_HINT, render_text, run_gate

    root = Path.cwd()
    try:
        report = run_gate([Path(name) for name in args.filenames], root)
    except ToolkitError as exc:
        sys.stderr.write(exc.diagnostics() + "\n")
        return int(exc.exit_code)
    for notice in report.notices:
        sys.stderr.write(f"workgroup-privacy: {notice}\n")
    if not report.findings:
        return 0
    sys.stdout.write(render_text(report) + "\n")
    sys.stdout.write(f"{len(report.findings)} privacy finding(s); values are masked. {SUPPRESS_HINT}\n")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    return run(argv, "Privacy gate for workflow artifacts.")


if __name__ == "__main__":
    raise SystemExit(main())
