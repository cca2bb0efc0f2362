"""``--html FILE``: one self-contained page a person can read without hovering.

No script at all: the charts are inline SVG drawn here, and every number a chart shows is also in a
table. The page says which period it covers (first and last local day with calls, and the
``--since``/``--until`` asked for), in which timezone, when it was generated (``SOURCE_DATE_EPOCH``
fixes that time for reproducible pages), which logs were read, and what the columns mean. Claude
Code and Codex sessions are told apart by a column and by colour; session ids are shortened to
their first 8 characters, the full id is in the cell's title. A list-price estimate is a column
only when ``--cost`` or ``--prices`` asked for one; a group with calls the price table does not
know says "unpriced".

Size: the page is bounded whatever the logs hold (at most ``MAX_BARS`` bars per time chart: days
become weeks, then months; at most ``MAX_SESSION_ROWS`` session rows, the rest summed in one
row), so a year of logs stays far below 1.5 MB.
"""

from __future__ import annotations

import html as _html
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.core.errors import InvalidInput
from toolkit.usage.cost import Estimate, rates_for
from toolkit.usage.fold import Groups, LocalDays, Totals
from toolkit.usage.model import Call

if TYPE_CHECKING:
    from toolkit.usage.shapes import PriceTable

    # (group, model) -> summed tokens (``Estimate.take``)
    EstimateSums = dict[tuple[str, str], list[int]]
    # what a worker's page hands back (``Page.take``): totals per day and tool, per tool and session,
    # each session's first and last day, and the two estimates' sums (None without prices)
    PageState = tuple[
        dict[str, Totals],
        dict[str, Totals],
        dict[str, tuple[str, str]],
        tuple[EstimateSums, EstimateSums] | None,
    ]
    Cell = str | tuple[str, str]  # a table cell: text, or (text, its longer form as the title)

TOP = 15
MAX_BARS = 92  # a time chart with more days shows weeks, and with more weeks than this, months
MAX_SESSION_ROWS = 300
DOCS_URL = "https://github.com/workgroup-toolkit/workgroup-toolkit/blob/main/docs/usage.md"

TOOLS = {"claude": "Claude Code", "codex": "Codex"}
TOOL_COLOURS = {"claude": "#D55E00", "codex": "#0072B2"}  # Okabe-Ito: vermillion, blue
KINDS = (  # (Totals attribute, label, colour)
    ("input", "input", "#E69F00"),
    ("cache_write", "cache write", "#CC79A7"),
    ("cache_read", "cache read", "#56B4E9"),
    ("output", "output", "#009E73"),
)
_SEP = "\t"  # between the parts of a group key (a day or a session id never holds a tab)


def _tool(source: str) -> str:
    return TOOLS.get(source, source)


class Page:
    """The page's fold: totals per (local day, tool) and per (tool, session), the first and last
    day of each session, and, when prices are given, the tokens per group and model to price."""

    def __init__(self, days: LocalDays, prices: PriceTable | None = None) -> None:
        self.days = days
        self.prices = prices
        self.per_day = Groups(lambda c: days.text(c.ts) + _SEP + c.source)
        self.per_session = Groups(lambda c: c.source + _SEP + c.session)
        self.spans: dict[str, tuple[str, str]] = {}
        self.money: tuple[Estimate, Estimate] | None = None
        if prices is not None:
            self.money = (
                Estimate(prices, lambda c: days.text(c.ts) + _SEP + c.source),
                Estimate(prices, lambda c: c.source + _SEP + c.session),
            )

    def add_all(self, calls: list[Call]) -> None:
        self.per_day.add_all(calls)
        self.per_session.add_all(calls)
        spans, text = self.spans, self.days.text
        for call in calls:
            key, day = call.source + _SEP + call.session, text(call.ts)
            found = spans.get(key)
            if found is None:
                spans[key] = (day, day)
            elif day < found[0] or day > found[1]:
                spans[key] = (min(day, found[0]), max(day, found[1]))
        if self.money is not None:
            self.money[0].add_all(calls)
            self.money[1].add_all(calls)

    def take(self) -> PageState:
        spans, self.spans = self.spans, {}
        money = None if self.money is None else (self.money[0].take(), self.money[1].take())
        return self.per_day.take(), self.per_session.take(), spans, money

    def merge(self, state: PageState) -> None:
        per_day, per_session, spans, money = state
        self.per_day.merge(per_day)
        self.per_session.merge(per_session)
        for key, (first, last) in spans.items():
            found = self.spans.get(key)
            self.spans[key] = (first, last) if found is None else (min(first, found[0]), max(last, found[1]))
        if self.money is not None and money is not None:
            self.money[0].merge(money[0])
            self.money[1].merge(money[1])


