"""`workgroup capsule seal FILE`: validate, privacy-check, bind to a commit, seal, optionally store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from toolkit.cli import command_group
from toolkit.commands._common import emit_json, repository, say


def register(app: typer.Typer) -> None:
    group = command_group(name="capsule", help="Context capsules bound to checkpoints.", no_args_is_help=True)

    @group.command("seal")
    def seal(
        file: Annotated[
            Path,
            typer.Argument(
                metavar="FILE", help="The capsule JSON (capsule_hash and checkpoint_sha are set for you)."
            ),
        ],
        checkpoint: Annotated[
            str, typer.Option("--checkpoint", metavar="REV", help="Revision the capsule is bound to.")
        ] = "HEAD",
        max_bytes: Annotated[
            int | None,
            typer.Option(
                "--max-bytes", min=1, metavar="N", help="Sealed size limit in bytes [default: 12288]."
            ),
        ] = None,
        artifact_path: Annotated[
            str | None,
            typer.Option(
                "--artifact-path",
                metavar="DIR",
                help="Where overflowing evidence may go (its directory; the file is named by its digest).",
            ),
        ] = None,
        artifact_root: Annotated[
            list[str] | None,
            typer.Option(
                "--artifact-root",
                metavar="DIR",
                help="Authorized root for externalized evidence (default: knowzcode/artifacts).",
            ),
        ] = None,
        write: Annotated[
            bool, typer.Option("--write", help="Store it under .workgroup/workgroups/<wg>/capsules/.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON result object.")] = False,
    ) -> None:
        """Seal a capsule bound to REV (default HEAD) and print it; --write stores it atomically.

        FILE is the capsule without the two fields sealing fills in (checkpoint_sha, capsule_hash).
        A complete first capsule (phase is one of 1A, 1B, 2A, 2B, 3; evidence and artifact_refs
        are optional):

        \b
          {"schema": "knowzcode.context-capsule/v1",
           "task_id": "t1", "workgroup_id": "wg1", "phase": "2A",
           "objective": "Add a request timeout to the API handler.",
           "node_ids": ["ApiHandler"], "owned_files": ["src/api.py"],
           "read_files": [], "specs": [], "approved_decisions": [],
           "failures": [], "risks": [], "constraints": [],
           "next_action": "Write the failing timeout test."}

        A schema error names each field at fault with its rule, e.g. `$.phase: must be one of 1A,
        1B, 2A, 2B, 3`.

        Exit codes: 0 sealed, 1 refused (private content, size, artifact boundary), 2 invalid
        capsule or option, 3 no repository.
        """
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
