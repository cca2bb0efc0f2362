"""The data behind ``workgroup usage``: verified counts per group, notes on what was not verifiable.

The report's fold, rule by rule: a call is selected (``--since``/``--until``/``--project``), keyed
(``--by``) and added to its group's totals, and handed to the extra folds asked for (cost, events,
page); the rows are the groups in key order, the total row their sum, the notes the run's counts.
Calls arrive a session at a time (``fold.stream``) and are not kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

from toolkit.usage.fold import By, Groups, Ledger, LocalDays, Totals, key_function, select
from toolkit.usage.model import Call

if TYPE_CHECKING:
    from toolkit.usage.shapes import ReportNotes, UsageReport

SCHEMA = "workgroup.usage-report/v1"


class Extra(Protocol):
    """Another fold fed the same selected calls (cost estimate, efficiency events, HTML page),
    whose state can be taken out of a worker process and merged here (``fold.Sink``)."""

    def add_all(self, calls: list[Call]) -> None: ...

    def take(self) -> Any: ...

    def merge(self, state: Any) -> None: ...


def _sum(groups: Iterable[Totals]) -> Totals:
    out = Totals()
    for part in groups:
        out.merge(part)
    return out


def notes(ledger: Ledger, totals: Totals) -> ReportNotes:
    """What the logs could not verify, said plainly instead of guessed."""
    return {
        "files_read": ledger.files,
        "bytes_read": ledger.bytes,
        "duplicate_lines_dropped": ledger.duplicates,
        "unreadable_lines_skipped": ledger.skipped_lines,
        "calls_without_final_usage": totals.not_final,
        "codex_files_without_usage": ledger.files_without_usage,
    }


class Fold:
    """Selected calls into group totals as they arrive, and into the extra folds."""

    def __init__(
        self,
        by: By,
        days: LocalDays,
        keep: Callable[[Call], bool] | None = None,
        extras: Iterable[Extra] = (),
    ) -> None:
        self.by = by
        self.keep = keep
        self.groups = Groups(key_function(by, days))
        self.extras = list(extras)

    def add_all(self, calls: list[Call]) -> None:
        chosen = calls if self.keep is None else [c for c in calls if self.keep(c)]
        self.groups.add_all(chosen)
        for extra in self.extras:
            extra.add_all(chosen)

    def take(self) -> tuple[dict[str, Totals], list[Any]]:
        return self.groups.take(), [extra.take() for extra in self.extras]

    def merge(self, state: tuple[dict[str, Totals], list[Any]], first_log: int = 0) -> None:
        groups, extras = state
        self.groups.merge(groups)
        for extra, part in zip(self.extras, extras, strict=True):
            extra.merge(part)

    def data(self, ledger: Ledger, timezone: str) -> UsageReport:
        groups = self.groups.by_key()
        totals = _sum(groups.values())
        return {
            "schema": SCHEMA,
            "by": self.by.value,
            "timezone": timezone,
            "rows": [{"key": name, **part.as_dict()} for name, part in groups.items()],
            "totals": totals.as_dict(),
            "notes": notes(ledger, totals),
        }


def build(
    ledger: Ledger,
    *,
    by: By,
    days: LocalDays,
    timezone: str,
    since: date | None = None,
    until: date | None = None,
    project: str | None = None,
) -> tuple[UsageReport, list[Call]]:
    """The report of a collected ledger (the command folds the sessions as they are read instead)."""
    calls = select(ledger, days, since, until, project)
    fold = Fold(by, days)
    fold.add_all(calls)
    return fold.data(ledger, timezone), calls


def warnings(data: UsageReport) -> list[str]:
    """Human lines for stderr about counts the logs could not verify."""
    n = data["notes"]
    lines = []
    if n["calls_without_final_usage"]:
        lines.append(
            f"{n['calls_without_final_usage']} call(s) have no final usage record in the log "
            "(no stop reason): their output counts may be low and cannot be recovered"
        )
    if n["codex_files_without_usage"]:
        lines.append(
            f"{n['codex_files_without_usage']} Codex rollout(s) have turns but no token counts "
            "(builds before 2025-09-06): not counted"
        )
    if n["unreadable_lines_skipped"]:
        lines.append(
            f"{n['unreadable_lines_skipped']} usage line(s) were malformed or incomplete and skipped"
        )
    return lines
