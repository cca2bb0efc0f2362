"""``workgroup init --ci github``: the CI workflow, ``.github/workflows/workgroup.yml``.

The workflow is ``templates/ci/workgroup-verify.yml`` with its install command pinned to the
hook source ``init`` chose (``HookForm``): the same repository and rev that
``.pre-commit-config.yaml`` names, so CI runs the very toolkit the hooks run. It checks out
the full history, runs ``workgroup verify --format sarif`` and ``workgroup privacy scan
--history RANGE --format sarif`` (the pushed commits, the pull request's, or the whole history
of a new branch) and uploads both reports to code scanning.

An existing file is never replaced without ``--force`` (the same content is "kept"); the file
is written through the confined layer (a ``.github`` symlinked out of the work tree is refused).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import InvalidInput, Refused
from toolkit.infra import confined, confinedwrite
from toolkit.infra.resources import template_text
from toolkit.workflow.hook_source import release_rev, repository_url

WORKFLOW_REL = ".github/workflows/workgroup.yml"
CI_KINDS = ("github",)
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", re.I)
_SCP = re.compile(r"^([\w.-]+@[\w.-]+):(.+)$")


@dataclass(frozen=True)
class CiPlan:
    """What ``init --ci`` will do: ``text`` to write at ``WORKFLOW_REL`` (None: already there)."""

    text: str | None
    status: str  # written | replaced | kept
    install: str


def install_spec(repo: str | None, rev: str) -> str:
    """The pip requirement that installs the toolkit at ``rev`` from ``repo`` (no credentials:
    a token in the URL would be committed); a local path cannot be reached from CI."""
    if not repo:
        return f"workgroup-toolkit=={rev.removeprefix('v')}"
    if "://" in repo:
        if repo.lower().startswith("file://"):
            raise _local(repo)
        bare = _USERINFO.sub(r"\1", repo)
        return f"git+{bare}@{rev}"
    scp = _SCP.match(repo)
    if scp:
        return f"git+ssh://{scp.group(1)}/{scp.group(2)}@{rev}"
    raise _local(repo)


def _local(repo: str) -> InvalidInput:
    return InvalidInput(
        "CI_REPO_LOCAL",
        "the hook repository is a local path, which a CI runner cannot install from: pass "
        "--hook-repo with a git URL (or leave it out for the toolkit's own repository)",
    )


def render(install: str) -> str:
    """The workflow template with its install command pinned to ``install``."""

    template = template_text("ci/workgroup-verify.yml")
    pinned = f'"git+{repository_url()}@{release_rev()}"'
    if template.count(pinned) != 1:
        raise Refused("CI_TEMPLATE_BROKEN", "the CI template does not hold exactly one install command")
    return template.replace(pinned, f'"{install}"').replace(
        "name: workgroup verify\n", "name: workgroup\n", 1
    )


def plan(workdir: Path, kind: str, repo: str | None, rev: str, *, force: bool) -> CiPlan:
    """Check everything before anything is written: the kind, the install source, the target
    (inside the work tree, not a directory) and an existing file (``CI_WORKFLOW_EXISTS``)."""

    if kind not in CI_KINDS:
        raise InvalidInput("CI_KIND_UNKNOWN", f"--ci must be one of: {', '.join(CI_KINDS)}")
    install = install_spec(repo, rev)
    text = render(install)
    target = workdir / WORKFLOW_REL
    current = confined.read_text(workdir, target, what=WORKFLOW_REL, limit=1_048_576, missing_ok=True)
    if current is None:
        return CiPlan(text, "written", install)
    if current == text:
        return CiPlan(None, "kept", install)
    if not force:
        raise Refused(
            "CI_WORKFLOW_EXISTS",
            f"{WORKFLOW_REL} exists and differs from the workflow init writes; nothing was written "
            "(rerun with --force to replace it)",
        )
    return CiPlan(text, "replaced", install)


def write(workdir: Path, ci: CiPlan) -> str:
    """Write the planned workflow; the line ``init`` reports."""

    if ci.text is not None:
        confinedwrite.atomic_write(workdir, workdir / WORKFLOW_REL, ci.text, what=WORKFLOW_REL)
    return f"{WORKFLOW_REL}: {ci.status} (installs {ci.install}; runs verify and the history scan, uploads SARIF)"