@dataclass(frozen=True)
class Context:
    """What the page says about the run that made it (the command's options, not the logs)."""

    zone: tzinfo
    timezone: str | None = None  # as given to --timezone (None: this machine's zone)
    source: str = "all"
    since: date | None = None
    until: date | None = None
    project: str | None = None  # the p- hash of --project
    notes: list[str] = field(default_factory=list)  # what the logs could not verify
    generated: datetime | None = None  # None: SOURCE_DATE_EPOCH, else now


# -- money ---------------------------------------------------------------------------------------------


@dataclass
class Money:
    amount: float = 0.0
    unpriced: dict[str, int] = field(default_factory=dict)  # model -> calls the table has no price for

    def add(self, other: Money) -> None:
        self.amount += other.amount
        for model, calls in other.unpriced.items():
            self.unpriced[model] = self.unpriced.get(model, 0) + calls


def _priced(estimate: Estimate, prices: PriceTable) -> dict[str, Money]:
    """The list-price amount per group (the same rates and arithmetic as ``--cost``)."""
    models: Mapping[str, Mapping[str, float]] = prices["models"]
    out: dict[str, Money] = {}
    looked_up: dict[str, Mapping[str, float] | None] = {}
    for (group, model), (calls, inp, write_5m, write_1h, read, output, _carried) in sorted(
        estimate.sums.items()
    ):
        money = out.setdefault(group, Money())
        if model not in looked_up:
            looked_up[model] = rates_for(model, models)
        rates = looked_up[model]
        if rates is None:
            if inp or write_5m or write_1h or read or output:  # zero tokens cost nothing at any price
                money.unpriced[model] = money.unpriced.get(model, 0) + calls
            continue
        money.amount += (
            inp * rates.get("input", 0.0)
            + write_5m * rates.get("cache_write_5m", 0.0)
            + write_1h * rates.get("cache_write_1h", 0.0)
            + read * rates.get("cache_read", 0.0)
            + output * rates.get("output", 0.0)
        ) / 1_000_000
    return out


def _money_text(money: Money | None) -> tuple[str, str]:
    """(cell text, title) of an estimate: the amount, "unpriced", or the amount and a mark."""
    if money is None:
        return "0.00", ""
    models = ", ".join(f"{m} ({n} call{'s' if n != 1 else ''})" for m, n in sorted(money.unpriced.items()))
    title = f"not priced (no list price in the table): {models}" if models else ""
    if money.unpriced and money.amount == 0:
        return "unpriced", title
    amount = "<0.01" if 0 < money.amount < 0.005 else f"{money.amount:,.2f}"
    return (amount + " + unpriced" if money.unpriced else amount), title


# -- time buckets --------------------------------------------------------------------------------------


def _bucketing(first: date, last: date) -> tuple[str, Callable[[str], str]]:
    """Days, weeks (from Monday) or months: whichever keeps a time chart to ``MAX_BARS`` bars."""
    span = (last - first).days + 1
    if span <= MAX_BARS:
        return "day", lambda day: day
    if span <= MAX_BARS * 7:
        return "week", lambda day: (
            date.fromisoformat(day) - timedelta(days=date.fromisoformat(day).weekday())
        ).isoformat()
    return "month", lambda day: day[:7]


def _every_bucket(first: date, last: date, bucket_of: Callable[[str], str]) -> list[str]:
    names: list[str] = []
    day = first
    while day <= last:
        name = bucket_of(day.isoformat())
        if not names or names[-1] != name:
            names.append(name)
        day += timedelta(days=1)
    return names


# -- formatting ----------------------------------------------------------------------------------------


