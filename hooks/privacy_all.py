"""pre-commit hook ``workgroup-privacy-all``: the privacy engine over every staged text file."""

from __future__ import annotations

from collections.abc import Sequence

from .privacy import run


def main(argv: Sequence[str] | None = None) -> int:
    """The hook under the stdout guard: a stdout that refuses the findings is exit 3, no traceback."""
    from toolkit.infra.output import guarded

    return guarded(lambda: _main(argv))


def _main(argv: Sequence[str] | None = None) -> int:
    return run(argv, "Privacy gate for any text file.", prog="workgroup-privacy-all-hook")


if __name__ == "__main__":
    raise SystemExit(main())
