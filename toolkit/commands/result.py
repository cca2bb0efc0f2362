"""`workgroup result store`: apply a result-policy decision (bounded summary, raw artifact)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from toolkit.cli import command_group
from toolkit.commands._common import emit_json, read_json_file, repository, say


def _read_summary(path: Path, limit: int) -> bytes:
    from toolkit.core.errors import InvalidInput
    from toolkit.infra.boundedio import FileRefused, read_regular

    if str(path) == "-":
        return sys.stdin.buffer.read(limit + 1)
    try:
        # limit + 1 bytes at most: the caller answers an oversized summary with its own code
        return read_regular(path, limit=limit, what="the summary file", allow_over=True) or b""
    except FileRefused as exc:
        raise InvalidInput(exc.code, exc.message) from None


def register(app: typer.Typer) -> None:
    group = command_group(
        name="result", help="Store worker results as the result policy allows.", no_args_is_help=True
    )

    @group.command("store")
    def store(
        policy: Annotated[
            Path,
            typer.Option(
                "--policy",
                help='A result-policy decision, its runtime frame, or {"input": facts} to resolve.',
            ),
        ],
        summary: Annotated[Path, typer.Option("--summary", help="The bounded summary (UTF-8; - for stdin).")],
        workgroup: Annotated[str, typer.Option("--workgroup", help="WorkGroup id (a safe segment).")],
        task: Annotated[str, typer.Option("--task", help="Task id (a safe segment).")],
        raw: Annotated[
            Path | None,
            typer.Option("--raw", help="Raw output to store as an artifact, when the decision allows one."),
        ] = None,
        max_summary_bytes: Annotated[
            int,
            typer.Option(
                "--max-summary-bytes", min=1, max=1_048_576, help="Summary size limit (default 8192)."
            ),
        ] = 8192,
        as_json: Annotated[bool, typer.Option("--json", help="Print a JSON result object.")] = False,
    ) -> None:
        """Write what the decision allows and nothing else; a write-prohibited result writes nothing."""
        from toolkit.infra.config import load_config
        from toolkit.records.results import StoreRequest, check_summary, decision_from_policy, store_result

        decision = decision_from_policy(read_json_file(policy, what="policy file"))
        text = check_summary(_read_summary(summary, max_summary_bytes), max_summary_bytes)
        repo = repository()
        config = load_config(repo.layout)
        request = StoreRequest(
            decision=decision,
            summary=text,
            workgroup_id=workgroup,
            task_id=task,
            raw_path=raw,
            handoff_threshold=config["context_efficiency"]["disk_handoff_threshold"],
            artifact_boundary=config["workgroup"]["artifact_boundary"],
        )
        outcome = store_result(repo.layout, request)
        if as_json:
            emit_json(outcome)
        elif "summary" in outcome:
            from toolkit.core.display import shown_lines

            typer.echo(shown_lines(outcome["summary"]), nl=not outcome["summary"].endswith("\n"))
        if outcome["write_prohibited"]:
            say("write-prohibited result: nothing written (the bounded summary is returned only)")
        elif not outcome["written"]:
            say(f"{outcome['mode']} result: nothing written (the bounded summary is returned only)")
        for path in outcome["written"]:
            say(f"wrote {path}")
        if raw is not None and not outcome["raw_persisted"]:
            say("raw output not persisted: the decision does not authorize an artifact")

    app.add_typer(group)
