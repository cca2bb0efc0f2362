"""``workgroup index``: the Stage 0 deterministic repository inventory."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command(
        "index",
        help="Deterministic inventory of tracked files (path, blob, size, language) with one digest; "
        "cached.\n\n"
        "The inventory of a tree is cached in the local state (<git common dir>/workgroup/index/, never "
        "committed) and reused while that tree is unchanged; --no-cache rebuilds it.\n\n"
        "Exit codes: 0 done, 2 invalid option or revision, 3 no repository.",
    )
    def index(
        staged: bool = typer.Option(False, "--staged", help="Inventory the staging area instead of HEAD."),
        rev: str = typer.Option("HEAD", "--rev", metavar="REV", help="Commit whose tree to inventory."),
        out: Path | None = typer.Option(
            None, "--out", metavar="FILE", help="Also write the inventory bytes to this file."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the whole inventory as JSON on stdout."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Rebuild even when the tree is unchanged."),
    ) -> None:
        import sys

        from toolkit.commands._common import repository, say
        from toolkit.infra.store import atomic_write
        from toolkit.workflow.indexing import inventory

        repo = repository()
        inv = inventory(repo, staged=staged, rev=rev, use_cache=not no_cache)
        data = inv.to_bytes()
        if out is not None:
            atomic_write(out, data)
        if json_out:
            sys.stdout.write(data.decode("utf-8"))
        say(f"inventory {inv.digest} ({'reused: tree unchanged' if inv.reused else 'built'})")
