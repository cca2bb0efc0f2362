"""``workgroup fanout check PLAN``."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    fanout = typer.Typer(help="Fan-out plans against the active profile.", no_args_is_help=True)

    @fanout.command("check", help="Validate a proposed fan-out (JSON or YAML) against the active profile.")
    def check(
        plan: Path = typer.Argument(..., help="The plan file."),
        profile: str = typer.Option(None, "--profile", help="Override the configured profile."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> None:
        import sys

        import yaml

        from toolkit.commands._common import emit_json
        from toolkit.core.errors import InvalidInput, ToolkitError
        from toolkit.infra.boundedio import json_depth_exceeds, read_regular
        from toolkit.workflow.fanout import PlanError, check_plan
        from toolkit.workflow.profiles import ProfileError

        raw = read_regular(plan, limit=1_048_576, what="the plan file") or b""  # FileRefused: exit 2
        if json_depth_exceeds(raw):  # flow-style YAML nests with the same brackets
            raise InvalidInput("INVALID_PLAN", "the plan nests too deeply")
        try:
            data = yaml.safe_load(raw.decode("utf-8"))
        except (UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError):
            raise InvalidInput("INVALID_PLAN", "the plan is not valid JSON or YAML") from None
        block: dict[str, object] = {}
        try:
            from toolkit.workflow.profile_config import current_block

            block = current_block(required=False)
        except ToolkitError:
            block = {}
        if profile:
            block = {**block, "profile": profile}
        try:
            settings, findings = check_plan(data, block)
        except (PlanError, ProfileError) as exc:
            raise InvalidInput("INVALID_PLAN", exc.message) from None
        if json_out:
            emit_json({"profile": settings["profile"], "findings": [f.as_dict() for f in findings]})
        else:
            for f in findings:
                where = f"worker {f.worker}" if f.worker is not None else "plan"
                sys.stderr.write(f"{f.rule} ({where}): {f.message}\n")
            sys.stderr.write(
                f"fan-out plan {'refused' if findings else 'accepted'} under profile {settings['profile']}\n"
            )
        raise typer.Exit(1 if findings else 0)

    app.add_typer(fanout, name="fanout")
