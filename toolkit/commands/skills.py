"""``workgroup skills lint``."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    skills = typer.Typer(help="Skill and prompt hygiene.", no_args_is_help=True)

    @skills.command("lint", help="Lint SKILL.md files, their references/, and agent/command prompts.")
    def lint_cmd(
        paths: list[str] = typer.Argument(
            None, help="Files or folders (default: every tracked skill/prompt file)."
        ),
        max_body_lines: int = typer.Option(500, "--max-body-lines", min=1),
        max_body_bytes: int = typer.Option(40_000, "--max-body-bytes", min=1),
        framework: list[str] = typer.Option(
            [], "--framework", help="A framework document prompts must not copy."
        ),
        json_out: bool = typer.Option(False, "--json", help="JSON on stdout."),
        strict: bool = typer.Option(False, "--strict", help="Warnings fail too."),
    ) -> None:
        import sys

        from toolkit.commands._common import emit_json
        from toolkit.workflow.skills import LintConfig
        from toolkit.workflow.skills_files import lint_paths, render_text

        config = LintConfig(
            max_body_lines=max_body_lines, max_body_bytes=max_body_bytes, framework_documents=tuple(framework)
        )
        findings = lint_paths(list(paths or []), config)
        if json_out:
            emit_json({"findings": [f.as_dict() for f in findings]})
        else:
            sys.stderr.write(render_text(findings))
        failing = [f for f in findings if strict or f.severity == "error"]
        raise typer.Exit(1 if failing else 0)

    app.add_typer(skills, name="skills")
