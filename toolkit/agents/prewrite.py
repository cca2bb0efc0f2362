"""The pre-write gate: before a tool call writes, the privacy engine and the writer registry decide.

For each write of the call (``payload.write_intents``):

1. **where**: the destination is made repository-relative through the confined layer
   (``toolkit.infra.confined``). A destination under the work tree whose folders lead outside it
   through a symlink, or that is itself a symlink, is denied (the write would land elsewhere). A
   destination outside the repository is not the registry's business; a symlink there that
   points into the repository is denied (the write would change a repository file unseen).
2. **privacy**: the text about to land is scanned with the context its destination gets
   (``toolkit.privacy.files.context_of``: capsules, handoffs, event logs and other workflow
   artifacts get every rule, source files the secret rules; the team's ``privacy.artifact_paths``
   count), and the reviewed allowlist drops what it suppresses, as the commit hook would.
3. **ownership** (CEO-06, ``toolkit.agents.ownership``): a path inside the repository that another
   live writer's lease covers is denied, decided by the runtime's own router, so the hook and
   ``workgroup runtime route`` never disagree. The session's own lineage (``--lineage`` or
   ``WORKGROUP_LINEAGE_ID``) is not another writer.

The deny reason names the file, the line, the rule and what to do instead; never the value (and
never a path that itself holds private content). The work is bounded, since a hook that times out
lets the call through: at most ``MAX_WRITES`` files per call, one scan per text and kind of
destination, the registry's router loaded only when a registry exists.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.agents import answers
from toolkit.agents.paths import safe_path
from toolkit.agents.writes import WriteIntent, write_intents
from toolkit.core.errors import InvalidInput, Refused
from toolkit.infra import confined
from toolkit.infra.gitlocation import find_git
from toolkit.privacy.artifacts import configured_globs
from toolkit.privacy.engine import scan_text_with_values
from toolkit.privacy.files import (
    FileFinding,
    ScanReport,
    context_for,
    context_of,
    file_kind,
    set_artifact_paths,
)
from toolkit.privacy.gate import apply_allowlist

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolkit.agents.answers import Answer
    from toolkit.agents.payload import HookInput, Options
    from toolkit.infra.gitlocation import GitLocation
    from toolkit.privacy.types import Finding

    # (id of the text, context, kind) -> (the text, kept alive for its id; its findings with values)
    Scanned = dict[tuple[int, str, str], tuple[str, list[tuple[Finding, str]]]]

MAX_LISTED = 5
MAX_WRITES = 64
_ADVICE = {
    "secret": "read it from an environment variable or a secret store at run time instead of writing it into the file",
    "identifier": "replace the provider id with a placeholder; ids of sessions and accounts do not belong in workflow artifacts",
    "transcript": "summarize what matters instead of pasting a raw chat transcript",
    "path": "use a repository-relative path instead of a home-directory path",
    "email": "leave the address out or use a placeholder such as someone@example.com",
    "unreadable": "write plain UTF-8 text",
}
_SUPPRESS = (
    "If this is a false positive, add a `workgroup: allow <rule>` comment on that line "
    "(reviewed like any other change)."
)


class Destination:
    """Where one write lands: ``shown`` (the path as reported), ``rel`` (repository-relative, or
    None outside the repository), ``absolute``."""

    __slots__ = ("absolute", "rel")

    def __init__(self, absolute: str, rel: str | None) -> None:
        self.absolute = absolute
        self.rel = rel

    @property
    def shown(self) -> str:
        """The path as an answer names it (checked only when a reason needs it: the allow path
        pays for no second scan)."""
        return safe_path(self.rel if self.rel is not None else self.absolute)


class Refusal(Refused):
    """A write the gate refuses; its message is the reason the model reads."""

    def __init__(self, reason: str) -> None:
        super().__init__("WRITE_REFUSED", reason)


def handle(hook: HookInput, options: Options) -> Answer:
    return check(hook, options.lineage_id)


def check(hook: HookInput, lineage: str | None) -> Answer:
    """The answer to one pre-tool call: allow, or deny with every reason found."""
    intents = write_intents(hook)
    if not intents:
        return answers.allow()
    if len(intents) > MAX_WRITES:  # bounded work: a hook that times out lets the call through
        raise InvalidInput(
            "TOO_MANY_WRITES", f"one tool call writing more than {MAX_WRITES} files is not checked; split it"
        )
    base = hook.cwd if hook.cwd and os.path.isabs(hook.cwd) else os.getcwd()
    reasons = _write_reasons(intents, base, find_git(base), lineage)
    if not reasons:
        return answers.allow()
    return answers.deny(_refusal_text(reasons))


def _write_reasons(
    intents: list[WriteIntent], base: str, location: GitLocation | None, lineage: str | None
) -> list[str]:
    """Every reason to refuse the call's writes, in the order of the writes: a refused destination
    (its text is then not scanned), the findings in the text, another writer's lease (each
    repository path asked once). ``location``: the repository ``base`` is in (None outside one)."""
    root = location.workdir if location is not None else None
    reasons: list[str] = []
    owned_checked: dict[str, str | None] = {}
    scanned: Scanned = {}
    for intent in intents:
        try:
            where = destination(intent.path, base, root)
        except Refusal as exc:
            reasons.append(exc.message)
            continue
        if intent.text:
            reasons += privacy_reasons(intent, where, root, scanned)
        if location is not None and where.rel is not None:
            reasons += _ownership_once(location, where.rel, lineage, owned_checked)
    return reasons


def _ownership_once(
    location: GitLocation, rel: str, lineage: str | None, checked: dict[str, str | None]
) -> list[str]:
    """The ownership reason for ``rel`` (at most one), asked of the registry only the first time
    ``rel`` comes up in the call (``checked`` remembers)."""
    if rel in checked:
        return []
    checked[rel] = holder = ownership_holder(location, rel, lineage)
    return [holder] if holder is not None else []


def ownership_holder(location: GitLocation, rel: str, lineage: str | None) -> str | None:
    """The reason ``rel`` may not be written by this session (another live lease covers it), or None."""
    registry = location.owners_registry
    if not os.path.lexists(registry):
        return None  # no registry, no lease: the router is not needed
    # the runtime's router and the lease reader (a few ms of imports) only when a registry exists
    from toolkit.agents import ownership

    return ownership.ownership_holder(location.workdir, registry, rel, lineage)


def _refusal_text(reasons: list[str]) -> str:
    """The deny message: the first ``MAX_LISTED`` reasons as a list, and how many more there are."""
    listed = reasons[:MAX_LISTED]
    more = len(reasons) - len(listed)
    tail = f"\n(and {more} more)" if more > 0 else ""
    return "workgroup refused this write:\n- " + "\n- ".join(listed) + tail


def destination(path: str, base: str, root: str | None) -> Destination:
    """The checked destination of ``path`` (absolute, or relative to ``base``)."""
    absolute = _absolute(path, base)
    if root is None:
        return _outside(absolute, None)
    real_root = confined.real_root(root)
    if not confined.is_under(root, absolute) and not _within(
        os.path.realpath(os.path.dirname(absolute)), real_root
    ):
        return _outside(absolute, real_root)
    try:
        target = confined.resolve_inside(root, absolute, "the destination")
    except confined.PathOutsideRepository:
        raise Refusal(
            f"{_shown_path(absolute, root)}: the destination leads outside the repository through a symlink "
            "(or is a symlink); write to the real file inside the repository instead"
        ) from None
    return Destination(target, _writable_rel(target, real_root))


def _absolute(path: str, base: str) -> str:
    """``path`` made absolute against ``base`` (normalized unless it holds ``..``, which the
    confined layer resolves itself); a path holding NUL is refused."""
    if "\x00" in path:
        raise Refusal("the destination path holds a NUL character; name a plain path")
    absolute = path if os.path.isabs(path) else os.path.join(base, path)
    return os.path.abspath(absolute) if ".." not in absolute.split("/") else absolute


def _within(real: str, real_root: str) -> bool:
    """Whether the resolved path ``real`` is the repository folder or under it."""
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def _writable_rel(target: str, real_root: str) -> str:
    """The repository-relative path of a resolved ``target``; the repository folder itself (or
    above it) and the git directory are refused."""
    rel = os.path.relpath(target, real_root).replace(os.sep, "/")
    if rel == "." or rel.startswith("../"):
        raise Refusal("the destination is the repository folder itself or above it; name a file inside it")
    if rel == ".git" or rel.startswith(".git/"):
        raise Refusal(f"{safe_path(rel)}: writes into the git directory are never allowed from an agent tool")
    return rel


def _outside(absolute: str, real_root: str | None) -> Destination:
    """A destination outside the repository; a symlink there that points into it is refused."""
    if real_root is not None and os.path.islink(absolute):
        if _within(os.path.realpath(absolute), real_root):
            raise Refusal(
                f"{safe_path(absolute)}: a symlink into the repository; write the repository file itself so its checks apply"
            )
    return Destination(absolute, None)


def _shown_path(absolute: str, root: str) -> str:
    prefix = root.rstrip("/") + "/"
    return safe_path(absolute[len(prefix) :] if absolute.startswith(prefix) else absolute)


def privacy_reasons(
    intent: WriteIntent, where: Destination, root: str | None, scanned: Scanned | None = None
) -> list[str]:
    """One reason per finding in the text about to land at ``where``. ``scanned`` keeps each text's
    findings per context and kind: a shell command writing to many files is scanned once per kind
    of destination, not once per file."""
    text = intent.text or ""
    repository = root if where.rel is not None else None  # None: outside, no team rules or allowlist
    name = where.rel if where.rel is not None else where.absolute
    if repository is not None:
        _team_globs(repository)
    found = _scan_once(text, name, repository is not None, {} if scanned is None else scanned)
    findings = _kept_findings(found, name, repository)
    if not findings:
        return []
    shown = where.shown + (f" ({intent.part})" if intent.part else "")
    return [finding_reason(shown, item) for item in findings]


def _kept_findings(found: list[tuple[Finding, str]], name: str, repository: str | None) -> list[FileFinding]:
    """The findings as findings of the file ``name``, minus what the repository's committed
    allowlist suppresses (outside a repository: all of them)."""
    findings = [FileFinding(name, finding, value, name) for finding, value in found]
    if findings and repository is not None:
        return _allowlisted(findings, repository)
    return findings


def _scan_once(text: str, name: str, inside: bool, cache: Scanned) -> list[tuple[Finding, str]]:
    """The findings (with values) of ``text`` landing at ``name``: scanned with the context its
    destination gets (a repository path by its kind and the team's artifact paths, a path outside
    by its name alone), once per text, context and kind of file (``cache`` keeps them)."""
    context = context_of(name, text) if inside else context_for(name)
    kind = file_kind(name, text)
    key = (id(text), context.value, kind.value)
    if key not in cache:
        cache[key] = (text, scan_text_with_values(text, context, kind))
    return cache[key][1]


def finding_reason(shown: str, item: FileFinding) -> str:
    """``PATH: line N holds WHAT (RULE); ADVICE.`` (never the value, not even masked)."""
    found = item.finding
    category = found.category.value
    what = {
        "secret": f"a {found.rule} secret",
        "identifier": f"a provider identifier ({found.rule})",
        "transcript": f"raw transcript text ({found.rule})",
        "path": f"a home-directory path ({found.rule})",
        "email": f"an email address ({found.rule})",
    }.get(category, f"private content ({found.rule})")
    advice = _ADVICE.get(category, "leave it out")
    return f"{shown}: line {found.line} holds {what}; {advice}. {_SUPPRESS}"


_GLOBS_READ: list[str] = []


def _team_globs(root: str) -> None:
    """The team's ``privacy.artifact_paths`` (read once per process)."""
    if root in _GLOBS_READ:
        return
    _GLOBS_READ.append(root)
    globs = configured_globs(root)
    if globs:
        set_artifact_paths(globs)


def _allowlisted(findings: list[FileFinding], root: str) -> list[FileFinding]:
    """``findings`` minus what the committed allowlist suppresses (as the commit hook reads it)."""
    return apply_allowlist(ScanReport(findings=list(findings)), Path(root)).findings
