"""The typer application. Each command module converts options and calls the core; nothing else.

Command modules live in ``toolkit/commands/`` and expose ``register(app)``. Errors are turned
into exit codes in exactly one place (``run``), with no traceback for bad input.

Commands load lazily: ``workgroup --help`` lists them from ``COMMAND_HELP`` without importing a
command module, and ``workgroup X ...`` imports only X's module. To add a command: one line in
``COMMAND_MODULES`` and one in ``COMMAND_HELP`` (tests/cli/test_cli.py checks that the two agree with
the real commands; a module without a help line still works, it is just loaded eagerly).

Help is typer's own rendering. A group is made with ``command_group`` and takes ``HelpFlag`` in its
callback: click converts every option of every group on the way to a sub-command, even for the
sub-command's ``--help``; an explicit ``--help`` flag whose default is False is a bool, which typer
passes through without converting. (typer is held below 0.29, whose conversion of every other value
goes through a pydantic adapter and costs about 50 ms of imports per command.)
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Annotated, Literal, TypedDict

import typer
from typer.core import TyperGroup

from toolkit import __version__
from toolkit.core.errors import ToolkitError, exit_code_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Unpack

    from typer._click import Command, Context, HelpFormatter  # typer 0.28 carries its own click

# Order is the order of ``workgroup --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "demo",
    "init",
    "runtime_cmd",
    "agent_hook",
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
    "statusline",
    "schemas",
)


# module -> (command name, its short help as `workgroup --help` lists it), one line per command.
COMMAND_HELP: dict[str, tuple[str, str]] = {
    "demo": ("demo", "Run the main job on an embedded default in a throwaway git repository."),
    "init": (
        "init",
        "Write .workgroup/config.yml, .gitignore lines and the pre-commit config; install the git hook.",
    ),
    "runtime_cmd": (
        "runtime",
        "KnowzCode-compatible decision runtime: one JSON request on stdin, one JSON line out.",
    ),
    "agent_hook": (
        "agent-hook",
        "Claude Code / Codex hook: privacy and ownership before writes, handoff, capsule, usage.",
    ),
    "route": ("route", "Route one delegation: the runtime's decision, with config filling absent facts."),
    "dispatch": (
        "dispatch",
        "Dispatch one delegation: lineage first, then routing, rollout and result policy.",
    ),
    "owners": (
        "owners",
        "Active writers: who may write which paths, under a lease (shared by all worktrees).",
    ),
    "capsule": ("capsule", "Context capsules bound to checkpoints."),
    "lineage": ("lineage", "Agent lineages bound to checkpoints."),
    "verify": (
        "verify",
        "Check capsules, lineages and promotion records (exit 1 on findings, 3 on a shallow clone).",
    ),
    "privacy": ("privacy", "Privacy gate: secrets, provider ids, transcripts, home paths, emails."),
    "boundary": (
        "boundary",
        "Print the session-boundary verdict on stderr; at a single run's end, write the handoff.",
    ),
    "handoff": ("handoff", "The CM session handoff file (reference data for the next session)."),
    "packet": ("packet", "Minimal role packets, the stable prefix and compact answers."),
    "cm": ("cm", "CM model calls: OpenAI-compatible adapter, event writer, usage report."),
    "eval": ("eval", "Run every corpus scenario through the runtime and check its oracle."),
    "telemetry": ("telemetry", "Efficiency events (knowzcode.efficiency-event/v1)."),
    "measure": ("measure", "Sign measured paired results (measurement envelope v2)."),
    "promote": ("promote", "Decide a promotion from signed paired results; exit 0 promote, 1 refused."),
    "rollout": ("rollout", "Rollout stages: off, observe, shadow, canary 10/25/50, on."),
    "result": ("result", "Store worker results as the result policy allows."),
    "vault": ("vault", "Local delta journal for knowledge (vault) captures."),
    "probe": ("probe", "MCP health probes: reuse within a TTL, retry failures at a later phase."),
    "skills": ("skills", "Skill and prompt hygiene."),
    "index": (
        "index",
        "Deterministic inventory of tracked files (path, blob, size, language) with one digest; cached.",
    ),
    "profile": ("profile", "Execution profiles (quality, balanced, economy, latency)."),
    "capabilities": (
        "capabilities",
        "Which semantic adapter operations each provider really exposes (versioned).",
    ),
    "fanout": ("fanout", "Fan-out plans against the active profile."),
    "usage": ("usage", "Verified token usage and carried history from Claude Code and Codex logs."),
    "statusline": (
        "statusline",
        "Claude Code's status line: verified tokens of the session, the re-read share, the list price.",
    ),
    "schemas": ("schemas", "JSON Schemas generated from the pydantic models."),
}


class _AppSettings(TypedDict):
    """The ``typer.Typer`` settings of the application and of each lazily built command."""

    add_completion: bool
    context_settings: dict[str, list[str]]
    pretty_exceptions_enable: bool
    rich_markup_mode: Literal["markdown", "rich"] | None


_APP_SETTINGS: _AppSettings = {
    "add_completion": False,
    # -h is --help at every level (click hands the names down to every sub-command's context)
    "context_settings": {"help_option_names": ["-h", "--help"]},
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}
TOP_HELP = """Git-integrated decision runtime, privacy gate and CM workflow tools for multi-agent coding.