def _esc(value: object) -> str:
    return _html.escape(str(value), quote=True)


def _int(value: int) -> str:
    return f"{value:,}"


def _compact(value: float) -> str:
    """Axis and bar labels: 950, 12k, 3.4M, 1.2B."""
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            text = f"{value / size:.1f}".rstrip("0").rstrip(".")
            return text + suffix
    return f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"


def _ticks(top: float) -> list[float]:
    """0 and evenly spaced round values (1, 2 or 5 times a power of ten) up to at least ``top``."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    count = math.ceil(top / step - 1e-9)
    return [step * i for i in range(count + 1)]


def _short(session: str) -> str:
    return session[:8]


# -- charts (inline SVG) -------------------------------------------------------------------------------

_W, _H = 900, 330
_LEFT, _RIGHT, _TOP, _BOTTOM = 78, 16, 24, 64


def _legend(items: Sequence[tuple[str, str]]) -> str:
    entries = "".join(
        f'<li><span class="swatch" style="background:{colour}"></span>{_esc(name)}</li>'
        for name, colour in items
    )
    return f'<ul class="legend">{entries}</ul>'


def _columns(
    title: str,
    categories: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float]]],
    *,
    x_label: str,
    y_label: str,
    fmt: Callable[[float], str] = _compact,
    exact: Callable[[float], str] = lambda v: _int(int(v)),
    see: str,
) -> str:
    """Stacked columns, one per category; each total is written above its column."""
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    totals = [sum(values[i] for _, _, values in series) for i in range(len(categories))]
    ticks = _ticks(max(totals, default=0))
    top = ticks[-1]
    band = plot_w / max(len(categories), 1)
    bar = max(band * 0.72, 1.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {_H}" role="img" '
        f'aria-label="{_esc(title)}">'
    ]
    parts.extend(_grid(ticks, plot_h, top, fmt))
    every = max(1, math.ceil(len(categories) / (plot_w / 74)))
    label_values = len(categories) <= 31
    for i, name in enumerate(categories):
        x = _LEFT + band * i + (band - bar) / 2
        parts.extend(_stack(name, i, series, x, bar, plot_h, top, exact))
        if label_values and totals[i] > 0:
            y = _TOP + plot_h - plot_h * totals[i] / top - 4
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{y:.1f}" class="value" text-anchor="middle">'
                f"{_esc(fmt(totals[i]))}</text>"
            )
        if i % every == 0:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{_TOP + plot_h + 16}" class="tick" '
                f'text-anchor="middle">{_esc(name)}</text>'
            )
    parts.append(
        f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{_TOP + plot_h}" y2="{_TOP + plot_h}" class="axis"/>'
        f'<line x1="{_LEFT}" x2="{_LEFT}" y1="{_TOP}" y2="{_TOP + plot_h}" class="axis"/>'
        f'<text x="{_LEFT + plot_w / 2:.1f}" y="{_H - 18}" class="label" text-anchor="middle">'
        f"{_esc(x_label)}</text>"
        f'<text x="16" y="{_TOP + plot_h / 2:.1f}" class="label" text-anchor="middle" '
        f'transform="rotate(-90 16 {_TOP + plot_h / 2:.1f})">{_esc(y_label)}</text></svg>'
    )
    legend = _legend([(label, colour) for label, colour, _ in series])
    return (
        f"<figure><figcaption>{_esc(title)}</figcaption>{legend}{''.join(parts)}"
        f'<p class="see">The numbers: {see}.</p></figure>'
    )


def _grid(ticks: list[float], plot_h: float, top: float, fmt: Callable[[float], str]) -> list[str]:
    """A column chart's horizontal grid lines, each with its value on the axis."""
    lines = []
    for tick in ticks:
        y = _TOP + plot_h - plot_h * tick / top
        lines.append(
            f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">{_esc(fmt(tick))}</text>'
        )
    return lines


