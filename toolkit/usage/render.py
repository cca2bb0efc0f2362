"""Plain-text tables for ``workgroup usage`` (stdout carries the table or the JSON, nothing else)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from toolkit.core.display import shown

COLUMNS: tuple[tuple[str, str], ...] = (
    ("calls", "calls"),
    ("input", "input"),
    ("output", "output"),
    ("cache_write", "cache write"),
    ("cache_read", "cache read"),
    ("reasoning", "reasoning"),
    ("reread_share", "re-read"),
    ("carried_history", "carried"),
    ("compactions", "compact"),
    ("subagent_share", "subagent"),
)


def cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value * 100:.1f}%"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """Columns padded to their widest cell; the first ``left`` columns left-aligned, numbers right.

    Cells come from the logs (model names, session ids, project paths): each passes ``shown``.
    """
    rows = [[shown(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)]) + "\n"


def report_table(by: str, rows: Sequence[Mapping[str, object]], totals: Mapping[str, object]) -> str:
    headers = [by, *(title for _, title in COLUMNS)]
    body = [[str(r["key"]), *(cell(r[name]) for name, _ in COLUMNS)] for r in rows]
    body.append(["total", *(cell(totals[name]) for name, _ in COLUMNS)])
    return table(headers, body)
