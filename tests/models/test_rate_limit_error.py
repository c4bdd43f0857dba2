"""`RateLimitError`: a typed, picklable ModelError with the attempts, Retry-After and time spent."""

from __future__ import annotations

import pickle

import harnesskit as hk
from harnesskit.errors import RateLimitError


def test_rate_limit_error_is_a_model_error_and_survives_pickling():
    err = RateLimitError(
        "m: HTTP 429 [4 attempts in 3.0s; the server's Retry-After was 1s]",
        model="m",
        attempts=4,
        retry_after_seconds=1.0,
        elapsed_seconds=3.0,
    )
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, hk.ModelError) and back.status_code == 429
    assert (back.attempts, back.retry_after_seconds, back.elapsed_seconds) == (4, 1.0, 3.0)
    assert str(back) == str(err)
