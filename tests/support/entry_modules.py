"""Run a console script the way its generated launcher does and record every module it loaded
(``sys.modules`` written to a side file whatever the exit code), for the start-up tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "scripts"
]

WRAPPER = """\
import importlib, json, sys
side, target = sys.argv[1], sys.argv[2]
sys.argv = [sys.argv[3]] + sys.argv[4:]
module, _, func = target.partition(":")
code = 0
try:
    code = getattr(importlib.import_module(module), func)()
except SystemExit as exc:
    code = exc.code
finally:
    with open(side, "w", encoding="utf-8") as fh:
        json.dump(sorted(sys.modules), fh)
raise SystemExit(code)
"""


def entry_modules(
    tmp_path: Path,
    script: str,
    *args: str,
    stdin: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run console script ``script`` through the wrapper; the process and every module it loaded."""
    wrapper = tmp_path / "entry_wrapper.py"
    wrapper.write_text(WRAPPER, encoding="utf-8")
    side = tmp_path / f"modules-{script}.json"
    side.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, str(wrapper), str(side), SCRIPTS[script], script, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd or tmp_path,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
    assert side.is_file(), f"{script} did not finish: {proc.stderr[-2000:]}"
    modules: list[str] = json.loads(side.read_text(encoding="utf-8"))
    return proc, set(modules)
