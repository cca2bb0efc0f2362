"""The ``workgroup`` console script.

``workgroup runtime ...`` is dispatched to the lean standard-library protocol before anything
heavy (typer, pydantic, pygit2) is imported: it runs on every delegation. ``workgroup verify``
(every CI job and pre-commit run) skips the typer app the same way; ``--help`` still uses it.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "runtime":
        from toolkit.runtime.protocol import main as runtime_main

        return runtime_main(args[1:])
    if args and args[0] == "verify" and not {"-h", "--help"} & set(args[1:]):
        # CI and pre-commit run verify on every change: skip loading the typer app
        from toolkit.verify import run_cli

        return run_cli(args[1:])
    if args[:2] == ["privacy", "scan"] and not {"-h", "--help"} & set(args[2:]):
        # the gate runs on every commit and in CI: scan without loading the typer app
        from toolkit.privacy.command import main as scan_main

        return scan_main(args[2:])
    from toolkit.cli import run

    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
