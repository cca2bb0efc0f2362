"""The Claude Code counting rules, in one place, with the standard library alone.

Both readers of a Claude log apply these: the verified usage reader (``claude``: lines decoded by
``msgspec`` into typed structs, then ``dedup``) and the status line's lean reader (``lean``: the
same allowlisted fields found by a byte scanner, for a refresh that must not pay for importing
``msgspec``). Each rule works on whatever line object it is given, by attribute: a decoded
``claude._Line`` or a ``lean.Line``, so the two can only disagree where their decoding does, and
the lean reader hands every line it is not sure of to the typed decoder.

* which line is a usable model call (``usable``: ccusage's rules);
* what names one call (``call_key``) and, of two lines of one call in a file, which is kept
  (``Pick.take``);
* a call's token counts (``tokens``, ``cache_write``) and model name (``model_name``);
* inside one session, which of two copies of a call is kept (``replaces``) and when two calls are
  one (the same key, or a ``/btw`` replay: ``InSession``, ``settle_local``).
"""

from __future__ import annotations

import re
from hashlib import blake2b
from sys import intern

TYPE_CHECKING = False  # typing is not imported on the status line's path
if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.usage.shapes import KeptCopy, LineFields, MessageFields, PickList, PicksByKey, UsageFields

# a line holding a usage object: ``"usage":{`` as Claude Code writes it, blanks allowed around the
# colon as JSON allows them (logs re-serialized by other tools)
USAGE = re.compile(rb'"usage"[ \t\r]*:[ \t\r]*\{')

_SEMVER: dict[str, bool] = {}


def semver_prefix(value: str) -> bool:
    known = _SEMVER.get(value)
    if known is None:
        parts = value.split(".", 2)
        known = len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit() and parts[2][:1].isdigit()
        if len(_SEMVER) < 4096:
            _SEMVER[value] = known
    return known


def valid_ts(value: str | None) -> bool:
    # RFC 3339 in UTC as Claude Code writes it; anything else is not a verified call time
    return (
        value is not None and len(value) >= 20 and value[4] == "-" and value[10] == "T" and value[-1] == "Z"
    )


def usable(line: LineFields, message: MessageFields, usage: UsageFields) -> bool:
    """ccusage's rules for a usable line: no explicit null ids, a semver version, no empty ids."""
    if explicit_null(line, message, usage):
        return False
    ts = line.timestamp
    if ts is None or len(ts) < 20 or ts[4] != "-" or ts[10] != "T" or ts[-1] != "Z":
        return False  # RFC 3339 in UTC as Claude Code writes it, or not a verified call time
    version = line.version
    if isinstance(version, str) and not (_SEMVER.get(version) or semver_prefix(version)):
        return False
    return "" not in (message.id, line.requestId, line.sessionId, message.model)


def explicit_null(line: LineFields, message: MessageFields, usage: UsageFields) -> bool:
    """Whether one of the ids, version, folder, speed or cache counts ccusage requires is null."""
    return (
        message.id is None
        or message.model is None
        or line.sessionId is None
        or line.requestId is None
        or line.version is None
        or line.cwd is None
        or usage.speed is None
        or usage.cache_creation_input_tokens is None
        or usage.cache_read_input_tokens is None
    )


def call_key(msg_id: str, request_id: object, line_session: str, owner: str) -> str:
    """One call's name: its message id and request id (or, without one, the session), NUL-joined."""
    return msg_id + "\x00" + (request_id if isinstance(request_id, str) else "\x01" + (line_session or owner))


def cache_write(usage: UsageFields) -> tuple[int, int]:
    """(all cache writes, the 1 h part): the ``ephemeral_*`` split when present, else the flat field."""
    created = usage.cache_creation
    if created is not None:
        return (
            created.ephemeral_5m_input_tokens + created.ephemeral_1h_input_tokens,
            created.ephemeral_1h_input_tokens,
        )
    return usage.cache_creation_input_tokens or 0, 0


def tokens(usage: UsageFields) -> int:
    created = usage.cache_creation
    if created is not None:
        write = created.ephemeral_5m_input_tokens + created.ephemeral_1h_input_tokens
    else:
        write = usage.cache_creation_input_tokens or 0
    total: int = usage.input_tokens + write + (usage.cache_read_input_tokens or 0) + usage.output_tokens
    return total


def model_name(model: object, speed: object) -> str:
    """A call's model, interned: ``-fast`` appended for a fast-mode call (not to ``<synthetic>``),
    ``unknown`` when the line names none."""
    name = model if isinstance(model, str) else ""
    if speed == "fast" and name and name != "<synthetic>":
        name += "-fast"
    return intern(name or "unknown")


def final(line: LineFields) -> bool:
    return line.message is not None and line.message.stop_reason is not None


