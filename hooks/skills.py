"""pre-commit hook entry point: skills (not yet implemented)."""

from __future__ import annotations

from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
