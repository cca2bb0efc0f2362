"""``workgroup fanout check PLAN``."""

from __future__ import annotations

from pathlib import Path

import typer

from toolkit.cli import command_group


def register(app: typer.Typer) -> None:
    fanout = command_group(help="Fan-out plans against the active profile.", no_args_is_help=True)

    @fanout.command("check")
    def check(
        plan: Path = typer.Argument(..., metavar="PLAN", help="The plan file (JSON or YAML)."),
        profile: str = typer.Option(
            None, "--profile", metavar="NAME", help="Override the configured profile."
        ),
        json_out: bool = typer.Option(False, "--json", help="The findings as one JSON object on stdout."),
    ) -> int:
        """Validate a proposed fan-out (JSON or YAML) against the active profile.

        Findings are `PLAN:0:0: RULE message` lines on stdout (the worker is named in the
        message), the verdict on stderr.

        Exit codes: 0 accepted, 1 refused (findings), 2 invalid plan or option.
        """
        import sys

        import yaml

        from toolkit.core.errors import InvalidInput, ToolkitError
        from toolkit.core.strictjson import json_depth_exceeds
        from toolkit.infra.boundedio import read_regular
        from toolkit.workflow.fanout import PlanError, check_plan
        from toolkit.workflow.profiles import ProfileError

        raw = read_regular(plan, limit=1_048_576, what="the plan file") or b""  # FileRefused: exit 2
        if json_depth_exceeds(raw):  # flow-style YAML nests with the same brackets
            raise InvalidInput("INVALID_PLAN", "the plan nests too deeply")
        try:
            data = yaml.safe_load(raw.decode("utf-8"))
        except (UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError) as exc:
            mark = getattr(exc, "problem_mark", None)  # the position only, never the text there
            at = f" (line {mark.line + 1} column {mark.column + 1})" if mark is not None else ""
            raise InvalidInput("INVALID_PLAN", f"the plan is not valid JSON or YAML{at}") from None
        block: dict[str, object] = {}
        try:
            from toolkit.workflow.profile_config import current_block

            block = current_block(required=False)
        except ToolkitError as exc:
            if exc.code == "CONFIG_INVALID":
                raise  # a config it cannot read is not the default profile: fail closed
            block = {}  # outside a repository: the default profile
        if profile:
            block = {**block, "profile": profile}
        try:
            settings, findings = check_plan(data, block)
        except (PlanError, ProfileError) as exc:
            raise InvalidInput("INVALID_PLAN", exc.message) from None
        from toolkit.core.findings import Finding, emit
        from toolkit.infra.ci import github_actions

        shared = [
            Finding(
                str(plan),
                0,
                0,
                f.rule,
                (f"worker {f.worker}: " if f.worker is not None else "plan: ") + f.message,
                extra={"worker": f.worker},
            )
            for f in findings
        ]
        verdict = "refused" if findings else "accepted"
        emit(
            "fanout",
            shared,
            as_json=json_out,
            stdout=sys.stdout,
            stderr=sys.stderr,
            summary_extra={"profile": settings["profile"], "verdict": verdict},
            notices=[] if json_out else [f"fan-out plan {verdict} under profile {settings['profile']}"],
            annotate=github_actions(),
        )
        return 1 if findings else 0

    app.add_typer(fanout, name="fanout")
