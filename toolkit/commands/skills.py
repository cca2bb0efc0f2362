"""``workgroup skills lint``."""

from __future__ import annotations

import typer

from toolkit.cli import command_group


def register(app: typer.Typer) -> None:
    skills = command_group(help="Skill and prompt hygiene.", no_args_is_help=True)

    @skills.command("lint")
    def lint_cmd(
        paths: list[str] = typer.Argument(
            None,
            metavar="PATH...",
            help="Files or folders [default: every skill/prompt file git would commit: tracked, "
            "plus untracked files that are not ignored].",
            show_default=False,
        ),
        max_body_lines: int = typer.Option(
            500, "--max-body-lines", min=1, metavar="N", help="Most lines a prompt body may have."
        ),
        max_body_bytes: int = typer.Option(
            40_000, "--max-body-bytes", min=1, metavar="N", help="Most bytes a prompt body may have."
        ),
        min_duplicate_chars: int = typer.Option(
            160,
            "--min-duplicate-chars",
            min=1,
            metavar="N",
            help="A block repeated across files counts as a duplicate from this many characters.",
        ),
        framework_overlap: float = typer.Option(
            0.8,
            "--framework-overlap",
            min=0.0,
            max=1.0,
            metavar="RATIO",
            help="A prompt holding this share of a framework document's lines is a copy.",
        ),
        min_framework_lines: int = typer.Option(
            20,
            "--min-framework-lines",
            min=1,
            metavar="N",
            help="Other Markdown documents count as framework documents from this many body lines.",
        ),
        framework: list[str] = typer.Option(
            [], "--framework", metavar="FILE", help="A framework document prompts must not copy (repeatable)."
        ),
        json_out: bool = typer.Option(False, "--json", help="The findings as one JSON object on stdout."),
        strict: bool = typer.Option(False, "--strict", help="Warnings fail too."),
    ) -> int:
        """Lint SKILL.md files, their references/, and agent/command prompts.

        Findings are `path:line:col: RULE message` lines on stdout, a summary on stderr.

        Exit codes: 0 no errors (warnings allowed unless --strict), 1 findings, 2 invalid option.
        """
        import sys

        from toolkit.workflow.skills import LintConfig
        from toolkit.workflow.skills_files import emit_findings, lint_paths

        config = LintConfig(
            max_body_lines=max_body_lines,
            max_body_bytes=max_body_bytes,
            min_block_chars=min_duplicate_chars,
            framework_overlap=framework_overlap,
            min_framework_lines=min_framework_lines,
            framework_documents=tuple(framework),
        )
        findings = lint_paths(list(paths or []), config)
        emit_findings(findings, as_json=json_out, stdout=sys.stdout, stderr=sys.stderr)
        failing = [f for f in findings if strict or f.severity == "error"]
        return 1 if failing else 0

    app.add_typer(skills, name="skills")
