"""Private: one model call of the loop — request event, the call, usage, response event.

The request carries the deadline of the `max_seconds` brake and hooks that log retries and
switches; usage falls back to the estimator when the model reports none; tool-call ids are
made unique (derived, never random) before the response is logged.

The closing request after a brake offers the same tools as the steps before it (a provider's
prompt cache is keyed on the tool list, so dropping them re-reads the whole prompt) with
`tool_choice="none"`; a call in that reply is never run: it is logged as `unexecuted_calls`
and the answer keeps only its text.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from harnesskit import _json
from harnesskit.errors import BrakeTripped, ContextError, ModelError
from harnesskit.messages import Message, ModelRequest, ModelResponse, Usage
from harnesskit.run import _records as record
from harnesskit.run._classes import RequestClasses, approved_class
from harnesskit.run._ids import unique_call_ids

if TYPE_CHECKING:
    from collections.abc import Sequence

    from harnesskit.context.builder import ContextBuilder, Prompt
    from harnesskit.log.events import EventLog
    from harnesskit.messages import ToolCall
    from harnesskit.run._wiring import ToolSpecs
    from harnesskit.run.harness import Harness
    from harnesskit.run.loop import Run
    from harnesskit.run.state import RunState
    from harnesskit.tools.executor import Executed

__all__ = [
    "call_model",
    "closing_settings",
    "input_budget",
    "record_context",
    "run_deadline",
    "turn_room",
]

#: The share of the prompt room left that one turn's tool results may take (the rest stays for
#: the answer and the turns after it).
TURN_SHARE = 0.5


def run_deadline(h: Harness, st: RunState) -> float | None:
    """The reading of `h.timer` the run's tools and model calls may not pass (`max_seconds`).

    Args:
        h: the harness (limits, timer).
        st: the run's state.

    Returns:
        The deadline in seconds on `h.timer`, or `None` without a `max_seconds` brake.
    """
    return h.limits.deadline(st, now=h.timer(), final=False)


def input_budget(h: Harness) -> tuple[int | None, int | None, int]:
    """The input token budget of one request (R-M4): the window minus the reserved output.

    The window and the reserved output are what the model declares (`context_window`,
    `max_output_tokens`, per model or preset); without a declared output limit the request's
    `max_tokens` (or `max_completion_tokens`) is reserved.

    Args:
        h: the harness (its model and settings).

    Returns:
        `(budget, window, reserved)` in tokens; `budget` and `window` are `None` when the
        model declares no window.
    """
    window = getattr(h.model, "context_window", None)
    reserved = getattr(h.model, "max_output_tokens", None)
    if reserved is None:
        asked = h.settings.get("max_tokens", h.settings.get("max_completion_tokens"))
        reserved = asked if isinstance(asked, int) and not isinstance(asked, bool) else 0
    if not isinstance(window, int) or isinstance(window, bool):
        return None, None, reserved
    return window - reserved, window, reserved


def turn_room(run: Run, calls: Sequence[ToolCall], executed: Sequence[Executed]) -> int | None:
    """The prompt room (characters) one turn's tool results may take (`Transport.fit_turn`).

    `TURN_SHARE` of what the model's input budget and the context policy's
    `max_prompt_tokens` (the smaller) leave after the last request and this turn's calls.
    Only computed for a turn larger than one inline result; the common turn of one or two
    small results costs one sum.

    Args:
        run: the run (harness, state, log, context builder, transport).
        calls: the turn's tool calls (their arguments join the prompt).
        executed: the turn's executed calls.

    Returns:
        Characters, or `None` when the turn is small or nothing bounds the prompt.
    """
    total = 0
    for ex in executed:
        total += len(ex.result.content)
    if total <= run.transport.policy.max_inline_chars:
        return None
    budget = input_budget(run.harness)[0]
    cap = run.context.policy.limits.get("max_prompt_tokens")
    bounds = [b for b in (budget, cap) if isinstance(b, int) and not isinstance(b, bool)]
    if not bounds:
        return None
    last = run.log.last("context.injected", branch_id=run.state.branch_id)
    used = int(last.payload.get("request_tokens") or 0) if last is not None else 0
    est = run.context.estimator
    used += sum(est.count(json.dumps(c.arguments or {}, default=str)) + 10 for c in calls)
    left = min(bounds) - used - 10 * len(executed)  # each tool message's framing
    return max(0, int(left * TURN_SHARE * est.chars_per_token))


def record_context(
    context: ContextBuilder,
    h: Harness,
    st: RunState,
    log: EventLog,
    prompt: Prompt,
    tools: tuple[dict[str, Any], ...],
    specs: ToolSpecs,
) -> int:
    """Append `context.injected` with the request's budget figures; refuse an over-budget one.

    The record carries `tool_tokens` (the tool schemas' share), `request_tokens` (messages,
    system prompt included, plus tool schemas) and, when the model declares a window,
    `input_budget`, `context_window` and `reserved_output_tokens`.

    Returns:
        The `context.injected` event id.

    Raises:
        ContextError: the request would not fit the model's input budget (nothing is sent).
    """
    budget, window, reserved = input_budget(h)
    tool_tokens = specs.tokens(tools)
    need = prompt.token_estimate + tool_tokens
    figures: dict[str, Any] = {
        "tool_tokens": tool_tokens,
        "request_tokens": need,
        **specs.fields(),
    }
    if budget is not None:
        figures.update(input_budget=budget, context_window=window, reserved_output_tokens=reserved)
    ctx_id = context.record(
        log, prompt, branch_id=st.branch_id, step=st.step, model=h.model.name, **figures
    ).event_id
    if budget is not None and need > budget:
        raise ContextError(
            f"the request needs about {need} input tokens ({prompt.token_estimate} for the "
            f"messages and system prompt, {tool_tokens} for the tool schemas) but the input "
            f"budget is {budget} = context window {window} - {reserved} reserved for output; "
            "nothing was sent. Use a context policy that keeps fewer turns, offer fewer tools, "
            "or declare a larger window"
        )
    return ctx_id


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
    classes: RequestClasses | None = None,
) -> ModelResponse:
    """Send `prompt` to the harness's model and log the request and the response.

    Args:
        h: the harness (model, settings, limits, estimator, timer).
        st: the run's state; its token totals and call ids are updated.
        log: the run's log.
        prompt: the assembled prompt.
        tools: the tool specs offered (the same ones on the closing request).
        final: True for the closing request after a brake: it is sent with
            `tool_choice="none"`, and a tool call in its reply is dropped from the answer
            (listed as `unexecuted_calls` on the `model.response` event), never run.
        context_event_id: the `context.injected` event of this prompt.
        specs: the run's tool-spec cache (for the token estimate of `tools`).
        classes: the run's index of event data classes (R-S2); `None` = a fresh one.

    Returns:
        The response with its usage (provider counts, else estimates) and unique call ids;
        on the closing request, without tool calls.

    Raises:
        BrakeTripped: `max_seconds`, when the model call failed because the run's time ran out
            (the loop then sends the closing request on its own allowance); or
            `max_prompt_tokens`, before anything is sent or logged as sent, when the request's
            estimated prompt would take the run past that cap (`Limits.check_request`).
        ModelError: the model failed after its retries, or it is not approved for the
            request's data class (R-S2: the highest class among the events the prompt carries
            and the run's `data_class` setting); then nothing was sent or logged as sent.
        ModelOutputError: the model's output could not be used.
    """
    # R-S2: the request is as sensitive as the most sensitive event whose content it carries
    groups = (prompt.selected, prompt.summarized)
    data_class = approved_class(h.model, log, groups, h.data_class, classes)
    # a model's retries and body reads stay inside the max_seconds brake, on the harness's timer
    deadline = h.limits.deadline(st, now=h.timer(), final=final)
    on_attempt, on_switch = record.model_hooks(log, st, context_event_id)
    settings = closing_settings(h.settings, tools) if final else h.settings
    # the prompt-token cap holds before sending: a request over it is never sent
    h.limits.check_request(st, prompt_tokens=prompt.token_estimate + specs.tokens(tools))
    request = ModelRequest(
        messages=prompt.messages,
        tools=tools,
        settings=_json.read_only(settings),  # a model that edits them changes no later request
        run_id=st.run_id,
        step=st.step,
        final=final,
        deadline_monotonic=deadline,
        clock=h.timer,
        on_attempt=on_attempt,
        on_switch=on_switch,
        on_delta=h.on_delta,
        data_class=data_class,
    )
    req_id = record.request(
        log, st, prompt, tools, final=final, settings=settings, model=h.model.name,
        data_class=data_class, **specs.fields(),
    )  # fmt: skip
    t0 = h.timer()
    try:
        try:
            reply = h.model.request(request)
        finally:  # a live display (`LiveStream.end`) shows what it held back, redacted
            end = getattr(h.on_delta, "end", None)
            if callable(end):
                end()
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
    answer = _with(reply, unique_call_ids(reply.message, st), usage)
    unexecuted: list[dict[str, Any]] | None = None
    if final and answer.message.tool_calls:  # tool_choice="none" not heeded: never run them
        unexecuted = [c.to_openai(wire=False) for c in answer.message.tool_calls]
        text = answer.original_content or answer.message.content
        answer = dataclasses.replace(
            answer, message=dataclasses.replace(answer.message, content=text, tool_calls=())
        )
    seconds = h.timer() - t0
    # a model that describes itself (a local server's build, the weights' sha256) is recorded
    # once per log, on its first response, when the server behind it is known to be up
    info = getattr(h.model, "info", None) if log.last("model.response") is None else None
    record.response(
        log, st, answer, h.model.name, seconds, final=final, parent_id=req_id,
        model_info=dict(info) if isinstance(info, dict) else None, unexecuted_calls=unexecuted,
        data_class=data_class,
    )  # fmt: skip
    return answer


def _with(reply: ModelResponse, message: Message, usage: Usage) -> ModelResponse:
    """`dataclasses.replace(reply, message=message, usage=usage)`, without a copy when equal."""
    if message is reply.message and usage is reply.usage:
        return reply  # frozen: the same value
    if type(reply) is not ModelResponse:  # a subclass keeps its type (and its fields)
        return dataclasses.replace(reply, message=message, usage=usage)
    return ModelResponse(
        message=message,
        usage=usage,
        finish_reason=reply.finish_reason,
        model=reply.model,
        raw=reply.raw,
        original_content=reply.original_content,
        provider_finish_reason=reply.provider_finish_reason,
    )


def closing_settings(settings: dict[str, Any], tools: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """The settings of the closing request after a brake: the run's, with tools forbidden.

    Args:
        settings: the harness's request settings.
        tools: the tool specs the closing request offers (the run's current ones).

    Returns:
        A new dict: `settings` with `tool_choice="none"` (replacing e.g. `"required"`) when
        `tools` is not empty, and without `parallel_tool_calls`; `settings` itself otherwise.
    """
    if not tools:
        return settings
    out = {k: v for k, v in settings.items() if k != "parallel_tool_calls"}
    out["tool_choice"] = "none"
    return out
