"""Strict RFC 3339 date-time parsing: offset or ``Z`` required, real calendar dates."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

# ASCII digits only (``\d`` would accept any Unicode digit) and upper-case ``T``/``Z`` only,
# exactly as the reference runtime's strict check; matched with fullmatch so that a trailing
# newline is refused too.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})"
)


def parse_rfc3339(value: object) -> datetime | None:
    """Return an aware datetime, or None when ``value`` is not a strict RFC 3339 date-time."""
    if not isinstance(value, str):
        return None
    m = _RFC3339.fullmatch(value)
    if not m:
        return None
    parts = m.groups()
    year, month, day, hour, minute, second = map(int, parts[:6])
    frac, offset = parts[6], parts[7]
    if hour > 23 or minute > 59 or second > 59:
        # leap seconds (:60) are not representable; the reference refuses them too
        return None
    tz = UTC if offset == "Z" else _offset_zone(offset)
    if tz is None:
        return None
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    try:
        return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except ValueError:  # Feb 31, Feb 29 in a common year, month 13 ...
        return None


def _offset_zone(offset: str) -> timezone | None:
    """The fixed zone of a ``+HH:MM`` / ``-HH:MM`` offset; None beyond 23 hours or 59 minutes."""
    oh, om = int(offset[1:3]), int(offset[4:6])
    if oh > 23 or om > 59:
        return None
    delta = timedelta(hours=oh, minutes=om)
    return timezone(delta if offset[0] == "+" else -delta)


def is_rfc3339(value: object) -> bool:
    return parse_rfc3339(value) is not None


def format_utc(moment: datetime) -> str:
    """Whole-second UTC with ``Z``, the form every file we write uses."""
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
