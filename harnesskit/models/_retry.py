"""Retry policy for HTTP model providers (R-M3): which failures to retry and how long to wait.

Pure functions and values only; the HTTP client in `openai_compat` drives the loop.
"""

from __future__ import annotations

import email.utils
import random
from collections.abc import Mapping
from datetime import UTC, datetime

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import UsageError
from harnesskit.models._options import MAX_SECONDS

__all__ = [
    "NO_RETRY_STATUS",
    "RETRY_STATUS",
    "Attempt",
    "RetryPolicy",
    "backoff_seconds",
    "retry_after_seconds",
]

#: Statuses retried with backoff: timeout, conflict, rate limit and server-side failures.
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
#: Statuses that fail at once with the provider's message (bad request, auth, payment, ...).
NO_RETRY_STATUS = frozenset({400, 401, 402, 403, 404, 422})


@frozen_dataclass(kw_only=True)
class RetryPolicy:
    """How often and how long an HTTP model client retries a failed request.

    The wait before retry `n` (1-based) is `min(max_backoff_seconds, initial_backoff_seconds *
    2 ** (n - 1))`, scaled by a random factor in `[1 - jitter, 1]`. A `Retry-After` header
    replaces the computed wait. No wait ever ends past the request's deadline.
    """

    max_retries: int = 3
    """Retries after the first attempt (0 = a single attempt)."""
    initial_backoff_seconds: float = 0.5
    """Wait before the first retry, before jitter (seconds)."""
    max_backoff_seconds: float = 8.0
    """Cap on the computed wait between attempts (seconds)."""
    jitter: float = 0.5
    """Fraction of the wait that is randomized (0 = none, 1 = full jitter)."""
    max_retry_after_seconds: float = 60.0
    """Longest `Retry-After` the client will honour; a longer one ends the retries (seconds)."""

    def __post_init__(self) -> None:
        retries = self.max_retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise UsageError(f"RetryPolicy(max_retries=...) takes an int >= 0, got {retries!r:.40}")
        for name in ("initial_backoff_seconds", "max_backoff_seconds", "max_retry_after_seconds"):
            value = getattr(self, name)
            # a wait is passed to sleep(): NaN and 1e300 were raw ValueError / OverflowError
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 <= value <= MAX_SECONDS
            ):
                raise UsageError(
                    f"RetryPolicy({name}=...) takes a number of seconds >= 0 and at most "
                    f"{MAX_SECONDS:g} (one day), got {value!r:.40}"
                )
        jitter = self.jitter
        if isinstance(jitter, bool) or not isinstance(jitter, int | float) or not 0 <= jitter <= 1:
            raise UsageError(f"jitter must be between 0 and 1, got {jitter!r:.40}")


@frozen_dataclass(kw_only=True)
class Attempt:
    """One failed (or corrective) attempt of a model request, reported to `on_attempt`.

    The loop turns each into a `model.retry` event.
    """

    model: str
    """The model that was asked, e.g. `"ollama:qwen2.5"`."""
    attempt: int
    """1-based number of the attempt that failed."""
    status_code: int | None
    """HTTP status, or `None` for timeouts and connection errors."""
    error: str
    """What went wrong, e.g. `"HTTP 503: overloaded"` or `"timeout after 10s"`."""
    wait_seconds: float = 0.0
    """How long the client waits before the next attempt (seconds); 0 when it gives up."""
    will_retry: bool = True
    """False when this was the last attempt (the request then raises `ModelError`)."""
    kind: str = "retry"
    """`"retry"` for a transient failure, `"corrective"` when the model's own malformed output
    was reported by the provider and one corrective request follows."""

    def to_dict(self) -> dict[str, object]:
        """Return the attempt as a JSON-ready dict (the payload of a `model.retry` event)."""
        return {
            "model": self.model,
            "attempt": self.attempt,
            "status_code": self.status_code,
            "error": self.error,
            "wait_seconds": round(self.wait_seconds, 3),
            "will_retry": self.will_retry,
            "kind": self.kind,
        }


def backoff_seconds(retry: int, policy: RetryPolicy, rng: random.Random | None = None) -> float:
    """The wait before retry number `retry` (1-based), with jitter.

    Returns:
        Seconds to wait, in `[(1 - jitter) * base, base]` where `base` is the capped exponential.
    """
    base = min(policy.max_backoff_seconds, policy.initial_backoff_seconds * 2.0 ** (retry - 1))
    r: float = (rng or random).random()
    return base * (1 - policy.jitter * r)


def retry_after_seconds(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Read how long the server asked us to wait.

    Looks at `retry-after-ms` (milliseconds, used by OpenAI and Azure) first, then `Retry-After`
    as seconds or as an HTTP-date.

    Args:
        headers: response headers (case-insensitive mapping such as `httpx.Headers`, or a dict
            with lower-case keys).
        now: the current time for HTTP-dates (defaults to the UTC clock).

    Returns:
        Seconds (>= 0), or `None` when no usable header is present.
    """
    ms = _header(headers, "retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value.strip() if isinstance(value, str) else None
