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

from toolkit.core.errors import InvalidInput

CONFIG_INVALID = "CONFIG_INVALID"
# a glob the config may hold: repository-relative, no "..", no absolute path, printable ASCII
_GLOB = re.compile(r"^[A-Za-z0-9._*?\-/\[\]!+@ ]{1,256}$")
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


def validate_globs(value: object, where: str) -> tuple[str, ...]:
    """The artifact globs of the config or the command line; anything else is CONFIG_INVALID."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or len(value) > 200:
        raise InvalidInput(CONFIG_INVALID, f"{where} must be a list of at most 200 globs")
    globs: list[str] = []
    for glob in value:
        if (
            not isinstance(glob, str)
            or not _GLOB.match(glob)
            or glob.startswith("/")
            or ".." in glob.split("/")
            or glob.split("/")[0] == ".git"
        ):
            raise InvalidInput(
                CONFIG_INVALID,
                f"{where}: each entry is a repository-relative glob (letters, digits, . _ - / * ? [ ])",
            )
        globs.append(glob)
    return tuple(globs)


def glob_regex(glob: str) -> str:
    """A regular expression for ``glob`` over repository-relative POSIX paths: ``**`` any folders,
    ``*`` and ``?`` within one name; a glob without ``/`` matches a name in any folder, one ending
    in ``/`` everything under that folder."""
    body = glob.rstrip("/")
    out: list[str] = []
    index = 0
    while index < len(body):
        if body.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif body.startswith("**", index):
            out.append(".*")
            index += 2
        elif body[index] == "*":
            out.append("[^/]*")
            index += 1
        elif body[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(body[index]))
            index += 1
    pattern = "".join(out)
    head = "(?:^|/)" if "/" not in body else "^"
    tail = "/" if glob.endswith("/") else "(?:$|/)"
    return head + pattern + tail


def compile_globs(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{glob_regex(g)})" for g in globs)) if globs else None


def configured_globs(root: object) -> tuple[str, ...]:
    """``privacy.artifact_paths`` of ``<root>/.workgroup/config.yml`` (read through the confined
    layer). YAML is parsed only when the file names the key: the hooks start fast otherwise."""
    from pathlib import Path

    from toolkit.infra import confined
    from toolkit.infra.boundedio import FileRefused

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
    if raw is None or b"artifact_paths" not in raw:
        return ()
    from toolkit.infra.config import parse_config_yaml

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
