"""``workgroup agent-hook EVENT [--agent claude|codex]``: one JSON object on stdin, the agent's answer out.

A lean entry (``toolkit.entry`` dispatches here before the typer app loads): a pre-tool check runs
at every tool call. Options are parsed by hand (argparse alone costs milliseconds), the payload is
bounded, and every failure is answered in the agent's terms (``answers.error``): a tool call the
gate could not check is denied, never waved through by a crash.

Options: ``--agent claude|codex`` (default: detected from the payload), ``--lineage ID`` (the
lineage this session writes as; default ``WORKGROUP_LINEAGE_ID``), ``--workflow cm-ai|cm-fix``
(the CM workflow whose run ends at stop; default cm-ai), ``--lang en|zh`` (the verdict's
language; default en).

The entry layer of the hooks: each event's code lives in its own module (``HANDLERS``), which
imports what it needs at its top; this dispatcher imports only the one module the event names, so a
pre-write check never loads the session-start, capsule, stop or usage machinery.
"""

from __future__ import annotations

import gc
import sys

from toolkit.agents import answers
from toolkit.agents.payload import EVENTS, Options, event_name, parse, read_stdin
from toolkit.core.errors import InvalidInput, ToolkitError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from toolkit.agents.answers import Answer
    from toolkit.agents.payload import HookInput

    Handler = Callable[[HookInput, Options], Answer]

# our event name -> the module whose ``handle(hook, options)`` answers it (events not listed: go on)
HANDLERS = {
    "pre-tool-use": "toolkit.agents.prewrite",
    "user-prompt-submit": "toolkit.agents.prompt",
    "session-start": "toolkit.agents.session_start",
    "pre-compact": "toolkit.agents.pre_compact",
    "stop": "toolkit.agents.stop",
    "session-end": "toolkit.agents.stop",
}

USAGE = "Usage: workgroup agent-hook [OPTIONS] EVENT"
HELP = f"""{USAGE}

Answer one agent hook call: the agent's JSON payload on stdin, its answer as exit code and JSON.

EVENT: {", ".join(EVENTS)} (or the agent's own name: PreToolUse, SessionStart, ...).

  pre-tool-use        before a write (Write, Edit, MultiEdit, NotebookEdit; a shell command's
                      apply_patch, redirect or tee): the privacy engine on the text, the writer
                      registry on the path; deny (exit 2, reason on stderr) or go on (exit 0)
  session-start       the handoff and the capsule bound to HEAD as additional context; on resume,
                      the lineage check says whether resuming is allowed or a fresh capsule is due
  pre-compact         seal the session's state into a capsule bound to HEAD
  stop, session-end   the CM boundary verdict, .reviews/session-handoff.md, one efficiency event
                      from the session's transcript (stop_hook_active: nothing, never a block)
  user-prompt-submit  a prompt holding a secret is held back
  post-tool-use, subagent-stop: go on

Options:
  --agent claude|codex     the agent (default: detected from the payload)
  --lineage ID             the lineage this session writes as (default: $WORKGROUP_LINEAGE_ID)
  --workflow cm-ai|cm-fix  the CM workflow whose run ends at stop (default: cm-ai)
  --lang en|zh             the verdict's language (default: en)
  -h, --help               show this message and exit

Exit codes (the agents'): 0 go on (an answer in JSON on stdout), 2 block (the reason on stderr:
a denied write, a held-back prompt, an input the gate could not read), 1 a non-blocking error.
"""


_CHOICES = {"--agent": ("claude", "codex"), "--workflow": ("cm-ai", "cm-fix"), "--lang": ("en", "zh")}


def parse_args(args: list[str]) -> Options:
    options = Options()
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        name, eq, value = arg.partition("=")
        if name in ("--agent", "--lineage", "--workflow", "--lang"):
            if not eq:
                if index >= len(args):
                    raise InvalidInput("USAGE", f"{name} needs a value")
                value = args[index]
                index += 1
            if name in _CHOICES and value not in _CHOICES[name]:
                raise InvalidInput("USAGE", f"{name} must be one of: {', '.join(_CHOICES[name])}")
            setattr(options, name[2:], value)
        elif arg.startswith("-"):
            raise InvalidInput("USAGE", "unknown option (see workgroup agent-hook --help)")
        elif options.event is None:
            options.event = event_name(arg)
        else:
            raise InvalidInput("USAGE", "one EVENT only")
    if options.event is None:
        raise InvalidInput("USAGE", "name the hook EVENT")
    return options


def dispatch(hook: HookInput, options: Options) -> Answer:
    """The event's module answers (imported here, by name: only the event's own code is loaded)."""
    module = HANDLERS.get(hook.event)
    if module is None:
        return answers.allow()  # post-tool-use, subagent-stop
    # the builtin import (a non-empty fromlist returns the module itself): importlib's package and
    # its warnings module would be one more import on every call
    handle: Handler = __import__(module, fromlist=("handle",)).handle
    return handle(hook, options)


def answer(args: list[str], stdin: object) -> Answer:
    """The answer to one call (never raises)."""
    event: str | None = None
    try:
        if any(arg in ("-h", "--help") for arg in args):
            return answers.Answer(0, None, None)
        options = parse_args(args)
        event = options.event
        assert event is not None
        hook = parse(read_stdin(stdin), event, options.agent)
        return dispatch(hook, options)
    except ToolkitError as exc:
        return answers.error(exc.code, exc.headline, event)
    except RecursionError:
        return answers.error("INVALID_PAYLOAD", "the hook input nests too deeply", event)
    except MemoryError:
        return answers.error("OUT_OF_MEMORY", "the hook ran out of memory", event)
    except OSError as exc:
        return answers.error(
            "ENVIRONMENT", f"{exc.__class__.__name__}: the file system refused an operation", event
        )
    except Exception as exc:  # noqa: BLE001 - a crashing hook fails open; ours answers instead
        return answers.error("INTERNAL_ERROR", f"{exc.__class__.__name__} inside the hook", event)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if any(arg in ("-h", "--help") for arg in args):
        sys.stdout.write(HELP)
        return 0
    # One hook call is one short process. The cyclic collector waits while it answers (the work is
    # bounded: one payload of at most 16 MB, JSON, which holds no cycles), and what the call loaded
    # is frozen before the exit, so the interpreter's shutdown does not traverse the privacy engine's
    # rules and tables once more: ~7 ms CPU of a pre-write's ~55 (tests/bench/bench_agent_hooks.py).
    # The exit itself is the ordinary one: atexit handlers run, files are flushed and closed.
    collecting = gc.isenabled()
    gc.disable()
    try:
        stdin = getattr(sys.stdin, "buffer", sys.stdin) if sys.stdin is not None else None
        result = answer(args, stdin if stdin is not None else _Empty())
        try:
            return result.write(sys.stdout, sys.stderr)
        except (OSError, ValueError):  # stdout or stderr gone: the exit code still tells the agent
            return result.code if result.code else 1
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


class _Empty:
    def read(self, size: int = -1) -> bytes:
        return b""


if __name__ == "__main__":
    raise SystemExit(main())
