"""One home per shared rule: the helpers that used to be copied live in one module each, and a copy
added anywhere else fails here (issue 12's list: the strict-JSON loader, the non-echoing argparse
parser of the CM scripts, the identifier patterns, a command's request reader, ``--now`` parsing)."""

from __future__ import annotations

import ast
from pathlib import Path

from support.source import package_sources

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "toolkit"

IDENTIFIER_PATTERNS = {
    r"^measurement-[a-f0-9]{16,64}\Z",
    r"^[0-9a-f]{40}\Z",
    r"^anon-[0-9a-f]{16,64}\Z",
    r"^[A-Za-z0-9][A-Za-z0-9._-]{7,127}$",
}
# function name -> the one module that may define it
HOMES = {
    "loads_strict": "toolkit/core/strictjson.py",
    "reject_constant": "toolkit/core/strictjson.py",
    "json_depth_exceeds": "toolkit/core/strictjson.py",
    "read_json_request": "toolkit/infra/store.py",
    "moment_or_now": "toolkit/infra/clock.py",
    "now_utc": "toolkit/infra/clock.py",
    "merge_parts": "toolkit/usage/fold.py",
    "read_owners_registry": "toolkit/infra/gitlocation.py",
    "ordered_map": "toolkit/infra/forkmap.py",
}
RETIRED = {"_read_request", "_read_input", "_now", "_reject_constant", "_no_constants", "_reject", "_Parser"}


def _offences(path: Path, tree: ast.AST) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "parse_constant" and rel != HOMES["loads_strict"]:
            found.append(f"{rel}:{node.value.lineno}: a strict-JSON decoder outside core/strictjson")
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            home = HOMES.get(node.name)
            if home is not None and home != rel:
                found.append(f"{rel}:{node.lineno}: {node.name} is defined in {home}")
            if node.name in RETIRED:
                found.append(f"{rel}:{node.lineno}: {node.name} is a copy of a shared helper")
        if isinstance(node, ast.ClassDef) and rel != "toolkit/infra/argparser.py":
            if any(ast.unparse(base) == "argparse.ArgumentParser" for base in node.bases):
                found.append(f"{rel}:{node.lineno}: a parser class outside infra/argparser")
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "re.compile"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in IDENTIFIER_PATTERNS
            and rel != "toolkit/core/identifiers.py"
        ):
            found.append(f"{rel}:{node.lineno}: an identifier pattern outside core/identifiers")
    return found


def _scan(paths: list[Path]) -> list[str]:
    return [o for p in paths for o in _offences(p, ast.parse(p.read_text(encoding="utf-8")))]


def test_each_shared_helper_has_one_home() -> None:
    assert _scan(package_sources()) == []  # toolkit/ and hooks/


def test_a_copy_is_found(tmp_path: Path) -> None:
    copies = {
        "json": "import json\nv = json.loads('1', parse_constant=float)\n",
        "parser": "import argparse\nclass P(argparse.ArgumentParser):\n    pass\n",
        "pattern": "import re\nSHA = re.compile(r'^[0-9a-f]{40}\\Z')\n",
        "reader": "def _read_request(source):\n    return source\n",
        "moved": "def json_depth_exceeds(raw):\n    return False\n",
    }
    fake = ROOT / "toolkit" / "commands" / "copy.py"  # named as if it were in the package
    for what, source in copies.items():
        assert _offences(fake, ast.parse(source)), what
