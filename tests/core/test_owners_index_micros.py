"""``micros`` (the router's lease clock) is exact integer arithmetic, equal to datetime's own."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.core.owners_index import micros

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _reference(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(microseconds=1)


_zones = st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-23 * 60 - 59, 23 * 60 + 59)
)


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=_zones))
def test_micros_equals_the_datetime_difference(moment: datetime) -> None:
    assert micros(moment) == _reference(moment)


def test_micros_at_known_moments() -> None:
    assert micros(EPOCH) == 0
    assert micros(datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC)) == 1
    assert micros(datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)) == -1
    assert micros(datetime(1970, 1, 1, 1, 0, tzinfo=timezone(timedelta(hours=1)))) == 0


@pytest.mark.usefixtures(
    "without_coverage"
)  # what the child imports is the subject: no coverage modules in it
def test_the_index_reader_does_not_load_datetime() -> None:
    """The router reads the index (decode, micros) without the timestamp parser or datetime."""
    code = "import sys, toolkit.core.owners_index; print('datetime' in sys.modules, 'toolkit.core.timefmt' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
