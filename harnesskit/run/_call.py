"""Private: one model call of the loop — request event, the call, usage, response event.

The request carries the deadline of the `max_seconds` brake and hooks that log retries and
switches; usage falls back to the estimator when the model reports none; tool-call ids are
made unique (derived, never random) before the response is logged.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from harnesskit.errors import BrakeTripped, ModelError
from harnesskit.messages import ModelRequest, ModelResponse, Usage
from harnesskit.run import _records as record
from harnesskit.run._ids import unique_call_ids

if TYPE_CHECKING:
    from harnesskit.context.builder import Prompt
    from harnesskit.log.events import EventLog
    from harnesskit.run._wiring import ToolSpecs
    from harnesskit.run.harness import Harness
    from harnesskit.run.state import RunState

__all__ = ["call_model", "run_deadline"]


def run_deadline(h: Harness, st: RunState) -> float | None:
    """The reading of `h.timer` the run's tools and model calls may not pass (`max_seconds`).

    Args:
        h: the harness (limits, timer).
        st: the run's state.

    Returns:
        The deadline in seconds on `h.timer`, or `None` without a `max_seconds` brake.
    """
    return h.limits.deadline(st, now=h.timer(), final=False)


def call_model(
    h: Harness,
    st: RunState,
    log: EventLog,
    prompt: Prompt,
    tools: tuple[dict[str, Any], ...],
    *,
    final: bool,
    context_event_id: int,
    specs: ToolSpecs,
) -> ModelResponse:
    """Send `prompt` to the harness's model and log the request and the response.

    Args:
        h: the harness (model, settings, limits, estimator, timer).
        st: the run's state; its token totals and call ids are updated.
        log: the run's log.
        prompt: the assembled prompt.
        tools: the tool specs offered (`()` for the closing request).
        final: True for the tool-less closing request after a brake.
        context_event_id: the `context.injected` event of this prompt.
        specs: the run's tool-spec cache (for the token estimate of `tools`).

    Returns:
        The response with its usage (provider counts, else estimates) and unique call ids.

    Raises:
        BrakeTripped: `max_seconds`, when the model call failed because the run's time ran out
            (the loop then sends the closing request on its own allowance).
        ModelError: the model failed after its retries.
        ModelOutputError: the model's output could not be used.
    """
    # a model's retries and body reads stay inside the max_seconds brake, on the harness's timer
    deadline = h.limits.deadline(st, now=h.timer(), final=final)
    on_attempt, on_switch = record.model_hooks(log, st, context_event_id)
    request = ModelRequest(
        messages=prompt.messages,
        tools=tools,
        settings=h.settings,
        run_id=st.run_id,
        step=st.step,
        final=final,
        deadline_monotonic=deadline,
        clock=h.timer,
        on_attempt=on_attempt,
        on_switch=on_switch,
        on_delta=h.on_delta,
    )
    req_id = record.request(
        log, st, prompt, tools, final=final, settings=h.settings, model=h.model.name,
        **specs.fields(),
    )  # fmt: skip
    t0 = h.timer()
    try:
        reply = h.model.request(request)
    except ModelError:
        limit, seconds = h.limits.max_seconds, h.timer() - st.started
        if final or limit is None or seconds < limit:
            raise
        raise BrakeTripped("max_seconds", value=seconds, limit=limit, unit="seconds") from None
    usage = reply.usage or Usage(
        prompt_tokens=prompt.token_estimate + specs.tokens(tools),
        completion_tokens=h.estimator.count_message(reply.message),
        estimated=True,
    )
    st.prompt_tokens += usage.prompt_tokens
    st.completion_tokens += usage.completion_tokens
    answer = dataclasses.replace(reply, message=unique_call_ids(reply.message, st), usage=usage)
    seconds = h.timer() - t0
    record.response(log, st, answer, h.model.name, seconds, final=final, parent_id=req_id)
    return answer
