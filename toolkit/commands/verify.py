"""`workgroup verify [--rev REV] [--json]`: every recorded checkpoint, hash and reference still holds."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class VerifyFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify_cmd(
        rev: Annotated[
            str, typer.Option("--rev", help="Commit whose history must contain every checkpoint.")
        ] = "HEAD",
        as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
        output: Annotated[
            VerifyFormat | None,
            typer.Option(
                "--format",
                help="text, json or sarif (SARIF 2.1.0 for code scanning); given, it wins over --json. In a "
                "GitHub Actions job text output adds workflow annotations.",
            ),
        ] = None,
        no_cache: Annotated[
            bool,
            typer.Option(
                "--no-cache",
                help="Accepted for symmetry with the hook: `workgroup verify` never reads the hook's cache.",
            ),
        ] = False,
    ) -> int:
        """Check capsules, lineages and promotion records (exit 1 on findings, 3 on a shallow clone).

        Always recomputes every record and walks the history (CI must not trust a cache it did not
        build); only the pre-commit hook keeps a cache (``--no-cache`` there turns it off)."""
        from toolkit.records.verify import verify_and_print

        fmt = output.value if output is not None else ("json" if as_json else "text")
        return verify_and_print(rev, fmt)
