"""`workgroup owners acquire|release|list`: the persistent active-writer registry with leases."""

from __future__ import annotations

from typing import Annotated

import typer

from toolkit.cli import command_group
from toolkit.commands._common import echo, echo_row, emit_json, repository, say


def _lease_minutes(layout: object) -> int:
    from toolkit.infra.config import load_config

    return int(load_config(layout)["context_efficiency"]["warm_lease_minutes"])  # type: ignore[arg-type]


def register(app: typer.Typer) -> None:
    group = command_group(
        name="owners",
        help="Active writers: who may write which paths, under a lease (shared by all worktrees).",
        no_args_is_help=True,
    )

    @group.command("acquire")
    def acquire(
        lineage_id: Annotated[str, typer.Argument(help="The writer's lineage id.")],
        path: Annotated[
            list[str] | None, typer.Option("--path", help="A repository-relative owned path (repeatable).")
        ] = None,
        glob: Annotated[
            list[str] | None,
            typer.Option(
                "--glob", help="An owned glob (gitignore style, no '!'), matched against tracked files."
            ),
        ] = None,
        minutes: Annotated[
            int | None, typer.Option("--minutes", help="Lease length (default: warm_lease_minutes, 20).")
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the lease (or the conflict) as JSON.")
        ] = False,
    ) -> None:
        """Take a lease on a scope; refused (exit 1) when it overlaps a live lease, naming the holder."""
        from toolkit.infra.clock import now_utc
        from toolkit.records import owners

        repo = repository()
        layout = repo.layout
        globs = glob or []
        lease_minutes = minutes if minutes is not None else _lease_minutes(layout)
        tracked = repo.tracked_files() if globs else None
        try:
            lease = owners.acquire(
                layout,
                lineage_id,
                path or [],
                globs,
                now=now_utc(),
                minutes=lease_minutes,
                tracked_files=tracked,
            )
        except owners.OwnershipConflict as conflict:
            if as_json:
                emit_json(
                    {
                        "acquired": False,
                        "code": conflict.code,
                        "holder": conflict.holder,
                        "path": conflict.path,
                    }
                )
            raise
        if as_json:
            emit_json({"acquired": True, **lease.to_json()})
        else:
            echo(
                f"{lease.lineage_id} holds {len(lease.owned_files)} path(s), "
                f"{len(lease.owned_globs)} glob(s) "
                f"until {lease.lease_expires_at}"
            )
        if lease.owned_globs:
            say(f"globs matched {len(lease.resolved_owned_files)} tracked file(s)")

    @group.command("release")
    def release(
        lineage_id: Annotated[str, typer.Argument(help="The writer's lineage id.")],
        as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    ) -> None:
        """Release the lease of LINEAGE_ID (no error when it holds none)."""
        from toolkit.infra.clock import now_utc
        from toolkit.records import owners

        layout = repository().layout
        released = owners.release(layout, lineage_id, now=now_utc())
        if as_json:
            emit_json({"lineage_id": lineage_id, "released": released})
        else:
            echo(f"released {lineage_id}" if released else f"{lineage_id} held no lease")

    @group.command("list")
    def list_(
        as_json: Annotated[bool, typer.Option("--json", help="Print the live leases as JSON.")] = False,
    ) -> None:
        """List the live leases (expired ones are dropped)."""
        from toolkit.infra.clock import now_utc
        from toolkit.records import owners

        leases = owners.list_leases(repository().layout, now=now_utc())
        if as_json:
            emit_json({"writers": [lease.to_json() for lease in leases]})
            return
        if not leases:
            say("no active writers")
        for lease in leases:
            scope = " ".join([*lease.owned_files, *lease.owned_globs])
            echo_row(lease.lineage_id, f"until {lease.lease_expires_at}", scope)

    app.add_typer(group)
