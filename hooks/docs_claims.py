"""pre-commit hook ``workgroup-docs-claims`` (VERIFY CEO-14): refuses documentation that claims
cached input removes context tokens; cache reads are billing / context reuse."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="workgroup-docs-claims-hook", description=__doc__)
    parser.add_argument("filenames", nargs="*")
    args = parser.parse_args(argv)
    from pathlib import Path

    from toolkit.privacy.claims import find_claims
    from toolkit.privacy.files import read_text

    status = 0
    for name in args.filenames:
        text, reason = read_text(Path(name))
        if text is None:
            sys.stderr.write(f"workgroup-docs-claims: {name}: skipped ({reason})\n")
            continue
        for claim in find_claims(text):
            status = 1
            sys.stdout.write(
                f"{name}:{claim.line}:{claim.start + 1}: {claim.rule}: blanket claim that caching removes "
                "context tokens; describe cache reads as lower billed cost / context reuse instead\n"
            )
    return status


if __name__ == "__main__":
    raise SystemExit(main())
