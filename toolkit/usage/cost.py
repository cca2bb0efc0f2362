"""``--cost``: a list-price estimate, kept apart from the verified counts.

The shipped table below is dated and names where its figures were read; ``--prices FILE`` replaces
it with the same shape. Models the table does not know are listed, never priced by a guess. Base
rates only: long-context surcharges, batch and regional multipliers and fast mode are not applied
(fast-mode models stay unpriced).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping

from toolkit.core.display import shown
from toolkit.core.errors import InvalidInput
from toolkit.usage.render import table

TYPE_CHECKING = False  # the status line imports the table and ``Estimate``: typing and pathlib stay out
if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.usage.model import Call
    from toolkit.usage.shapes import CostEstimate, PriceTable

_DATED = re.compile(r"[0-9]{8}|[0-9]{4}-[0-9]{2}-[0-9]{2}")
RATES = ("input", "cache_write_5m", "cache_write_1h", "cache_read", "output")


def _claude(inp: float, out: float) -> dict[str, float]:
    # Anthropic's published multipliers: 5m write 1.25x, 1h write 2x, cache hit 0.1x base input
    return {
        "input": inp,
        "cache_write_5m": inp * 1.25,
        "cache_write_1h": inp * 2,
        "cache_read": inp / 10,
        "output": out,
    }


def _openai(inp: float, cached: float, out: float) -> dict[str, float]:
    return {"input": inp, "cache_write_5m": 0.0, "cache_write_1h": 0.0, "cache_read": cached, "output": out}


PRICE_TABLE: PriceTable = {
    "source": (
        "Anthropic model pricing page (platform.claude.com/docs/en/about-claude/pricing) and OpenAI model "
        "pages (developers.openai.com/api/docs/models/gpt-5-codex), read from stored public copies"
    ),
    "date": "2026-12-03",
    "currency": "USD",
    "unit": "per million tokens",
    "models": {
        "claude-opus-4-8": _claude(5, 25),
        "claude-opus-4-7": _claude(5, 25),
        "claude-opus-4-6": _claude(5, 25),
        "claude-opus-4-5": _claude(5, 25),
        "claude-opus-4-1": _claude(15, 75),
        "claude-opus-4": _claude(15, 75),
        "claude-sonnet-4-5": _claude(3, 15),
        "claude-sonnet-4": _claude(3, 15),
        "claude-haiku-4-5": _claude(1, 5),
        "claude-3-5-haiku": _claude(0.8, 4),
        "gpt-5": _openai(1.25, 0.125, 10),
        "gpt-5-codex": _openai(1.25, 0.125, 10),
    },
}


def _check(table_data: object) -> None:
    """``USAGE_BAD_PRICES`` (or the coded error naming a model's missing rates) unless ``table_data``
    has the shape of ``PriceTable``."""
    bad = InvalidInput(
        "USAGE_BAD_PRICES",
        "the price table needs source, date (YYYY-MM-DD), currency and models {name: {rate: number >= 0}}",
    )
    if not isinstance(table_data, dict) or not _header_ok(table_data):
        raise bad
    models = table_data.get("models")
    if not isinstance(models, dict) or not models:
        raise bad
    for name, rates in models.items():
        _check_model(name, rates, bad)


def _header_ok(table_data: Mapping[str, object]) -> bool:
    """Whether the table names a source, a date (YYYY-MM-DD) and a currency, each a non-blank string."""
    texts: list[str] = []
    for key in ("source", "date", "currency"):
        value = table_data.get(key)
        if not isinstance(value, str) or not value.strip():
            return False
        texts.append(value)
    from datetime import date

    try:
        date.fromisoformat(texts[1])
    except ValueError:
        return False
    return True


def _check_model(name: object, rates: object, bad: InvalidInput) -> None:
    """One model's entry: a name and every rate of ``RATES`` (no other), each a finite number >= 0;
    ``bad`` raised otherwise, or the coded error naming the rates it left out."""
    if not isinstance(name, str) or not isinstance(rates, dict) or not set(rates) <= set(RATES):
        raise bad
    missing = [rate for rate in RATES if rate not in rates]
    if missing:
        # a rate left out would price those tokens at 0 without a word
        raise InvalidInput(
            "USAGE_PRICE_MISSING_RATE",
            f"the price table's model {_shown(name)} has no {', '.join(missing)} rate: every model needs "
            f"all of {', '.join(RATES)} (0 where the provider charges nothing)",
        )
    if not all(map(_rate_ok, rates.values())):
        raise bad


def _rate_ok(value: object) -> bool:
    """Whether a rate is a finite number >= 0 (a bool is no number here)."""
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and value >= 0
    )


def _shown(name: str) -> str:
    """A model name from the user's table as an error names it: quoted, escaped, at most 60 characters."""
    return json.dumps(name if len(name) <= 60 else name[:57] + "...", ensure_ascii=True)


def load_prices(path: Path | None) -> PriceTable:
    if path is None:
        return PRICE_TABLE
    from toolkit.infra.store import read_json_file

    table: PriceTable = read_json_file(path, what="price table")  # JSON enters: checked on the next line
    _check(table)
    return table


def rates_for(model: str, models: Mapping[str, Mapping[str, float]]) -> Mapping[str, float] | None:
    """Exact name, else the table name followed only by a snapshot date (``-20250929``, ``-2025-08-07``)."""
    if model in models:
        return models[model]
    best = None
    for name in models:
        rest = model[len(name) + 1 :] if model.startswith(name + "-") else ""
        if _DATED.fullmatch(rest) and (best is None or len(name) > len(best)):
            best = name
    return models[best] if best is not None else None


class Estimate:
    """The list-price fold: an amount per group, the carried history's amount, unpriced calls by model.

    Tokens are summed per group and model as integers (exact, in any order, so parts read in
    other processes merge to the same figures); money is computed once, in ``result``.
    """

    def __init__(self, prices: PriceTable, key: Callable[[Call], str]) -> None:
        self.prices = prices
        self.key = key
        # (group, model) -> [calls, input, cache write 5 m, cache write 1 h, cache read, output, carried]
        self.sums: dict[tuple[str, str], list[int]] = {}

    def add_all(self, calls: Iterable[Call]) -> None:
        key, sums = self.key, self.sums
        for call in calls:
            name = (key(call), call.model)
            found = sums.get(name)
            if found is None:
                found = sums[name] = [0, 0, 0, 0, 0, 0, 0]
            found[0] += 1
            found[1] += call.input
            found[2] += call.cache_write - call.cache_write_1h
            found[3] += call.cache_write_1h
            found[4] += call.cache_read
            found[5] += call.output
            found[6] += call.carried

    def take(self) -> dict[tuple[str, str], list[int]]:
        taken, self.sums = self.sums, {}
        return taken

    def merge(self, state: dict[tuple[str, str], list[int]]) -> None:
        for name, part in state.items():
            found = self.sums.get(name)
            if found is None:
                self.sums[name] = part
            else:
                found[:] = [a + b for a, b in zip(found, part, strict=True)]

    def result(self) -> CostEstimate:
        """Amounts per group; a group whose every call with tokens is unpriced has amount None (not
        0: unknown is not free), and each row and the total say how many calls were left unpriced.
        Calls without a single token cost nothing at any price and are never counted as unpriced."""
        prices = self.prices
        models = prices["models"]
        rows: dict[str, float | None] = {}
        row_unpriced: dict[str, int] = {}
        unpriced: dict[str, int] = {}
        carried = 0.0
        looked_up: dict[str, Mapping[str, float] | None] = {}
        for (group, model), (calls, inp, write_5m, write_1h, read, out, carry) in sorted(self.sums.items()):
            rows.setdefault(group, None)
            row_unpriced.setdefault(group, 0)
            if model not in looked_up:
                looked_up[model] = rates_for(model, models)
            rates = looked_up[model]
            if rates is None:
                if any((inp, write_5m, write_1h, read, out)):  # tokens at an unknown price
                    unpriced[model] = unpriced.get(model, 0) + calls
                    row_unpriced[group] += calls
                else:
                    rows[group] = rows[group] or 0.0  # no tokens: nothing to price
                continue
            rows[group] = (rows[group] or 0.0) + _amount(rates, inp, write_5m, write_1h, read, out)
            carried += carry * rates["cache_read"] / 1_000_000
        return _report(prices, rows, row_unpriced, unpriced, carried)


def _amount(rates: Mapping[str, float], inp: int, write_5m: int, write_1h: int, read: int, out: int) -> float:
    """The list price of one group's tokens of one model (rates per million tokens)."""
    return (
        inp * rates["input"]
        + write_5m * rates["cache_write_5m"]
        + write_1h * rates["cache_write_1h"]
        + read * rates["cache_read"]
        + out * rates["output"]
    ) / 1_000_000


def _report(
    prices: PriceTable,
    rows: Mapping[str, float | None],
    row_unpriced: Mapping[str, int],
    unpriced: Mapping[str, int],
    carried: float,
) -> CostEstimate:
    """The estimate as reported: amounts rounded to 6 places; the total None only when nothing was
    priced and some calls were left unpriced."""
    priced = [v for v in rows.values() if v is not None]
    return {
        "label": "list-price estimate (not a bill; verified counts are the rows above)",
        "price_table": {
            "source": prices["source"],
            "date": prices["date"],
            "currency": prices["currency"],
        },
        "rows": [
            {"key": k, "amount": None if v is None else round(v, 6), "unpriced_calls": row_unpriced[k]}
            for k, v in sorted(rows.items())
        ],
        "total": round(sum(priced), 6) if priced or not unpriced else None,
        "unpriced_calls": sum(unpriced.values()),
        "carried_history_amount": round(carried, 6),
        "unpriced_calls_by_model": dict(sorted(unpriced.items())),
    }


def _amount_text(amount: float | None, unpriced: int) -> str:
    """An amount as a row shows it: "unpriced" when nothing in it had a price, else the amount,
    marked when some of its calls had none (the amount leaves them out)."""
    if amount is None:
        return "unpriced"
    text = f"{amount:,.4f}"
    return f"{text} + {unpriced:,} unpriced" if unpriced else text


def estimate_table(data: CostEstimate) -> str:
    # the label, source, currency and model names are input: ``shown`` escapes them
    source = data["price_table"]
    currency = shown(source["currency"])
    body = [[row["key"], _amount_text(row["amount"], row["unpriced_calls"])] for row in data["rows"]]
    body.append(["total", _amount_text(data["total"], data["unpriced_calls"])])
    lines = [
        f"\n{shown(data['label'])}\n",
        f"prices: {shown(source['source'])}; dated {shown(source['date'])}; {currency}\n",
        table(["group", f"estimate ({currency})"], body),
        f"carried history at cache-read rates: {data['carried_history_amount']:,.4f} {currency}\n",
    ]
    if data["unpriced_calls_by_model"]:
        names = ", ".join(f"{shown(m)} ({n})" for m, n in data["unpriced_calls_by_model"].items())
        count = data["unpriced_calls"]
        lines.append(
            f"{count:,} call{'' if count == 1 else 's'} not priced (no list price in the table), "
            f"left out of the amounts: {names}\n"
        )
    return "".join(lines)
