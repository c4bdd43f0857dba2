"""Private: one model call of the loop — request event, the call, usage, response event.

The request carries the deadline of the `max_seconds` brake and hooks that log retries and
switches; usage falls back to the estimator when the model reports none; tool-call ids are
made unique (derived, never random) before the response is logged.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

from harnesskit.messages import ModelRequest, ModelResponse, Usage
from harnesskit.run import _records as record
from harnesskit.run._ids import unique_call_ids

if TYPE_CHECKING:
    from harnesskit.context.builder import Prompt
    from harnesskit.log.events import EventLog
    from harnesskit.run._wiring import ToolSpecs
    from harnesskit.run.harness import Harness
    from harnesskit.run.state import RunState

__all__ = ["call_model"]


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
        ModelError: the model failed after its retries.
        ModelOutputError: the model's output could not be used.
    """
    limit = h.limits.max_seconds  # a model's retries stay inside the max_seconds brake
    left = None if limit is None else limit - (h.timer() - st.started)
    on_attempt, on_switch = record.model_hooks(log, st, context_event_id)
    request = ModelRequest(
        messages=prompt.messages,
        tools=tools,
        settings=h.settings,
        run_id=st.run_id,
        step=st.step,
        final=final,
        deadline_monotonic=None if left is None else time.monotonic() + left,
        on_attempt=on_attempt,
        on_switch=on_switch,
    )
    req_id = record.request(
        log, st, prompt, tools, final=final, settings=h.settings, model=h.model.name
    )
    t0 = h.timer()
    reply = h.model.request(request)
    usage = reply.usage or Usage(
        prompt_tokens=prompt.token_estimate + specs.tokens(tools),
        completion_tokens=h.estimator.count_message(reply.message),
        estimated=True,
    )
    st.prompt_tokens += usage.prompt_tokens
    st.completion_tokens += usage.completion_tokens
    answer = dataclasses.replace(reply, message=unique_call_ids(reply.message, st), usage=usage)
    seconds = h.timer() - t0
    # a model that describes itself (a local server's build, the weights' sha256) is recorded
    # once per log, on its first response, when the server behind it is known to be up
    info = getattr(h.model, "info", None) if log.last("model.response") is None else None
    record.response(
        log, st, answer, h.model.name, seconds, final=final, parent_id=req_id,
        model_info=dict(info) if isinstance(info, dict) else None,
    )  # fmt: skip
    return answer