def _stack(
    name: str,
    i: int,
    series: Sequence[tuple[str, str, Sequence[float]]],
    x: float,
    bar: float,
    plot_h: float,
    top: float,
    exact: Callable[[float], str],
) -> list[str]:
    """The stacked parts of category ``i``'s column (from the bottom, in the series' order), each
    titled with its exact value; a part of zero or less is left out."""
    rects = []
    base = 0.0
    for label, colour, values in series:
        value = values[i]
        if value <= 0:
            continue
        height = plot_h * value / top
        y = _TOP + plot_h - plot_h * base / top - height
        rects.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{height:.1f}" fill="{colour}">'
            f"<title>{_esc(name)}, {_esc(label)}: {_esc(exact(value))}</title></rect>"
        )
        base += value
    return rects


def _bars(
    title: str,
    rows: Sequence[tuple[str, str, str, float]],
    *,
    x_label: str,
    y_label: str,
    see: str,
) -> str:
    """Horizontal bars, one per row (label, full name, tool, value), each value written beside it."""
    row_h = 24
    plot_top = 8
    height = plot_top + row_h * len(rows) + 52
    left = 210
    plot_w = _W - left - 90
    ticks = _ticks(max((value for *_, value in rows), default=0))
    top = ticks[-1]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_W} {height}" role="img" '
        f'aria-label="{_esc(title)}">'
    ]
    bottom = plot_top + row_h * len(rows)
    for tick in ticks:
        x = left + plot_w * tick / top
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{plot_top}" y2="{bottom}" class="grid"/>'
            f'<text x="{x:.1f}" y="{bottom + 16}" class="tick" text-anchor="middle">{_esc(_compact(tick))}</text>'
        )
    for i, (label, full, source, value) in enumerate(rows):
        y = plot_top + row_h * i
        width = plot_w * value / top
        parts.append(
            f'<text x="{left - 8}" y="{y + 16}" class="tick" text-anchor="end">'
            f"<title>{_esc(full)}</title>{_esc(label)}</text>"
            f'<rect x="{left}" y="{y + 4}" width="{width:.1f}" height="{row_h - 8}" '
            f'fill="{TOOL_COLOURS.get(source, "#777777")}"><title>{_esc(full)}: {_esc(_int(int(value)))}</title></rect>'
            f'<text x="{left + width + 6:.1f}" y="{y + 16}" class="value">{_esc(_compact(value))}</text>'
        )
    parts.append(
        f'<line x1="{left}" x2="{left}" y1="{plot_top}" y2="{bottom}" class="axis"/>'
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 10}" class="label" text-anchor="middle">'
        f"{_esc(x_label)}</text>"
        f'<text x="{left - 8}" y="{height - 10}" class="label" text-anchor="end">{_esc(y_label)}</text></svg>'
    )
    legend = _legend([(name, TOOL_COLOURS[key]) for key, name in TOOLS.items()])
    return (
        f"<figure><figcaption>{_esc(title)}</figcaption>{legend}{''.join(parts)}"
        f'<p class="see">The numbers: {see}.</p></figure>'
    )


# -- tables --------------------------------------------------------------------------------------------


def _table(table_id: str, caption: str, headers: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    """Cells are text, or (text, title) for a cell with a longer form; the first column is text."""

    def cell(value: Cell, index: int, tag: str) -> str:
        text, title = value if isinstance(value, tuple) else (value, "")
        attrs = f' title="{_esc(title)}"' if title else ""
        attrs += ' class="num"' if index > 0 and tag == "td" and _numeric(text) else ""
        return f"<{tag}{attrs}>{_esc(text)}</{tag}>"

    head = "".join(f'<th scope="col">{_esc(h)}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(cell(value, i, "td") for i, value in enumerate(row)) + "</tr>\n" for row in rows
    )
    return (
        f'<div class="wide"><table id="{table_id}"><caption>{_esc(caption)}</caption><thead><tr>{head}</tr></thead>'
        f"<tbody>\n{body}</tbody></table></div>"
    )


def _numeric(text: str) -> bool:
    return bool(text) and (text[0].isdigit() or text[0] in "-<") or text == "unpriced"


def _token_cells(t: Totals) -> list[str]:
    return [
        _int(t.calls),
        _int(t.input),
        _int(t.cache_write),
        _int(t.cache_read),
        _int(t.output),
        _int(t.prompt + t.output),
    ]


TOKEN_HEADERS = ("Calls", "Input", "Cache write", "Cache read", "Output", "Total tokens")


# -- the page ------------------------------------------------------------------------------------------


def _zone_text(context: Context, moment: datetime) -> str:
    offset = moment.strftime("%z")
    offset = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    if context.timezone:
        return f"{context.timezone} ({offset} at generation)"
    return f"this machine's zone, {moment.tzname() or 'local'} ({offset} at generation)"


def generation_time(zone: tzinfo, environ: Mapping[str, str] | None = None) -> datetime:
    """Now, or ``SOURCE_DATE_EPOCH`` (seconds) when set: the same logs then give the same page."""
    env = os.environ if environ is None else environ
    epoch = env.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), UTC).astimezone(zone)
    return datetime.now(zone)


