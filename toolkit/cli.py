"""The typer application. Each command module converts options and calls the core; nothing else.

Command modules live in ``toolkit/commands/`` and expose ``register(app)``. Errors are turned
into exit codes in exactly one place (``run``), with no traceback for bad input.

Commands load lazily: ``workgroup --help`` lists them from ``COMMAND_HELP`` without importing a
command module, and ``workgroup X ...`` imports only X's module. To add a command: one line in
``COMMAND_MODULES`` and one in ``COMMAND_HELP`` (tests/cli/test_cli.py checks that the two agree with
the real commands; a module without a help line still works, it is just loaded eagerly).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from toolkit import __version__
from toolkit.core.errors import ToolkitError, exit_code_for

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

_APP_SETTINGS: dict[str, Any] = {
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


_TYPE_WORDS = {"int": "N", "float": "NUMBER", "str": "TEXT", "Path": "PATH", "datetime": "TIME"}


def _classic_type(param: Any) -> str | None:
    """A param's value word as click always wrote it (``PATH``, ``N``, ``[text|json]``)."""
    desc = getattr(param, "type_descriptor", None)
    if desc is None:
        return None
    choices = getattr(desc, "choices", None)
    if choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
    annotation = desc.annotation
    args = getattr(annotation, "__args__", None)
    if getattr(annotation, "__origin__", None) is list and args:
        annotation = args[0]
    return _TYPE_WORDS.get(getattr(annotation, "__name__", ""), "VALUE")


def _tidy_param(param: Any) -> None:
    """Newer typer releases show library types in help (``{paths}...``, ``<list[Path]>``,
    ``<int range>``); give every param the plain click form instead. A no-op elsewhere."""
    if getattr(param, "param_type_name", "") == "argument" and hasattr(param, "_usage_display_name"):
        word = param.metavar or (param.name or "ARG").upper()
        if param.metavar is None:
            param.metavar = word + ("..." if param.nargs != 1 else "")

        def usage(param: Any = param, word: str = param.metavar) -> str:
            return word if param.required else f"[{word}]"

        param._usage_display_name = usage
        param.display_type_rich = lambda ctx: None
    elif hasattr(param, "display_type") and hasattr(param, "type_descriptor"):
        param.display_type = lambda ctx, param=param: _classic_type(param)


def _tidy(command: Any) -> None:
    """Plain help for ``command`` and its subcommands; --help as a plain bool flag.

    Newer typer releases also coerce an unset --help flag (value None) through a pydantic
    adapter, which loads pydantic (~0.2 s) just to print help; a False default skips that.
    """
    original = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = original(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option

    command.get_help_option = get_help_option
    is_group = bool(getattr(command, "commands", None))
    for param in getattr(command, "params", ()):
        _tidy_param(param)
        if is_group:
            _light_coercion(param)
    for sub in getattr(command, "commands", {}).values():
        _tidy(sub)


def _light_coercion(param: Any) -> None:
    """Coerce a group's own options without typer's pydantic adapters.

    A group's options are converted before its sub-command runs, even for the sub-command's
    ``--help`` (``workgroup usage session --help``); typer converts every value through a pydantic
    adapter (~0.2 s of imports). Plain types (text, flags, paths, numbers, choices) need none of it;
    any other annotation keeps typer's own coercion.
    """
    from enum import Enum
    from pathlib import Path

    desc = getattr(param, "type_descriptor", None)
    if desc is None or not hasattr(param, "process_value"):
        return
    annotation = desc.annotation
    members = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
    if len(members) == 1 and type(None) in getattr(annotation, "__args__", ()):
        annotation = members[0]  # X | None: None never reaches the conversion below
    plain: dict[Any, Any] = {str: str, bool: bool, int: int, float: float, Path: Path}
    if annotation in plain:
        convert = plain[annotation]
    elif isinstance(annotation, type) and issubclass(annotation, Enum):
        choices = {str(member.value): member for member in annotation}

        def convert(value: Any, choices: dict[str, Any] = choices) -> Any:
            if isinstance(value, Enum):
                return value
            if str(value) not in choices:
                raise typer.BadParameter(f"must be one of {', '.join(choices)}")
            return choices[str(value)]
    else:
        return
    original = param.process_value

    def process_value(ctx: Any, value: Any, convert: Any = convert) -> Any:
        if param.multiple or param.nargs != 1 or (value is None and param.required):
            return original(ctx, value)
        value = None if value is None else convert(value)
        if param.callback is not None:
            value = param.callback(ctx, param, value)
        return value

    param.process_value = process_value


EXIT_CODES = (
    "Exit codes: 0 ok, 1 findings or a refused decision, 2 usage or invalid input, "
    "3 environment (no repository, shallow history, lock timeout)."
)
_OWN_EXIT_CODES = (
    "runtime_cmd",
    "cm",
    "agent_hook",
)  # the reference protocols keep their own (see their help)


def _with_exit_codes(command: Any) -> None:
    """Every leaf command's help ends with its exit codes (the shared map unless it states its own)."""
    subs = getattr(command, "commands", None)
    if subs:
        for sub in subs.values():
            _with_exit_codes(sub)
    elif "Exit codes" not in (command.help or ""):
        command.help = (command.help or "").rstrip() + "\n\n" + EXIT_CODES


def load_command(module_name: str) -> tuple[str, Any]:
    """(name, click command) of one command module, built on its own."""
    sub = typer.Typer(**_APP_SETTINGS)

    @sub.callback()
    def _group() -> None:  # a callback keeps typer from collapsing a single command
        pass

    importlib.import_module(f"toolkit.commands.{module_name}").register(sub)
    group = typer.main.get_command(sub)
    (name, command), *rest = group.commands.items()  # type: ignore[attr-defined]
    assert not rest, f"toolkit.commands.{module_name} registers more than one command"
    _tidy(command)
    if module_name not in _OWN_EXIT_CODES:
        _with_exit_codes(command)
    return name, command


class LazyGroup(TyperGroup):
    """The top-level group: lists commands from COMMAND_HELP, imports a module only when used."""

    def list_commands(self, ctx: Any) -> list[str]:
        lazy = [COMMAND_HELP[m][0] for m in COMMAND_MODULES if m in COMMAND_HELP]
        return lazy + [name for name in self.commands if name not in lazy]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            module = next((m for m, (name, _) in COMMAND_HELP.items() if name == cmd_name), None)
            if module is None or module not in COMMAND_MODULES:
                return None
            name, command = load_command(module)
            self.commands[name] = command
        return self.commands.get(cmd_name)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False  # see _tidy
        return option

    def format_commands(self, ctx: Any, formatter: Any) -> None:
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
        version: bool = typer.Option(
            False,
            "--version",
            "-V",
            help="Print the installed version and exit.",
            is_eager=True,
            callback=_show_version,
        ),
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
    """``--json`` (or ``--format json``) anywhere before ``--``: errors then go to stdout as JSON too."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    pairs = zip(args, args[1:], strict=False)
    return "--json" in args or "--format=json" in args or ("--format", "json") in pairs


class _StdoutWatch:
    """sys.stdout, noting whether the command wrote its own (JSON) answer before failing."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.used = False

    def write(self, text: str) -> int:
        self.used = self.used or bool(text)
        return int(self.stream.write(text))

    def __getattr__(self, name: str) -> Any:
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
