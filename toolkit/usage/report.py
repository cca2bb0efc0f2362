"""The data behind ``workgroup usage``: verified counts per group, notes on what was not verifiable."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Any

from toolkit.usage.fold import By, Ledger, LocalDays, Totals, group, key_function, select
from toolkit.usage.model import Call

SCHEMA = "workgroup.usage-report/v1"


def _sum(groups: Iterable[Totals]) -> Totals:
    out = Totals()
    for part in groups:
        out.calls += part.calls
        out.input += part.input
        out.output += part.output
        out.cache_write += part.cache_write
        out.cache_read += part.cache_read
        if part.reasoning is not None:
            out.reasoning = (out.reasoning or 0) + part.reasoning
        out.carried += part.carried
        out.compactions += part.compactions
        out.subagent_tokens += part.subagent_tokens
        out.not_final += part.not_final
        out.sources |= part.sources
    return out


def notes(ledger: Ledger, calls: list[Call]) -> dict[str, Any]:
    """What the logs could not verify, said plainly instead of guessed."""
    not_final = sum(1 for c in calls if not c.final)
    return {
        "files_read": ledger.files,
        "bytes_read": ledger.bytes,
        "duplicate_lines_dropped": ledger.duplicates,
        "unreadable_lines_skipped": ledger.skipped_lines,
        "calls_without_final_usage": not_final,
        "codex_files_without_usage": ledger.files_without_usage,
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
) -> tuple[dict[str, Any], list[Call]]:
    calls = select(ledger, days, since, until, project)
    groups = group(calls, key_function(by, days))
    rows = [{"key": name, **totals.as_dict()} for name, totals in groups.items()]
    return (
        {
            "schema": SCHEMA,
            "by": by.value,
            "timezone": timezone,
            "rows": rows,
            "totals": _sum(groups.values()).as_dict(),
            "notes": notes(ledger, calls),
        },
        calls,
    )


def warnings(data: dict[str, Any]) -> list[str]:
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