def _split(groups: Mapping[str, Totals]) -> dict[tuple[str, str], Totals]:
    out: dict[tuple[str, str], Totals] = {}
    for key, totals in groups.items():
        left, _, right = key.partition(_SEP)
        out[(left, right)] = totals
    return out


def render_html(page: Page, context: Context) -> str:
    moment = context.generated or generation_time(context.zone)
    per_day = _split(page.per_day.by_key())  # (day, source)
    per_session = _split(page.per_session.by_key())  # (source, session)
    money_day, money_session = _page_money(page)
    sources = sorted({s for _, s in per_day} | {s for s, _ in per_session})
    day_keys = sorted({d for d, _ in per_day})
    tz_short = context.timezone or "local time"

    head = _header(context, moment, day_keys)
    if not day_keys:
        body = '<p class="empty">No model calls in the logs read for this period.</p>'
        return _document(head + body + _definitions(page))

    first, last = date.fromisoformat(day_keys[0]), date.fromisoformat(day_keys[-1])
    unit, bucket_of = _bucketing(first, last)
    buckets, bucket_money = _bucket_totals(per_day, bucket_of, money_day)
    names = _every_bucket(first, last, bucket_of)  # days without calls are shown too, as zero
    unit_label = {"day": "Day", "week": "Week (from Monday)", "month": "Month"}[unit]
    axis = {"day": "day", "week": "week (from Monday)", "month": "month"}[unit] + f" ({tz_short})"

    parts = [head, _summary(per_session, sources, money_session, _estimate_header(page))]
    parts.extend(_period_charts(unit, axis, names, buckets, sources))
    if money_day is not None and page.prices is not None:
        parts.append(_money_chart(unit, axis, names, bucket_money, str(page.prices["currency"])))
    parts.extend(_session_charts(per_session))
    parts.append(
        _period_table(unit, unit_label, names, buckets, sources, bucket_money if money_day else None, page)
    )
    parts.append(_session_table(per_session, page, money_session))
    parts.append(_definitions(page))
    return _document("\n".join(parts))


def _page_money(page: Page) -> tuple[dict[str, Money] | None, dict[str, Money] | None]:
    """(the estimate per day and tool, per tool and session) at list prices; both None when the
    page carries no estimate or no prices."""
    if page.money is None or page.prices is None:
        return None, None
    return _priced(page.money[0], page.prices), _priced(page.money[1], page.prices)


def _bucket_totals(
    per_day: Mapping[tuple[str, str], Totals],
    bucket_of: Callable[[str], str],
    money_day: Mapping[str, Money] | None,
) -> tuple[dict[str, dict[str, Totals]], dict[str, Money]]:
    """The day totals summed into the chart's buckets: (per bucket, the totals by tool; per bucket,
    the estimate, when there is one)."""
    buckets: dict[str, dict[str, Totals]] = {}
    bucket_money: dict[str, Money] = {}
    for (day, source), totals in per_day.items():
        name = bucket_of(day)
        slot = buckets.setdefault(name, {}).setdefault(source, Totals())
        slot.merge(totals)
        if money_day is not None:
            bucket_money.setdefault(name, Money()).add(money_day.get(day + _SEP + source, Money()))
    return buckets, bucket_money


