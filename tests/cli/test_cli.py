"""The CLI shell: lazy command loading (the help table agrees with the real commands), the help of
every command is light (no pydantic, no pygit2, only its own command module), ``--version``, and the
common commands' real runs load no pydantic (typer is held below 0.29, which converts every option
through a pydantic adapter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.harness import ROOT, cli, run_workgroup

import toolkit
from toolkit.cli import COMMAND_HELP, COMMAND_MODULES, load_command

HEAVY = ("pydantic", "pydantic_core", "pygit2")

# Runs `workgroup ARGS` in-process as the console script does, then prints the loaded modules.
PROBE = """\
import json, sys
from toolkit.entry import main
args = json.loads(sys.argv[1])
code = main(args)
sys.stdout.flush()
sys.stderr.write("\\n@@" + json.dumps(sorted(sys.modules)) + "\\n")
raise SystemExit(code)
"""


def _probe(
    *args: str, columns: int = 80, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": str(columns), **(env or {})},
    )
    marker = next(line for line in proc.stderr.splitlines() if line.startswith("@@"))
    return proc, set(json.loads(marker[2:]))


def _tree() -> list[tuple[str, ...]]:
    """Every command path: ("privacy",), ("privacy", "scan"), ..."""
    paths: list[tuple[str, ...]] = []
    for module in COMMAND_MODULES:
        name, command = load_command(module)
        paths.append((name,))
        for sub in getattr(command, "commands", {}):
            paths.append((name, sub))
    return paths


def test_the_help_table_agrees_with_the_real_commands() -> None:
    # one line per command module, in the same order, with the command's real name and short help
    assert list(COMMAND_HELP) == list(COMMAND_MODULES)
    for module in COMMAND_MODULES:
        name, command = load_command(module)
        assert COMMAND_HELP[module] == (name, command.get_short_help_str(10**6)), module
    names = [n for n, _ in COMMAND_HELP.values()]
    assert len(names) == len(set(names))


def test_every_command_runs_through_the_lazy_group() -> None:
    listing = cli("--help")
    assert listing.exit_code == 0
    for name, _ in COMMAND_HELP.values():
        assert f"\n  {name} " in listing.stdout, name
    unknown = cli("no-such-command")
    assert unknown.exit_code == 2 and "No such command" in unknown.stderr


def test_top_level_help_imports_no_command_module() -> None:
    proc, loaded = _probe("--help")
    assert proc.returncode == 0 and "Commands:" in proc.stdout
    assert not [m for m in loaded if m.startswith("toolkit.commands.")]
    assert not loaded & set(HEAVY)
    assert "Exit codes" in proc.stdout and "--version" in proc.stdout


@pytest.mark.parametrize("path", _tree(), ids=" ".join)
def test_every_help_is_light_and_loads_one_command_module(path: tuple[str, ...]) -> None:
    proc, loaded = _probe(*path, "--help", columns=60)
    assert proc.returncode == 0, proc.stderr
    assert sorted(loaded & set(HEAVY)) == []
    if path == ("runtime",):  # dispatched to the lean standard-library protocol before typer
        assert "usage: workgroup runtime" in proc.stderr
        return
    if path == ("agent-hook",):  # dispatched to the lean hook entry before typer (toolkit/agents/main.py)
        assert proc.stdout.startswith("Usage: workgroup agent-hook [OPTIONS] EVENT")
        assert "typer" not in loaded and not [m for m in loaded if m.startswith("toolkit.commands")]
        return
    assert "typer" in loaded  # the one front door
    if path[0] == "cm" and len(path) == 2:  # the drop-in CM scripts keep their own argparse help
        assert proc.stdout.startswith("usage: cm-")
    else:
        assert proc.stdout.startswith(f"Usage: workgroup {' '.join(path)}")
    modules = {m for m in loaded if m.startswith("toolkit.commands.") and m != "toolkit.commands._common"}
    # a command may keep a sub-command in a sibling module (telemetry -> telemetry_export)
    roots = {m for m in modules if not any(m.startswith(other + "_") for other in modules)}
    assert len(roots) == 1, modules


@pytest.mark.parametrize(
    "args",
    [
        ("usage", "--json", "--source", "claude"),
        ("usage", "session", "abcd", "--source", "codex"),
        ("privacy", "scan", "README.md"),
        ("verify",),
        ("owners", "list"),
    ],
    ids=" ".join,
)
def test_common_commands_convert_their_options_without_pydantic(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    # each takes options that are not bools (a choice, a path, a string); with typer 0.29 each
    # of these runs loaded pydantic and pydantic_core (about 50 ms) to convert them
    proc, loaded = _probe(*args, env={"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": ""})
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 1, 3), proc.stderr
    assert not loaded & {"pydantic", "pydantic_core"}, proc.stderr


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_is_the_one_version(flag: str) -> None:
    proc, loaded = _probe(flag)
    assert proc.returncode == 0 and proc.stdout == f"workgroup {toolkit.__version__}\n"
    assert not loaded & set(HEAVY)
    # typer's eager --version answers before the rest
    via_typer = cli(flag, "--help")
    assert via_typer.exit_code == 0 and via_typer.stdout == proc.stdout
    # the wheel's version comes from the same attribute (no second copy in pyproject.toml)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "toolkit.__version__"}
    sub = run_workgroup(flag)
    assert sub.returncode == 0 and sub.stdout.decode() == proc.stdout
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {toolkit.__version__} " in changelog or f"## [{toolkit.__version__}]" in changelog


def test_the_release_tag_appears_where_init_writes_it() -> None:
    from toolkit.workflow.hook_source import release_tag

    assert release_tag() == f"v{toolkit.__version__}"
    assert release_tag() in (Path(ROOT) / "docs" / "install.md").read_text(encoding="utf-8")


def _leaves(name: str, command: object) -> list[tuple[str, object]]:
    subs = getattr(command, "commands", None)
    if subs:
        return [leaf for sub, cmd in subs.items() for leaf in _leaves(f"{name} {sub}", cmd)]
    return [(name, command)]


def test_every_command_states_its_exit_codes_and_describes_every_option() -> None:
    for module in COMMAND_MODULES:
        if module in ("runtime_cmd", "cm"):  # the reference protocols: their own help and codes
            continue
        name, command = load_command(module)
        for full, leaf in _leaves(name, command):
            assert "Exit codes: 0 " in (leaf.help or ""), full  # type: ignore[attr-defined]
            for param in leaf.params:  # type: ignore[attr-defined]
                assert (param.help or "").strip(), (full, param.name)


def test_json_errors_are_one_document_on_stdout(git_repo: object, tmp_path: Path) -> None:
    # an error before any answer: the error object; an answer that states the refusal: only it
    missing = run_workgroup("capsule", "seal", str(tmp_path / "none.json"), "--json")
    assert missing.returncode == 2
    assert list(json.loads(missing.stdout)) == ["error"] and len(missing.stdout.splitlines()) == 1
    answer = tmp_path / "answer.json"
    answer.write_text('{"notes": "x"}', encoding="utf-8")
    refused = run_workgroup("packet", "check-output", "reviewer", str(answer), "--json")
    assert refused.returncode == 1 and len(refused.stdout.splitlines()) == 1
    assert "error" not in json.loads(refused.stdout)
    plain = run_workgroup("capsule", "seal", str(tmp_path / "none.json"))
    assert plain.returncode == 2 and plain.stdout == b"" and b"error[" in plain.stderr
