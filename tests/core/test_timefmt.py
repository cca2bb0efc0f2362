"""Strict RFC 3339: offset or Z required, real calendar, ASCII only, nothing trailing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from toolkit.core.timefmt import format_utc, is_rfc3339, parse_rfc3339
from toolkit.infra.clock import now_utc

VALID = [
    ("2024-02-29T00:00:00Z", datetime(2024, 2, 29, tzinfo=UTC)),  # leap year
    ("2000-02-29T12:00:00Z", datetime(2000, 2, 29, 12, tzinfo=UTC)),  # divisible by 400
    ("2026-07-30T08:20:00+02:00", datetime(2026, 7, 30, 6, 20, tzinfo=UTC)),
    ("2026-07-30T08:20:00-05:30", datetime(2026, 7, 30, 13, 50, tzinfo=UTC)),
    ("2026-07-30T08:20:00.5Z", datetime(2026, 7, 30, 8, 20, 0, 500000, tzinfo=UTC)),
    ("2026-07-30T08:20:00.123456789Z", datetime(2026, 7, 30, 8, 20, 0, 123456, tzinfo=UTC)),
    ("2026-12-31T23:59:59+23:59", datetime(2026, 12, 31, 0, 0, 59, tzinfo=UTC)),
    ("0001-01-01T00:00:00Z", datetime(1, 1, 1, tzinfo=UTC)),
]

INVALID: list[object] = [
    "2025-02-29T00:00:00Z",  # common year
    "1900-02-29T00:00:00Z",  # century, not divisible by 400
    "2026-02-31T00:00:00Z",  # no Feb 31
    "2026-04-31T00:00:00Z",
    "2026-13-01T00:00:00Z",
    "2026-00-10T00:00:00Z",
    "2026-01-00T00:00:00Z",
    "2026-07-30T08:20:00",  # no offset
    "2026-07-30T08:20:00+24:00",
    "2026-07-30T08:20:00+02:60",
    "2026-07-30T08:20:00+0200",
    "2026-07-30T24:00:00Z",
    "2026-07-30T08:60:00Z",
    "2026-07-30T08:20:60Z",  # no leap seconds
    "2026-07-30t08:20:00Z",
    "2026-07-30T08:20:00z",  # upper case only, as the reference
    "2026-07-30 08:20:00Z",  # space separator
    "2026-07-30T08:20Z",
    "2026-07-30",
    "26-07-30T08:20:00Z",
    "2026-07-30T08:20:00.Z",
    "2026-07-30T08:20:00.1234567890Z",
    "2026-07-30T08:20:00Z\n",
    " 2026-07-30T08:20:00Z",
    "2026-07-30T08:20:00Z ",
    "\u0662\u0660\u0662\u0666-07-30T08:20:00Z",  # Arabic-Indic digits
    "２０２６-07-30T08:20:00Z",  # fullwidth digits
    "0000-01-01T00:00:00Z",  # not representable
    "",
    None,
    1_785_000_000,
    1.5,
    [],
    {},
]


@pytest.mark.parametrize("text,expected", VALID)
def test_valid(text: str, expected: datetime) -> None:
    parsed = parse_rfc3339(text)
    assert parsed == expected and parsed is not None and parsed.tzinfo is not None
    assert is_rfc3339(text)


@pytest.mark.parametrize("value", INVALID)
def test_invalid(value: object) -> None:
    assert parse_rfc3339(value) is None and not is_rfc3339(value)


def test_format_utc_whole_seconds_z() -> None:
    moment = datetime(2026, 7, 30, 10, 20, 5, 999999, tzinfo=timezone(timedelta(hours=2)))
    assert format_utc(moment) == "2026-07-30T08:20:05Z"
    assert parse_rfc3339(format_utc(moment)) == moment.replace(microsecond=0)


def test_now_is_aware_utc() -> None:
    assert now_utc().utcoffset() == timedelta(0)
