"""History questions answered by the ``git`` command, without pygit2 and without per-commit objects.

``verify`` (and its pre-commit hook) asks only a few things of the history: which commit a
revision names, whether given commits are reachable from it, whether a commit exists, whether
the clone is shallow. Asking ``git`` keeps pygit2's import (tens of milliseconds) off the hook's
path, and lets git hold the walk: ``unreachable`` streams ``git rev-list`` and keeps only the
commits it is looking for, so memory does not grow with the history.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from toolkit.core.errors import EnvironmentFailure, InvalidInput
from toolkit.infra.gitlocation import NotARepository


def _git(cwd: str | os.PathLike[str], *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, check=False, stdin=subprocess.DEVNULL
        )
    except OSError as exc:  # no git on PATH, or cwd vanished
        raise EnvironmentFailure("GIT_UNAVAILABLE", "the git command could not be run") from exc


class CliRepo:
    """The work tree and common dir of the repository containing ``start``, asked of ``git``."""

    def __init__(self, workdir: Path, common_dir: Path) -> None:
        self.workdir = workdir
        self.common_dir = common_dir

    @classmethod
    def discover(cls, start: str | os.PathLike[str] | None = None) -> CliRepo:
        where = os.fspath(start) if start is not None else os.getcwd()
        both = _git(where, "rev-parse", "--git-common-dir", "--show-toplevel")  # one call when all is well
        lines = both.stdout.decode("utf-8", "surrogateescape").split("\n")
        if both.returncode == 0 and len(lines) >= 2 and lines[1]:
            return cls(Path(lines[1]).resolve(), (Path(where) / lines[0]).resolve())
        proc = _git(where, "rev-parse", "--is-bare-repository", "--git-common-dir")
        if proc.returncode != 0:
            raise NotARepository()
        bare, common = proc.stdout.decode("utf-8", "surrogateescape").splitlines()[:2]
        if bare.strip() == "true":
            raise EnvironmentFailure(
                "BARE_REPOSITORY", "this command needs a work tree, not a bare repository"
            )
        top = _git(where, "rev-parse", "--show-toplevel")
        if top.returncode != 0:
            raise EnvironmentFailure(
                "BARE_REPOSITORY", "this command needs a work tree, not a bare repository"
            )
        workdir = Path(top.stdout.decode("utf-8", "surrogateescape").rstrip("\n")).resolve()
        return cls(workdir, (Path(where) / common).resolve())


def head_is_unborn(workdir: Path) -> bool:
    """HEAD names a branch with no commit yet."""
    return _git(workdir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").returncode != 0 and (
        _git(workdir, "symbolic-ref", "--quiet", "HEAD").returncode == 0
    )


def resolve_commit(workdir: Path, rev: str) -> str:
    """Full SHA of the commit ``rev`` names; the same coded errors as ``Repo.resolve_commit``."""
    if not rev.startswith("-") and "\n" not in rev and "\0" not in rev:
        proc = _git(workdir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}")
        sha = proc.stdout.decode("ascii", "replace").strip()
        if proc.returncode == 0 and len(sha) == 40:
            return sha
    if rev == "HEAD" and head_is_unborn(workdir):
        raise InvalidInput(
            "UNBORN_HEAD", "HEAD has no commit yet: make a first commit before binding a checkpoint"
        )
    raise InvalidInput("UNKNOWN_REVISION", "the revision does not name a commit in this repository")


def is_shallow(workdir: Path) -> bool:
    proc = _git(workdir, "rev-parse", "--is-shallow-repository")
    return proc.stdout.strip() == b"true"


def commit_exists(workdir: Path, sha: str) -> bool:
    proc = _git(workdir, "cat-file", "-t", "--end-of-options", sha)
    return proc.returncode == 0 and proc.stdout.strip() == b"commit"


def is_ancestor_or_equal(workdir: Path, ancestor: str, descendant: str) -> bool:
    """``git merge-base --is-ancestor``: exit 0 yes, 1 no; anything else (a commit this clone no
    longer has) is not a proof either."""
    if ancestor == descendant:
        return True
    return _git(workdir, "merge-base", "--is-ancestor", ancestor, descendant).returncode == 0


def unreachable(workdir: Path, wanted: set[str], head: str) -> set[str]:
    """The commits of ``wanted`` that are not ``head`` or an ancestor of it.

    One ``git rev-list`` streams the history; only the wanted ids are kept and the walk stops as
    soon as all are seen, so the cost is one walk for all records, and memory is git's own walk.
    """
    missing = set(wanted)
    if not missing:
        return missing
    try:
        proc = subprocess.Popen(
            ["git", "rev-list", head],
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
    except OSError as exc:
        raise EnvironmentFailure("GIT_UNAVAILABLE", "the git command could not be run") from exc
    assert proc.stdout is not None
    complete = False
    with proc.stdout:
        for line in proc.stdout:
            missing.discard(line[:40].decode("ascii", "replace"))
            if not missing:
                break
        else:
            complete = True
    if not complete:
        proc.kill()
    code = proc.wait()
    if complete and code != 0:  # a walk that failed part-way proves nothing it did not reach
        raise EnvironmentFailure("GIT_HISTORY_UNREADABLE", "git could not walk the history of the revision")
    return missing
