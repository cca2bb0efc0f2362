"""The ``workgroup`` console script.

Three protocols are dispatched before anything heavy (typer, pydantic, pygit2) is imported:
``workgroup runtime ...`` (the standard-library decision protocol, run on every delegation),
``workgroup agent-hook`` (before every agent tool call) and ``workgroup statusline`` (Claude Code's
status line, after every change of the conversation; its ``--help`` is the CLI's). Everything else,
``--help`` and ``--version`` included, goes to the one typer app (``toolkit.cli.run``).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # the runtime path starts here: typing stays out of it
if TYPE_CHECKING:
    from collections.abc import Mapping


def observe_decision(op: str, result: Mapping[str, object], milliseconds: float, cwd: str) -> None:
    """Live OTLP mode for ``workgroup runtime`` decisions (a no-op unless ``telemetry: otlp``)."""
    try:
        from toolkit.otel.live import emit_decision

        emit_decision(cwd, op, result, milliseconds)
    except (ImportError, OSError, ValueError, TypeError):  # telemetry never changes a decision's answer
        pass


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "runtime":
        # its own contract: one answer frame, exit 1 when stdout is gone (docs/runtime.md)
        from toolkit.runtime.protocol import main as runtime_main

        return runtime_main(args[1:], observer=observe_decision)
    if args and args[0] == "agent-hook":
        # every tool call of an agent session waits on it; it answers in the agent's own terms (exit 2
        # blocks), so it stays outside the stdout guard, whose exit 3 an agent would take as "go on"
        try:
            from toolkit.agents.main import main as agent_hook_main
        except Exception:  # a broken install: a gate that cannot load must not wave a write through
            return _hook_unavailable(args[1:])
        return agent_hook_main(args[1:])
    from toolkit.infra.output import guarded

    # a stdout that cannot be written is exit 3 with OUTPUT_UNWRITABLE, never a traceback
    return guarded(lambda: _dispatch(args))


def _hook_unavailable(args: list[str]) -> int:
    """``agent-hook`` whose code cannot be imported: exit 2 (the agent blocks) before a tool call or
    a prompt, exit 1 (shown to the user, the session goes on) elsewhere."""
    sys.stderr.write("error[HOOK_UNAVAILABLE]: workgroup agent-hook could not load; reinstall the toolkit\n")
    event = args[0].replace("-", "").replace("_", "").lower() if args else ""
    return 2 if event in ("", "pretooluse", "userpromptsubmit") else 1


def _dispatch(args: list[str]) -> int:
    if args[:1] == ["statusline"] and not {"-h", "--help"} & set(args[1:]):
        # Claude Code runs the status line after every change of the conversation: no typer app
        from toolkit.agents.statusline import main as statusline_main

        return statusline_main(args[1:])
    from toolkit.cli import run

    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