class Pick:
    """The best line so far of one call in one file (made into a call once the file is read)."""

    __slots__ = ("key", "line", "owner", "sidechain", "tokens")
    # key: ``call_key``; None without a message id (the lines of one call share it: the pick is
    # found by it)
    key: str | None
    line: LineFields
    owner: str
    sidechain: bool
    tokens: int

    def __init__(self, line: LineFields, owner: str, tokens: int, key: str | None) -> None:
        self.line = line
        self.owner = owner
        self.tokens = tokens
        self.sidechain = line.isSidechain is True
        self.key = key

    def take(self, line: LineFields, owner: str, tokens: int) -> None:
        """Another line of the same call: the non-sidechain one wins, else the larger token total, else
        (equal totals: a content block split over lines) the one with a stop reason, the final usage."""
        sidechain = line.isSidechain is True
        if (self.sidechain and not sidechain) or (
            sidechain == self.sidechain
            and (tokens > self.tokens or (tokens == self.tokens and final(line) and not final(self.line)))
        ):
            self.line, self.owner, self.tokens, self.sidechain = line, owner, tokens, sidechain


SKIPPED, SAME_CALL, NEW_CALL = 0, 1, 2


def admit_line(
    line: LineFields,
    message: MessageFields,
    usage: UsageFields,
    session: str,
    picks: PickList,
    first: PicksByKey,
) -> tuple[str, int]:
    """One line with a usage object, in file order: skipped (not a usable call), another line of a
    call the file already has (``Pick.take``), or a new call appended to ``picks`` (``first``: the
    file's calls by key, a dict or what answers ``get`` and item assignment alike). Returns the
    file's session (the path's, else the first usable line's) and which of the three it was."""
    if not usable(line, message, usage):
        return session, SKIPPED
    line_session = line.sessionId if isinstance(line.sessionId, str) else ""
    owner = session = session or line_session
    msg_id = message.id
    if not isinstance(msg_id, str):  # no key
        picks.append(Pick(line, owner, 0, None))
        return session, NEW_CALL
    key = call_key(msg_id, line.requestId, line_session, owner)
    pick = first.get(key)
    if pick is not None:
        pick.take(line, owner, tokens(usage))
        return session, SAME_CALL
    pick = first[key] = Pick(line, owner, tokens(usage), key)
    picks.append(pick)
    return session, NEW_CALL


# -- inside one session ----------------------------------------------------------------------------


def replaces(candidate: KeptCopy, existing: KeptCopy) -> bool:
    """Keep the non-sidechain copy, else the larger token total (streaming partials, split blocks),
    else the copy with final usage (a content block split over lines with equal counts)."""
    if candidate.sidechain != existing.sidechain:
        return bool(existing.sidechain)
    if candidate.tokens != existing.tokens:
        return bool(candidate.tokens > existing.tokens)
    return bool(candidate.final and not existing.final)


def digest(text: str) -> int:
    """60 bits of blake2b (an int of two 30-bit digits: the smallest int object above 30 bits)."""
    raw = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little") >> 4


class InSession:
    """The full rules inside one session: every kept call by key, and by message id."""

    def __init__(self) -> None:
        self.exact: dict[str, KeptCopy] = {}
        self.by_id: dict[str, list[KeptCopy]] = {}
        self.duplicates = 0
        self.digests: dict[str, int] = {}  # key or message id -> its digest, computed once

    def digest(self, text: str) -> int:
        found = self.digests.get(text)
        if found is None:
            found = self.digests[text] = digest(text)
        return found

    def keep(self, item: KeptCopy) -> None:
        """A call no copy of which came before: kept, by its key and its message id (it has both)."""
        key, msg_id = item.key, item.msg_id
        assert key is not None and msg_id is not None
        self.exact[key] = item
        self.by_id.setdefault(msg_id, []).append(item)


def btw_replay(item: KeptCopy, peers: Sequence[KeptCopy]) -> KeptCopy | None:
    """A ``/btw`` sidechain replay reuses a parent's message id with a new request id: the same call."""
    for other in peers:
        if item.sidechain or other.sidechain:
            return other
    return None


def settle(existing: KeptCopy, item: KeptCopy, key: str, msg_id: str, state: InSession) -> None:
    """Two copies of one call in this session: the loser is dropped, the winner takes both keys
    (``key`` and ``msg_id``: ``item``'s)."""
    state.duplicates += 1
    loser, winner = (existing, item) if replaces(item, existing) else (item, existing)
    loser.dropped = True
    if winner is item:
        state.exact[key] = item
        if existing.key is not None:
            state.exact[existing.key] = item
        peers = state.by_id.setdefault(msg_id, [])
        peers[:] = [item if c is existing else c for c in peers]


def settle_local(item: KeptCopy, state: InSession) -> bool:
    """Whether this call (with a key and a message id) is a copy of one already in the session
    (then the two are settled: one of them is dropped)."""
    key, msg_id = item.key, item.msg_id
    assert key is not None and msg_id is not None
    existing = state.exact.get(key)
    if existing is None:
        existing = btw_replay(item, state.by_id.get(msg_id, ()))
    if existing is not None:
        settle(existing, item, key, msg_id, state)
        return True
    return False
