"""One error base, one exit-code map, and no blanket ``except`` that turns a bug into an answer."""

from __future__ import annotations

import ast
import errno
from pathlib import Path

import pytest
from support.source import package_sources

from toolkit.core.errors import (
    EnvironmentFailure,
    ExitCode,
    InvalidInput,
    Refused,
    ToolkitError,
    exit_code_for,
)

ROOT = Path(__file__).resolve().parents[2]
SOURCES = package_sources()  # toolkit/ and hooks/

# Blanket handlers that stay, each at a boundary where the contract says what an unexpected failure is.
BLANKET_ALLOWED = {
    ("toolkit/cli.py", "_run"): "click's usage errors and aborts arrive as plain exceptions",
    ("toolkit/runtime/protocol.py", "execute"): "the reference frame: an uncoded failure is INVALID_REQUEST",
    ("toolkit/demo/runner.py", "run_demo"): "a failing demo step is reported and the demo goes on",
    ("toolkit/infra/forkmap.py", "_worker"): "a worker's failed task comes back MISSING; the parent does it",
    ("toolkit/agents/statusline.py", "main"): "a status line prints a fixed line, never a traceback",
    (
        "toolkit/agents/main.py",
        "answer",
    ): "a crashing hook fails open at the agent: the gate answers deny instead",
    (
        "toolkit/entry.py",
        "main",
    ): "an agent hook that cannot load blocks the tool call instead of failing open",
}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _base_names(node: ast.ClassDef) -> list[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


def test_every_exception_class_derives_from_the_one_base() -> None:
    builtin_roots = {"Exception", "BaseException", "ValueError", "RuntimeError", "OSError", "KeyError"}
    ours = {"ToolkitError", "InvalidInput", "Refused", "EnvironmentFailure"}
    classes: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = _base_names(node)
                where[node.name] = _rel(path)

    def is_error(name: str, seen: frozenset[str] = frozenset()) -> bool:
        bases = classes.get(name, [])
        return name in builtin_roots or any(b not in seen and is_error(b, seen | {name}) for b in bases)

    def in_family(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in ours:
            return True
        return any(b not in seen and in_family(b, seen | {name}) for b in classes.get(name, []))

    strays = [
        f"{where[name]}: {name}({', '.join(bases)})"
        for name, bases in classes.items()
        if name not in ours and any(is_error(b) for b in bases) and not in_family(name)
    ]
    assert strays == []


def _enclosing_function(tree: ast.AST, target: ast.AST) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(child is target for child in ast.walk(node)):
                inner = _enclosing_function_in(node, target)
                return inner or node.name
    return "<module>"


def _enclosing_function_in(outer: ast.AST, target: ast.AST) -> str | None:
    for node in ast.iter_child_nodes(outer):
        for sub in ast.walk(node):
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                child is target for child in ast.walk(sub)
            ):
                return _enclosing_function_in(sub, target) or sub.name
    return None


def test_no_blanket_except_outside_the_named_boundaries() -> None:
    found: set[tuple[str, str]] = set()
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ExceptHandler) or node.type is None:
                continue
            names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            blanket = any(isinstance(n, ast.Name) and n.id in {"Exception", "BaseException"} for n in names)
            reraises = any(isinstance(stmt, ast.Raise) and stmt.exc is None for stmt in node.body)
            if blanket and not reraises:  # clean-up handlers that re-raise are fine
                found.add((_rel(path), _enclosing_function(tree, node)))
    assert found <= set(BLANKET_ALLOWED), sorted(found - set(BLANKET_ALLOWED))


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (InvalidInput("X", "bad"), ExitCode.USAGE),
        (Refused("X", "no"), ExitCode.FINDINGS),
        (EnvironmentFailure("X", "env"), ExitCode.ENVIRONMENT),
        (ToolkitError("X", "custom", exit_code=ExitCode.FINDINGS), ExitCode.FINDINGS),
        (PermissionError(errno.EACCES, "denied"), ExitCode.ENVIRONMENT),
        (OSError(errno.ENOSPC, "full"), ExitCode.ENVIRONMENT),
        (TimeoutError(), ExitCode.ENVIRONMENT),
        (BrokenPipeError(), ExitCode.ENVIRONMENT),
        (KeyboardInterrupt(), 130),
        (ValueError("x"), ExitCode.USAGE),
    ],
)
def test_one_exit_code_map(exc: BaseException, code: int) -> None:
    assert exit_code_for(exc) == code


@pytest.mark.parametrize(
    "raised", [PermissionError(errno.EACCES, "denied"), OSError(errno.ENOSPC, "full"), KeyboardInterrupt()]
)
def test_cli_run_uses_the_same_map(
    raised: BaseException, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cli.run` answers what `exit_code_for` says (the two disagreed on OSError), without a traceback."""
    import typer

    from toolkit import cli

    app = typer.Typer()

    @app.command()
    def boom() -> None:
        raise raised

    @app.command()
    def other() -> None:  # two commands, so "boom" is a sub-command name
        pass

    monkeypatch.setattr(cli, "build_app", lambda: app)
    assert cli.run(["boom"]) == exit_code_for(raised)
    assert "Traceback" not in capsys.readouterr().err
