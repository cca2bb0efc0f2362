"""Globs of repository-relative paths as the privacy config and hooks take them
(``privacy.artifact_paths``, ``--artifact-path``): their validation and their regular expression.
Stdlib only; the hooks import this on every run."""

from __future__ import annotations

import re

from toolkit.core.errors import InvalidInput

CONFIG_INVALID = "CONFIG_INVALID"
# a glob the config may hold: repository-relative, no "..", no absolute path, printable ASCII
_GLOB = re.compile(r"^[A-Za-z0-9._*?\-/\[\]!+@ ]{1,256}$")


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
