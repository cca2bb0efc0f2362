"""Claude Code calls counted once: the reference note's rules, scoped so memory follows one session.

Inside a session (its own file and its ``subagents/`` files, read together) every rule applies in
full, with the id strings themselves: the same (message id, request id) again is one call, a
sidechain line sharing a message id with another call is a ``/btw`` replay of it, and of two copies
the non-sidechain one wins, else the larger token total (streaming partials, one line per content
block). Across sessions a call can only reappear as copied history (``--resume``/``--continue``
copy the original lines verbatim, partials and finals alike), so there is nothing to choose
between: the copy in the session read first is kept and a later session's copy is dropped. What
crosses from one session to the next is therefore only ``Seen``: a 60-bit digest per kept call of
its key and of its message id, stable across runs (blake2b, not the per-process salted ``hash``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from toolkit.usage.model import Call, FileLog
from toolkit.usage.rules import InSession, digest, settle_local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolkit.usage.shapes import KeptCopy


class Seen(msgspec.Struct):
    """What every earlier session leaves for the later ones: fixed-size digests, nothing per call else."""

    keys: dict[int, int] = msgspec.field(default_factory=dict)  # key digest -> session number * 2 + sidechain
    ids: set[int] = msgspec.field(default_factory=set)  # message-id digest, low bit: a sidechain call
    sessions: list[str] = msgspec.field(default_factory=list)  # session number -> name (one per session)

    def remember(
        self,
        session: str,
        kept: Mapping[str, KeptCopy],
        known: dict[str, int],
        boundaries: Iterable[int] = (),
    ) -> None:
        """Fold a finished session's kept calls (by every key that names them) and its compactions'
        key digests into the digests (``known``: digests already computed, by text)."""
        keys: list[tuple[int, bool]] = [(d, False) for d in boundaries]
        ids: list[int] = []
        for key, call in kept.items():
            if call.dropped:
                continue
            keys.append((known.get(key) or digest(key), call.sidechain))
            if call.key == key and call.msg_id is not None:
                ids.append(((known.get(call.msg_id) or digest(call.msg_id)) & ~1) | call.sidechain)
        self.absorb(session, keys, ids)

    def absorb(self, session: str, keys: list[tuple[int, bool]], ids: list[int]) -> None:
        """A session's kept calls as digests: (key digest, sidechain) each, and message-id digests."""
        number = len(self.sessions) * 2
        self.sessions.append(session)
        codes = (number, number + 1)  # one int object per session and flag, shared by its calls
        setdefault = self.keys.setdefault
        for key, sidechain in keys:
            setdefault(key, codes[sidechain])
        self.ids.update(ids)

    def boundary_copied(self, key: int) -> bool:
        """Whether an earlier session holds this compaction (by its key digest)."""
        return key in self.keys

    def copied(self, key: int, mid: int, sidechain: bool) -> int | None:
        """The code of an earlier session's copy of a call (by its key and message-id digests;
        ``-1``: a ``/btw`` match), else None."""
        code = self.keys.get(key)
        if code is not None:
            return code
        mid &= ~1
        if (mid | 1) in self.ids or (sidechain and mid in self.ids):
            return -1
        return None


