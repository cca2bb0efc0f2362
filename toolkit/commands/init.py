"""`workgroup init`: the config, .gitignore lines, the pre-commit hooks (merged, never
clobbered) and the git hook. Running it again changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolkit.commands._common import emit_json, repository, say


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init(
        hook_repo: Annotated[
            str | None,
            typer.Option(
                "--hook-repo",
                help="Use the hooks from this git URL (pre-commit installs the toolkit itself) "
                "instead of the locally installed console scripts.",
            ),
        ] = None,
        hook_rev: Annotated[str, typer.Option("--hook-rev", help="Tag or SHA for --hook-repo.")] = "v0.1.0",
        no_install: Annotated[
            bool, typer.Option("--no-install", help="Do not run `pre-commit install`.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print what was done as JSON.")] = False,
    ) -> None:
        """Write .workgroup/config.yml, .gitignore lines and the pre-commit config; install the git hook."""
        from toolkit.workflow.init import initialize

        repo = repository()
        outcome = initialize(
            Path(repo.workdir), hook_repo=hook_repo, hook_rev=hook_rev, install=not no_install
        )
        for line in outcome.messages:
            say(line)
        if as_json:
            emit_json(outcome.as_json())
        if outcome.hook == "failed":
            from toolkit.core.errors import EnvironmentFailure

            raise EnvironmentFailure(
                "HOOK_INSTALL_FAILED", "`pre-commit install` failed; the files were written"
            )
