"""The content hooks print findings built by ``toolkit.core.findings``, which names its row shapes
(``toolkit.core.finding_shapes``) for annotations only: a hook's cold start must not load them, nor
``toolkit.core.jsontypes`` which they would bring in. (``typing`` is not checked here: a privacy
hook in a repository reads its allowlist through ``toolkit.infra.store``, which imports it.) Each hook runs as its console
script would, on a file it fails (so findings are built and printed), in a fresh interpreter that
records every module it loaded, submodules included."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.entry_samples import HOOK_SAMPLES
from support.harness import GitRepo

pytestmark = pytest.mark.usefixtures("without_coverage")  # what the child imports is the subject

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "scripts"
]
ANNOTATIONS_ONLY = (
    "toolkit.core.finding_shapes",
    "toolkit.core.jsontypes",
    "toolkit.infra.config_shapes",
)
WRAPPER = """\
import importlib, json, sys
side, target = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[3:]
module, _, func = target.partition(":")
code = 0
try:
    code = getattr(importlib.import_module(module), func)()
except SystemExit as exc:
    code = exc.code
finally:
    open(side, "w", encoding="utf-8").write(json.dumps(sorted(sys.modules)))
sys.exit(code)
"""


@pytest.mark.parametrize(
    "hook",
    [
        "workgroup-privacy-hook",
        "workgroup-privacy-all-hook",
        "workgroup-privacy-commit-msg-hook",
        "workgroup-docs-claims-hook",
    ],
)
def test_a_failing_content_hook_loads_no_annotation_module(
    hook: str, git_repo: GitRepo, tmp_path: Path
) -> None:
    rel, _, failing = HOOK_SAMPLES[hook]
    assert failing is not None
    git_repo.write(rel, failing)
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(WRAPPER, encoding="utf-8")
    side = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, str(wrapper), str(side), SCRIPTS[hook], hook, rel],
        capture_output=True,
        text=True,
        cwd=git_repo.path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # findings were built and printed
    loaded = set(json.loads(side.read_text(encoding="utf-8")))
    assert "toolkit.core.findings" in loaded  # the subject ran
    assert sorted(loaded.intersection(ANNOTATIONS_ONLY)) == []
