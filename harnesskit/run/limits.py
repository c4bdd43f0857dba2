"""The brakes (R-L2): `Limits` holds them and checks them itself (pydantic-ai's usage-limits shape).

The loop calls `check_before_request` before each model turn, `check_request` on each request
built (the prompt-token cap, before it is sent) and `check_after_response` once a response's
tool calls have their results; each raises `BrakeTripped` naming the brake, the
value, the limit and the unit. The loop turns it into the run's `finish_reason`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import BrakeTripped, UsageError

if TYPE_CHECKING:
    from harnesskit.messages import ModelResponse
    from harnesskit.run.state import RunState

__all__ = ["BRAKES", "CLOSING", "FINISH_REASONS", "Limits"]

CLOSING = (
    "A limit of this run was reached ({brake}). Do not call tools. Give your best answer "
    "from what is known so far, and say what is still unknown or undone."
)


#: The brakes' names (the `Limits` fields but `closing_seconds` and `max_calls_per_turn`, which
#: ends no run); each is also the `finish_reason` of a run it ends.
BRAKES = ("max_steps", "max_tokens", "max_prompt_tokens", "max_seconds", "max_consecutive_errors")

#: Every `finish_reason` the loop itself gives a run (AGENTS.md "Finish reasons"): `stop`,
#: `length` (R-M2), a brake's name, `cancelled`, `paused`, `error`, and `stopped` (a bare
#: `StopRun()`). A tool's `StopRun` may name a reason of its own; an eval domain declares those
#: (`Domain(finish_reasons=...)`) so that cases can expect them.
FINISH_REASONS = ("stop", "length", *BRAKES, "cancelled", "paused", "error", "stopped")

_AT_LEAST_ONE = ("max_steps", "max_consecutive_errors", "max_calls_per_turn")


@frozen_dataclass(kw_only=True)
class Limits:
    """The brakes, checked at the top of every iteration and after each response. `None` = off."""

    max_steps: int | None = 30
    """Model turns (steps) before the `max_steps` brake."""
    max_tokens: int | None = None
    """Cumulative prompt + completion tokens of the run (the token budget)."""
    max_prompt_tokens: int | None = None
    """Cumulative prompt tokens of the run, a cap no request passes: a request whose
    estimated prompt (messages, system prompt and tool schemas, the `request_tokens` of its
    `context.injected` event) would take the run's total past it is not sent, and the run ends
    with this brake; so is the closing request after any brake (the run then ends without a
    closing answer). With it set, the first request of a run is at most this many tokens."""
    max_seconds: float | None = None
    """Wall-clock seconds since the run started."""
    max_consecutive_errors: int | None = 5
    """Consecutive steps whose every tool call failed (a stuck agent)."""
    max_calls_per_turn: int | None = 64
    """Tool calls of one model reply that run: the first this many run, each call beyond
    them is answered "not run" (a write among them never acts) and the run goes on, so one
    reply with thousands of calls cannot run them all and flood the next prompt. Not a
    finish reason: it ends no run. `None` = every call runs."""
    closing_seconds: float | None = 30.0
    """Seconds the closing best-effort request after any brake may take, on top of the limit
    that tripped (its own deadline, so a `max_seconds` brake does not refuse it). `None` = no
    deadline for it."""

    def __post_init__(self) -> None:
        """Check every brake.

        Raises:
            UsageError: a step/token/error count that is not a non-negative int (floats and
                bools included), `max_steps`, `max_consecutive_errors` or
                `max_calls_per_turn` of 0 (the `demo` command refuses 0 steps too), or seconds
                that are not a finite number >= 0.
        """
        for name in (f.name for f in dataclasses.fields(self)):
            value = getattr(self, name)
            if value is None:
                continue
            seconds = name.endswith("_seconds")
            kind = (int, float) if seconds else (int,)
            if isinstance(value, bool) or not isinstance(value, kind):
                wanted = "a number of seconds" if seconds else "an int"
                raise UsageError(
                    f"Limits.{name} must be {wanted} or None (no limit), got {value!r}"
                )
            if seconds and not math.isfinite(value):
                raise UsageError(
                    f"Limits.{name} must be a finite number of seconds; got {value!r}, "
                    f"pass None for no limit"
                )
            if value < 0:
                raise UsageError(f"Limits.{name} must be >= 0 (None means no limit), got {value}")
            if value == 0 and name in _AT_LEAST_ONE:
                what = (
                    "no tool call would ever run"
                    if name == "max_calls_per_turn"
                    else "0 would stop the run before its first step"
                )
                raise UsageError(f"Limits.{name} must be >= 1: {what} (None means no limit)")

    def deadline(self, state: RunState, *, now: float, final: bool) -> float | None:
        """The reading of the harness's timer a model call or running tool may not pass.

        Args:
            state: the run's state (`started` is on the same timer).
            now: the timer's current reading (seconds).
            final: True for the closing request after a brake (it gets `closing_seconds`).

        Returns:
            The deadline (seconds, on the timer), or `None` when nothing bounds the call.
        """
        if final:
            return None if self.closing_seconds is None else now + self.closing_seconds
        return None if self.max_seconds is None else state.started + self.max_seconds

    def measure(
        self, state: RunState, *, seconds: float
    ) -> dict[str, tuple[float, float | None, str]]:
        """Every brake's current reading.

        Args:
            state: the run's state.
            seconds: seconds since the run started (on the harness's timer).

        Returns:
            `{brake: (value, limit, unit)}` in check order; `limit` is `None` when off.
        """
        return {
            "max_steps": (state.step, self.max_steps, "steps"),
            "max_tokens": (state.total_tokens, self.max_tokens, "tokens"),
            "max_prompt_tokens": (state.prompt_tokens, self.max_prompt_tokens, "tokens"),
            "max_seconds": (seconds, self.max_seconds, "seconds"),
            "max_consecutive_errors": (
                state.consecutive_errors,
                self.max_consecutive_errors,
                "steps",
            ),
        }

    def explain(self, state: RunState, *, seconds: float) -> BrakeTripped | None:
        """The brake that ended a run, as an error to raise (`Run.raise_for_stop`).

        Args:
            state: the run's state; its `finish_reason` names the brake, if any.
            seconds: seconds since the run started.

        Returns:
            A `BrakeTripped` with the brake's current reading, or `None` when no brake ended it.
        """
        reading = self.measure(state, seconds=seconds).get(state.finish_reason or "")
        if reading is None:
            return None
        value, limit, unit = reading
        return BrakeTripped(state.finish_reason or "", value=value, limit=limit, unit=unit)

    def check_before_request(self, state: RunState, *, seconds: float) -> None:
        """Check every brake before a model turn, in the order of `measure`.

        Args:
            state: the run's state.
            seconds: seconds since the run started.

        Raises:
            BrakeTripped: the first brake whose value reached its limit.
        """
        if type(self) is Limits and self._clear(state, seconds):
            return  # the common case, without building every reading (a subclass may add some)
        for brake, (value, limit, unit) in self.measure(state, seconds=seconds).items():
            if limit is not None and value >= limit:
                raise BrakeTripped(brake, value=value, limit=limit, unit=unit)

    def check_request(self, state: RunState, *, prompt_tokens: int) -> None:
        """Check the prompt-token cap on a request before it is sent.

        Args:
            state: the run's state (`prompt_tokens` holds the requests sent so far).
            prompt_tokens: the request's estimated prompt tokens (messages and tool schemas).

        Raises:
            BrakeTripped: `max_prompt_tokens`, when sending the request would take the run's
                prompt tokens past it; `value` is the total the request would have made.
        """
        limit = self.max_prompt_tokens
        if limit is not None and state.prompt_tokens + prompt_tokens > limit:
            total = state.prompt_tokens + prompt_tokens
            raise BrakeTripped("max_prompt_tokens", value=total, limit=limit, unit="tokens")

    def _clear(self, state: RunState, seconds: float) -> bool:
        """True when no brake of `measure` has reached its limit (False also when unsure)."""
        limit = self.max_steps
        if limit is not None and not state.step < limit:
            return False
        limit = self.max_tokens
        if limit is not None and not state.total_tokens < limit:
            return False
        limit = self.max_prompt_tokens
        if limit is not None and not state.prompt_tokens < limit:
            return False
        seconds_limit = self.max_seconds
        if seconds_limit is not None and not seconds < seconds_limit:
            return False
        limit = self.max_consecutive_errors
        return limit is None or state.consecutive_errors < limit

    def check_after_response(
        self, state: RunState, response: ModelResponse, *, seconds: float
    ) -> None:
        """Check the stuck brake once a response's tool calls have their results.

        A turn whose calls all failed may trip `max_consecutive_errors` at once. Any other
        brake waits for the next `check_before_request`, so it is reported in check order and
        the turn's calls always keep their results.

        Args:
            state: the run's state, with this turn's tool outcomes counted.
            response: the model's response (a response without tool calls trips nothing).
            seconds: seconds since the run started.

        Raises:
            BrakeTripped: `max_consecutive_errors`, when it is the first brake tripped.
        """
        if not response.message.tool_calls:
            return
        try:
            self.check_before_request(state, seconds=seconds)
        except BrakeTripped as brake:
            if brake.brake == "max_consecutive_errors":
                raise
