"""``--html FILE``: one self-contained page (plotly, its JavaScript inlined; no network, no external script).

Three figures: tokens by kind per day, re-read share per session, and the sessions with the most
carried history. plotly is the optional extra ``workgroup-toolkit[report]``.
"""

from __future__ import annotations

import html as _html
from pathlib import Path
from typing import Any

from toolkit.core.errors import EnvironmentFailure, InvalidInput
from toolkit.usage.fold import By, Groups, LocalDays, Totals, key_function
from toolkit.usage.model import Call

TOP = 15


class Page:
    """The page's fold: totals per local day and per session."""

    def __init__(self, days: LocalDays) -> None:
        self.per_day = Groups(key_function(By.DAY, days))
        self.per_session = Groups(key_function(By.SESSION, days))

    def add_all(self, calls: list[Call]) -> None:
        self.per_day.add_all(calls)
        self.per_session.add_all(calls)

    def take(self) -> tuple[dict[str, Totals], dict[str, Totals]]:
        return self.per_day.take(), self.per_session.take()

    def merge(self, state: tuple[dict[str, Totals], dict[str, Totals]]) -> None:
        self.per_day.merge(state[0])
        self.per_session.merge(state[1])


def _figures(page: Page) -> list[Any]:
    import plotly.graph_objects as go

    per_day: dict[str, Totals] = page.per_day.by_key()
    x = list(per_day)
    kinds = (
        ("input", "input"),
        ("cache_write", "cache write"),
        ("cache_read", "cache read"),
        ("output", "output"),
    )
    tokens = go.Figure(
        [go.Bar(name=title, x=x, y=[getattr(t, attr) for t in per_day.values()]) for attr, title in kinds]
    )
    tokens.update_layout(barmode="stack", title="Tokens by kind per day", yaxis_title="tokens")

    per_session = page.per_session.by_key()
    shares = sorted(
        ((name, t.cache_read / t.prompt) for name, t in per_session.items() if t.prompt), key=lambda p: -p[1]
    )
    reread = go.Figure(go.Bar(x=[n for n, _ in shares], y=[round(s * 100, 2) for _, s in shares]))
    reread.update_layout(
        title="Re-read share per session (cache read / prompt)", yaxis_title="%", yaxis_range=[0, 100]
    )

    top = sorted(per_session.items(), key=lambda kv: -kv[1].carried)[:TOP]
    carried = go.Figure(
        go.Bar(x=[t.carried for _, t in top][::-1], y=[n for n, _ in top][::-1], orientation="h")
    )
    carried.update_layout(
        title=f"Top {TOP} sessions by carried history", xaxis_title="tokens re-read beyond base"
    )
    return [tokens, reread, carried]


def require_plotly() -> None:
    """Fail before anything is written when the ``[report]`` extra is missing."""
    try:
        import plotly.io  # noqa: F401
    except ImportError:
        raise EnvironmentFailure(
            "USAGE_NO_PLOTLY", "--html needs plotly: pip install 'workgroup-toolkit[report]'"
        ) from None


def render_html(page: Page) -> str:
    require_plotly()
    import plotly.io as pio

    parts = [
        pio.to_html(
            fig,
            full_html=False,
            include_plotlyjs=(index == 0),
            include_mathjax=False,
            div_id=f"usage-figure-{index + 1}",  # not a random id: the same logs give the same page
        )
        for index, fig in enumerate(_figures(page))
    ]
    title = _html.escape("workgroup usage: tokens, re-read share, carried history")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body>\n<h1>{title}</h1>\n"
        "<p>Counts verified from Claude Code and Codex logs; carried history is cache read beyond each "
        "context's base (see docs/usage.md).</p>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


def write_html(path: Path, page: Page) -> None:
    from toolkit.infra.store import atomic_write

    text = render_html(page)
    try:
        atomic_write(path, text)
    except FileNotFoundError:
        raise InvalidInput("USAGE_BAD_OUTPUT", "the folder of --html does not exist") from None
