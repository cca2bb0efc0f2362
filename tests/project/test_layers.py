"""The import layers: core < infra < runtime, privacy, models < domain < commands and the shells.

A module may import from its own layer or a lower one, never from a higher one (lazy imports
inside functions included): the pure core stays pure, and the runtime never reaches into a
command. The start-up tests keep the heavy libraries off the hot paths; this keeps the shape.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TypeGuard

from support.source import module_name, package_sources

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
    "agents": 3,
    "commands": 4,
    "hooks": 4,
    # top-level shells
    "cli": 4,
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
    for path in package_sources():
        if path.is_relative_to(PACKAGE) and DATA & set(path.relative_to(PACKAGE).parts):
            continue
        name = module_name(path)
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
        offenders += [f"{path.relative_to(ROOT)}:{line}: reads the clock" for line in _clock_reads(path)]
    assert offenders == []


CLOCK_READS = {"now", "utcnow", "today", "time", "time_ns", "monotonic", "perf_counter"}


def _clock_reads(path: Path) -> list[int]:
    """Lines calling a clock reader (``datetime.now()``, ``time.time()``, ...): the clock lives in
    toolkit/infra/clock.py and the runtime adapter, never in core."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) in CLOCK_READS
    ]


def test_the_core_clock_check_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from datetime import UTC, datetime\n\ndef f():\n    return datetime.now(UTC)\n")
    assert _clock_reads(sample) == [4]


# --- the pure runtime -----------------------------------------------------------------------------
# toolkit/runtime/adapter.py does every read of the clock, the environment, the disk and git that
# an operation needs (RuntimeContext, with its reader modules registry_io.py and ledger_io.py);
# protocol.py is the stdin/stdout entry. Every other runtime module is a decision: plain values
# and the context in, no I/O of its own.
RUNTIME_READERS = ("toolkit.runtime.adapter", "toolkit.runtime.registry_io", "toolkit.runtime.ledger_io")
RUNTIME_IO_MODULES = {"adapter.py", "protocol.py", "registry_io.py", "ledger_io.py"}
IO_MODULES = {
    "os",
    "posixpath",
    "ntpath",
    "pathlib",
    "io",
    "sys",
    "glob",
    "fcntl",
    "shutil",
    "tempfile",
    "subprocess",
    "socket",
    "select",
    "http",
    "urllib.request",
    "pygit2",
    "time",
}
# the privacy engine is pure; these privacy modules read files, the environment or git
PRIVACY_IO = {"files", "filters", "gate", "selection", "allowlist", "command"}
# the clock and the file readers, by the name they are called with
IO_CALLS = {"now", "utcnow", "today", "time", "time_ns", "monotonic", "perf_counter", "now_utc"}
IO_CALLS |= {"open", "read_text", "read_bytes", "write_text", "write_bytes", "getenv", "getcwd"}
IO_CALLS |= {"listdir", "scandir", "realpath", "stat", "lstat", "exists", "is_file", "is_dir", "input"}


def _privacy_io(target: str) -> bool:
    parts = target.split(".")
    return parts[:2] == ["toolkit", "privacy"] and len(parts) > 2 and parts[2] in PRIVACY_IO


def _is_type_checking(node: ast.AST) -> TypeGuard[ast.If]:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _io_offences(source: str) -> list[str]:
    """What a decision module's source does that is I/O: imports of I/O modules or of toolkit.infra
    (outside ``if TYPE_CHECKING:`` blocks, lazy imports included) and calls of clock or file readers."""
    tree = ast.parse(source)
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if _is_type_checking(node):
            type_only |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    found: list[str] = []
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            targets += [alias.name for alias in node.names if alias.name in IO_CALLS]
        line = getattr(node, "lineno", 0)
        for target in targets:
            if target.split(".")[0] in IO_MODULES or target in IO_MODULES or target in IO_CALLS:
                found.append(f"{line}: imports {target}")
            elif target.startswith("toolkit.infra"):
                found.append(f"{line}: imports {target} (infra reads disk, git and environment)")
            elif target.startswith((*RUNTIME_READERS, "toolkit.runtime.protocol")):
                found.append(f"{line}: imports {target} (the context is handed in, never built)")
            elif _privacy_io(target):
                found.append(f"{line}: imports {target} (a privacy module that reads files)")
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "ctx"
            ):
                continue  # the context's readers: the adapter's I/O, handed in
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            if name in IO_CALLS:
                found.append(f"{node.lineno}: calls {name}()")
    return sorted(set(found))


