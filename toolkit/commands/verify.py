"""`workgroup verify [--rev REV] [--json]`: every recorded checkpoint, hash and reference still holds."""

from __future__ import annotations

from typing import Annotated

import typer

from toolkit.commands._common import repository


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify_cmd(
        rev: Annotated[
            str, typer.Option("--rev", help="Commit whose history must contain every checkpoint.")
        ] = "HEAD",
        as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
    ) -> int:
        """Check capsules, lineages and promotion records (exit 1 on findings, 3 on a shallow clone)."""
        import sys

        from toolkit.records.verify import verify

        report = verify(repository(), rev)
        report.emit(as_json=as_json, stdout=sys.stdout, stderr=sys.stderr)
        return 0 if report.ok else 1
