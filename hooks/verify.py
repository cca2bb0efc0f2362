"""pre-commit hook ``workgroup-verify``: runs ``workgroup verify`` on the checked-out (staged) records.

It takes no file names (``pass_filenames: false``): a record is judged against the whole
history, not on its own. Exit codes are verify's: 1 findings, 2 bad revision, 3 shallow clone
or no repository.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="workgroup-verify-hook")
    parser.add_argument("--rev", default="HEAD", help="commit whose history must contain every checkpoint")
    parser.add_argument("filenames", nargs="*", help="ignored: verify always checks every record")
    args = parser.parse_args(argv)

    from toolkit.errors import ToolkitError, exit_code_for
    from toolkit.git import discover
    from toolkit.verify import render_text, verify

    try:
        report = verify(discover(), args.rev)
    except ToolkitError as exc:
        sys.stderr.write(exc.diagnostics() + "\n")
        return exit_code_for(exc)
    for line in render_text(report):
        sys.stderr.write(line + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
