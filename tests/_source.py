"""A copy of this toolkit's working tree as it is (uncommitted edits and new files included), for
tests that build, install or serve it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import ROOT


def source_copy(dest: Path) -> Path:
    """Every file git tracks or would track (not ignored), copied to ``dest``; returns ``dest``."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    for rel in filter(None, files.split("\0")):
        if (ROOT / rel).is_file():  # a tracked file deleted in the working tree is left out
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest
