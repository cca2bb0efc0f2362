"""The work of ``workgroup usage``: options in, report out (the typer command in
``toolkit/commands/usage.py`` parses the command line and calls these)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolkit.usage.fold import By, Ledger, LocalDays
    from toolkit.usage.model import Call
    from toolkit.usage.report import Extra, Fold
    from toolkit.usage.shapes import PageOptions, PriceTable, SessionView, UsageReport


def _say(text: str) -> None:
    """One line on stderr through ``shown`` (the searched paths come from the environment)."""
    from toolkit.core.display import shown

    sys.stderr.write(shown(text.removesuffix("\n")) + "\n")


def _emit(value: UsageReport | SessionView) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")


def _jobs(value: int) -> int:
    from toolkit.core.errors import InvalidInput

    if not 0 <= value <= 64:
        raise InvalidInput("USAGE_BAD_JOBS", "--jobs must be 0 (automatic) to 64")
    return value


def project_filter(value: str | None) -> str | None:
    from toolkit.usage.sources import hashed

    if value is None:
        return None
    if value.startswith("p-") and len(value) == 14:
        return value  # already the hashed form shown in reports
    return hashed(str(Path(value).expanduser().resolve()))


def report_command(
    environ: Mapping[str, str],
    *,
    source: str = "all",
    since: str | None = None,
    until: str | None = None,
    timezone: str | None = None,
    project: str | None = None,
    by: str = "day",
    as_json: bool = False,
    cost: bool = False,
    prices: Path | None = None,
    emit_events: Path | None = None,
    html: Path | None = None,
    jobs: int = 0,
) -> int:
    from toolkit.usage.fold import (
        By,
        Ledger,
        LocalDays,
        fold_logs,
        no_cyclic_gc,
        parse_day,
        resolve_tz,
        selector,
    )
    from toolkit.usage.sources import discover

    zone = resolve_tz(timezone)
    _check_outputs(emit_events, html)
    first = parse_day(since, "--since") if since else None
    last = parse_day(until, "--until") if until else None
    days = LocalDays(zone)
    hashed_project = project_filter(project)
    keep = selector(days, first, last, hashed_project)
    outputs = _Outputs(By(by), days, keep, cost or prices is not None, prices, emit_events, html)
    ledger = Ledger()
    # each session's calls are folded and dropped before the next is read (here or in workers);
    # the walk's records, like the calls, hold no cycle for the collector to look for
    with no_cyclic_gc():
        logs = discover(source, environ)
        if not logs:  # all-zero totals are no finding: say where no log was found
            from toolkit.usage.sources import looked_in

            _say("usage: no agent log found; looked in " + "; ".join(looked_in(source, environ)))
        fold = fold_logs(logs, ledger, outputs.fold, _jobs(jobs))
    data = fold.data(ledger, timezone or "local")
    page: PageOptions = dict(
        zone=zone, timezone=timezone, source=source, since=first, until=last, project=hashed_project
    )
    outputs.finish(fold, ledger, data, page)
    _print_report(data, by, as_json)
    return 0


def _check_outputs(emit_events: Path | None, html: Path | None) -> None:
    """Both files need an existing folder: checked before anything is read."""
    for target, flag in ((emit_events, "--emit-events"), (html, "--html")):
        if target is not None and not target.resolve().parent.is_dir():
            from toolkit.core.errors import InvalidInput

            raise InvalidInput("USAGE_BAD_OUTPUT", f"the folder of {flag} does not exist")


class _Outputs:
    """The report's fold with the extra folds asked for (cost estimate, efficiency events, HTML page),
    made afresh for each process that folds (``fold``), and the writing of the merged result."""

    def __init__(
        self,
        grouping: By,
        days: LocalDays,
        keep: Callable[[Call], bool] | None,
        cost: bool,
        prices: Path | None,
        emit_events: Path | None,
        html: Path | None,
    ) -> None:
        self.grouping, self.days, self.keep = grouping, days, keep
        self.prices: PriceTable | None = None
        if cost:
            from toolkit.usage.cost import load_prices

            self.prices = load_prices(prices)
        self.events_path, self.html_path = emit_events, html

    def fold(self, ledger: Ledger) -> Fold:
        """A fresh fold (``ledger``: the one its calls' file indexes point into)."""
        from toolkit.usage.report import Fold

        extras: list[Extra] = []
        if self.prices is not None:
            from toolkit.usage.cost import Estimate
            from toolkit.usage.fold import key_function

            extras.append(Estimate(self.prices, key_function(self.grouping, self.days)))
        if self.events_path is not None:
            from toolkit.usage.events import Events

            extras.append(Events(ledger))
        if self.html_path is not None:
            from toolkit.usage.html import Page

            extras.append(Page(self.days, self.prices))
        return Fold(self.grouping, self.days, self.keep, extras)

    def finish(self, fold: Fold, ledger: Ledger, data: UsageReport, page: PageOptions) -> None:
        """The extra folds' results: the estimate into ``data``, the events and the page written
        (``page``: the run's options as the HTML page states them)."""
        if not fold.extras:  # none asked for: their modules are not loaded
            return
        from toolkit.usage.cost import Estimate
        from toolkit.usage.events import Events
        from toolkit.usage.html import Page

        for extra in fold.extras:
            if isinstance(extra, Estimate):
                data["estimate"] = extra.result()
            elif isinstance(extra, Events) and self.events_path is not None:
                from toolkit.usage.events import write_events

                _say(f"wrote {write_events(self.events_path, extra)} efficiency event(s)")
            elif isinstance(extra, Page) and self.html_path is not None:
                from toolkit.usage.html import Context, write_html
                from toolkit.usage.report import warnings

                write_html(self.html_path, extra, Context(**page, notes=warnings(data)))
                _say("wrote the HTML report")


def _print_report(data: UsageReport, by: str, as_json: bool) -> None:
    from toolkit.usage.render import report_table
    from toolkit.usage.report import warnings

    for line in warnings(data):
        _say("note: " + line)
    if as_json:
        _emit(data)
        return
    sys.stdout.write(report_table(by, data["rows"], data["totals"]))
    if "estimate" in data:
        from toolkit.usage.cost import estimate_table

        sys.stdout.write(estimate_table(data["estimate"]))


def session_command(
    environ: Mapping[str, str],
    session_id: str,
    *,
    source: str = "all",
    timezone: str | None = None,
    workflow: str = "cm-ai",
    as_json: bool = False,
    jobs: int = 0,
) -> int:
    from toolkit.usage.fold import Collect, Ledger, LocalDays, fold_logs, no_cyclic_gc, resolve_tz
    from toolkit.usage.session import find_session, named, session_table, session_view
    from toolkit.usage.sources import discover

    zone = resolve_tz(timezone)
    ledger = Ledger()
    wanted = named(session_id)
    # only the calls of the sessions the id can name are kept
    with no_cyclic_gc():
        fold_logs(
            discover(source, environ),
            ledger,
            lambda led: Collect(led.calls, lambda c: wanted(c.session)),
            _jobs(jobs),
        )
    name = find_session(ledger, session_id)
    view = session_view(ledger, name, LocalDays(zone), zone, workflow)
    if as_json:
        _emit(view)
    else:
        sys.stdout.write(session_table(view))
    return 0