def test_runtime_decision_modules_do_no_io() -> None:
    decisions = sorted(p for p in (PACKAGE / "runtime").glob("*.py") if p.name not in RUNTIME_IO_MODULES)
    assert len(decisions) > 10 and (PACKAGE / "runtime" / "router.py") in decisions
    offenders = [
        f"{path.relative_to(ROOT)}:{offence}"
        for path in decisions
        for offence in _io_offences(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_runtime_adapter_is_where_the_io_is() -> None:
    # the check finds the reads it forbids elsewhere: the adapter itself is full of them
    offences = _io_offences((PACKAGE / "runtime" / "adapter.py").read_text(encoding="utf-8"))
    assert any("imports os" in o for o in offences) and any("now_utc" in o for o in offences)
    assert any("toolkit.infra" in o for o in offences) and any("realpath" in o for o in offences)


BAD_DECISIONS = {
    "clock": "from datetime import UTC, datetime\n\ndef decide():\n    return datetime.now(UTC)\n",
    "clock helper": "def decide():\n    from toolkit.infra.clock import now_utc\n\n    return now_utc()\n",
    "wall time": "import time\n\ndef decide():\n    return time.time()\n",
    "file read": "def decide(path):\n    with open(path) as fh:\n        return fh.read()\n",
    "pathlib read": "def decide(p):\n    return p.read_text()\n",
    "realpath": "def decide(ctx, path):\n    return ctx.cwd.realpath(path)\n",
    "os": "def decide():\n    import os\n\n    return os.environ\n",
    "infra": "def decide(cwd):\n    from toolkit.infra.gitlocation import find_git\n\n    return find_git(cwd)\n",
    "git": "import pygit2\n",
    "subprocess": "from subprocess import run\n",
    "a context built inside": "def decide():\n    from toolkit.runtime.adapter import RuntimeContext\n\n    return RuntimeContext()\n",
    "an adapter reader called directly": "from toolkit.runtime.registry_io import writer_registry\n",
    "privacy file reader": "from toolkit.privacy.files import read_candidates\n",
}


def test_the_runtime_purity_check_can_fail() -> None:
    for what, source in BAD_DECISIONS.items():
        assert _io_offences(source), what
    typed = "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from toolkit.infra.paths import Canonicalizer\n"
    assert _io_offences(typed) == []
    assert _io_offences("def decide(ctx):\n    return ctx.now(), ctx.env('X')\n") == []


# --- package boundaries ---------------------------------------------------------------------------
def _package_of(dotted: str) -> str | None:
    """``toolkit.cm.events`` -> ``cm``; top-level shells (``toolkit.cli``) belong to no package."""
    parts = dotted.split(".")
    if parts[0] != "toolkit" or len(parts) < 3:
        return None
    return parts[1]


def _private_crossings(path: Path, dotted: str | None = None) -> list[str]:
    """Imports of another package's private module or private name (``_x``; dunders are public)."""
    mine = _package_of(dotted or module_name(path))
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
            continue
        theirs = node.module.split(".")
        if theirs[0] != "toolkit" or len(theirs) < 2 or theirs[1] == mine:
            continue
        names = [*theirs[2:], *(alias.name for alias in node.names)]
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        if private:
            found.append(f"{path.name}:{node.lineno}: {node.module} {private}")
    return found


def test_no_module_imports_another_packages_private_names() -> None:
    offenders = [line for path in package_sources() for line in _private_crossings(path)]
    assert offenders == []


def test_the_private_name_check_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from toolkit.cm.report import _hidden\nfrom toolkit.otel._x import y\n")
    found = _private_crossings(sample, "toolkit.otel.sample")
    assert [line.split(": ", 1)[1] for line in found] == ["toolkit.cm.report ['_hidden']"]


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in package_sources():
        mine = _package_of(module_name(path))
        if mine is None:
            continue
        for _line, target in _imports(path):
            theirs = _package_of(target)
            if theirs is not None and theirs != mine and theirs not in DATA:
                graph.setdefault(mine, set()).add(theirs)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every package on a cycle, as the cycle through it that a depth-first walk finds first."""
    found = []
    for start in sorted(graph):
        stack = [(start, [start])]
        seen: set[str] = set()
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    found.append(trail)
                    stack = []
                    break
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    return found


def test_no_import_cycle_between_packages() -> None:
    """Layers order packages across levels; this also forbids cycles within one level (infra and
    models used to import each other, lazily; cm and otel did too, through the live export of a
    CM row, which now goes through toolkit.infra.livespool)."""
    assert _cycles(_package_graph()) == []


def test_the_cycle_check_can_fail() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
    ]


def test_every_package_declares_all_and_every_entry_exists() -> None:
    problems = []
    for init in sorted(p for p in package_sources() if p.name == "__init__.py"):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        declared = [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        ]
        if not declared:
            problems.append(f"{init.relative_to(ROOT)}: no __all__")
            continue
        names = ast.literal_eval(declared[0])
        defined = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
            a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
        }
        for name in names:
            folder = init.parent
            if not (
                (folder / f"{name}.py").is_file()
                or (folder / name / "__init__.py").is_file()
                or name in defined
            ):
                problems.append(f"{init.relative_to(ROOT)}: {name} is neither a module nor defined there")
    assert problems == []
