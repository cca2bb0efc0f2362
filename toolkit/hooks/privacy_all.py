"""pre-commit hook ``workgroup-privacy-all``: the privacy engine over every staged text file."""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.hooks.privacy import run


def main(argv: Sequence[str] | None = None) -> int:
    return run(argv, "Privacy gate for any text file.")


if __name__ == "__main__":
    raise SystemExit(main())