class Probe(Seen):
    """A session read ahead of its turn (a worker process, before the earlier sessions are known):
    every question it would ask the earlier sessions is answered from ``local`` (the sessions just
    before it in the same task, read by the same worker) when they hold the answer, else noted and
    answered "not seen"; what it would leave for the later ones is kept for ``Seen.absorb``. The
    answers were right, and so is the whole session's result, exactly when
    ``answers_none(seen, probe.asked)`` holds once the earlier sessions are in ``seen``, the
    sessions of ``local`` among them as they were read ahead, each adding keys no session before it
    had (else the first holder of a key, and the code it answers, would differ).

    ``asked`` holds the questions as ``Seen.copied`` would look them up: key digests (in
    ``Seen.keys``), message-id digests with the low bit set (in ``Seen.ids``: a sidechain copy
    there), and, for sidechain calls, message-id digests with it clear (a main-chain copy there).
    A question ``local`` answers is not noted: ``seen`` then holds the same answer.
    """

    asked: tuple[list[int], list[int], list[int]] = msgspec.field(default_factory=lambda: ([], [], []))
    left: tuple[str, list[tuple[int, bool]], list[int]] | None = None
    local: Seen = msgspec.field(default_factory=Seen)

    def __post_init__(self) -> None:
        self.sessions = self.local.sessions  # a code ``local`` answers names one of its sessions

    def copied(self, key: int, mid: int, sidechain: bool) -> int | None:
        local = self.local
        code = local.keys.get(key)
        if code is not None:
            return code
        keys, ids, side = self.asked
        keys.append(key)
        mid &= ~1
        if (mid | 1) in local.ids or (sidechain and mid in local.ids):
            return -1  # ``seen`` holds these ids too, and (the key noted above) not the key
        ids.append(mid | 1)
        if sidechain:
            side.append(mid)
        return None

    def boundary_copied(self, key: int) -> bool:
        if key in self.local.keys:
            return True
        self.asked[0].append(key)
        return False

    def absorb(self, session: str, keys: list[tuple[int, bool]], ids: list[int]) -> None:
        self.left = (session, keys, ids)


def fresh(seen: Seen, keys: list[tuple[int, bool]]) -> bool:
    """Whether no session in ``seen`` holds any of these key digests (a session's ``left``)."""
    return seen.keys.keys().isdisjoint([key for key, _ in keys])


def answers_none(seen: Seen, asked: tuple[list[int], list[int], list[int]]) -> bool:
    """Whether every question a ``Probe`` noted gets "not seen" from ``seen`` too (set operations
    in C: no call per question)."""
    keys, ids, side = asked
    return seen.keys.keys().isdisjoint(keys) and seen.ids.isdisjoint(ids) and seen.ids.isdisjoint(side)


def _copied_before(item: Call, seen: Seen, state: InSession) -> int | None:
    """The code of an earlier session's copy of this call (``-1``: a ``/btw`` match), else None."""
    assert item.key is not None and item.msg_id is not None
    return seen.copied(state.digest(item.key), state.digest(item.msg_id), item.sidechain)


def _note_resume(item: Call, code: int, seen: Seen, resumed_from: dict[str, str]) -> None:
    """A main-chain call already counted in another session: this session resumed that one."""
    earlier = seen.sessions[code >> 1]
    if not item.sidechain and not code & 1 and earlier != item.session:
        resumed_from.setdefault(item.session, earlier)


def _admit(item: Call, state: InSession, seen: Seen, resumed_from: dict[str, str]) -> None:
    assert item.key is not None and item.msg_id is not None
    if settle_local(item, state):
        return
    code = _copied_before(item, seen, state)
    if code is not None:
        state.duplicates += 1
        item.dropped = True
        if code >= 0:
            _note_resume(item, code, seen, resumed_from)
        return
    state.keep(item)


def dedup_session(logs: list[FileLog], seen: Seen, resumed_from: dict[str, str]) -> int:
    """Mark the duplicate calls of one session's files (file order) as dropped; returns how many.

    Then the session's kept calls join ``seen`` for the sessions read after it.
    """
    state = InSession()
    compactions: set[int] = set()
    for log in logs:
        for item in log.items:
            if isinstance(item, Call):
                if item.key is not None and item.msg_id is not None:
                    _admit(item, state, seen, resumed_from)
            elif item.key is not None:
                # a compaction copied with the history of a resumed session happened once, earlier
                key = state.digest(item.key)
                if key in compactions or seen.boundary_copied(key):
                    item.dropped = True
                else:
                    compactions.add(key)
    seen.remember(logs[0].session if logs else "", state.exact, state.digests, compactions)
    return state.duplicates
