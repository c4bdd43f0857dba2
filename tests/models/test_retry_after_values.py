"""Retry-After values that are no delay, or no wait at all, over loopback (R-M3).

A negative, NaN or infinite `Retry-After` (or `retry-after-ms`) was read as 0 and replaced the
backoff, and so was `0` or an HTTP-date in the past: a rate-limited client retried at once,
every attempt. An invalid value is now ignored (the backoff applies, as for `garbage`), and a
valid one never waits less than the backoff would.
"""

from __future__ import annotations

import pytest

from harnesskit.errors import RateLimitError
from harnesskit.models._retry import RetryPolicy, retry_after_seconds
from tests.support.edge_client import ask, make
from tests.support.loopback import Reply, completion

POLICY = RetryPolicy(
    max_retries=3, initial_backoff_seconds=0.4, max_backoff_seconds=1.0, jitter=0.5
)
#: the least each backoff wait can be: (1 - jitter) * min(cap, initial * 2 ** (n - 1))
FLOORS = [0.2, 0.4, 0.5]
NO_DELAY = [
    {"Retry-After": "-5"},
    {"Retry-After": "nan"},
    {"Retry-After": "inf"},
    {"Retry-After": "-inf"},
    {"Retry-After": "1e400"},
    {"retry-after-ms": "nan"},
    {"retry-after-ms": "-100"},
    {"retry-after-ms": "inf"},
]
NO_WAIT = [
    {"Retry-After": "0"},
    {"Retry-After": "0.0"},
    {"retry-after-ms": "0"},
    {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"},
]


def _limited(headers: dict[str, str]) -> Reply:
    return Reply(status=429, headers=headers, json={"error": {"message": "slow down"}})


@pytest.mark.parametrize("headers", NO_DELAY + NO_WAIT, ids=lambda h: f"{h}")
def test_every_wait_is_at_least_the_backoff(server, headers):
    server.script(*[_limited(headers)] * 4)
    slept = []
    model = make(server, retry=POLICY, sleep=slept.append)
    with pytest.raises(RateLimitError) as info:
        model.request(ask())
    assert len(server.requests) == 4
    assert len(slept) == 3
    assert all(w >= floor for w, floor in zip(slept, FLOORS, strict=True)), slept
    assert "inf" not in str(info.value) and "nan" not in str(info.value)


@pytest.mark.parametrize("headers", NO_DELAY, ids=lambda h: f"{h}")
def test_a_value_that_is_no_delay_is_ignored(headers):
    assert retry_after_seconds(headers) is None


def test_invalid_milliseconds_fall_back_to_the_seconds_header():
    assert retry_after_seconds({"retry-after-ms": "nan", "retry-after": "2"}) == 2.0


def test_a_valid_longer_retry_after_still_replaces_the_backoff(server):
    server.script(_limited({"Retry-After": "0.7"}), Reply(json=completion("ok")))
    slept = []
    model = make(server, retry=POLICY, sleep=slept.append)
    assert model.request(ask()).message.content == "ok"
    assert slept == [pytest.approx(0.7)]
