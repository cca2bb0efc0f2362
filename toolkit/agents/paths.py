"""A path as a hook's answer may name it (``safe_path``)."""

from __future__ import annotations

from toolkit.core.display import shown
from toolkit.privacy import Context, scan_text

WITHHELD = "the destination (its path holds private content, so it is not repeated)"


def safe_path(path: str) -> str:
    """``path`` as an answer may name it: a name that itself holds private content (a token as a
    file name, a home folder) is not repeated, and no control character reaches the agent."""
    # the path whole, each of its names, and each name without its extension: an address or a token
    # used as a file name (``notes/jane@corp.io.md``) is found on a line of its own
    names = [name for name in path.replace("\\", "/").split("/") if name]
    stems = [name.rsplit(".", 1)[0] for name in names if "." in name]
    if scan_text("\n".join([path, *names, *stems]), Context.GENERIC):
        return WITHHELD
    return shown(path)
