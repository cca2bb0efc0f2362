"""The content hooks print findings built by ``toolkit.core.findings``, which names its row shapes
(``toolkit.core.finding_shapes``) for annotations only: a hook's cold start must not load them, nor
``toolkit.core.jsontypes`` which they would bring in. (``typing`` is not checked here: a privacy
hook in a repository reads its allowlist through ``toolkit.infra.store``, which imports it.) Each hook runs as its console
script would, on a file it fails (so findings are built and printed), in a fresh interpreter that
records every module it loaded, submodules included."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.entry_modules import entry_modules
from support.entry_samples import HOOK_SAMPLES
from support.harness import GitRepo

pytestmark = pytest.mark.usefixtures("without_coverage")  # what the child imports is the subject

ANNOTATIONS_ONLY = (
    "toolkit.core.finding_shapes",
    "toolkit.core.jsontypes",
    "toolkit.infra.config_shapes",
)


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
    proc, loaded = entry_modules(tmp_path, hook, rel, cwd=git_repo.path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # findings were built and printed
    assert "toolkit.core.findings" in loaded  # the subject ran
    assert sorted(loaded.intersection(ANNOTATIONS_ONLY)) == []
