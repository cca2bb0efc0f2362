"""``workgroup rollout advance|status``: checked rollout progression (one step, one family at a time)."""

from __future__ import annotations

from typing import Annotated

import typer

from toolkit.cli import command_group


def register(app: typer.Typer) -> None:
    group = command_group(
        help="Rollout stages: off, observe, shadow, canary 10/25/50, on.", no_args_is_help=True
    )

    @group.command("advance")
    def advance(
        to: Annotated[str, typer.Option("--to", help="Target stage: off, observe, shadow, canary, on.")],
        family: Annotated[
            list[str] | None, typer.Option("--family", help="The one intervention family this step changes.")
        ] = None,
        percent: Annotated[
            float | None, typer.Option("--percent", help="Canary share (10, 25, 50); default: the next one.")
        ] = None,
        evidence: Annotated[
            str | None,
            typer.Option("--evidence", help="Measurement run id of the promotion (required for on)."),
        ] = None,
        check: Annotated[bool, typer.Option("--check", help="Check only; write nothing.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    ) -> None:
        """Move the rollout one step (or back); refuses skipped stages and several families at once."""
        from toolkit.commands._common import emit_json, repository, say
        from toolkit.core.timefmt import format_utc
        from toolkit.infra.clock import now_utc
        from toolkit.records.rollouts import apply_advance, parse_target

        result = apply_advance(
            repository().layout,
            parse_target(to, percent),
            list(family or []),
            evidence_run=evidence,
            at=format_utc(now_utc()),
            write=not check,
        )
        verb = "rolled back" if result["rollback"] else "advanced"
        say(
            f"{result['family']}: {verb} {result['from']} -> {result['to']}"
            + ("" if result["written"] else " (check only, nothing written)")
        )
        if as_json:
            emit_json(result)

    @group.command("status")
    def status(as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False) -> None:
        """Show the current stage, the active family and the history."""
        from toolkit.commands._common import echo, emit_json, repository
        from toolkit.infra.config import load_config
        from toolkit.records.rollouts import Step, read_history

        layout = repository().layout
        block = load_config(layout)["context_efficiency"]
        step = Step(block["rollout"], block["canary_percent"] if block["rollout"] == "canary" else None)
        history = read_history(layout)
        if as_json:
            emit_json(
                {"stage": step.label(), "active_family": history["active_family"], "steps": history["steps"]}
            )
            return
        echo(f"stage: {step.label()}  active family: {history['active_family'] or '-'}")
        for entry in history["steps"]:
            echo(f"{entry['at']}  {entry['family']}: {entry['from']} -> {entry['to']}")

    app.add_typer(group, name="rollout")
