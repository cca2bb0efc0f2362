"""The rows ``toolkit/core/findings.py`` builds for ``--json``, as TypedDicts (for annotations only:
findings imports this module under ``TYPE_CHECKING``, so the hooks' cold start never loads it)."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from toolkit.core.jsontypes import JsonObject


class FindingExtra(TypedDict, total=False):
    """A finding's tool-specific fields (``extra`` in its JSON row), in the order the tools write
    them: a history hit's commit and file, a privacy hit's category, rule and 0-based span, a
    fan-out plan's worker (None for the plan as a whole)."""

    commit: str
    file: str
    category: str
    rule: str
    start: int
    end: int
    worker: int | None


class FindingRow(TypedDict):
    """One finding in the ``--json`` document (``Finding.as_json``)."""

    path: str
    line: int
    col: int
    code: str
    severity: str
    message: str
    fix: NotRequired[str]
    extra: NotRequired[FindingExtra]


class SummaryCounts(TypedDict):
    """The counts a summary starts with (``summary_counts``)."""

    findings: int
    errors: int
    warnings: int


class FindingsDocument(TypedDict):
    """The ``--json`` document: the tool, every finding and the summary (the counts, then the
    number checked when known, then the caller's own fields)."""

    tool: str
    findings: list[FindingRow]
    summary: JsonObject


__all__ = ["FindingExtra", "FindingRow", "FindingsDocument", "SummaryCounts"]
