"""What else counts as a workflow artifact, beyond the toolkit's own paths (``files.context_for``):

* the team's folders: ``privacy.artifact_paths`` in ``.workgroup/config.yml`` and the hooks'
  ``--artifact-path GLOB`` arguments, globs over repository-relative paths (``notes/**``,
  ``*.session.md``); matching files get every privacy rule, as ``.reviews/`` does;
* session notes wherever they are: a Markdown or text file holding a chat transcript (at least two
  user turns and two assistant turns, alternating, each at the start of a line) is scanned as an
  artifact, so the home paths and session ids beside the transcript are reported too.

Stdlib only: the hooks import this on every run.
"""

from __future__ import annotations

import re
from pathlib import Path

from toolkit.core.errors import InvalidInput
from toolkit.core.globs import CONFIG_INVALID, compile_globs, glob_regex, validate_globs
from toolkit.infra import confined
from toolkit.infra.boundedio import FileRefused

__all__ = ["compile_globs", "configured_globs", "glob_regex", "session_notes", "validate_globs"]
PROSE_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc")
_USER = ("user", "human")
_ROLE = re.compile(
    r"^[ \t>]*(?:\*\*|__|#{1,4}[ \t]*)?"
    r"(?P<role>(?i:user|human|assistant|ai|claude|codex|chatgpt|gemini|copilot))"
    r"(?:\*\*|__)?[ \t]*(?::\*\*|\*\*:|:)[ \t]*\S",
    re.M,
)
_MIN_TURNS = 2  # of each side
_MIN_SWITCHES = 3  # user, assistant, user, assistant


def configured_globs(root: object) -> tuple[str, ...]:
    """``privacy.artifact_paths`` of ``<root>/.workgroup/config.yml`` (read through the confined
    layer). YAML is parsed only when a line names the key outside a comment: the hooks start fast
    otherwise."""
    base = Path(str(root))
    try:
        raw = confined.read_bytes(
            base,
            base / ".workgroup" / "config.yml",
            what=".workgroup/config.yml",
            limit=1_048_576,
            missing_ok=True,
        )
    except FileRefused as exc:
        raise InvalidInput(CONFIG_INVALID, exc.message) from None
    # the template names the key in a comment: only a line with the key before any "#" counts
    if raw is None or b"artifact_paths" not in raw or not re.search(rb"^[^#\n]*artifact_paths", raw, re.M):
        return ()
    from toolkit.infra.config import parse_config_yaml  # YAML: only a config that names the key

    data = parse_config_yaml(raw.decode("utf-8", "replace"))
    privacy = data.get("privacy") if isinstance(data, dict) else None
    if privacy is None:
        return ()
    if not isinstance(privacy, dict):
        raise InvalidInput(CONFIG_INVALID, ".workgroup/config.yml: privacy must be a mapping")
    return validate_globs(privacy.get("artifact_paths"), "privacy.artifact_paths")


def session_notes(rel: str, text: str) -> bool:
    """A prose file (Markdown, text) holding a chat transcript: at least two user and two assistant
    turns at line starts, alternating at least three times."""
    if not rel.lower().endswith(PROSE_SUFFIXES) or ":" not in text:
        return False
    sides: list[bool] = []
    for match in _ROLE.finditer(text):
        user = match.group("role").lower() in _USER
        if not sides or sides[-1] != user:
            sides.append(user)
    switches = len(sides) - 1
    users = sum(1 for side in sides if side)
    return switches >= _MIN_SWITCHES and users >= _MIN_TURNS and len(sides) - users >= _MIN_TURNS
