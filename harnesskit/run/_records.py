"""Private: the events the loop appends, one function per event type.

Payload keys live here and nowhere else in `run/`; when events become typed classes, this
file is the one that changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from harnesskit.data.artifacts import _max_class
from harnesskit.log._codec import json_text
from harnesskit.log.events import hash_json
from harnesskit.messages import Usage

if TYPE_CHECKING:
    from harnesskit.context.builder import Prompt
    from harnesskit.errors import BrakeTripped
    from harnesskit.log.events import Event, EventLog
    from harnesskit.messages import ModelResponse, ToolCall
    from harnesskit.run.state import RunState
    from harnesskit.tools.executor import Executed

__all__ = [
    "brake",
    "conflict",
    "finished",
    "model_hooks",
    "request",
    "response",
    "tool_call",
    "tool_calls",
    "tool_result",
    "user_message",
]


def user_message(log: EventLog, st: RunState, text: str) -> None:
    """Append `user.message`: a user turn on the run's branch."""
    log.append(
        "user.message", {"content": text}, source="user", branch_id=st.branch_id, summary=text[:80]
    )


def conflict(log: EventLog, st: RunState, reason: str, conflicts: Any) -> None:
    """Append `alert.conflict`: two tool facts disagree, no request is sent (R-C6)."""
    log.append(
        "alert.conflict",
        {"step": st.step, "reason": reason, "conflicts": list(conflicts)},
        branch_id=st.branch_id,
        summary=reason[:80],
    )


def request(
    log: EventLog,
    st: RunState,
    prompt: Prompt,
    tools: tuple[dict[str, Any], ...],
    *,
    final: bool,
    settings: dict[str, Any],
    model: str,
    data_class: str | None = None,
    **extra: Any,
) -> int:
    """Append `model.request` (as a delta against the branch's previous one); return its id.

    `data_class` is the request's class (R-S2), the event's own; `extra` is more payload, e.g.
    the open tool group (`tool_group`, R-T3).
    """
    return log.append_request(
        prompt.messages,
        tools,
        branch_id=st.branch_id,
        data_class=data_class,
        step=st.step,
        final=final,
        settings=settings,
        model=model,
        token_estimate=prompt.token_estimate,
        summary=f"step {st.step}: {len(prompt.messages)} messages",
        **extra,
    ).event_id


def response(
    log: EventLog,
    st: RunState,
    reply: ModelResponse,
    model: str,
    seconds: float,
    *,
    final: bool,
    parent_id: int,
    model_info: dict[str, Any] | None = None,
    unexecuted_calls: list[dict[str, Any]] | None = None,
    data_class: str | None = None,
) -> None:
    """Append `model.response`: the (id-fixed) message, usage, timing (seconds).

    `data_class` is the request's class (R-S2): an answer to a restricted or secret request
    may restate what it carried, so it is of that class (`internal` at least).

    `model_info` (the model's own description, e.g. a local server's version and the weights'
    sha256) is written as the `model_info` key when given (the loop gives it once per log).

    Calls recovered from the text are listed in `recovered_calls`, with the model's text as it
    came in `original_content` (both keys only when there are such calls).

    The provider's own finish reason is the `provider_finish_reason` key when the parser read
    it as another (`SAFETY` as `content_filter`).

    `unexecuted_calls` (chat-completions call dicts) are the calls a closing reply made
    although its request said `tool_choice="none"`: dropped from the message, never run, and
    written as the `unexecuted_calls` key when given.
    """
    message, usage = reply.message, reply.usage or Usage()
    recovered = [c.id for c in message.tool_calls if c.recovered]
    flags: dict[str, Any] = {}
    if recovered:
        flags = {"recovered_calls": recovered, "original_content": reply.original_content}
    if model_info is not None:
        flags["model_info"] = model_info
    if unexecuted_calls:
        flags["unexecuted_calls"] = unexecuted_calls
    if reply.provider_finish_reason is not None:  # the provider's own word (`SAFETY`)
        flags["provider_finish_reason"] = reply.provider_finish_reason
    log.append(
        "model.response",
        {
            "step": st.step,
            "message": message.to_openai(wire=False),
            "usage": usage.to_dict(),
            "finish_reason": reply.finish_reason,
            "model": reply.model or model,
            "seconds": round(seconds, 6),
            "final": final,
            "incomplete": final or reply.finish_reason == "length",
            "id_replacements": {
                c.id: c.original_id for c in message.tool_calls if c.original_id is not None
            },
            **flags,
        },
        parent_id=parent_id,
        branch_id=st.branch_id,
        source="model",
        summary=(message.content or ", ".join(c.name for c in message.tool_calls))[:80],
        data_class=_max_class("internal", data_class or "internal"),
    )


