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
    import sys

    from toolkit.records.verify import HOOK_PROG, run_cli

    args = list(sys.argv[1:] if argv is None else argv)
    # pre-commit may still pass file names when a user overrides pass_filenames: ignore them
    options = [arg for i, arg in enumerate(args) if arg.startswith("-") or (i and args[i - 1] == "--rev")]
    return run_cli(options, prog=HOOK_PROG)


if __name__ == "__main__":
    raise SystemExit(main())