Exit codes (every command but `runtime` and `cm`): 0 ok, 1 findings or a refused decision,
2 usage or invalid input, 3 environment (no repository, shallow history, lock timeout).
"""


def _show_help(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


# A group's --help (-h): the one typer would add, declared with a False default (see the docstring).
HelpFlag = Annotated[
    bool,
    typer.Option(
        "--help",
        "-h",
        is_eager=True,
        expose_value=False,
        callback=_show_help,
        help="Show this message and exit.",
    ),
]


class _GroupSettings(TypedDict, total=False):
    """The ``typer.Typer`` settings a command group gives (only those given are passed on: typer
    tells a setting given from its default)."""

    name: str
    help: str
    no_args_is_help: bool
    rich_markup_mode: Literal["markdown", "rich"] | None
    add_completion: bool


def command_group(**settings: Unpack[_GroupSettings]) -> typer.Typer:
    """A sub-command group (``typer.Typer(**settings)``) whose --help is ``HelpFlag``. A group that
    needs its own callback (options of its own) takes ``_help: HelpFlag = False`` there instead."""
    group = typer.Typer(**settings)

    @group.callback()
    def _group(_help: HelpFlag = False) -> None:
        pass

    return group


EXIT_CODES = (
    "Exit codes: 0 ok, 1 findings or a refused decision, 2 usage or invalid input, "
    "3 environment (no repository, shallow history, lock timeout)."
)
_OWN_EXIT_CODES = (
    "runtime_cmd",
    "cm",
    "agent_hook",
)  # the reference protocols keep their own (see their help)


def _with_exit_codes(command: Command) -> None:
    """Every leaf command's help ends with its exit codes (the shared map unless it states its own)."""
    subs = getattr(command, "commands", None)
    if subs:
        for sub in subs.values():
            _with_exit_codes(sub)
    elif "Exit codes" not in (command.help or ""):
        command.help = (command.help or "").rstrip() + "\n\n" + EXIT_CODES


def load_command(module_name: str) -> tuple[str, Command]:
    """(name, click command) of one command module, built on its own."""
    sub = typer.Typer(**_APP_SETTINGS)

    @sub.callback()
    def _group() -> None:  # a callback keeps typer from collapsing a single command
        pass

    importlib.import_module(f"toolkit.commands.{module_name}").register(sub)
    group = typer.main.get_command(sub)
    (name, command), *rest = group.commands.items()  # type: ignore[attr-defined]
    assert not rest, f"toolkit.commands.{module_name} registers more than one command"
    if module_name not in _OWN_EXIT_CODES:
        _with_exit_codes(command)
    return name, command