def _period_charts(
    unit: str,
    axis: str,
    names: list[str],
    buckets: Mapping[str, Mapping[str, Totals]],
    sources: list[str],
) -> list[str]:
    """The two column charts per bucket: tokens by tool, tokens by kind."""
    by_tool = _columns(
        f"Tokens per {unit}, by tool",
        names,
        [
            (_tool(s), TOOL_COLOURS.get(s, "#777777"), [_total(buckets.get(n, {}).get(s)) for n in names])
            for s in sources
        ],
        x_label=axis,
        y_label="tokens (input + cache + output)",
        see=f'table "Per {unit}"',
    )
    merged = {n: _sum(buckets.get(n, {}).values()) for n in names}
    by_kind = _columns(
        f"Tokens per {unit}, by kind",
        names,
        [(label, colour, [getattr(merged[n], attr) for n in names]) for attr, label, colour in KINDS],
        x_label=axis,
        y_label="tokens",
        see=f'table "Per {unit}"',
    )
    return [by_tool, by_kind]


def _money_chart(
    unit: str, axis: str, names: list[str], bucket_money: Mapping[str, Money], currency: str
) -> str:
    """The column chart of the list-price estimate per bucket."""
    return _columns(
        f"List-price estimate per {unit} ({currency}; not a bill)",
        names,
        [("estimate", "#555555", [bucket_money.get(n, Money()).amount for n in names])],
        x_label=axis,
        y_label=currency,
        fmt=lambda v: f"{v:,.2f}",
        exact=lambda v: f"{v:,.4f}",
        see=f'table "Per {unit}"',
    )


def _session_charts(per_session: Mapping[tuple[str, str], Totals]) -> list[str]:
    """The bar charts of the top sessions, by tokens and by carried history; a chart with no session
    above zero is left out."""
    charts = []
    by_tokens = [(k, t) for k, t in per_session.items() if t.prompt + t.output > 0]
    by_tokens.sort(key=lambda kv: (-(kv[1].prompt + kv[1].output), kv[0]))
    if by_tokens:
        charts.append(
            _bars(
                f"Top {min(TOP, len(by_tokens))} sessions by tokens",
                [_bar_row(k, t.prompt + t.output) for k, t in by_tokens[:TOP]],
                x_label="tokens (input + cache + output)",
                y_label="session",
                see='table "Per session"',
            )
        )
    by_carried = [(k, t) for k, t in per_session.items() if t.carried > 0]
    by_carried.sort(key=lambda kv: (-kv[1].carried, kv[0]))
    if by_carried:
        charts.append(
            _bars(
                f"Top {min(TOP, len(by_carried))} sessions by carried history",
                [_bar_row(k, t.carried) for k, t in by_carried[:TOP]],
                x_label="carried history (tokens re-read beyond each context's base)",
                y_label="session",
                see='table "Per session", column "Carried history"',
            )
        )
    return charts


def _total(t: Totals | None) -> int:
    return 0 if t is None else t.prompt + t.output


def _sum(parts: Iterable[Totals]) -> Totals:
    out = Totals()
    for part in parts:
        out.merge(part)
    return out


def _bar_row(key: tuple[str, str], value: int) -> tuple[str, str, str, float]:
    source, session = key
    return f"{_short(session)} · {_tool(source)}", f"{session} ({_tool(source)})", source, float(value)


def _header(context: Context, moment: datetime, day_keys: list[str]) -> str:
    if day_keys:
        period = f"{day_keys[0]} to {day_keys[-1]} (first and last day with calls)"
    else:
        period = "no calls"
    asked = []
    if context.since:
        asked.append(f"from {context.since.isoformat()}")
    if context.until:
        asked.append(f"to {context.until.isoformat()}")
    if asked:
        period += "; asked for " + " ".join(asked)
    read = {"all": "Claude Code and Codex", "claude": "Claude Code only", "codex": "Codex only"}
    items = [
        ("Period", period),
        ("Timezone", _zone_text(context, moment)),
        ("Generated", moment.strftime("%Y-%m-%d %H:%M:%S %z").rstrip()),
        ("Logs read", read.get(context.source, context.source)),
    ]
    if context.project:
        items.append(("Project", f"only the calls made in {context.project} (hashed working directory)"))
    rows = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in items)
    notes = "".join(f"<li>{_esc(line)}</li>" for line in context.notes)
    notes_html = (
        f'<div class="notes"><p>What the logs could not verify:</p><ul>{notes}</ul></div>' if notes else ""
    )
    return (
        "<h1>Claude Code and Codex usage</h1>\n"
        "<p>Token counts verified from the agents' own session logs; "
        "every chart's numbers are in the tables below it.</p>\n"
        f'<dl class="facts">{rows}</dl>{notes_html}'
    )


