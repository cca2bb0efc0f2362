"""The clock: the one place outside the runtime adapter that reads the time.

``toolkit.core`` does no I/O, and reading the clock is I/O (a decision that reads it cannot be
replayed); commands and records take the moment from here, or from a ``--now`` option.
"""

from __future__ import annotations

from datetime import UTC, datetime

from toolkit.core.errors import InvalidInput
from toolkit.core.timefmt import parse_rfc3339


def now_utc() -> datetime:
    return datetime.now(UTC)


def moment_or_now(value: str | None, option: str = "--now") -> datetime:
    """A command's ``--now``: the clock when absent, else a strict RFC 3339 date-time
    (``INVALID_DATE_TIME``, exit 2, otherwise)."""
    if value is None:
        return now_utc()
    moment = parse_rfc3339(value)
    if moment is None:
        raise InvalidInput("INVALID_DATE_TIME", f"{option} must be a strict RFC 3339 date-time")
    return moment
