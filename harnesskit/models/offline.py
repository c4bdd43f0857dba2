"""Offline models shipped in the package: scripted turns, a Python policy, recorded replay.

These are the embedded default (R-M1): notebooks, tests and the demo run on them with no
network and no keys.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn, overload

from harnesskit.errors import UsageError
from harnesskit.messages import (
    Message,
    ModelRequest,
    ModelResponse,
    StreamDelta,
    ToolCall,
    known_prefix,
)
from harnesskit.models._options import check_callback
from harnesskit.models.base import register_provider

__all__ = ["FunctionModel", "ReplayModel", "Requests", "ScriptedModel", "as_response"]

Turn = str | Message | ModelResponse | ToolCall | Sequence[ToolCall] | dict[str, Any]


def as_response(turn: Turn, *, model: str, ids: Iterable[int] | None = None) -> ModelResponse:
    """Coerce one scripted turn into a `ModelResponse`.

    Args:
        turn: text (`str`), an assistant `Message`, a `ModelResponse`, one `ToolCall` or a
            list of them, or a chat-completions assistant message dict.
        model: the name recorded in the response.
        ids: a counter used to give tool calls without an id a deterministic one (`call_N`).

    Raises:
        UsageError: the turn is none of those shapes, a dict turn has a field of the wrong
            type (named in the message), or a call's arguments cannot be encoded as JSON.
    """
    if isinstance(turn, ModelResponse):
        for call in turn.message.tool_calls:
            if call.raw_arguments is None and call.arguments:
                _check_encodable(call)
        return turn
    if isinstance(turn, str):
        message = Message(role="assistant", content=turn)
    elif isinstance(turn, Message):
        message = turn
    elif isinstance(turn, ToolCall):
        message = Message(role="assistant", tool_calls=(turn,))
    elif isinstance(turn, dict):
        try:
            message = Message.from_openai({"role": "assistant", **turn})
        except UsageError as exc:
            keys = ", ".join(sorted(map(str, turn)))
            raise UsageError(f"the model turn with keys [{keys}] is not a message: {exc}") from None
    elif isinstance(turn, Sequence) and all(isinstance(c, ToolCall) for c in turn):
        calls = tuple(c for c in turn if isinstance(c, ToolCall))  # narrows for the checker
        message = Message(role="assistant", tool_calls=calls)
    else:
        raise UsageError(
            f"cannot use {type(turn).__name__} as a model turn; give text, a Message, a "
            "ModelResponse, a ToolCall (or list of them) or a chat-completions dict"
        )
    if message.role != "assistant":
        raise UsageError(f"a model turn must be an assistant message, got role {message.role!r}")
    for call in message.tool_calls:
        if call.raw_arguments is None and call.arguments:  # sent and logged as JSON text later
            _check_encodable(call)
    if ids is not None and any(not c.id for c in message.tool_calls):
        counter = iter(ids)
        calls = tuple(
            c if c.id else _with_id(c, f"call_{next(counter)}") for c in message.tool_calls
        )
        message = Message(role="assistant", content=message.content, tool_calls=calls)
    reason = "tool_calls" if message.tool_calls else "stop"
    return ModelResponse(message=message, finish_reason=reason, model=model)


def emit_deltas(response: ModelResponse, on_delta: Callable[[StreamDelta], None] | None) -> None:
    """Play a finished answer to `on_delta` as a stream would: `start`, the text, each call.

    Args:
        response: the answer.
        on_delta: the request's delta callback; `None` does nothing.
    """
    if on_delta is None:
        return
    on_delta(StreamDelta(kind="start"))
    message = response.message
    if message.content:
        on_delta(StreamDelta(kind="text", text=message.content))
    for i, call in enumerate(message.tool_calls):
        raw = call.raw_arguments or ""
        on_delta(
            StreamDelta(kind="tool_call", text=raw, index=i, name=call.name, tool_call_id=call.id)
        )


_MESSAGES: Any = ModelRequest.__dict__["messages"]


@functools.cache
def _request_slots() -> tuple[tuple[Any, Any], ...]:
    """`(get, set)` of each `ModelRequest` slot (the descriptors; set bypasses frozen)."""
    names = [f.name for f in dataclasses.fields(ModelRequest)]
    return tuple(
        (ModelRequest.__dict__[n].__get__, ModelRequest.__dict__[n].__set__) for n in names
    )


def _without_messages(request: ModelRequest) -> ModelRequest:
    """A copy of `request` with `messages=()`, slot by slot.

    A third of the cost of `dataclasses.replace`: the request was checked when it was made.
    """
    bare = object.__new__(ModelRequest)
    for get, put in _request_slots():
        put(bare, get(request))
    _MESSAGES.__set__(bare, ())
    return bare


class Requests(Sequence[ModelRequest]):
    """The requests a fake model received, in order: a list whose memory stays flat.

    Read-only but for `clear()` (a long benchmark or notebook empties it between runs):
    `append`, `extend`, `insert`, `pop`, `remove`, `sort`, `reverse`, `+=` and item
    assignment or deletion raise `UsageError`. Indexing is a list's: an int (negative from the
    end) or a slice (a list); any other index is a `TypeError`, as for a list.

    A run's prompts grow by a few messages a step; keeping each request's whole message tuple
    would hold a quadratic number of references (which every full garbage collection walks).
    A request whose messages provably extend the previous one's (`known_prefix`: the context
    builder's verbatim prompts) shares one list of messages with it; any other is kept as sent.
    Reading an item gives a `ModelRequest` equal to the one received (fields the same objects,
    `messages` a tuple of the same messages); the newest item is the very object received.
    """

    def __init__(self) -> None:
        """An empty list."""
        self.clear()

    def clear(self) -> None:
        """Forget every request kept so far (as `list.clear`: the list it replaces had it)."""
        # per request: itself without its messages, and the messages it was sent, `kept[:n]`
        # (three parallel lists: no tuple per request for the garbage collector to walk)
        self._bare: list[ModelRequest] = []
        self._kept: list[Sequence[Message]] = []
        self._n: list[int] = []
        self._newest: ModelRequest | None = None  # the newest request itself, as received
        self._last: tuple[Message, ...] = ()  # its messages
        self._spine: list[Message] | None = None  # the newest request's shared list, if any

    def _keep(self, request: ModelRequest) -> None:
        """Keep `request` (the models call this; O(new messages) when the prompt grew)."""
        messages, last, spine = request.messages, self._last, self._spine
        if self._bare and known_prefix(last, messages):
            if spine is None:  # else `spine` holds `last` exactly: it grew with each request
                spine = self._spine = list(last)  # a shared list from here on
            spine.extend(messages[len(spine) :])
            kept: Sequence[Message] = spine
        else:
            kept, self._spine = messages, None
        self._bare.append(_without_messages(request))
        self._kept.append(kept)
        self._n.append(len(messages))
        self._newest, self._last = request, messages

    def __len__(self) -> int:
        return len(self._bare)

    @overload
    def __getitem__(self, index: int) -> ModelRequest: ...

    @overload
    def __getitem__(self, index: slice) -> list[ModelRequest]: ...

    def __getitem__(self, index: int | slice) -> ModelRequest | list[ModelRequest]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        try:
            index = operator.index(index)  # 1.0 is no index (`1.0 == 1` would pass below)
        except TypeError:
            raise TypeError(
                f"Requests indices must be integers or slices, not {type(index).__name__}"
            ) from None
        if self._newest is not None and index in (-1, len(self._bare) - 1):
            return self._newest  # the very object received (`requests[-1] is ...`)
        kept, n = self._kept[index], self._n[index]
        return dataclasses.replace(self._bare[index], messages=tuple(kept[:n]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Requests | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))  # as the plain list it replaces

    def _read_only(self, what: str) -> NoReturn:
        raise UsageError(
            f"model.requests is read-only (the requests the model received); {what} is not "
            "allowed. Only clear() is (to empty it between runs); copy it first to edit: "
            "list(model.requests)"
        )

    def append(self, request: Any) -> NoReturn:
        """Refused: the list is read-only (`UsageError`)."""
        self._read_only("append")

    def extend(self, requests: Any) -> NoReturn:
        """Refused: the list is read-only (`UsageError`)."""
        self._read_only("extend")

    def insert(self, index: Any, request: Any) -> NoReturn:
        """Refused: the list is read-only (`UsageError`)."""
        self._read_only("insert")

    def pop(self, index: Any = -1) -> NoReturn:
        """Refused: the list is read-only (`UsageError`)."""
        self._read_only("pop")

    def remove(self, request: Any) -> NoReturn:
        """Refused: the list is read-only (`UsageError`)."""
        self._read_only("remove")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Refused: the list is read-only (`UsageError`)."""
        self._read_only("sort")

    def reverse(self) -> NoReturn:
        """Refused: the list is read-only (`UsageError`)."""
        self._read_only("reverse")

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        self._read_only("item assignment")

    def __delitem__(self, index: Any) -> NoReturn:
        self._read_only("item deletion")

    def __iadd__(self, other: Any) -> NoReturn:
        self._read_only("+=")