class _Hooks:
    """One request's retry and switch hooks, as three fields and no closures.

    A fake model keeps every request it received, hooks included, for the whole run.
    """

    __slots__ = ("context_event_id", "log", "st")

    def __init__(self, log: EventLog, st: RunState, context_event_id: int) -> None:
        self.log, self.st, self.context_event_id = log, st, context_event_id

    def attempt(self, item: Any) -> None:
        self._note("model.retry", item)

    def switch(self, item: Any) -> None:
        self._note("model.switch", item)

    def _note(self, kind: str, item: Any) -> None:
        data = item.to_dict()
        st = self.st
        self.log.append(
            kind,
            {"step": st.step, "context_event_id": self.context_event_id, **data},
            branch_id=st.branch_id,
            summary=str(data.get("error") or f"{data.get('old')} -> {data.get('new')}")[:80],
        )


def model_hooks(
    log: EventLog, st: RunState, context_event_id: int
) -> tuple[Callable[[Any], None], Callable[[Any], None]]:
    """`ModelRequest` hooks that log retries and switches as events (R-M3, R-M5).

    Returns:
        `(on_attempt, on_switch)`: each appends `model.retry` / `model.switch` with the
        models' `Attempt` / `Switch` and the context.injected event (re-)sent.
    """
    hooks = _Hooks(log, st, context_event_id)
    return hooks.attempt, hooks.switch


def tool_calls(
    log: EventLog,
    st: RunState,
    calls: tuple[ToolCall, ...],
    logged: dict[str, int],
    data_class: str = "internal",
) -> dict[str, int]:
    """Append `tool.call` for each call not in `logged`.

    Args:
        log: the run's log.
        st: the run's state.
        calls: the step's calls.
        logged: `{tool_call_id: event_id}` of calls already in the log (on resume).
        data_class: the class of the `model.response` that made the calls (R-S2: its
            arguments may restate what its request carried).

    Returns:
        `{tool_call_id: tool.call event id}` for every call.
    """
    events = dict(logged)
    for c in calls:
        if c.id not in events:
            events[c.id] = tool_call(log, st, c, data_class).event_id
    return events


def tool_call(log: EventLog, st: RunState, call: ToolCall, data_class: str = "internal") -> Event:
    """Append `tool.call` (of `data_class`) and return the event (its id parents the result)."""
    args = call.raw_arguments or "" if call.arguments is None else _json(call.arguments)
    return log.append(
        "tool.call",
        {
            "step": st.step,
            "tool": call.name,
            "tool_call_id": call.id,
            "arguments": call.arguments,
            "raw_arguments": call.raw_arguments if call.arguments is None or call.repair else None,
            **({"repair": call.repair} if call.repair else {}),
            **({"parse_error": call.parse_error} if call.parse_error else {}),
        },
        branch_id=st.branch_id,
        source="model",
        input_hash=hash_json([call.name, call.arguments]),
        summary=f"{call.name}({args})"[:80],
        data_class=data_class,
    )


