"""The reviewed allowlist ``.workgroup/privacy-allowlist.yml`` and its salted fingerprints.

An entry names a rule, a repository-relative path and a fingerprint::

    allow:
      - rule: high-entropy-string
        path: docs/signing.md
        fingerprint: sha256:<64 hex>
        reason: published test vector        # optional, for the reviewer

fingerprint = SHA-256(salt NUL rule NUL path NUL value). The value never appears in the file,
and the per-repository salt (local state, never committed; or ``WORKGROUP_PRIVACY_SALT``, e.g.
a CI secret shared by the team) keeps short values from being guessed from their fingerprint.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.core.errors import InvalidInput

ALLOWLIST_REL = ".workgroup/privacy-allowlist.yml"
SALT_ENV = "WORKGROUP_PRIVACY_SALT"
_FINGERPRINT = re.compile(r"^sha256:[0-9a-f]{64}$")
_MAX_BYTES = 1_048_576


@dataclass(frozen=True)
class AllowEntry:
    rule: str
    path: str
    fingerprint: str
    reason: str = ""


def fingerprint(salt: bytes, rule: str, path: str, value: str) -> str:
    """The salted fingerprint of one finding (``sha256:<hex>``)."""
    digest = hashlib.sha256()
    for part in (salt, rule.encode("utf-8"), path.encode("utf-8"), value.encode("utf-8")):
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
    from toolkit.infra.boundedio import FileRefused, read_regular

    try:
        return (
            (read_regular(path, limit=4096, what="a git pointer file") or b"")
            .decode("utf-8", "replace")
            .strip()
        )
    except FileRefused:
        return ""


def salt_path(root: Path) -> Path | None:
    common = git_common_dir(root)
    return None if common is None else common / "workgroup" / "privacy-salt"


def load_salt(root: Path, *, create: bool = False, environ: dict[str, str] | None = None) -> bytes | None:
    """The repository's privacy salt: ``WORKGROUP_PRIVACY_SALT``, else the local-state file.

    With ``create`` a missing file is created (32 random bytes, hex, exclusive creation so
    concurrent callers agree on one salt).
    """
    env = os.environ if environ is None else environ
    if env.get(SALT_ENV):
        return env[SALT_ENV].encode("utf-8")
    path = salt_path(root)
    if path is None:
        return None
    if not path.exists() and create:
        import secrets

        from toolkit.infra.store import create_exclusive

        path.parent.mkdir(parents=True, exist_ok=True)
        create_exclusive(path, secrets.token_hex(32) + "\n")
    from toolkit.infra.boundedio import FileRefused, read_regular

    try:
        raw = read_regular(path, limit=4096, what="the privacy salt", follow_symlinks=False, missing_ok=True)
    except FileRefused:
        return None
    return (raw or b"").strip() or None


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


def load_allowlist(root: Path) -> list[AllowEntry]:
    """Entries of ``<root>/.workgroup/privacy-allowlist.yml`` (none when the file is absent)."""
    path = root / ALLOWLIST_REL
    from toolkit.infra.boundedio import FileRefused, json_depth_exceeds, read_regular

    try:
        raw = read_regular(path, limit=_MAX_BYTES, what=ALLOWLIST_REL, missing_ok=True, allow_over=True)
    except FileRefused:
        raise InvalidInput("ALLOWLIST_UNREADABLE", f"{ALLOWLIST_REL} cannot be read") from None
    if raw is None:
        return []
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
    import json

    lines = [
        f"  - rule: {entry.rule}",
        f"    path: {json.dumps(entry.path, ensure_ascii=False)}",
        f"    fingerprint: {entry.fingerprint}",
    ]
    if entry.reason:
        lines.append(f"    reason: {json.dumps(entry.reason, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"
