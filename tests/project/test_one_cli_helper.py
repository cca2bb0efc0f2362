"""The suite runs a console script in-process one way only: ``support.harness.cli``.

No test builds its own runner: no ``typer.testing.CliRunner``, no direct call of ``toolkit.cli.run``
or of a console script's ``main`` (``toolkit.entry``, the cm scripts, the hooks) with its own
capture. Code inside a child process's ``-c`` string is a real process and is not looked at.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
# module -> the function its console script calls; ``toolkit.cli.run`` is what ``workgroup`` ends in
ENTRY_POINTS = {
    **{value.partition(":")[0]: value.partition(":")[2] for value in SCRIPTS.values()},
    "toolkit.cli": "run",
}
# the few direct calls that are not a CLI run, each with its reason
ALLOWED = {
    ("project/test_errors.py", "toolkit.cli.run"): "cli.run over a stand-in app: the exit-code map itself",
    (
        "cm/test_cm_adapter.py",
        "toolkit.cm.events.main",
    ): "a concurrent writer inside the fake server's thread",
}


def direct_runs(source: str) -> list[tuple[int, str]]:
    """(line, what) for every way around the shared helper in one test module."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    modules: dict[str, str] = {}  # local name -> entry-point module it is bound to
    functions: dict[str, str] = {}  # local name -> "module.function" of an entry point
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("typer.testing"):
                    found.append((node.lineno, "typer.testing"))
                if alias.name in ENTRY_POINTS:
                    modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "typer.testing":
                found.append((node.lineno, "typer.testing"))
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in ENTRY_POINTS:
                    modules[alias.asname or alias.name] = full
                elif ENTRY_POINTS.get(node.module) == alias.name:
                    functions[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in functions:
            found.append((node.lineno, functions[func.id]))
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module = modules.get(func.value.id)
            if module is not None and ENTRY_POINTS[module] == func.attr:
                found.append((node.lineno, f"{module}.{func.attr}"))
    return found


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from typer.testing import CliRunner\n", [(1, "typer.testing")]),
        ("from toolkit.cli import run\nrun(['x'])\n", [(2, "toolkit.cli.run")]),
        ("from toolkit import cli\ncli.run(['x'])\n", [(2, "toolkit.cli.run")]),
        ("from toolkit.entry import main\nmain(['runtime'])\n", [(2, "toolkit.entry.main")]),
        ("from toolkit.cm import events\nevents.main([])\n", [(2, "toolkit.cm.events.main")]),
        ("from toolkit.hooks.skills import main as hook\nhook([])\n", [(2, "toolkit.hooks.skills.main")]),
        ("import toolkit.cm.report as report\nreport.main([])\n", [(2, "toolkit.cm.report.main")]),
        ("from toolkit.cm import events\nevents.write_event(args)\n", []),  # the writer's API, not its CLI
        ("CODE = 'from toolkit.entry import main; main()'\n", []),  # a child process's script
        ("from conftest import cli\ncli('route')\n", []),
    ],
)
def test_the_scan_finds_direct_runs(source: str, found: list[tuple[int, str]]) -> None:
    assert direct_runs(source) == found


def test_every_in_process_run_goes_through_conftest_cli() -> None:
    offenders = []
    used = set()
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if rel.startswith("bench/"):
            continue
        for line, what in direct_runs(path.read_text(encoding="utf-8")):
            if (rel, what) in ALLOWED:
                used.add((rel, what))
            else:
                offenders.append(f"{rel}:{line}: {what}")
    assert not offenders, "run it through support.harness.cli: " + ", ".join(offenders)
    assert used == set(ALLOWED), "an allowance nothing needs any more"