def tool_result(
    log: EventLog,
    st: RunState,
    ex: Executed,
    parent: int,
    revision: str | None,
    *,
    floor: str | None = None,
) -> None:
    """Append a call's `tool.result`, preceded by the records emitted with it.

    Emitted events that become messages (`AFTER_TURN`) follow the whole turn (`emitted`).
    `r.meta["data_class"]` (set by the transport for a result carrying an artifact's summary
    or an answer read from one, R-S2) is the class of the `tool.result` event and of the
    records emitted with it (the `artifact.created` holding its preview), not a payload key.
    `floor` (the class of the values bound into the call's arguments, `Binder.bound_class`)
    raises that class: what a tool makes of restricted values is restricted.
    """
    r = ex.result
    meta = r.meta
    data_class = "internal"
    if "data_class" in meta:
        meta = dict(meta)
        data_class = meta.pop("data_class")
    if floor is not None:
        data_class = _max_class(data_class, floor)
    for type_, payload in ex.emitted:
        if type_ not in AFTER_TURN:
            log.append(
                type_,
                {"step": st.step, "tool_call_id": r.tool_call_id, **payload},
                parent_id=parent,
                branch_id=st.branch_id,
                source="tool",
                data_class=data_class,
            )
    log.append(
        "tool.result",
        {
            "step": st.step,
            "tool": r.name,
            "tool_call_id": r.tool_call_id,
            "ok": r.ok,
            "content": r.content,
            "error_type": r.error_type,
            "seconds": round(r.duration_seconds, 6),
            **meta,
        },
        parent_id=parent,
        branch_id=st.branch_id,
        source="tool",
        data_class=data_class,
        summary=(r.content if r.ok else f"{r.error_type}: {r.message}")[:80],
        workspace_revision=revision,
    )


def brake(log: EventLog, st: RunState, tripped: BrakeTripped) -> None:
    """Append `brake`: which limit ended the run, at what value."""
    name, value, limit, unit = tripped.brake, tripped.value, tripped.limit, tripped.unit
    log.append(
        "brake",
        {"step": st.step, "brake": name, "value": value, "limit": limit, "unit": unit},
        branch_id=st.branch_id,
        summary=f"{name}: {value:g} {unit} >= {limit}",
    )


def finished(log: EventLog, st: RunState, seconds: float, extra: dict[str, Any]) -> None:
    """Append `run.finished` with the totals of the run."""
    log.append(
        "run.finished",
        {
            "step": st.step,
            "finish_reason": st.finish_reason,
            "incomplete": st.incomplete,
            "prompt_tokens": st.prompt_tokens,
            "completion_tokens": st.completion_tokens,
            "seconds": round(seconds, 6),
            **extra,
        },
        branch_id=st.branch_id,
        summary=f"finished: {st.finish_reason}",
    )


_json = json_text  # json.dumps(value, ensure_ascii=False, default=str), one reused encoder


#: Emitted events that become chat messages of their own: logged after the turn's tool block,
#: since providers refuse any message between an assistant message and its tool messages.
#: Other emitted events (records such as `artifact.created`, `checkpoint`) precede the result.
AFTER_TURN = frozenset({"user.message", "human.decision"})


def emitted(
    log: EventLog,
    st: RunState,
    executed: Sequence[Executed],
    call_events: dict[str, int],
    floors: dict[str, str] | None = None,
) -> None:
    """Append the message-like events the turn's tools emitted, after the whole tool block.

    Providers require an assistant message's tool messages to follow it directly, so a tool's
    side-channel content (an attachment as a `user.message`) comes after the last result of
    the turn, once per emit, naming the call it came from. Each is of its call's result's
    class (R-S2: `r.meta["data_class"]`, raised to `floors[tool_call_id]`, see `tool_result`).
    """
    for ex in executed:
        r = ex.result
        data_class = _max_class(
            r.meta.get("data_class", "internal"), (floors or {}).get(r.tool_call_id, "public")
        )
        for type_, payload in ex.emitted:
            if type_ not in AFTER_TURN:
                continue
            data = {"step": st.step, "tool_call_id": r.tool_call_id, **payload}
            if type_ == "user.message" and isinstance(data.get("content"), str):
                data["content"] = f"[from tool call {r.tool_call_id} ({r.name})] {data['content']}"
            log.append(
                type_,
                data,
                parent_id=call_events.get(r.tool_call_id),
                branch_id=st.branch_id,
                source="tool",
                data_class=data_class,
            )
