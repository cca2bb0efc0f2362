"""``workgroup usage --html``: a page a person reads without hovering, checked against the report's own numbers.

The page is parsed with the standard library's HTML parser: its facts (period, timezone, generation
time), its tables cell by cell, and its charts (captions, axis labels, bar labels).
"""

from __future__ import annotations

import json
import re
import tomllib
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from _history import write_history
from support.harness import cli
from support.usage_fixtures import CANARY, build

from toolkit.usage import html as page_module

ROOT = Path(__file__).resolve().parents[2]
EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z
LIMIT = 1_500_000


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.facts: dict[str, str] = {}
        self.tables: dict[str, list[list[tuple[str, str]]]] = {}
        self.headers: dict[str, list[str]] = {}
        self.figures: list[dict[str, Any]] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.links: list[str] = []
        self._stack: list[str] = []
        self._text = ""
        self._title = ""
        self._table = ""
        self._row: list[tuple[str, str]] | None = None
        self._dt = ""
        self._in_dl_facts = False
        self._svg_text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        self._stack.append(tag)
        if tag == "a":
            self.links.append(a.get("href", ""))
        if tag == "dl" and a.get("class") == "facts":
            self._in_dl_facts = True
        if tag == "table":
            self._table = a["id"]
            self.tables[self._table] = []
            self.headers[self._table] = []
        if tag == "tr":
            self._row = []
        if tag in ("td", "th", "dt", "dd", "figcaption"):
            self._text, self._title = "", a.get("title", "")
        if tag == "figure":
            self.figures.append({"caption": "", "labels": [], "bar_labels": [], "rects": 0, "titles": []})
        if tag == "rect" and self.figures:
            self.figures[-1]["rects"] += 1
        if tag == "text" and self.figures:
            self._svg_text = [a.get("class", ""), ""]
        if tag == "title" and self.figures and self._stack[-2:-1] != ["head"]:
            self._text = ""

    def handle_endtag(self, tag: str) -> None:
        if self._stack:
            self._stack.pop()
        if tag == "dl":
            self._in_dl_facts = False
        if tag == "dt" and self._in_dl_facts:
            self._dt = self._text.strip()
        if tag == "dd" and self._in_dl_facts:
            self.facts[self._dt] = self._text.strip()
        if tag == "th" and self._table:
            self.headers[self._table].append(self._text.strip())
        if tag == "td" and self._row is not None:
            self._row.append((self._text.strip(), self._title))
        if tag == "tr" and self._row:
            self.tables[self._table].append(self._row)
            self._row = None
        if tag == "figcaption":
            self.figures[-1]["caption"] = self._text.strip()
        if tag == "text" and self._svg_text is not None:
            kind, text = self._svg_text
            if kind == "label":
                self.figures[-1]["labels"].append(text)
            elif kind == "tick":
                self.figures[-1]["bar_labels"].append(text)
            self._svg_text = None

    def handle_data(self, data: str) -> None:
        self._text += data
        if self._svg_text is not None and (not self._stack or self._stack[-1] == "text"):
            self._svg_text[1] += data


def _parse(path: Path) -> tuple[str, _Page]:
    text = path.read_text(encoding="utf-8")
    parsed = _Page()
    parsed.feed(text)
    return text, parsed


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = build(tmp_path / "logs")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    return env


