"""Retry policy for HTTP model providers (R-M3): which failures to retry and how long to wait.

Pure functions and values only; the HTTP client in `openai_compat` drives the loop.
"""

from __future__ import annotations

import email.utils
import math
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
    "error_status",
    "retry_after_seconds",
    "retryable",
]

#: Statuses retried with backoff: timeout, conflict, rate limit and server-side failures.
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
#: Statuses that fail at once with the provider's message (bad request, auth, payment, ...).
NO_RETRY_STATUS = frozenset({400, 401, 402, 403, 404, 422})
#: The HTTP status an error object's `code` or `type` stands for (OpenAI, Anthropic, OpenRouter,
#: vLLM, LiteLLM names, lower case), for errors sent inside a 200 body or stream.
_ERROR_STATUS = {
    **dict.fromkeys(
        ("invalid_request_error", "invalid_request", "bad_request", "context_length_exceeded",
         "string_above_max_length", "exceed_context_size_error", "invalid_prompt",
         "unsupported_parameter", "unsupported_value", "invalid_value"),
        400,
    ),
    **dict.fromkeys(
        ("authentication_error", "invalid_api_key", "unauthorized", "unauthenticated"), 401
    ),
    **dict.fromkeys(("insufficient_quota", "payment_required", "billing_error"), 402),
    **dict.fromkeys(("permission_error", "permission_denied", "forbidden"), 403),
    **dict.fromkeys(("not_found_error", "not_found", "model_not_found"), 404),
    **dict.fromkeys(("timeout", "timeout_error", "request_timeout"), 408),
    **dict.fromkeys(("unprocessable_entity", "validation_error"), 422),
    **dict.fromkeys(
        ("rate_limit_error", "rate_limit_exceeded", "rate_limited", "too_many_requests"), 429
    ),
    **dict.fromkeys(("server_error", "api_error", "internal_error", "internal_server_error"), 500),
    "bad_gateway": 502,
    **dict.fromkeys(
        ("overloaded_error", "overloaded", "service_unavailable", "engine_overloaded"), 503
    ),
    "gateway_timeout": 504,
}  # fmt: skip


@frozen_dataclass(kw_only=True)
class RetryPolicy:
    """How often and how long an HTTP model client retries a failed request.

    The wait before retry `n` (1-based) is `min(max_backoff_seconds, initial_backoff_seconds *
    2 ** (n - 1))`, scaled by a random factor in `[1 - jitter, 1]`. A `Retry-After` header
    replaces the computed wait when it is longer (a server asking for 0 seconds, or a date in
    the past, still gets the backoff); an invalid one (negative, NaN, infinite, not a number
    or a date) is ignored. No wait ever ends past the request's deadline.
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
    as seconds or as an HTTP-date. A value that is no delay (negative, NaN, infinite, neither a
    number nor a date) is ignored, as if absent; a date in the past reads as 0.

    Args:
        headers: response headers (case-insensitive mapping such as `httpx.Headers`, or a dict
            with lower-case keys).
        now: the current time for HTTP-dates (defaults to the UTC clock).

    Returns:
        Seconds (>= 0), or `None` when no usable header is present.
    """
    ms = _seconds(_header(headers, "retry-after-ms"))
    if ms is not None:
        return ms / 1000
    value = _header(headers, "retry-after")
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is not None or _number(value):
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _number(text: str) -> bool:
    """True when `text` reads as a float (`"-5"`, `"nan"`, `"inf"` too)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _seconds(text: str | None) -> float | None:
    """`text` as a delay: a finite number >= 0, else `None` (negative, NaN, inf: not a delay)."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def error_status(code: str | int | None, kind: str | None = None) -> int | None:
    """The HTTP status a provider's error object stands for, read from its `code` or `type`.

    Args:
        code: the error's `code`: a status number (`429`, `"503"`) or a name
            (`"context_length_exceeded"`, `"rate_limit_exceeded"`).
        kind: the error's `type` (`"invalid_request_error"`, `"server_error"`, ...).

    Returns:
        The status (e.g. 400 for `context_length_exceeded`), or `None` when neither names one.
    """
    if isinstance(code, str) and code.strip().isdigit():
        code = int(code)
    if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
        return code
    for name in (code, kind):
        if isinstance(name, str) and name.strip().lower() in _ERROR_STATUS:
            return _ERROR_STATUS[name.strip().lower()]
    return None


def retryable(status: int | None, code: str | int | None = None, kind: str | None = None) -> bool:
    """Whether a provider error is worth retrying (R-M3).

    One rule for HTTP statuses and for the error objects a provider sends inside a 200 body or
    stream: the HTTP error status decides when there is one, else the object's code or type.

    Args:
        status: the HTTP status that reported the error; `None` or a 2xx for an error object
            inside a successful response (its `code` and `type` then decide).
        code: the error object's `code` (see `error_status`); `None` for none.
        kind: the error object's `type`; `None` for none.

    Returns:
        True for `RETRY_STATUS` (timeouts, conflicts, rate limits, server failures) and for an
        in-body error that names no status (a provider failing mid-answer); False for any other
        HTTP error status and for codes naming one (`context_length_exceeded`, bad key, ...).
    """
    if status is not None and status >= 300:
        return status in RETRY_STATUS
    said = error_status(code, kind)
    return said is None or said in RETRY_STATUS


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value.strip() if isinstance(value, str) else None
