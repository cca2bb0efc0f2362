"""pre-commit hook ``workgroup-verify``: runs ``workgroup verify`` on the checked-out (staged) records.

It takes no file names (``pass_filenames: false``): a record is judged against the whole
history, not on its own. Exit codes are verify's: 1 findings, 2 bad revision, 3 shallow clone
or no repository.

It keeps a cache of the records it proved (``<git common dir>/workgroup/verify-cache.json``), so a
commit that changes no record re-walks no history; ``--no-cache`` turns it off. ``workgroup
verify`` (what CI runs) never reads that cache.
"""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The hook under the stdout guard: a stdout that refuses the findings is exit 3, no traceback."""
    from toolkit.infra.output import guarded

    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse
    import sys

    from toolkit.core.errors import ToolkitError, exit_code_for
    from toolkit.records.verify import HOOK_PROG, verify_and_print

    args = list(sys.argv[1:] if argv is None else argv)
    # pre-commit may still pass file names when a user overrides pass_filenames: ignore them
    options = [arg for i, arg in enumerate(args) if arg.startswith("-") or (i and args[i - 1] == "--rev")]
    parser = argparse.ArgumentParser(prog=HOOK_PROG)
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--json", action="store_true", dest="as_json")
    parser.add_argument("--format", choices=("text", "json", "sarif"), default=None)
    parser.add_argument("--no-cache", action="store_true", dest="no_cache")
    try:
        parsed = parser.parse_args(options)
    except SystemExit as exc:  # argparse's usage errors (2) and --help (0)
        return exc.code if isinstance(exc.code, int) else 2
    fmt = parsed.format or ("json" if parsed.as_json else "text")
    try:
        return verify_and_print(parsed.rev, fmt, cache=not parsed.no_cache)
    except ToolkitError as exc:
        sys.stderr.write(exc.diagnostics() + "\n")
        if fmt == "json":  # with sarif a refusal leaves stdout empty: no log beats a broken one
            from toolkit.core.findings import write_error_json

            write_error_json(sys.stdout, exc.code, exc.message, getattr(exc, "path", None))
        return exit_code_for(exc)


if __name__ == "__main__":
    raise SystemExit(main())