def _summary(
    per_session: Mapping[tuple[str, str], Totals],
    sources: list[str],
    money: Mapping[str, Money] | None,
    estimate_header: str,
) -> str:
    headers = ["Tool", "Sessions", *TOKEN_HEADERS]
    if money is not None:
        headers.append(estimate_header)
    rows = []
    grand, grand_money, grand_sessions = Totals(), Money(), 0
    for source in sources:
        keys = [k for k in per_session if k[0] == source]
        totals = _sum(per_session[k] for k in keys)
        grand.merge(totals)
        grand_sessions += len(keys)
        row: list[Cell] = [_tool(source), _int(len(keys)), *_token_cells(totals)]
        if money is not None:
            amount = Money()
            for k in keys:
                amount.add(money.get(k[0] + _SEP + k[1], Money()))
            grand_money.add(amount)
            row.append(_money_text(amount))
        rows.append(row)
    total_row: list[Cell] = ["All", _int(grand_sessions), *_token_cells(grand)]
    if money is not None:
        total_row.append(_money_text(grand_money))
    rows.append(total_row)
    return "<h2>Summary</h2>\n" + _table("summary", "Totals by tool", headers, rows)


def _period_table(
    unit: str,
    unit_label: str,
    names: list[str],
    buckets: Mapping[str, Mapping[str, Totals]],
    sources: list[str],
    money: Mapping[str, Money] | None,
    page: Page,
) -> str:
    headers = [unit_label, *TOKEN_HEADERS, *(f"{_tool(s)} tokens" for s in sources)]
    if money is not None:
        headers.append(_estimate_header(page))
    rows = [_period_row(name, buckets.get(name, {}), sources, money) for name in names]
    rows.append(_period_total(buckets, sources, money))
    return f"<h2>Per {unit}</h2>\n" + _table(f"per-{unit}", f"Tokens per {unit}", headers, rows)


def _period_row(
    name: str, parts: Mapping[str, Totals], sources: list[str], money: Mapping[str, Money] | None
) -> list[Cell]:
    """One bucket's row: its token cells, each tool's tokens, its estimate when there is one."""
    row: list[Cell] = [
        name,
        *_token_cells(_sum(parts.values())),
        *(_int(_total(parts.get(s))) for s in sources),
    ]
    if money is not None:
        row.append(_money_text(money.get(name)))
    return row


def _period_total(
    buckets: Mapping[str, Mapping[str, Totals]], sources: list[str], money: Mapping[str, Money] | None
) -> list[Cell]:
    """The period table's total row: every bucket summed, by kind, by tool and in money."""
    every = [t for parts in buckets.values() for t in parts.values()]
    total: list[Cell] = [
        "Total",
        *_token_cells(_sum(every)),
        *(_int(sum(_total(parts.get(s)) for parts in buckets.values())) for s in sources),
    ]
    if money is not None:
        amount = Money()
        for part in money.values():
            amount.add(part)
        total.append(_money_text(amount))
    return total


def _estimate_header(page: Page) -> str:
    currency = "" if page.prices is None else f" ({page.prices['currency']})"
    return f"List-price estimate{currency}"


