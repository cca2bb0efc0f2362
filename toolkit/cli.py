"""The typer application. Each command module converts options and calls the core; nothing else.

Command modules live in ``toolkit/commands/`` and expose ``register(app)``. Errors are turned
into exit codes in exactly one place (``run``), with no traceback for bad input.
"""

from __future__ import annotations

import importlib
import sys

import typer

from toolkit.core.errors import ToolkitError, exit_code_for

# Order is the order of ``workgroup --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "demo",
    "init",
    "runtime_cmd",
    "route",
    "dispatch",
    "owners",
    "capsule",
    "lineage",
    "verify",
    "privacy",
    "boundary",
    "handoff",
    "packet",
    "cm",
    "eval",
    "telemetry",
    "measure",
    "promote",
    "rollout",
    "result",
    "vault",
    "probe",
    "skills",
    "index",
    "profile",
    "capabilities",
    "fanout",
    "usage",
    "schemas",
)


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="workgroup",
        help="Git-integrated decision runtime, privacy gate and CM workflow tools for multi-agent coding.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"toolkit.commands.{name}")
        module.register(app)
    return app


def err(text: str) -> None:
    """Human text goes to stderr; stdout is reserved for data."""
    sys.stderr.write(text + ("" if text.endswith("\n") else "\n"))


def run(argv: list[str]) -> int:
    if sys.stdout is None:  # started with stdout closed: writing data must fail loudly, not crash
        from toolkit.commands._common import ClosedStream

        sys.stdout = ClosedStream()
    app = build_app()
    try:
        result = app(args=argv, prog_name="workgroup", standalone_mode=False)
        sys.stdout.flush()  # data that cannot be written out is an error here, not after exit 0
    except ToolkitError as exc:
        err(exc.diagnostics())
        return exit_code_for(exc)
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except Exception as exc:  # click's usage errors and aborts come through here
        code = getattr(exc, "exit_code", None)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
            return int(code) if isinstance(code, int) else 2
        if isinstance(exc, OSError):
            from toolkit.infra.output import silence_stdout

            silence_stdout()  # what could not be written is not retried (noisily) at exit
            err(f"error[ENVIRONMENT]: {exc.__class__.__name__}: the file system refused the operation")
        if isinstance(exc, (OSError, KeyboardInterrupt)):
            return exit_code_for(exc)
        raise
    return int(result) if isinstance(result, int) else 0


def main() -> int:
    return run(sys.argv[1:])
