"""The per-call record every reader produces, and the per-file log it belongs to.

``msgspec.Struct`` rather than dataclasses: creating hundreds of thousands of records is the hot path,
and Structs are cheaper to create and to import (no generated code compiled at start-up).
"""

from __future__ import annotations

import msgspec

from toolkit.usage.rules import replaces

__all__ = ["Boundary", "Call", "FileLog", "replaces"]


class Call(msgspec.Struct, gc=False, tag="call", array_like=True, omit_defaults=True):
    """One model call after the reader's own rules (deduplication across files happens in ``dedup``).

    ``input`` is uncached input, so ``input + cache_write + cache_read`` is the whole prompt for both
    sources. ``context`` is the prompt size the carried-history base is taken from.
    """

    source: str  # "claude" | "codex"
    session: str  # the session the call is grouped under (subagents: their parent's)
    project: str  # hashed working directory (or hashed project folder)
    thread: str  # one context window: a main chain, a subagent file, a sidechain
    subagent: bool
    ts: str  # RFC 3339 UTC, as logged
    model: str
    input: int
    output: int
    cache_write: int
    cache_read: int
    reasoning: int | None  # Codex only; Claude does not report it
    context: int
    final: bool = True  # False: the log has no final usage for this call (output may be low)
    cache_write_1h: int = 0
    key: str | None = None  # Claude dedup key: message id and request id (or session), NUL-joined
    msg_id: str | None = None  # the message id (the /btw sidechain rule)
    sidechain: bool = False
    dropped: bool = False
    carried: int = 0
    compactions: int = 0  # compaction boundaries just before this call
    compactions_after: int = 0  # compactions after the last call of its file (nothing followed them)
    resume: bool = False  # first own call of a resumed session
    log: int = 0  # index of the FileLog it came from (``Ledger.logs``)

    @property
    def prompt(self) -> int:
        return self.input + self.cache_write + self.cache_read

    @property
    def tokens(self) -> int:
        return self.input + self.cache_write + self.cache_read + self.output


class Boundary(msgspec.Struct, gc=False, tag="boundary", array_like=True, omit_defaults=True):
    """A context boundary inside one log: a compaction, or a resume appended to the same file."""

    ts: str
    kind: str  # "compaction" | "resume"
    trigger: str | None = None  # compaction trigger as logged ("auto", "manual"); None when absent
    pre_tokens: int | None = None
    key: str | None = None  # Claude: the compaction line's uuid (a resumed session copies it verbatim)
    dropped: bool = False  # a copy of a compaction already counted (copied history)


class FileLog(msgspec.Struct, array_like=True, omit_defaults=True):
    """What one log file contributed: its calls and compaction markers in file order."""

    source: str
    path_hash: str  # provenance without the path itself
    session: str
    project: str
    items: list[Call | Boundary] = msgspec.field(default_factory=list)
    skipped_lines: int = 0  # candidate lines that were malformed or failed validation
    duplicates: int = 0  # lines dropped inside this file (streaming partials, content-block splits)
    no_usage: bool = False  # Codex: turns happened but the file has no token_count usage
