"""The vocabulary of the privacy engine: categories, contexts and the finding record.

Everything here is standard library only: the runtime's capsule and telemetry operations
import the engine on every delegation.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Category(StrEnum):
    """What kind of private content a finding is."""

    SECRET = "secret"
    IDENTIFIER = "identifier"
    TRANSCRIPT = "transcript"
    PATH = "path"
    EMAIL = "email"
    UNREADABLE = "unreadable"  # a workflow artifact the gate could not read whole (never a pass)


class Context(StrEnum):
    """Where the scanned content is going; selects which rules apply there.

    * ``SOURCE``: source code and documentation (``workgroup privacy scan`` and the all-files
      hook on anything that is not a workflow artifact): only secrets and credentials are
      findings there; emails, home paths, session ids and transcripts are ordinary content.
    * ``GENERIC``: a workflow artifact of no more specific kind (``.workgroup/``, ``.reviews/``,
      ``knowzcode/``, logs): every category is a finding.
    * ``CAPSULE``: a context capsule; also refuses private *field names* (``session_id``,
      ``raw_prompt``, ``api_key``...), like the reference runtime, including ``run_id``.
    * ``TELEMETRY``: an efficiency event; also refuses repository, file-path, email and
      account fields, URLs and relative paths (the reference's telemetry rules).
    * ``EVENT_LOG``: a CM event log line; the toolkit's and CM's own ``run_id``, ``call_id``
      and ``event_id`` are legitimate there (provider-issued ids are still refused).
    * ``HANDOFF``: a handoff note; private field names are refused, as in capsules, except
      ``run_id``.
    """

    CAPSULE = "capsule"
    TELEMETRY = "telemetry"
    EVENT_LOG = "event_log"
    HANDOFF = "handoff"
    GENERIC = "generic"
    SOURCE = "source"


ALL_CONTEXTS: frozenset[Context] = frozenset(Context)
ARTIFACT_CONTEXTS: frozenset[Context] = ALL_CONTEXTS - {Context.SOURCE}
STRUCTURED_CONTEXTS: frozenset[Context] = frozenset(
    {Context.CAPSULE, Context.TELEMETRY, Context.EVENT_LOG, Context.HANDOFF}
)


class FileKind(StrEnum):
    """What a file's content is, which decides the rules that make sense for it.

    * ``TEXT``: text people write (code, docs, config): every rule of the context.
    * ``DATA``: generated data where long random-looking runs are normal: SVG/Illustrator/EPS
      path data, lock files, minified bundles, source maps, checksum files (``go.sum``,
      ``SHA256SUMS``). Only detectors of a fixed provider format run there; the heuristic ones
      (high-entropy strings, ``password = ...`` assignments, command-line flags) do not.
    """

    TEXT = "text"
    DATA = "data"


@dataclass(frozen=True, order=True)
class Finding:
    """One finding. ``line`` is 1-based; ``start``/``end`` are 0-based code-point columns.

    ``masked`` is the matched text masked (a short prefix and asterisks), never the value.
    ``pointer`` is the JSON pointer of the scanned string inside a structure (``scan_value``),
    empty for plain text.
    """

    line: int
    start: int
    end: int
    category: Category
    rule: str
    masked: str
    pointer: str = ""

    def as_dict(self) -> dict[str, object]:
        """The finding as plain JSON-ready data (category as its string value)."""
        data: dict[str, object] = {
            "line": self.line,
            "category": self.category.value,
            "rule": self.rule,
            "start": self.start,
            "end": self.end,
            "masked": self.masked,
        }
        if self.pointer:
            data["pointer"] = self.pointer
        return data


def mask(value: str) -> str:
    """Mask a matched value: at most a quarter of it (<= 4 code points) stays, the rest is ``*``.

    Short values keep nothing, so a masked short password reveals only that something was there.
    """
    keep = 0 if len(value) < 12 else min(4, len(value) // 4)
    return value[:keep] + "*" * 8
