"""Plain ``pytest`` (the console script, no ``python -m``) collects every test module.

``python -m pytest`` puts the working directory on ``sys.path``, so ``from tests.conftest import x``
happened to work there while plain ``pytest`` failed to collect those modules; it also loaded
conftest a second time under another name (its fixtures and module state twice). Shared test code
is imported as the top-level modules the rootdir conftest puts on the path.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _package_imports(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests":
            lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "tests" for a in node.names):
            lines.append(node.lineno)
    return lines


def test_no_test_module_imports_the_tests_package() -> None:
    offenders = {
        str(p.relative_to(TESTS)): lines
        for p in sorted(TESTS.rglob("*.py"))
        if (lines := _package_imports(p))
    }
    assert offenders == {}


def test_plain_pytest_collects_without_errors() -> None:
    pytest_bin = Path(sys.executable).with_name("pytest")
    done = subprocess.run(
        [str(pytest_bin), "--collect-only", "-q", "-p", "no:randomly"],
        cwd=TESTS.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "error" not in done.stdout.splitlines()[-1].lower()
