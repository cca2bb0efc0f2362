"""Where the workgroup hooks come from: the published hook definitions, the toolkit's repository
URL and release tag, and the check that a hook ``rev`` exists in a hook repository.

* The hook definitions (``files``, ``exclude``, ``types`` ...) are read from
  ``.pre-commit-hooks.yaml``, the file pre-commit itself reads from the hook repository, so the
  local form written by ``workgroup init --local`` covers exactly the files the remote form does.
  In a wheel the file ships as package data (``toolkit/hookdefs/``); in a source checkout it is
  at the repository root.
* The repository URL is the ``Repository`` entry of ``[project.urls]`` (installed metadata, or
  pyproject.toml in a source checkout); the release tag is ``v`` + ``toolkit.__version__``.
* Where the installed toolkit came from (PEP 610 ``direct_url.json`` of the distribution): a
  toolkit installed from a git URL names that URL and the exact commit, which ``init`` writes as
  ``repo:``/``rev:``. A ``file://`` URL (a local directory or a local clone) is a path on one
  machine and is never written into the shared config unless passed explicitly (``--hook-repo``).
* ``check_rev`` asks git (``git ls-remote``, or the object database of a local clone) whether the
  rev exists, before ``init`` writes a config that pre-commit could not install.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from toolkit import __version__
from toolkit.core.errors import EnvironmentFailure, InvalidInput, Refused
from toolkit.core.jsontypes import JsonObject

_PKG = Path(__file__).resolve().parent.parent  # the toolkit package (this file is toolkit/workflow/)
HOOKS_FILE = ".pre-commit-hooks.yaml"
DIST_NAME = "workgroup-toolkit"
_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", re.I)
# what a hook repository may be written as in YAML without quoting trouble and in the sh wrapper
_SAFE_REPO = re.compile(r"^[A-Za-z0-9@:/._~%+=,-]+$")
_LS_REMOTE_TIMEOUT = 30.0


def release_tag(version: str = __version__) -> str:
    """The git tag of a release (``v0.2.0``)."""
    return f"v{version}"


# The commit of each release in this repository's history, for where the tag is not published (a
# mirror without tags, the repository itself until tags are pushed). A release's own commit cannot
# name itself: the entry is added by the next commit (docs/install.md, "Cutting a release").
RELEASE_COMMITS = {
    "0.2.0": "9e3a8c06b9cd3ae88927e55c702030036c52927c",
    "0.3.0": "fb8a1f60c525d4dda59a6957a43e6b2629036ac4",
    "0.3.1": "e324de0d775b5d57ea45bf41b65aee8574158cbc",
    "0.4.0": "71c7236158a22a31ea64de7eca1526f487182034",
}


def release_rev(version: str = __version__) -> str:
    """The ``rev:`` the docs and the CI template pin, and ``init``'s first choice: the release
    commit when it is recorded (a commit resolves without a tag), else the release tag."""
    return RELEASE_COMMITS.get(version) or release_tag(version)


def release_revs(version: str = __version__) -> tuple[str, ...]:
    """What ``init`` tries as the default ``rev:``, in order: the release commit, then the tag."""
    return tuple(dict.fromkeys((release_rev(version), release_tag(version))))


def hooks_file() -> Path:
    installed = _PKG / "hookdefs" / HOOKS_FILE
    return installed if installed.is_file() else _PKG.parent / HOOKS_FILE


def hook_definitions() -> dict[str, JsonObject]:
    """The published hooks by id, as .pre-commit-hooks.yaml declares them."""
    import yaml

    data = yaml.safe_load(hooks_file().read_text(encoding="utf-8"))
    return {hook["id"]: hook for hook in data}


def repository_url() -> str | None:
    """``[project.urls] Repository`` of the installed distribution (or of pyproject.toml here)."""
    try:
        entries = metadata.metadata(DIST_NAME).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        entries = []
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("repository", "source") and url.strip():
            return str(url).strip()
    pyproject = _PKG.parent / "pyproject.toml"
    if pyproject.is_file():
        urls = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("urls", {})
        for label, url in urls.items():
            if label.lower() in ("repository", "source"):
                return str(url)
    return None


@dataclass(frozen=True)
class InstallOrigin:
    """Where pip installed the toolkit from (PEP 610): ``kind`` is ``git`` (a VCS URL with the
    installed ``commit``), ``directory`` (a local folder, editable or not) or ``archive`` (a wheel or
    sdist URL). ``shareable`` is False for a ``file:`` URL (a path on this machine only) and for a
    URL carrying a password or an environment-variable placeholder."""

    kind: str
    url: str
    commit: str | None = None
    requested: str | None = None

    @property
    def shareable(self) -> bool:
        if self.url.lower().startswith("file:"):
            return False
        userinfo = re.match(r"^[a-z][a-z0-9+.-]*://([^/@]*)@", self.url, re.I)
        return not (userinfo and (":" in userinfo.group(1) or "$" in userinfo.group(1)))


def parse_direct_url(text: str | None) -> InstallOrigin | None:
    """The install origin a ``direct_url.json`` describes, or None (absent, unreadable, another VCS)."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url:
        return None
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict):
        return _git_origin(url, vcs)
    if isinstance(data.get("dir_info"), dict):
        return InstallOrigin("directory", url)
    if isinstance(data.get("archive_info"), dict):
        return InstallOrigin("archive", url)
    return None


