"""``workgroup eval [CORPUS_DIR]``: run the evaluation corpus through the runtime; exit 1 on any miss."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from toolkit.workflow.evaluate import EvalReport, ScenarioResult


def render_table(report: EvalReport) -> list[str]:
    """One row per scenario, then the corpus checks and a summary line (lines, each printed by
    ``echo``: scenario ids and details come from the corpus directory)."""
    lines = [f"{'scenario':<26}{'operation':<15}{'expected':<38}{'observed':<38}result"]
    for r in report.results:
        lines.append(
            f"{r.id:<26}{r.operation:<15}{r.expected:<38}{r.observed:<38}{'ok' if r.passed else 'MISS'}"
        )
        if r.detail:
            lines.append(f"{'':<26}{r.detail}")
    for problem in report.corpus_problems:
        lines.append(f"corpus: {problem}")
    passed = len(report.results) - len(report.misses)
    lines.append(f"{passed}/{len(report.results)} scenarios matched their oracle")
    return lines


def register(app: typer.Typer) -> None:
    @app.command("eval")
    def eval_cmd(
        corpus: Annotated[
            Path | None, typer.Argument(help="Corpus directory (default: the shipped corpus/).")
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
    ) -> int:
        """Run every corpus scenario through the runtime and check its oracle."""
        from toolkit.commands._common import echo, emit_json, say
        from toolkit.infra.resources import data_dir
        from toolkit.workflow.evaluate import evaluate_corpus, load_scenarios

        scenarios = load_scenarios(corpus if corpus is not None else data_dir("corpus"))

        def progress(done: int, total: int, result: ScenarioResult) -> None:
            width = 30
            filled = width * done // total
            say(
                f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {result.id}"
                f"{'' if result.passed else ' MISS'}"
            )

        report = evaluate_corpus(scenarios, progress=progress)
        if as_json:
            emit_json(report.as_json())
        else:
            for line in render_table(report):
                echo(line)
        return 0 if report.ok else 1