def _json(*args: str) -> dict[str, Any]:
    code, out, err = cli("usage", "--json", *args)
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_page_states_period_zone_and_generation_time(logs: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code, _, err = cli("usage", "--timezone", "America/New_York", "--html", str(out))
    assert code == 0, err
    _, page = _parse(out)
    days = [row["key"] for row in _json("--timezone", "America/New_York")["rows"]]
    assert page.facts["Period"].startswith(f"{days[0]} to {days[-1]}")
    assert page.facts["Timezone"].startswith("America/New_York (UTC-05:00")
    generated = datetime.fromtimestamp(EPOCH, UTC).astimezone(ZoneInfo("America/New_York"))
    assert page.facts["Generated"] == generated.strftime("%Y-%m-%d %H:%M:%S %z")
    assert page.facts["Logs read"] == "Claude Code and Codex"
    code, _, err = cli(
        "usage", "--timezone", "UTC", "--since", "2026-01-05", "--source", "claude", "--html", str(out)
    )
    assert code == 0, err
    _, page = _parse(out)
    assert "asked for from 2026-01-05" in page.facts["Period"]
    assert page.facts["Logs read"] == "Claude Code only" and page.facts["Timezone"].startswith("UTC (UTC")


def test_tables_hold_the_reports_numbers_with_tools_told_apart(logs: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code, _, err = cli("usage", "--timezone", "UTC", "--html", str(out))
    assert code == 0, err
    text, page = _parse(out)
    kinds = ("calls", "input", "cache_write", "cache_read", "output")
    by_day = {r["key"]: r for r in _json("--timezone", "UTC")["rows"]}
    assert page.headers["per-day"][:7] == [
        "Day",
        "Calls",
        "Input",
        "Cache write",
        "Cache read",
        "Output",
        "Total tokens",
    ]
    assert page.headers["per-day"][7:] == ["Claude Code tokens", "Codex tokens"]
    rows = {r[0][0]: r for r in page.tables["per-day"]}
    total = rows.pop("Total")
    for day, expected in by_day.items():
        cells = [_number(c) for c, _ in rows.pop(day)[1:]]
        assert cells[:5] == [expected[k] for k in kinds], day
        assert cells[5] == cells[1] + cells[2] + cells[3] + cells[4] == cells[6] + cells[7]
    # days between the first and the last without calls are rows of zeros, not left out
    assert all(all(c == "0" for c, _ in row[1:]) for row in rows.values())
    grand = _json("--timezone", "UTC")["totals"]
    assert [_number(c) for c, _ in total[1:6]] == [grand[k] for k in kinds]
    by_session = {r["key"]: r for r in _json("--timezone", "UTC", "--by", "session")["rows"]}
    tools = {}
    for row in page.tables["per-session"]:
        (short, full), (tool, _) = row[0], row[1]
        assert short == full[:8] and len(short) == min(8, len(full))  # the full id is the title
        tools[full] = tool
        expected = by_session.pop(full)
        assert [_number(c) for c, _ in row[4:9]] == [expected[k] for k in kinds]
        assert _number(row[11][0]) == expected["carried_history"]
    assert by_session == {}
    assert tools["s-aaaa"] == "Claude Code" and tools["0000aaaa"] == "Codex"
    summary = {r[0][0]: r for r in page.tables["summary"]}
    assert set(summary) == {"Claude Code", "Codex", "All"}
    assert _number(summary["All"][2][0]) == grand["calls"]
    assert CANARY not in text and "/home/dev" not in text


def test_page_is_static_small_and_labelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in write_history(tmp_path / "logs", claude=40, codex=15, days=40, zero=4).items():
        monkeypatch.setenv(key, value)
    out = tmp_path / "report.html"
    code, _, err = cli("usage", "--timezone", "UTC", "--html", str(out))
    assert code == 0, err
    text, page = _parse(out)
    assert len(text.encode()) < LIMIT
    # no script, no network: nothing is loaded from elsewhere
    assert not any(tag in ("script", "link", "img", "iframe", "object") for tag, _ in page.tags)
    assert not re.search(r"\b(src|href)=\"(?!https://github\.com/)", text)
    assert [f["caption"] for f in page.figures] == [
        "Tokens per day, by tool",
        "Tokens per day, by kind",
        "Top 15 sessions by tokens",
        "Top 15 sessions by carried history",
    ]
    for figure in page.figures:
        assert len(figure["labels"]) == 2 and all(figure["labels"]), figure  # both axes are named
    assert page.figures[0]["labels"] == ["day (UTC)", "tokens (input + cache + output)"]
    sessions = {
        full: (short, _number(row[9][0])) for row in page.tables["per-session"] for short, full in [row[0]]
    }
    zero = {full for full, (_, tokens) in sessions.items() if tokens == 0}
    assert len(zero) == 4  # the zero-token sessions are in the table ...
    top = page.figures[2]
    shown = [label for label in top["bar_labels"] if "·" in label]
    assert len(shown) == 15
    assert not any(
        label.split(" · ")[0] in {sessions[z][0] for z in zero} for label in shown
    )  # ... not the chart
    assert all(label.endswith(("· Claude Code", "· Codex")) for label in shown)


def test_estimate_is_a_column_when_asked_and_says_unpriced(logs: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code, _, err = cli("usage", "--timezone", "UTC", "--html", str(out))
    assert code == 0, err
    _, page = _parse(out)
    assert not any(h.startswith("List-price") for h in page.headers["per-session"])
    code, _, err = cli("usage", "--timezone", "UTC", "--cost", "--html", str(out))
    assert code == 0, err
    text, page = _parse(out)
    assert page.headers["per-session"][-1] == "List-price estimate (USD)"
    cost = {
        r["key"]: r["amount"]
        for r in _json("--timezone", "UTC", "--cost", "--by", "session")["estimate"]["rows"]
    }
    cells = {row[0][1]: row[-1] for row in page.tables["per-session"]}
    assert cells["s-aaaa"][0] == f"{cost['s-aaaa']:,.2f}"
    # Codex calls on gpt-5-codex-mini and on no logged model: the table has no price, and the page says so
    unpriced = {full: cells[full][1] for full, (cell, _) in cells.items() if "unpriced" in cell}
    assert set(unpriced) == {"0000aaaa", "0000dddd"}
    assert all(title.startswith("not priced (no list price in the table): ") for title in unpriced.values())
    assert "gpt-5-codex-mini" in unpriced["0000aaaa"] and "unknown" in unpriced["0000dddd"]
    assert "<synthetic>" not in " ".join(unpriced.values())  # zero tokens cost nothing at any price
    assert "dated 2026-12-03" in text


def test_no_pointer_to_documents_that_are_not_installed(logs: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    code, _, err = cli("usage", "--timezone", "UTC", "--html", str(out))
    assert code == 0, err
    text, page = _parse(out)
    assert "see docs/usage.md" not in text
    repository = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    assert page.links == [page_module.DOCS_URL]
    assert page_module.DOCS_URL == repository + "/blob/main/docs/usage.md"
    assert (ROOT / "docs" / "usage.md").is_file()
    assert "What the columns mean" in text and "Carried history" in page.headers["per-session"]


def test_a_long_history_stays_under_the_size_limit() -> None:
    """Years of days and thousands of sessions: weeks or months instead of days, session rows capped."""
    from toolkit.usage.cost import PRICE_TABLE
    from toolkit.usage.fold import LocalDays, resolve_tz
    from toolkit.usage.html import MAX_BARS, MAX_SESSION_ROWS, Context, Page, render_html
    from toolkit.usage.model import Call

    zone = resolve_tz("UTC")
    page = Page(LocalDays(zone), PRICE_TABLE)
    calls = []
    for i in range(12_000):
        day = 1_700_000_000 + (i % 1_500) * 86_400
        ts = datetime.fromtimestamp(day, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        source = "codex" if i % 3 else "claude"
        calls.append(
            Call(
                source,
                f"{i:08x}-1111-4222-8333-{i:012x}",
                "p-x",
                "t",
                False,
                ts,
                "claude-opus-4-5",
                10 + i,
                5,
                1,
                100,
                None,
                100,
            )
        )
    page.add_all(calls)
    text = render_html(page, Context(zone=zone, timezone="UTC", generated=datetime.fromtimestamp(EPOCH, UTC)))
    parsed = _Page()
    parsed.feed(text)
    assert len(text.encode()) < LIMIT, len(text.encode())
    assert "per-month" in parsed.tables and len(parsed.tables["per-month"]) <= MAX_BARS + 1
    assert len(parsed.tables["per-session"]) == MAX_SESSION_ROWS + 1
    assert parsed.tables["per-session"][-1][0][0] == f"{12_000 - MAX_SESSION_ROWS:,} more sessions"
    total = sum(_number(row[9][0]) for row in parsed.tables["per-session"])
    assert total == sum(c.tokens for c in calls)  # the rows left out are summed, not dropped
