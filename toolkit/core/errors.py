"""One error base with codes, and the single map from error kind to process exit code.

The core raises ``ToolkitError``; only the shell (CLI, hooks, runtime protocol) turns it into
output and an exit code. Messages are written by us and never echo user input.
"""

from __future__ import annotations

from toolkit.core.display import shown


class ExitCode:
    """The process exit codes (plain ints: this module is on the runtime path, which imports no enum)."""

    OK = 0
    FINDINGS = 1  # findings, a refused decision, a failed check
    USAGE = 2  # usage error or invalid input
    ENVIRONMENT = 3  # no repository, shallow history, lock timeout, unwritable state


class ToolkitError(Exception):
    """Base error: a stable machine ``code`` plus a human ``message`` that never echoes input."""

    exit_code: int = ExitCode.USAGE

    def __init__(
        self,
        code: str,
        message: str,
        *,
        exit_code: int | None = None,
        path: str | None = None,
        lines: tuple[str, ...] = (),
    ) -> None:
        full = message + "".join("\n" + line for line in lines)
        super().__init__(f"{code}: {full}")
        self.code = code
        self.message = full  # the JSON error object's message: the headline and its lines, as given
        self.headline = message
        self.lines = lines  # the message's own further lines (a schema error's fields at fault)
        self.path = path  # the file or JSON path at fault, when there is one (the --json error object)
        if exit_code is not None:
            self.exit_code = exit_code

    def diagnostics(self) -> str:
        """``error[CODE]: message``, then each of the error's own ``lines``. The headline and every
        line go through ``toolkit.core.display.shown`` on their own: a name quoted in the message
        cannot reach the terminal raw, and a line break inside it is shown as ``\\n``, so a hostile
        value cannot start a line that looks like ``error[...]`` or a finding. The only line breaks
        printed are the ones between the error's own lines."""

        return f"error[{self.code}]: {shown(self.headline)}" + "".join(
            "\n" + shown(line) for line in self.lines
        )


class InvalidInput(ToolkitError):
    exit_code = ExitCode.USAGE


class Refused(ToolkitError):
    exit_code = ExitCode.FINDINGS


class EnvironmentFailure(ToolkitError):
    exit_code = ExitCode.ENVIRONMENT


def exit_code_for(exc: BaseException) -> int:
    """The one place that maps an exception to an exit code.

    Coded errors carry their own; the operating system refusing a file, a lock or a pipe is the
    environment (3); a keyboard interrupt is 130 as shells expect; anything else is a usage error.
    """
    if isinstance(exc, ToolkitError):
        return int(exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, OSError):  # PermissionError, TimeoutError, BrokenPipeError ... included
        return ExitCode.ENVIRONMENT
    return ExitCode.USAGE
