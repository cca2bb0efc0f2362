"""The import layers: core < infra < runtime, privacy, models < domain < commands and the shells.

A module may import from its own layer or a lower one, never from a higher one (lazy imports
inside functions included): the pure core stays pure, and the runtime never reaches into a
command. The start-up tests keep the heavy libraries off the hot paths; this keeps the shape.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "toolkit"

LAYERS: dict[str, int] = {
    "core": 0,
    "infra": 1,
    "runtime": 2,
    "privacy": 2,
    "models": 1,
    "records": 3,
    "workflow": 3,
    "cm": 3,
    "usage": 3,
    "otel": 3,
    "demo": 3,
    "commands": 4,
    "hooks": 4,
    # top-level shells
    "cli": 4,
    "cli_help": 4,
    "_help_texts": 4,
    "entry": 4,
    "__main__": 4,
    "__init__": 0,
}
# Data folders shipped inside the package, not code layers.
DATA = {"templates", "corpus", "schemas"}


def _layer_of(dotted: str) -> int | None:
    parts = dotted.split(".")
    if parts[0] != "toolkit" or len(parts) < 2:
        return None
    if parts[1] in DATA:
        return None
    if parts[1].startswith("__") and parts[1] != "__main__":  # the package's own metadata (__version__)
        return 0
    return LAYERS.get(parts[1], -1)


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join(rel.parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "toolkit":
                found += [(node.lineno, f"toolkit.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def test_every_package_has_a_layer() -> None:
    names = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    code = {n for n in names if not n.startswith(".")} - DATA
    code = {n for n in code if (PACKAGE / n).is_dir() or (PACKAGE / f"{n}.py").is_file()}
    assert code <= set(LAYERS), sorted(code - set(LAYERS))


def test_no_module_imports_from_a_higher_layer() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if DATA & set(path.relative_to(PACKAGE).parts):
            continue
        name = _module_name(path)
        mine = _layer_of(name)
        assert mine is not None and mine >= 0, name
        for line, target in _imports(path):
            theirs = _layer_of(target)
            if theirs is None:
                continue
            assert theirs >= 0, f"{name} imports {target}, which has no layer"
            if theirs > mine:
                violations.append(
                    f"{path.relative_to(ROOT)}:{line}: {name} (layer {mine}) imports {target} ({theirs})"
                )
    assert violations == []


def test_core_does_no_io() -> None:
    """core modules import nothing that reads disk, git, the network or the environment."""
    forbidden = {"os", "subprocess", "socket", "pygit2", "shutil", "tempfile", "http", "urllib.request"}
    offenders = []
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        for line, target in _imports(path):
            if target.split(".")[0] in forbidden or target in forbidden:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {target}")
    assert offenders == []
