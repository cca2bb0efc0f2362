"""``workgroup ... --help`` from the help texts typer rendered ahead (toolkit/cli_help.py).

The stored texts must be exactly what typer renders now, the fast path must print them byte for
byte without loading typer, and anything the stored texts do not cover (a narrow terminal, an
edited command, a request that is not plain ``--help``) must still be rendered by typer.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.harness import ROOT

import toolkit
from toolkit import _help_texts
from toolkit.cli_help import (
    CM_SCRIPTS,
    RENDER_COLUMNS,
    help_paths,
    module_text,
    render,
    sources_checksum,
    stored_help,
)

# Runs `workgroup ARGS` in-process as the console script does, then reports the loaded modules.
PROBE = """\
import json, sys
from toolkit.entry import main
code = main(json.loads(sys.argv[1]))
sys.stdout.flush()
sys.stderr.write("\\n@@" + json.dumps(sorted(sys.modules)) + "\\n")
raise SystemExit(code)
"""
PATHS = list(help_paths())


def _probe(
    args: list[str], columns: int = 80, pythonpath: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = {**os.environ, "COLUMNS": str(columns)}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=pythonpath or ROOT,  # `python -c` looks in its working directory first
        env=env,
    )
    marker = next(line for line in proc.stderr.splitlines() if line.startswith("@@"))
    return proc, set(json.loads(marker[2:]))


def test_the_stored_help_texts_are_what_typer_renders_now() -> None:
    current = (ROOT / "toolkit" / "_help_texts.py").read_text(encoding="utf-8")
    assert module_text() == current, "stale help texts: run `python -m toolkit.cli_help --write`"
    assert list(_help_texts.TEXTS) == [" ".join(p) for p in PATHS]
    assert _help_texts.SOURCES_CHECKSUM == sources_checksum(toolkit.__version__)


def test_every_command_and_group_has_a_stored_help() -> None:
    # the walk is the CLI's own: top level, every command, every sub-command; runtime (dispatched
    # earlier) and the CM scripts (argparse help) are the only ones left out
    names = {p[0] for p in PATHS if p}
    assert "runtime" not in names and ("cm",) in PATHS
    assert not [p for p in PATHS if p[:1] == ("cm",) and len(p) > 1]
    assert ("capsule", "seal") in PATHS and ("privacy", "scan") in PATHS and () in PATHS
    assert len(PATHS) >= 60


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "(top)")
def test_fast_help_prints_the_typer_text_without_typer(path: tuple[str, ...]) -> None:
    proc, loaded = _probe([*path, "--help"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == _help_texts.TEXTS[" ".join(path)] == render(path)
    assert "typer" not in {m.split(".")[0] for m in loaded}
    assert not [m for m in loaded if m.startswith(("toolkit.commands", "toolkit.cli."))]
    assert "toolkit.cli" not in loaded


# stored_help: which requests the stored texts answer (pure; every other case goes to typer)
TEXTS = {"": "top\n", "capsule seal": "seal\n"}


@pytest.mark.parametrize(
    ("path", "columns", "checksum", "expected"),
    [
        ((), 80, 7, "top\n"),  # the top level on an 80-column terminal
        (("capsule", "seal"), 200, 7, "seal\n"),  # wider terminals get the same text (click caps at 80)
        (("capsule", "seal"), 79, 7, None),  # narrower: click would wrap differently
        (("capsule", "seal"), 80, 8, None),  # sources changed since the texts were rendered
        (("capsule",), 80, 7, None),  # a path the table does not hold
        (("capsule", "--json"), 80, 7, None),  # options before --help: not a plain help request
        (("capsule seal",), 80, 7, None),  # one argument with a space is no command
        (("capsule", ""), 80, 7, None),  # an empty argument neither
    ],
)
def test_stored_help_answers_only_what_it_was_rendered_for(
    path: tuple[str, ...], columns: int, checksum: int, expected: str | None
) -> None:
    assert stored_help(path, TEXTS, 7, columns, checksum) == expected


def test_the_checksum_follows_every_source_the_texts_come_from(tmp_path: Path) -> None:
    package = tmp_path / "toolkit"
    shutil.copytree(ROOT / "toolkit" / "commands", package / "commands")
    shutil.copy(ROOT / "toolkit" / "cli.py", package / "cli.py")
    site = tmp_path / "site"
    (site / "typer").mkdir(parents=True)
    (site / "typer" / "__init__.py").write_text('__version__ = "1.0.0"\n', encoding="utf-8")

    def checksum(version: str = "1.0") -> int:
        return sources_checksum(version, str(package), [str(site)])

    base = checksum()
    assert checksum() == base and checksum("1.1") != base  # stable; the toolkit version counts
    (site / "typer" / "__init__.py").write_text('__version__ = "1.0.1"\n', encoding="utf-8")
    assert checksum() != base  # typer's version counts
    (site / "typer" / "__init__.py").write_text('__version__ = "1.0.0"\n', encoding="utf-8")
    with (package / "commands" / "capsule.py").open("a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    assert checksum() != base  # an edited command
    (package / "commands" / "capsule.py").write_bytes((ROOT / "toolkit/commands/capsule.py").read_bytes())
    assert checksum() == base
    (package / "commands" / "newcmd.py").write_text("", encoding="utf-8")
    assert checksum() != base  # a new command module


def test_an_edited_command_is_rendered_by_typer_until_regenerated(tmp_path: Path) -> None:
    # a copy of the package whose capsule help changed but whose stored texts did not
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "toolkit", copy / "toolkit", ignore=shutil.ignore_patterns("__pycache__"))
    source = copy / "toolkit" / "commands" / "capsule.py"
    text = source.read_text(encoding="utf-8")
    assert "Context capsules bound to checkpoints." in text
    source.write_text(
        text.replace("Context capsules bound to", "Capsules (edited) bound to"), encoding="utf-8"
    )
    proc, loaded = _probe(["capsule", "--help"], pythonpath=copy)
    assert proc.returncode == 0, proc.stderr
    assert "Capsules (edited) bound to" in proc.stdout and "typer" in {m.split(".")[0] for m in loaded}
    # the unchanged top-level help is still right: it is rendered by typer too (one checksum)
    top, _ = _probe(["--help"], pythonpath=copy)
    assert top.stdout == _help_texts.TEXTS[""]


def test_a_narrow_terminal_gets_typers_own_wrapping() -> None:
    proc, loaded = _probe(["capsule", "seal", "--help"], columns=60)
    assert proc.returncode == 0 and "typer" in {m.split(".")[0] for m in loaded}
    assert proc.stdout == render(("capsule", "seal"), columns=60) != _help_texts.TEXTS["capsule seal"]
    # click wraps prose at min(columns, 80) - 2: the first paragraph breaks earlier than at 80
    assert proc.stdout.splitlines()[2:4] == [
        "  Seal a capsule bound to REV (default HEAD) and print it;",
        "  --write stores it atomically.",
    ]
    assert RENDER_COLUMNS == 80


@pytest.mark.parametrize("script", sorted(CM_SCRIPTS))
def test_cm_script_help_is_the_scripts_own_without_typer(script: str) -> None:
    proc, loaded = _probe(["cm", script, "--help"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == render(("cm", script)) and proc.stdout.startswith("usage: cm-")
    assert "typer" not in {m.split(".")[0] for m in loaded}


def test_the_cm_script_table_agrees_with_the_cm_command() -> None:
    from toolkit.commands.cm import _SCRIPTS

    assert {name: module for name, (module, _) in _SCRIPTS.items()} == CM_SCRIPTS


@pytest.mark.parametrize("stdout", ["closed", "full"])
@pytest.mark.parametrize("columns", [80, 60], ids=["stored", "typer"])
def test_a_stdout_that_refuses_the_help_is_an_environment_error(stdout: str, columns: int) -> None:
    # the stored path answers exactly as the typer path does: exit 3, one line, no traceback
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
        env={**os.environ, "COLUMNS": str(columns)},
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr == "error[OUTPUT_UNWRITABLE]: stdout cannot be written (EBADF)\n" or (
        stdout == "full" and proc.stderr == "error[OUTPUT_UNWRITABLE]: stdout cannot be written (ENOSPC)\n"
    )


def test_the_generator_checks_and_refuses_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli_help import main

    assert main(["--check"]) == 0  # the committed texts are current (see the first test)
    assert main([]) == 2 and main(["--write", "--check"]) == 2
    assert "usage: python -m toolkit.cli_help --write|--check" in capsys.readouterr().err
