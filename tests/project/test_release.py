"""The release process: one version, its tag everywhere a user copies it, and distributions that
build and pass ``twine check`` (run by the README's test command, so CI runs them)."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from support.harness import ROOT
from support.source import source_copy

import toolkit
from toolkit.workflow.hook_source import release_rev, repository_url

PINNED = ("templates/ci/workgroup-verify.yml", "docs/install.md", "docs/capsules-verify.md", "README.md")


@pytest.mark.parametrize("rel", PINNED)
def test_copied_install_commands_pin_this_release(rel: str) -> None:
    text = (ROOT / rel).read_text(encoding="utf-8")
    pins = re.findall(r"git\+(https\S+?)@([0-9a-fv][^\s\"'`]+)", text)
    assert pins, f"{rel} has no pinned install command"
    # the release commit: it resolves whether or not tags were pushed (tests/workflow/test_init_adoption.py)
    assert set(pins) == {(repository_url(), release_rev())}, pins


def test_changelog_has_a_section_for_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\S+)", text, re.M)
    if headings[0] == "Unreleased":  # changes since the version was set, listed ahead of it
        headings = headings[1:]
    assert headings[0] == toolkit.__version__  # the newest versioned section is the current version
    assert len(headings) == len(set(headings))


@pytest.mark.slow
def test_sdist_and_wheel_build_and_pass_twine_check(tmp_path: Path) -> None:
    src = source_copy(tmp_path / "src")
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    version = toolkit.__version__
    wheel = dist / f"workgroup_toolkit-{version}-py3-none-any.whl"
    sdist = dist / f"workgroup_toolkit-{version}.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist.iterdir())
    check = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("PASSED") == 2
    with zipfile.ZipFile(wheel) as zf:
        metadata = zf.read(f"workgroup_toolkit-{version}.dist-info/METADATA").decode("utf-8")
        hooks = zf.read("toolkit/hookdefs/.pre-commit-hooks.yaml")
    assert f"\nVersion: {version}\n" in metadata
    assert f"\nProject-URL: Repository, {repository_url()}\n" in metadata
    # init --local reads the published patterns from the installed copy of the manifest
    assert hooks == (ROOT / ".pre-commit-hooks.yaml").read_bytes()
    with tarfile.open(sdist) as tf:
        names = set(tf.getnames())
    # what a reader of the release needs beside the code: README, LICENSE, CHANGELOG and docs/
    docs = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*") if p.is_file())
    shipped = [".pre-commit-hooks.yaml", "toolkit/__init__.py", "toolkit/cli.py"]
    for rel in [*shipped, "README.md", "LICENSE", "CHANGELOG.md", *docs]:
        assert f"workgroup_toolkit-{version}/{rel}" in names, rel
    assert "docs/install.md" in docs
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
