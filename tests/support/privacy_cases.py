"""Shared by the privacy family tests: what a scan reports, and the linear-time check.

A positive names the rule and the exact value it must report; a look-alike must report nothing;
a megabyte of one rule's trigger repeated must scan within the time budget (CPU seconds of this
process, so other load on the machine does not count).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable

from toolkit.privacy import Context
from toolkit.privacy.engine import scan_text_with_values

MB = 1_000_000
# The bound: under 1 s per MB. A line tracer (coverage in CI) slows this process ~3x without
# changing the algorithm, so the bound is scaled while one is active.
TRACED = sys.gettrace() is not None or "coverage" in sys.modules
BUDGET_S_PER_MB = 1.0 * (3 if TRACED else 1)


def found(text: str, context: Context = Context.SOURCE) -> list[tuple[str, str]]:
    """(rule, reported value) of every finding in ``text``."""
    return [(finding.rule, value) for finding, value in scan_text_with_values(text, context)]


def repeated(unit: str, size: int = MB) -> str:
    """``unit`` repeated to exactly ``size`` characters."""
    return (unit * (size // len(unit) + 1))[:size]


def scan_seconds(text: str, contexts: Iterable[Context] = (Context.SOURCE, Context.GENERIC)) -> float:
    """CPU seconds of scanning ``text`` once in each of ``contexts``."""
    start = time.process_time()
    for context in contexts:
        scan_text_with_values(text, context)
    return time.process_time() - start
