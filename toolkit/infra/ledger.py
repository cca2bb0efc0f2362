"""The replay ledger: the one reader of what promotion has already consumed.

Both the runtime's promotion op (through its adapter) and ``workgroup promote`` ask the same
question, "which measurement run ids are decided?", so they read the same two sources the same
way: the local ledger (``replay-ledger.jsonl`` in the repository's local state) and the names of
the committed promotion records (``.workgroup/promotions/<run id>.json``). Deciding which of those
rows and names count is the pure rule ``toolkit.runtime.promotion.consumed_ids``.
"""

from __future__ import annotations

import os

from toolkit.infra.boundedio import MAX_LOG_BYTES, FileRefused, loads_bounded, read_regular

LEDGER_NAME = "replay-ledger.jsonl"


def read_replay_state(
    ledger: str | os.PathLike[str], promotions: str | os.PathLike[str]
) -> tuple[list[object], list[str]]:
    """(decoded ledger rows, file names in the promotions folder).

    A torn, foreign or too deeply nested ledger line is skipped, never fatal; a missing ledger or
    folder is empty. A ledger that is not a readable regular file within the log cap raises
    ``FileRefused``: callers must never read that as "nothing consumed".
    """

    raw = read_regular(
        os.fspath(ledger),
        limit=MAX_LOG_BYTES,
        what="the replay ledger",
        follow_symlinks=False,
        missing_ok=True,
    )
    rows: list[object] = []
    for line in (raw or b"").split(b"\n"):
        if not line.strip():
            continue
        try:
            rows.append(loads_bounded(line, what="a replay ledger line", strict=False))
        except FileRefused:
            continue
    try:
        names = os.listdir(promotions)
    except OSError:
        names = []
    return rows, names