def _git_origin(url: str, vcs: JsonObject) -> InstallOrigin | None:
    """The git origin ``vcs_info`` describes, with its full commit id; None for another VCS or a
    missing or abbreviated commit."""
    commit = vcs.get("commit_id")
    if vcs.get("vcs") != "git" or not isinstance(commit, str) or not re.fullmatch(r"[0-9a-f]{40}", commit):
        return None
    requested = vcs.get("requested_revision")
    return InstallOrigin("git", url, commit, requested if isinstance(requested, str) else None)


def install_origin() -> InstallOrigin | None:
    """The installed distribution's ``direct_url.json`` (None when installed from an index)."""
    try:
        text = metadata.distribution(DIST_NAME).read_text("direct_url.json")
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return None
    return parse_direct_url(text)


def shown(repo: str) -> str:
    """The repository as it may appear in a message: credentials in a URL are masked."""
    return _USERINFO.sub(r"\1***@", repo)


def safe_repo(repo: str) -> bool:
    """Whether ``repo`` can be written in YAML unquoted and in the sh wrapper as it is."""
    return bool(_SAFE_REPO.match(repo))


def validate_repo(repo: str) -> str:
    if not repo or not _SAFE_REPO.match(repo):
        raise InvalidInput(
            "HOOK_REPO_INVALID",
            "--hook-repo must be a git URL or a path without spaces or quotes",
        )
    return repo


_SAFE_REV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,127}\Z")


def validate_rev(rev: str) -> str:
    if not _SAFE_REV.match(rev) or ".." in rev:
        raise InvalidInput("HOOK_REV_INVALID", "--hook-rev must be a tag, branch or commit name")
    return rev


def install_hint(repo: str | None, rev: str) -> str:
    """The command a teammate runs to get the hook scripts on PATH (the release the hooks name)."""
    if not repo:
        version = __version__ if _SHA.match(rev) else rev.removeprefix("v")
        return f"pip install workgroup-toolkit=={version} (see the toolkit's docs/install.md)"
    if "://" in repo:
        return f"pip install git+{shown(repo)}@{rev}"
    scp = re.match(r"^([\w.-]+@[\w.-]+):(.+)$", repo)  # git@host:owner/name.git, as git writes ssh remotes
    if scp:
        return f"pip install git+ssh://{scp.group(1)}/{scp.group(2)}@{rev}"
    return f"pip install git+file://{Path(repo).expanduser().resolve().as_posix()}@{rev}"


@dataclass(frozen=True)
class RevCheck:
    """The outcome of checking a hook rev: ``how`` is ``tag``, ``branch`` or ``commit``."""

    rev: str
    how: str


def _git(args: list[str], timeout: float = _LS_REMOTE_TIMEOUT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true"}
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    try:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except FileNotFoundError:
        raise EnvironmentFailure("GIT_NOT_FOUND", "git is not on PATH") from None
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 124, "", "timed out")


def _unreachable(repo: str) -> EnvironmentFailure:
    return EnvironmentFailure(
        "HOOK_REPO_UNREACHABLE",
        f"cannot reach the hook repository {shown(repo)} to check that the rev exists "
        "(git ls-remote failed); check the network or the URL, pass --hook-repo with a reachable "
        "URL or a local clone, or use --local for hooks that call the installed toolkit",
    )


def check_rev(repo: str, rev: str) -> RevCheck:
    """Raise unless ``rev`` names a tag, branch or commit of ``repo`` (a URL or a local path)."""
    refs = _remote_refs(repo)
    if f"refs/tags/{rev}" in refs:
        return RevCheck(rev, "tag")
    if f"refs/heads/{rev}" in refs:
        return RevCheck(rev, "branch")
    if _SHA.match(rev) and (any(sha.startswith(rev) for sha in refs.values()) or _has_commit(repo, rev)):
        return RevCheck(rev, "commit")
    known = ", ".join(_release_tags(refs)) or "none"
    raise Refused(
        "HOOK_REV_NOT_FOUND",
        f"rev {rev} is neither a tag, a branch nor a commit of {shown(repo)} (release tags there: "
        f"{known}); pass --hook-rev with a tag or commit that exists, or use --local",
    )


def _remote_refs(repo: str) -> dict[str, str]:
    """The object id of each ref of ``repo`` (``git ls-remote``); a local folder that is not a
    repository and a repository out of reach are told apart."""
    local = Path(repo).expanduser()
    proc = _git(["ls-remote", "--", str(local) if local.is_dir() else repo])
    if proc.returncode != 0:
        if local.is_dir():
            raise EnvironmentFailure(
                "HOOK_REPO_NOT_A_REPOSITORY", f"{repo} is not a git repository (git ls-remote failed)"
            )
        raise _unreachable(repo)
    refs: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        sha, _, ref = line.partition("\t")
        refs[ref] = sha
    return refs


def _release_tags(refs: dict[str, str]) -> list[str]:
    """The ``v*`` tags among ``refs``, sorted, without the peeled ``^{}`` entries."""
    tags = sorted(ref.removeprefix("refs/tags/") for ref in refs if ref.startswith("refs/tags/v"))
    return [t for t in tags if not t.endswith("^{}")]


def _has_commit(repo: str, sha: str) -> bool:
    """A commit that no ref points at: look it up in a local clone, or fetch it the way pre-commit does."""
    local = Path(repo).expanduser()
    if local.is_dir():
        return _git(["-C", str(local), "cat-file", "-e", f"{sha}^{{commit}}"]).returncode == 0
    if len(sha) != 40:
        return False  # a remote only serves full object names
    with tempfile.TemporaryDirectory(prefix="workgroup-rev-") as tmp:
        if _git(["init", "-q", "--bare", tmp]).returncode != 0:
            return False
        return _git(["-C", tmp, "fetch", "-q", "--depth=1", repo, sha]).returncode == 0
