"""The repository read of ``promotion``: the replay ledger's rows and the committed promotion
record names.

Part of the runtime's adapter (``toolkit.runtime.adapter``): ``RuntimeContext`` loads this module
when an operation first asks for the replay state, so no other operation pays for it at start-up.
Standard library only; every error is a ``RuntimeOpError``.
"""

from __future__ import annotations

import os

from toolkit.infra.boundedio import FileRefused
from toolkit.infra.gitlocation import find_git
from toolkit.infra.ledger import LEDGER_NAME, read_replay_state
from toolkit.runtime.codes import RuntimeOpError


def replay_state(cwd: str) -> tuple[list[object], list[str]]:
    """(decoded replay-ledger rows, file names under ``.workgroup/promotions``) of the repository
    containing ``cwd``; both empty outside a repository.

    A torn, foreign or too deeply nested ledger line is skipped; a ledger that cannot be read at
    all raises ``ENVIRONMENT_ERROR`` (it must never read as "nothing consumed").
    """
    location = find_git(cwd)
    if location is None:
        return [], []
    try:
        return read_replay_state(
            os.path.join(location.local_state, LEDGER_NAME),
            os.path.join(location.workdir, ".workgroup", "promotions"),
        )
    except FileRefused:
        raise RuntimeOpError("ENVIRONMENT_ERROR") from None
