"""``workgroup demo``."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("demo", help="Run the main job on an embedded default in a throwaway git repository.")
    def demo(
        keep: bool = typer.Option(False, "--keep", help="Keep the throwaway repository and print its path."),
    ) -> int:
        from toolkit.demo.runner import run_demo

        return run_demo(keep=keep)