class LazyGroup(TyperGroup):
    """The top-level group: lists commands from COMMAND_HELP, imports a module only when used."""

    def list_commands(self, ctx: Context) -> list[str]:
        lazy = [COMMAND_HELP[m][0] for m in COMMAND_MODULES if m in COMMAND_HELP]
        return lazy + [name for name in self.commands if name not in lazy]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name not in self.commands:
            module = next((m for m, (name, _) in COMMAND_HELP.items() if name == cmd_name), None)
            if module is None or module not in COMMAND_MODULES:
                return None
            name, command = load_command(module)
            self.commands[name] = command
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        names = self.list_commands(ctx)
        width = max(map(len, names), default=0)
        limit = formatter.width - 6 - width
        short = {name: text for name, text in COMMAND_HELP.values()}
        rows = []
        for name in names:
            text = short.get(name)
            if text is None:
                text = self.commands[name].get_short_help_str(limit)
            elif len(text) > limit:
                text = text[: max(limit - 3, 1)].rsplit(" ", 1)[0] + "..."
            rows.append((name, text))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _show_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"workgroup {__version__}\n")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    app = typer.Typer(name="workgroup", help=TOP_HELP, no_args_is_help=True, cls=LazyGroup, **_APP_SETTINGS)

    @app.callback()
    def _top(
        version: Annotated[
            bool,
            typer.Option(
                "--version",
                "-V",
                help="Print the installed version and exit.",
                is_eager=True,
                callback=_show_version,
            ),
        ] = False,
        _help: HelpFlag = False,
    ) -> None:
        pass

    for name in COMMAND_MODULES:
        if name not in COMMAND_HELP:  # no help line yet: loaded eagerly, still listed
            importlib.import_module(f"toolkit.commands.{name}").register(app)
    return app


def err(text: str) -> None:
    """Human text goes to stderr; stdout is reserved for data."""
    sys.stderr.write(text + ("" if text.endswith("\n") else "\n"))


def wants_json(argv: list[str]) -> bool:
    """``--json`` or ``--format json`` before ``--``: errors then go to stdout as JSON too. A
    ``--format`` given decides (the last one): with ``--format sarif`` a refusal leaves stdout empty."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    fmt = None
    for i, arg in enumerate(args):
        if arg == "--format":
            fmt = args[i + 1] if i + 1 < len(args) else ""
        elif arg.startswith("--format="):
            fmt = arg.partition("=")[2]
    return fmt == "json" if fmt is not None else "--json" in args


class _StdoutWatch:
    """sys.stdout, noting whether the command wrote its own (JSON) answer before failing."""

    def __init__(self, stream: Any) -> None:  # sys.stdout as found: a text stream or ClosedStream
        self.stream = stream
        self.used = False

    def write(self, text: str) -> int:
        self.used = self.used or bool(text)
        return int(self.stream.write(text))

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def run(argv: list[str]) -> int:
    if sys.stdout is None:  # started with stdout closed: writing data must fail loudly, not crash
        from toolkit.infra.output import ClosedStream

        sys.stdout = ClosedStream()
    watch = _StdoutWatch(sys.stdout) if wants_json(argv) else None
    if watch is None:
        return _run(argv, None)
    sys.stdout = watch
    try:
        return _run(argv, watch)
    finally:
        if sys.stdout is watch:
            sys.stdout = watch.stream


def _run(argv: list[str], watch: _StdoutWatch | None) -> int:
    app = build_app()
    try:
        result = app(args=argv, prog_name="workgroup", standalone_mode=False)
        sys.stdout.flush()  # data that cannot be written out is an error here, not after exit 0
    except ToolkitError as exc:
        err(exc.diagnostics())
        if watch is not None and not watch.used:  # one JSON document: the answer, or the error
            from toolkit.core.findings import write_error_json

            write_error_json(watch.stream, exc.code, exc.message, exc.path)
        return exit_code_for(exc)
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except Exception as exc:  # click's usage errors and aborts come through here
        code = getattr(exc, "exit_code", None)
        if code == 2:
            format_message = getattr(exc, "format_message", None)
            if callable(format_message):
                return _usage_error(exc, format_message, watch)
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


def _usage_error(exc: Exception, format_message: Callable[[], object], watch: _StdoutWatch | None) -> int:
    """A command line click refused (unknown option, bad value, missing argument): the usage line,
    then ``error[USAGE]: ...`` like every other refusal, escaped, and exit 2. An unknown option is
    named without the value given inline (``--token=VALUE``): it may be a secret."""
    from toolkit.core.display import option_name
    from toolkit.core.errors import InvalidInput

    name = getattr(exc, "option_name", None)
    if isinstance(name, str) and hasattr(exc, "possibilities"):  # click's NoSuchOption
        message = f"unknown option {option_name(name)}"
    else:
        message = str(format_message())
    error = InvalidInput("USAGE", message)
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        from toolkit.core.display import shown

        err(shown(ctx.get_usage()))
        err(f"Try '{shown(ctx.command_path)} --help' for help.")
    err(error.diagnostics())
    if watch is not None and not watch.used:
        from toolkit.core.findings import write_error_json

        write_error_json(watch.stream, error.code, error.message, None)
    return 2


def main() -> int:
    return run(sys.argv[1:])
