"""pre-commit hook ``workgroup-docs-claims`` (VERIFY CEO-14): refuses documentation that claims
cached input removes context tokens; cache reads are billing / context reuse."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The hook under the stdout guard: a stdout that refuses the findings is exit 3, no traceback."""
    from toolkit.infra.output import guarded

    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    from .privacy import parse_filenames

    names = parse_filenames(
        argv,
        "workgroup-docs-claims-hook",
        "Refuses blanket claims that caching removes context tokens (VERIFY CEO-14).",
    )
    if isinstance(names, int):
        return names
    from pathlib import Path

    from toolkit.core.findings import Finding, emit
    from toolkit.infra.ci import github_actions
    from toolkit.privacy.claims import find_claims
    from toolkit.privacy.files import read_text

    findings: list[Finding] = []
    notices: list[str] = []
    for name in names:
        text, reason = read_text(Path(name))
        if text is None:
            notices.append(f"{name}: skipped ({reason})")
            continue
        findings += [
            Finding(
                name,
                claim.line,
                claim.start + 1,
                claim.rule,
                "blanket claim that caching removes context tokens",
                fix="describe cache reads as lower billed cost / context reuse instead",
            )
            for claim in find_claims(text)
        ]
    if findings or notices:
        emit(
            "docs-claims",
            findings,
            as_json=False,
            stdout=sys.stdout,
            stderr=sys.stderr,
            checked=len(names),
            notices=notices,
            annotate=github_actions(),
        )
    return 1 if findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
