"""``workgroup ... --help`` is typer's own rendering through the one front door (``toolkit.cli.run``).

What a help page must say is checked, not its bytes: the usage line, every option of the command,
the exit codes; and a command-line refusal is a coded ``error[USAGE]`` line from the one error
handler, escaped, the inline value of an unknown option never echoed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.harness import ROOT, cli

from toolkit.cli import COMMAND_MODULES, load_command


def _pages() -> list[tuple[tuple[str, ...], Any]]:
    """(path, click command) of every command and sub-command whose --help typer renders."""
    pages: list[tuple[tuple[str, ...], Any]] = []

    def walk(path: tuple[str, ...], command: Any) -> None:
        if not getattr(command, "add_help_option", True):  # passes --help on (the CM scripts' argparse)
            return
        pages.append((path, command))
        for sub_name, sub in getattr(command, "commands", {}).items():
            walk((*path, sub_name), sub)

    for module in COMMAND_MODULES:
        name, command = load_command(module)
        if name not in ("runtime", "agent-hook"):  # protocols dispatched before the typer app
            walk((name,), command)
    return pages


PAGES = _pages()


def test_the_removed_help_store_stays_removed() -> None:
    # one front door: no help texts rendered ahead, no second renderer to keep in step
    assert not (ROOT / "toolkit" / "_help_texts.py").exists()
    assert not (ROOT / "toolkit" / "cli_help.py").exists()
    entry = (ROOT / "toolkit" / "entry.py").read_text(encoding="utf-8")
    assert "cli_help" not in entry and "run_cli" not in entry and "_privacy_scan" not in entry


@pytest.mark.parametrize(("path", "command"), PAGES, ids=[" ".join(p) for p, _ in PAGES])
def test_every_help_page_names_its_usage_options_and_exit_codes(path: tuple[str, ...], command: Any) -> None:
    result = cli(*path, "--help", env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert text.startswith(f"Usage: workgroup {' '.join(path)} [OPTIONS]"), text[:200]
    for param in command.params:
        for opt in param.opts:
            if opt.startswith("-"):
                assert opt in text, (path, opt)
    assert "-h, --help" in text
    subs = getattr(command, "commands", None)
    if subs:
        assert "Commands:" in text and all(name in text for name in subs)
    elif path[0] != "cm":  # the CM reference scripts keep their own codes (their own help)
        assert "Exit codes: 0 " in text, path


def test_top_level_help_lists_every_command_and_the_exit_codes() -> None:
    from toolkit.cli import COMMAND_HELP

    text = cli("--help").stdout
    assert text.startswith("Usage: workgroup [OPTIONS] COMMAND [ARGS]...")
    assert "Exit codes (every command but `runtime` and `cm`)" in text
    assert all(f"\n  {name} " in text for name, _ in COMMAND_HELP.values())


@pytest.mark.parametrize("script", ["call", "log-event", "usage-report"])
def test_cm_script_help_is_the_scripts_own(script: str) -> None:
    result = cli("cm", script, "--help")
    assert result.exit_code == 0 and result.stdout.startswith("usage: cm-"), result.stderr


@pytest.mark.parametrize("stdout", ["closed", "full"])
def test_a_stdout_that_refuses_the_help_is_an_environment_error(stdout: str) -> None:
    if stdout == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    target = {"closed": "exec 1>&-", "full": "exec 1>/dev/full"}[stdout]
    script = f'{target}; exec "$0" -m toolkit capsule seal --help'
    proc = subprocess.run(
        ["sh", "-c", script, sys.executable],
        capture_output=False,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=dict(os.environ),
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr == "error[OUTPUT_UNWRITABLE]: stdout cannot be written (EBADF)\n" or (
        stdout == "full" and proc.stderr == "error[OUTPUT_UNWRITABLE]: stdout cannot be written (ENOSPC)\n"
    )


# --- the one error handler: command-line refusals ---------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("capsule", "seal", "--token=sk-live-0123456789abcdef"),  # a typer command's unknown option
        ("verify", "--token=sk-live-0123456789abcdef"),
        ("usage", "session", "--token=sk-live-0123456789abcdef"),
        ("privacy", "scan", "--token=sk-live-0123456789abcdef"),
    ],
)
def test_an_unknown_option_is_a_coded_usage_error_without_its_value(
    argv: tuple[str, ...], tmp_path: Path
) -> None:
    result = cli(*argv, cwd=tmp_path)
    assert result.exit_code == 2 and result.stdout == ""
    assert "error[USAGE]: unknown option --token" in result.stderr
    assert "sk-live" not in result.stderr
    assert result.stderr.startswith(f"Usage: workgroup {' '.join(argv[:-1])} [OPTIONS]")
    assert "Traceback" not in result.stderr


def test_a_control_character_in_a_refused_command_line_is_shown_escaped(tmp_path: Path) -> None:
    for argv in (("capsule", "seal", "--a\x1b]0;x\x07"), ("owners", "\x1b[31mnope")):
        result = cli(*argv, cwd=tmp_path)
        assert result.exit_code == 2 and "error[USAGE]" in result.stderr, result.stderr
        assert "\x1b" not in result.stderr and "\x07" not in result.stderr


def test_a_bad_value_is_a_coded_usage_error(tmp_path: Path) -> None:
    result = cli("privacy", "scan", "--format", "xml", cwd=tmp_path)
    assert result.exit_code == 2 and result.stdout == ""
    assert "error[USAGE]: Invalid value for '--format'" in result.stderr


def test_a_usage_error_in_json_mode_is_one_json_document(tmp_path: Path) -> None:
    result = cli("verify", "--json", "--rev", cwd=tmp_path)  # --rev without its value
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "USAGE"
    sarif = cli("verify", "--json", "--format", "sarif", "--rev", cwd=tmp_path)
    assert sarif.exit_code == 2 and sarif.stdout == ""  # the last --format decides: no JSON for sarif
