"""The event log's fast paths produce exactly what the straightforward stdlib code produces."""

import datetime as dt
import math

from hypothesis import given
from hypothesis import strategies as st

from harnesskit.events import _utc_iso


def _reference_iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="milliseconds")


# 1900..2200: the range where both sides can format the time.
TIMES = st.floats(min_value=-2.2e9, max_value=7.2e9, allow_nan=False)


@given(TIMES)
def test_utc_iso_matches_datetime_isoformat(t):
    assert _utc_iso(t) == _reference_iso(t)


def test_utc_iso_rounds_like_fromtimestamp_at_second_and_millisecond_edges():
    base = 1_764_433_683
    edges = [
        base + 0.9999995,  # rounds up to the next second
        base + 0.9999994,
        base + 0.0005,
        base + 0.0009995,
        -0.5,
        -1.0000005,
        0,
        float(base),
    ]
    edges += [math.nextafter(e, math.inf) for e in edges] + [
        math.nextafter(e, -math.inf) for e in edges
    ]
    for t in edges:
        assert _utc_iso(t) == _reference_iso(t), t
    # the cached second is refreshed when time moves on (or back)
    assert [_utc_iso(t) for t in (base + 1.25, base + 0.5, base + 61.0)] == [
        _reference_iso(t) for t in (base + 1.25, base + 0.5, base + 61.0)
    ]