def _check_encodable(call: ToolCall) -> None:
    try:
        json.dumps(call.arguments)
    except (TypeError, ValueError, RecursionError) as exc:
        why = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
        raise UsageError(
            f"the model turn's call {call.name!r:.80} has arguments that cannot be encoded as "
            f"JSON ({why:.120}); give a JSON object of plain values"
        ) from None


def _with_id(call: ToolCall, new_id: str) -> ToolCall:
    return dataclasses.replace(call, id=new_id)


class ScriptedModel:
    """Answers with a fixed list of turns, in order, whatever it is sent.

    Running out of turns raises `UsageError` (not `IndexError`) naming how many were scripted.
    `requests` keeps every `ModelRequest` received, for tests that inspect what was sent
    (`Requests`: a read-only list whose memory grows with the new messages only).
    """

    def __init__(self, turns: Sequence[Turn], *, name: str = "scripted") -> None:
        """Create the model.

        Args:
            turns: the answers, in order (see `as_response` for accepted shapes).
            name: the model name recorded in events.
        """
        if isinstance(turns, str | bytes) or not isinstance(turns, Sequence):
            raise UsageError(
                f"ScriptedModel takes a list of turns, got {type(turns).__name__}; "
                'e.g. ScriptedModel(["hello"]) for one text answer'
            )
        self.name = name
        self._ids = itertools.count(1)
        self._turns = []
        for i, turn in enumerate(turns):
            try:
                self._turns.append(as_response(turn, model=name, ids=self._ids))
            except UsageError as exc:
                raise UsageError(f"ScriptedModel turn {i}: {exc}") from None
        self._next = 0
        self._received = 0  # requests received in all (`requests.clear()` does not reset it)
        self.requests = Requests()

    @property
    def remaining(self) -> int:
        """How many scripted turns are left."""
        return len(self._turns) - self._next

    def request(self, request: ModelRequest) -> ModelResponse:
        """Return the next scripted turn.

        Raises:
            UsageError: every scripted turn was already used.
        """
        self.requests._keep(request)
        self._received += 1
        if self._next >= len(self._turns):
            raise UsageError(
                f"ScriptedModel ran out of turns: all {len(self._turns)} were used and request "
                f"{self._received} (step {request.step}) asked for another; script more turns "
                "(a brake's closing request needs one too)"
            )
        turn = self._turns[self._next]
        self._next += 1
        emit_deltas(turn, request.on_delta)
        return turn

    def __repr__(self) -> str:
        return f"ScriptedModel(turns={len(self._turns)}, remaining={self.remaining})"


