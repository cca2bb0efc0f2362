"""pre-commit hook ``workgroup-skills``: lint the staged skill and prompt files."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The hook under the stdout guard: a stdout that refuses the findings is exit 3, no traceback."""
    from toolkit.infra.output import guarded

    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="workgroup-skills-hook")
    parser.add_argument("filenames", nargs="*")
    parser.add_argument("--max-body-lines", type=int, default=500)
    parser.add_argument("--max-body-bytes", type=int, default=40_000)
    parser.add_argument("--min-duplicate-chars", type=int, default=160)
    parser.add_argument("--framework", action="append", default=[])
    args = parser.parse_args(argv)
    if not args.filenames:
        return 0
    from toolkit.workflow.skills import LintConfig
    from toolkit.workflow.skills_files import emit_findings, lint_paths

    config = LintConfig(
        max_body_lines=args.max_body_lines,
        max_body_bytes=args.max_body_bytes,
        min_block_chars=args.min_duplicate_chars,
        framework_documents=tuple(args.framework),
    )
    findings = lint_paths(list(args.filenames), config)
    emit_findings(findings, as_json=False, stdout=sys.stdout, stderr=sys.stderr)
    return 1 if any(f.severity == "error" for f in findings) else 0


if __name__ == "__main__":
    raise SystemExit(main())
