"""The reviewed allowlist ``.workgroup/privacy-allowlist.yml`` and its fingerprints.

An entry names a rule, a repository-relative path, a fingerprint and the reviewer's reason::

    allow:
      - rule: high-entropy-string
        path: docs/signing.md
        fingerprint: sha256:<64 hex>
        reason: published test vector

fingerprint = SHA-256("workgroup-privacy-allow/v2" NUL rule NUL path NUL value). No per-clone
salt: the file must work in every clone and in CI, so the fingerprint depends only on what is
committed. It reveals no more than the committed file already does: the allowed value sits in
that same file at that path (a false positive is kept, not removed), and the value itself is
never written here.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import InvalidInput
from toolkit.core.strictjson import json_depth_exceeds
from toolkit.infra import confined, confinedwrite
from toolkit.infra.boundedio import FileRefused, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing stays out of the scan's cold start
    from typing import Any

ALLOWLIST_REL = ".workgroup/privacy-allowlist.yml"
_FINGERPRINT = re.compile(r"^sha256:[0-9a-f]{64}$")
_MAX_BYTES = 1_048_576


@dataclass(frozen=True)
class AllowEntry:
    rule: str
    path: str
    fingerprint: str
    reason: str = ""


_DOMAIN = b"workgroup-privacy-allow/v2"


def fingerprint(rule: str, path: str, value: str) -> str:
    """The fingerprint of one finding (``sha256:<hex>``), the same in every clone."""
    import hashlib  # only when an allowlist is read or written: not on every scan's start

    digest = hashlib.sha256()
    for part in (_DOMAIN, rule.encode("utf-8"), path.encode("utf-8"), value.encode("utf-8")):
        digest.update(part)
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def git_common_dir(start: Path) -> Path | None:
    """The git common dir of the repository containing ``start`` (stdlib only, no pygit2)."""
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if dot.is_dir():
            gitdir = dot
        elif dot.is_file():
            text = _small_text(dot)
            if not text.startswith("gitdir:"):
                return None
            gitdir = (folder / text.split(":", 1)[1].strip()).resolve()
        else:
            continue
        common = gitdir / "commondir"
        if common.is_file():
            return (gitdir / _small_text(common)).resolve()
        return gitdir
    return None


def _small_text(path: Path) -> str:
    try:
        return (
            (read_regular(path, limit=4096, what="a git pointer file") or b"")
            .decode("utf-8", "replace")
            .strip()
        )
    except FileRefused:
        return ""


def parse_allowlist(data: Any) -> list[AllowEntry]:
    """Validate the parsed YAML; a malformed file is a coded error (exit 2), never ignored."""
    if data is None:
        return []
    if not isinstance(data, dict) or set(data) - {"allow"} or not isinstance(data.get("allow", []), list):
        raise InvalidInput("ALLOWLIST_INVALID", f"{ALLOWLIST_REL} must be a mapping with an 'allow' list")
    entries: list[AllowEntry] = []
    for item in data.get("allow") or []:
        if not isinstance(item, dict) or set(item) - {"rule", "path", "fingerprint", "reason"}:
            raise InvalidInput(
                "ALLOWLIST_INVALID", "each allowlist entry has rule, path, fingerprint, reason"
            )
        rule, path, fp = item.get("rule"), item.get("path"), item.get("fingerprint")
        reason = item.get("reason", "")
        if not (
            isinstance(rule, str) and isinstance(path, str) and isinstance(fp, str) and _FINGERPRINT.match(fp)
        ):
            raise InvalidInput(
                "ALLOWLIST_INVALID", "allowlist entry needs rule, path and a sha256:<hex> fingerprint"
            )
        entries.append(AllowEntry(rule, path, fp, reason if isinstance(reason, str) else ""))
    return entries


def worktree_bytes(root: Path) -> bytes | None:
    """The allowlist file of the work tree (None when absent), through the confined layer: a
    symlink leaving the work tree (``.workgroup`` or the file) or in the file's place is
    refused, never read."""
    try:
        return confined.read_bytes(
            root, root / ALLOWLIST_REL, what=ALLOWLIST_REL, limit=_MAX_BYTES, missing_ok=True, allow_over=True
        )
    except FileRefused:
        raise InvalidInput("ALLOWLIST_UNREADABLE", f"{ALLOWLIST_REL} cannot be read") from None


NOT_A_REPOSITORY = object()  # committed_bytes' answer outside a git repository


def committed_bytes(root: Path) -> bytes | None | object:
    """The allowlist as the index holds it (what the commit being made, or the checkout, has):
    None when the index has no such file, ``NOT_A_REPOSITORY`` outside git. git runs with the
    caller's environment, so inside a hook ``GIT_INDEX_FILE`` (``git commit -a``, ``git commit
    PATH``) names the index of the commit. A symlink staged there, or git failing on a
    repository, is ``ALLOWLIST_UNREADABLE``: an allowlist the gate cannot read suppresses nothing."""

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                ["git", *args],
                cwd=root,
                capture_output=True,
                check=False,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            raise InvalidInput("ALLOWLIST_UNREADABLE", f"git could not read {ALLOWLIST_REL}") from None

    staged = git("ls-files", "--stage", "-z", "--", f":(literal){ALLOWLIST_REL}")
    if staged.returncode != 0:
        if git("rev-parse", "--git-dir").returncode != 0:
            return NOT_A_REPOSITORY
        raise InvalidInput("ALLOWLIST_UNREADABLE", f"git could not read {ALLOWLIST_REL} from the index")
    entry = staged.stdout.split(b"\0", 1)[0]
    if not entry:
        return None
    mode, sha = entry.split(b" ")[:2]
    if mode != b"100644" and mode != b"100755":
        raise InvalidInput("ALLOWLIST_UNREADABLE", f"{ALLOWLIST_REL} in the index is not a regular file")
    blob = git("cat-file", "blob", sha.decode("ascii"))
    if blob.returncode != 0:
        raise InvalidInput("ALLOWLIST_UNREADABLE", f"git could not read {ALLOWLIST_REL} from the index")
    return blob.stdout


def load_allowlist(root: Path, *, committed: bool = False) -> list[AllowEntry]:
    """Entries of ``<root>/.workgroup/privacy-allowlist.yml`` (none when the file is absent):
    the work tree's file, or with ``committed`` the index's (the hooks and ``--history``: what a
    teammate's clone and CI have, not an uncommitted edit); outside git the work tree's."""
    found = committed_bytes(root) if committed else NOT_A_REPOSITORY
    raw = worktree_bytes(root) if found is NOT_A_REPOSITORY else found
    if raw is None:
        return []
    assert isinstance(raw, bytes)
    if len(raw) > _MAX_BYTES:
        raise InvalidInput("ALLOWLIST_INVALID", f"{ALLOWLIST_REL} is larger than 1 MiB")
    if json_depth_exceeds(raw):
        raise InvalidInput("ALLOWLIST_INVALID", f"{ALLOWLIST_REL} nests too deeply")
    import yaml  # lazy: only repositories with an allowlist pay for it

    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError):
        raise InvalidInput("ALLOWLIST_INVALID", f"{ALLOWLIST_REL} is not valid UTF-8 YAML") from None
    return parse_allowlist(data)


def entry_text(entry: AllowEntry) -> str:
    """One YAML list item for an entry (appended to the file, so reviewers see a plain diff)."""
    lines = [
        f"  - rule: {entry.rule}",
        f"    path: {json.dumps(entry.path, ensure_ascii=False)}",
        f"    fingerprint: {entry.fingerprint}",
    ]
    if entry.reason:
        lines.append(f"    reason: {json.dumps(entry.reason, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


HEADER = (
    "# Reviewed privacy findings (workgroup privacy allow / baseline). Fingerprint = SHA-256 of\n"
    "# (rule, path, value); the value itself is never stored here.\nallow:\n"
)


def append_entries(root: Path, entries: list[AllowEntry]) -> int:
    """Append the entries not yet in the work tree's allowlist (one atomic write); how many."""
    existing = load_allowlist(root)  # through the confined layer: a symlinked .workgroup/ is refused
    known = {(e.rule, e.path, e.fingerprint) for e in existing}
    raw = worktree_bytes(root)
    text = raw.decode("utf-8") if raw is not None else HEADER
    text = re.sub(r"^allow:[ \t]*(?:\[[ \t]*\]|~|null)?[ \t]*$", "allow:", text, count=1, flags=re.M)
    if not existing and not re.search(r"^allow:", text, re.M):
        text += "" if text.endswith("\n") or not text else "\n"
        text += "allow:\n"
    elif not text.endswith("\n"):
        text += "\n"
    added = 0
    for entry in entries:
        key = (entry.rule, entry.path, entry.fingerprint)
        if key in known:
            continue
        text += entry_text(entry)
        known.add(key)
        added += 1
    if added:
        import yaml

        try:
            written = {(e.rule, e.path, e.fingerprint) for e in parse_allowlist(yaml.safe_load(text))}
        except (yaml.YAMLError, InvalidInput):
            written = set()
        if not known <= written:  # the file's own layout would swallow the new entries
            raise InvalidInput(
                "ALLOWLIST_INVALID",
                f"{ALLOWLIST_REL} does not end in its 'allow:' list, so entries cannot be appended; "
                "move the list to the end of the file. Nothing written",
            )
        confinedwrite.atomic_write(root, root / ALLOWLIST_REL, text, what=ALLOWLIST_REL)
    return added


def commit_hint(root: Path) -> str | None:
    """The line that says to commit the allowlist, or None when the index already has it as is."""
    found = committed_bytes(root)
    if found is NOT_A_REPOSITORY or found == worktree_bytes(root):
        return None
    return (
        f"not committed yet: the hooks, your teammates and CI read the committed {ALLOWLIST_REL}; "
        f"run: git add {ALLOWLIST_REL}"
    )