def _session_table(
    per_session: Mapping[tuple[str, str], Totals], page: Page, money: Mapping[str, Money] | None
) -> str:
    headers = ["Session", "Tool", "First day", "Last day", *TOKEN_HEADERS, "Re-read share", "Carried history"]
    if money is not None:
        headers.append(_estimate_header(page))
    ordered = sorted(per_session.items(), key=lambda kv: (-(kv[1].prompt + kv[1].output), kv[0]))
    rows = []
    for (source, session), t in ordered[:MAX_SESSION_ROWS]:
        first, last = page.spans.get(source + _SEP + session, ("", ""))
        share = f"{t.cache_read / t.prompt * 100:.1f}%" if t.prompt else "-"
        row: list[Cell] = [
            (_short(session), session),
            _tool(source),
            first,
            last,
            *_token_cells(t),
            share,
            _int(t.carried),
        ]
        if money is not None:
            row.append(_money_text(money.get(source + _SEP + session)))
        rows.append(row)
    rest = ordered[MAX_SESSION_ROWS:]
    if rest:
        others = _sum(t for _, t in rest)
        row = [f"{len(rest):,} more sessions", "", "", "", *_token_cells(others), "", _int(others.carried)]
        if money is not None:
            amount = Money()
            for (source, session), _t in rest:
                amount.add(money.get(source + _SEP + session, Money()))
            row.append(_money_text(amount))
        rows.append(row)
    caption = "Sessions by total tokens (session: its first 8 characters; the full id is the cell's title)"
    return "<h2>Per session</h2>\n" + _table("per-session", caption, headers, rows)


def _definitions(page: Page) -> str:
    items = [
        ("Input", "uncached input tokens (Codex: input minus cached input, so columns add up across tools)"),
        ("Cache write", "Claude cache creation (5 minute and 1 hour); Codex has none"),
        ("Cache read", "input read from the provider's prompt cache (billed at a lower rate)"),
        ("Output", "output tokens (Codex: includes reasoning)"),
        ("Re-read share", "cache read / (input + cache write + cache read)"),
        (
            "Carried history",
            "per call, cache read beyond the prompt of the first call of its context (after the start, "
            "a compaction or a resume): history the model read again",
        ),
    ]
    if page.prices is not None:
        table = page.prices
        items.append(
            (
                "List-price estimate",
                f"base list prices ({table['currency']}, per million tokens) from {table['source']}, dated "
                f'{table["date"]}; not a bill. "unpriced": the table has no price for the model, '
                "which is never guessed (the cell's title names it)",
            )
        )
    else:
        items.append(("Money", "not shown: run with --cost (or --prices FILE) for a list-price estimate"))
    rows = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in items)
    return (
        f'<h2>What the columns mean</h2>\n<dl class="terms">{rows}</dl>\n'
        f'<p>The full counting rules: <a href="{_esc(DOCS_URL)}">{_esc(DOCS_URL)}</a> '
        "(the toolkit's documentation, docs/usage.md in its repository).</p>"
    )


_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:24px auto;
max-width:1040px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}
dl.facts,dl.terms{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:10px 0}
dt{font-weight:600}dd{margin:0}
figure{margin:18px 0}figcaption{font-weight:600;font-size:15px}svg{width:100%;height:auto;display:block}
.legend{list-style:none;padding:0;margin:4px 0;display:flex;gap:16px;flex-wrap:wrap}
.swatch{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px;border-radius:2px}
.grid{stroke:#e5e7eb}.axis{stroke:#57606a}.tick{font-size:11px;fill:#57606a}
.value{font-size:10px;fill:#1f2328}.label{font-size:12px;fill:#1f2328}
.see{color:#57606a;font-size:12px;margin:2px 0 0}
table{border-collapse:collapse;width:100%;font-size:12.5px;margin:6px 0 12px}
caption{text-align:left;color:#57606a;padding:4px 0}
th,td{padding:3px 6px;border-bottom:1px solid #eaeef2}td{white-space:nowrap}
th{text-align:left;background:#f6f8fa;vertical-align:bottom;font-weight:600}
.wide{overflow-x:auto}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr:last-child td{border-bottom:none}
#summary tr:last-child td,#per-day tr:last-child td,#per-week tr:last-child td,
#per-month tr:last-child td{font-weight:600;border-top:1px solid #8c959f}
.notes{background:#fff8c5;padding:6px 12px;border-radius:6px}
@media print{body{margin:0}}
"""


def _document(body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Claude Code and Codex usage</title>"
        f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )


def write_html(path: Path, page: Page, context: Context) -> None:
    from toolkit.infra.store import atomic_write

    text = render_html(page, context)
    try:
        atomic_write(path, text)
    except FileNotFoundError:
        raise InvalidInput("USAGE_BAD_OUTPUT", "the folder of --html does not exist") from None