class FunctionModel:
    """A model whose answers come from a Python policy `fn(messages, info) -> turn`.

    `info` is the `ModelRequest` (tools, step, final flag, run id). The returned turn may be
    any shape `as_response` accepts. `requests` keeps every `ModelRequest` received
    (`Requests`: a read-only list whose memory grows with the new messages only).
    """

    def __init__(
        self, fn: Callable[[tuple[Message, ...], ModelRequest], Turn], *, name: str = "function"
    ) -> None:
        """Create the model.

        Args:
            fn: the policy; called once per request with `(messages, info)`.
            name: the model name recorded in events.

        Raises:
            UsageError: `fn` is not callable or does not take two positional arguments.
        """
        check_callback("FunctionModel", "fn", fn, (None, None), "(messages, info) -> turn")
        self.name = name
        self.fn = fn
        self._ids = itertools.count(1)
        self.requests = Requests()

    def request(self, request: ModelRequest) -> ModelResponse:
        """Call the policy and coerce its answer.

        Raises:
            UsageError: the policy returned a shape that is not a turn (named with the step).
        """
        self.requests._keep(request)
        turn = self.fn(request.messages, request)
        try:
            return as_response(turn, model=self.name, ids=self._ids)
        except UsageError as exc:
            raise UsageError(f"{self!r} at step {request.step}: {exc}") from None

    def __repr__(self) -> str:
        return f"FunctionModel({getattr(self.fn, '__name__', 'fn')})"


class ReplayModel(ScriptedModel):
    """Replays recorded responses (e.g. read from an event log) in order (R-V7).

    Identical to `ScriptedModel` except that its name defaults to `"replay"`; divergence
    reports (recorded vs recomputed tool results) are made by the replay drivers that feed it
    (e.g. `harnesskit.domains.airline.replay`, `harnesskit.log.trajectory`).
    """

    def __init__(self, responses: Sequence[Turn], *, name: str = "replay") -> None:
        """Create the model from recorded responses (any shape `as_response` accepts)."""
        super().__init__(responses, name=name)


register_provider("scripted", lambda name="", **kw: ScriptedModel(kw.pop("turns", []), **kw))


def _function_factory(name: str = "", **kw: Any) -> FunctionModel:
    if "fn" not in kw:
        raise UsageError(
            "get_model('function', fn=policy) needs fn: a function (messages, info) -> turn"
        )
    return FunctionModel(kw.pop("fn"), **kw)


register_provider("function", _function_factory)
register_provider("replay", lambda name="", **kw: ReplayModel(kw.pop("responses", []), **kw))
