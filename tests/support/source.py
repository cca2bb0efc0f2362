"""A copy of this toolkit's working tree as it is (uncommitted edits and new files included), for
tests that build, install or serve it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from support.harness import ROOT

# Where the package's modules live: toolkit/, and the design card's top-level hooks/ folder, which
# the build configuration installs as toolkit.hooks (pyproject's package-dir).
PACKAGE_DIRS: dict[str, Path] = {"toolkit": ROOT / "toolkit", "toolkit.hooks": ROOT / "hooks"}


def package_sources() -> list[Path]:
    """Every .py file of the package, hooks/ included."""
    return sorted(
        p for folder in PACKAGE_DIRS.values() for p in folder.rglob("*.py") if "__pycache__" not in p.parts
    )


def module_name(path: Path) -> str:
    """The dotted name ``path`` is imported as (``hooks/privacy.py`` -> ``toolkit.hooks.privacy``)."""
    for package, folder in sorted(PACKAGE_DIRS.items(), key=lambda item: -len(str(item[1]))):
        if path.is_relative_to(folder):
            return ".".join([package, *path.relative_to(folder).with_suffix("").parts])
    raise ValueError(f"{path} is not a package source")


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
