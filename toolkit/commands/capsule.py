"""`workgroup capsule seal FILE`: validate, privacy-check, bind to a commit, seal, optionally store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from toolkit.commands._common import emit_json, repository, say


def register(app: typer.Typer) -> None:
    group = typer.Typer(name="capsule", help="Context capsules bound to checkpoints.", no_args_is_help=True)

    @group.command("seal")
    def seal(
        file: Annotated[
            Path, typer.Argument(help="The capsule JSON (capsule_hash and checkpoint_sha are set for you).")
        ],
        checkpoint: Annotated[
            str, typer.Option("--checkpoint", help="Revision the capsule is bound to.")
        ] = "HEAD",
        max_bytes: Annotated[
            int | None, typer.Option("--max-bytes", min=1, help="Sealed size limit (default 12288).")
        ] = None,
        artifact_path: Annotated[
            str | None,
            typer.Option(
                "--artifact-path",
                help="Where overflowing evidence may go (its directory; the file is named by its digest).",
            ),
        ] = None,
        artifact_root: Annotated[
            list[str] | None,
            typer.Option(
                "--artifact-root",
                help="Authorized root for externalized evidence (default: knowzcode/artifacts).",
            ),
        ] = None,
        write: Annotated[
            bool, typer.Option("--write", help="Store it under .workgroup/workgroups/<wg>/capsules/.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON result object.")] = False,
    ) -> None:
        """Seal a capsule bound to REV (default HEAD) and print it; --write stores it atomically."""
        from toolkit.records.capsules import seal_file

        repo = repository()
        outcome = seal_file(
            repo,
            file,
            checkpoint=checkpoint,
            max_bytes=max_bytes,
            artifact_path=artifact_path,
            artifact_roots=artifact_root or None,
            write=write,
        )
        if as_json:
            emit_json(outcome.as_json())
        else:
            typer.echo(json.dumps(outcome.capsule, indent=2, ensure_ascii=False))
        say(
            f"sealed {outcome.capsule['capsule_hash']} at checkpoint {outcome.checkpoint_sha[:12]} "
            f"({outcome.size} bytes)"
        )
        if outcome.artifact_ref:
            say(f"evidence moved out to {outcome.artifact_ref} (content digest {outcome.artifact_digest})")
        if outcome.capsule_path:
            say(f"wrote {outcome.capsule_path}")

    app.add_typer(group)
