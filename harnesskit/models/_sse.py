"""Server-sent events for streamed chat completions.

`sse_data(lines)` turns response lines into the `data` payloads of complete events (blank
keep-alive lines and `:` comments are skipped). `StreamAccumulator` folds the
`chat.completion.chunk` objects into one `chat.completion` body, so that streamed and
non-streamed answers go through the same parser.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from harnesskit import _json
from harnesskit.errors import ModelError, ModelOutputError
from harnesskit.messages import StreamDelta
from harnesskit.models._parse import (
    ProviderError,
    body_error,
    content_text,
    error_from_object,
    json_kind,
)
from harnesskit.models._retry import error_status

__all__ = ["StreamAccumulator", "sse_data", "sse_events"]

DONE = "[DONE]"


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """Yield the `data` payload of each event in an SSE stream.

    Multi-line data fields are joined with newlines; a line without a colon is a field with an
    empty value (a bare `data` line adds an empty line, as the SSE spec says); `event:`, `id:`
    and `retry:` fields, `:` comment lines and blank lines that end no event (keep-alives) are
    ignored, and an event whose data is empty is not dispatched. The payload `[DONE]` is
    yielded like any other.
    """
    for _, payload in sse_events(lines):
        yield payload


def sse_events(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Yield `(event type, data payload)` for each event in an SSE stream.

    As `sse_data`, with the event's `event:` field: `"message"` when it has none (the SSE
    default), `"error"` for the error events Anthropic-style and Responses-style streams send.
    """
    data: list[str] = []
    kind = ""
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                payload = "\n".join(data)
                data = []
                if payload:  # an event whose data is empty is not dispatched (SSE spec)
                    yield kind or "message", payload
            kind = ""  # the event type lasts one event
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")  # no colon: the whole line names the field
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            kind = value
    if data and any(data):  # a stream that ends without the final blank line
        yield kind or "message", "\n".join(data)


class StreamAccumulator:
    """Folds `chat.completion.chunk` payloads into one `chat.completion` body.

    Tool-call deltas are matched to a call by `index`, by `id` only when they carry no index
    (two calls at indexes 0 and 1 sharing an id stay two calls, as in a plain body); a delta
    whose `index` is taken by a call with a different id starts a new call (some servers send
    every call at index 0). A delta with neither continues the last call, except that each
    entry after the first of one chunk's `tool_calls` list is a call of its own, and a delta
    naming a tool after the last call's arguments are whole JSON starts a new call (servers
    that send neither: two calls were merged into one with both objects run together).
    Argument fragments are concatenated in arrival order.

    Args:
        on_delta: called with a `StreamDelta` for each text, reasoning and argument fragment
            as it is folded in (a `start` delta first); `None` for none.
    """

    def __init__(self, on_delta: Callable[[StreamDelta], None] | None = None) -> None:
        self._on_delta = on_delta
        if on_delta is not None:
            on_delta(StreamDelta(kind="start"))
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        """Fragments of an OpenAI `refusal` (the model declining), read as the answer's text."""
        self.other_reasoning: dict[str, list[Any]] = {}
        """Reasoning fragments that are not text, by key, kept as sent (as a plain body keeps
        them): the folded body holds them, the answer's text does not."""
        self.calls: list[Any] = []
        """The turn's `tool_calls` entries in arrival order: calls being folded (objects), and
        entries that are not objects, kept as sent for the parser to answer."""
        self._by_index: dict[Any, int] = {}
        self._by_id: dict[str, int] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.timings: dict[str, Any] | None = None  # llama-server's figures, on its last chunk
        self.model: str | None = None
        self.id: str | None = None
        self.done = False
        self.chunks = 0
        self.choices_seen = False
        """True once a chunk held a choice (a stream of `[DONE]` alone holds no answer)."""
        self.error: ProviderError | None = None
        """The provider error the stream reported (`feed` raised `ModelError` for it)."""

    def fail(self, payload: str) -> None:
        """Take an SSE `event: error` event: the provider failed mid-stream.

        Its data is an error object bare (`{"message": ..., "code": 503}`, Responses-style
        `{"type": "error", ...}`) or wrapped (`{"error": {...}}`, Anthropic-style), or plain
        text; the text streamed so far is a fragment.

        Raises:
            ModelError: always, with the provider's message and the status its code names
                (kept in `error`, classified as an HTTP error is).
        """
        data, err = _json.loads(payload, cleaned=False)
        if err is not None or not isinstance(data, dict):
            said = ProviderError(_json.clean_text(payload.strip()[:1000]) or "(no message)")
        else:
            said = error_from_object(data if data.get("error") else {"error": data}, payload)
        self._raise(said, payload)

    def feed(self, payload: str) -> None:
        """Add one event payload (a JSON chunk, or `[DONE]`).

        Raises:
            ModelError: the payload is not JSON, or it reports a provider error mid-stream
                (an `error` object, also next to `choices`, or a failed finish such as
                `finish_reason: "error"` or `"abort"`; kept in `error`).
            ModelOutputError: the chunk is a completion chunk of the wrong shape (`choices`
                not a list, a choice or its `delta` not an object, a choice or tool-call
                `index` that is not an integer, a `finish_reason` that is not a string,
                `content` that is not text or a list of text parts), as the non-streamed
                parser refuses the same shapes.
        """
        if payload.strip() == DONE:
            self.done = True
            return
        chunk, err = _json.loads(payload, cleaned=False)
        if err is not None:
            raise ModelError(
                f"stream chunk is {err}; the stream was cut or garbled",
                body=_json.clean_text(payload[:2000]),
            )
        if not isinstance(chunk, dict):
            raise ModelError(
                "stream chunk is not a JSON object", body=_json.clean_text(payload[:2000])
            )
        said = body_error(chunk, payload[:1000])  # `"error": null` (some servers send it) is none
        if said is not None:  # also next to `choices`, or as a failed finish (`abort`, `error`)
            self._raise(said, payload)
        self.chunks += 1
        self.id = self.id or _str(chunk.get("id"))
        self.model = self.model or _str(chunk.get("model"))
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]
        choices = chunk.get("choices")
        if choices is None:
            return
        if not isinstance(choices, list):  # what the non-streamed parser says of such a body
            raise ModelOutputError(
                f"stream chunk's choices is a {type(choices).__name__}, not a list; the model "
                "produced no answer",
                body=_json.clean_text(payload[:2000]),
            )
        for choice in choices:
            if not isinstance(choice, dict):
                raise ModelOutputError(
                    f"stream chunk's choice is a {type(choice).__name__}, not an object",
                    body=_json.clean_text(payload[:2000]),
                )
            index = choice.get("index")
            if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
                raise self._wrong("choice's index", index, "an integer", payload)
            if index not in (0, None):
                continue
            self.choices_seen = True
            finish = choice.get("finish_reason")
            if finish is not None and not isinstance(finish, str):
                raise self._wrong("finish_reason", finish, "a string", payload)
            if finish:
                self.finish_reason = finish
            delta = choice.get("delta")
            if delta is None:
                delta = choice.get("message")
            if delta is None:
                continue
            if not isinstance(delta, dict):
                raise ModelOutputError(
                    f"stream chunk's delta is a {type(delta).__name__}, not an object; the "
                    "completion's choice has no message",
                    body=_json.clean_text(payload[:2000]),
                )
            self._feed_delta(delta, payload)

    def _raise(self, said: ProviderError, payload: str) -> None:
        """Keep `said` as the stream's error and raise it as a `ModelError`."""
        self.error = said
        raise ModelError(
            _json.clean_text(f"provider error in stream: {said.message}"),
            status_code=error_status(said.code) if (said.code or "").isdigit() else None,
            body=_json.clean_text(payload[:2000]),
        )

    @staticmethod
    def _wrong(what: str, value: Any, takes: str, payload: str) -> ModelOutputError:
        return ModelOutputError(
            f"stream chunk's {what} is a JSON {json_kind(value)}, not {takes}",
            body=_json.clean_text(payload[:2000]),
        )

    def _feed_delta(self, delta: dict[str, Any], payload: str) -> None:
        emit = self._on_delta
        text, wrong = content_text(delta.get("content"))
        if wrong is not None:  # what the non-streamed parser says of such a message
            raise ModelOutputError(
                f"stream chunk's delta {wrong}", body=_json.clean_text(payload[:2000])
            )
        if text:
            self.content.append(text)
            if emit is not None:
                emit(StreamDelta(kind="text", text=text))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self.refusal.append(refusal)
            if emit is not None:
                emit(StreamDelta(kind="text", text=refusal))
        for key in ("reasoning_content", "reasoning"):
            value = delta.get(key)
            if isinstance(value, str):
                self.reasoning.append(value)
                if emit is not None:
                    emit(StreamDelta(kind="reasoning", text=value))
            elif value is not None:  # kept as sent, as a plain body keeps it (never text)
                self.other_reasoning.setdefault(key, []).append(value)
        calls = delta.get("tool_calls")
        if calls is None:
            return
        if not isinstance(calls, list):
            calls = [calls]
        for position, part in enumerate(calls):
            if isinstance(part, dict):
                self._feed_call(part, payload, first=position == 0)
            else:  # a bare name or a number: the parser makes it a call answered with an error,
                self.calls.append(part)  # in its place among the turn's calls, as unstreamed

    def _feed_call(self, part: dict[str, Any], payload: str, *, first: bool) -> None:
        call_id = part.get("id") if isinstance(part.get("id"), str) and part.get("id") else None
        index = part.get("index")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise self._wrong("tool call index", index, "an integer", payload)
        slot: int | None = None
        if index is not None:  # the index names the call; ids may repeat across calls
            if index in self._by_index:
                known = self.calls[self._by_index[index]].get("id")
                if call_id is None or not known or known == call_id:
                    slot = self._by_index[index]
        elif call_id is not None:
            slot = self._by_id.get(call_id)
        elif first:  # neither: continues the last call, unless it names a new one
            slot = next(
                (i for i in reversed(range(len(self.calls))) if isinstance(self.calls[i], dict)),
                None,
            )
            if slot is not None and _starts_new_call(part, self.calls[slot]):
                slot = None
        # else: a later entry of one chunk's list is another call, as in a plain body
        if slot is None:
            self.calls.append({"type": "function", "function": {"name": "", "arguments": ""}})
            slot = len(self.calls) - 1
        if index is not None:
            self._by_index[index] = slot
        call = self.calls[slot]
        if call_id is not None and not call.get("id"):
            call["id"] = call_id
            self._by_id[call_id] = slot
        fn = part.get("function")
        if fn is None and any(k in part for k in ("name", "arguments", "parameters")):
            fn = part  # name and arguments at the call's top level, read as unstreamed
        target = call["function"]
        if fn is None or not isinstance(target, dict):
            return  # nothing to add, or the call is already known to be malformed
        if not isinstance(fn, dict):  # kept as sent: the parser answers it as a malformed call
            call["function"] = fn
            return
        name = fn.get("name")
        if name is not None and not isinstance(name, str):
            target["name"] = name  # kept: the parser answers the call with the wrong type
        elif name and isinstance(target["name"], str) and name != target["name"]:
            target["name"] += name
        args = fn.get("arguments", fn.get("parameters"))
        if isinstance(args, str):
            if isinstance(target["arguments"], str):
                target["arguments"] += args
        elif args is not None:  # an object is the arguments; anything else is refused later
            target["arguments"] = args
        if self._on_delta is not None:
            piece = args if isinstance(args, str) else ""
            shown = target["name"] if isinstance(target["name"], str) else ""
            self._on_delta(
                StreamDelta(
                    kind="tool_call",
                    text=piece,
                    index=slot,
                    name=shown,
                    tool_call_id=call.get("id") or "",
                )
            )

    def body(self) -> dict[str, Any]:
        """Return the accumulated answer as a non-streamed `chat.completion` body.

        A stream in which no chunk held a choice gives `choices: []`, which the parser refuses
        as it refuses such a non-streamed body (`ModelOutputError`).
        """
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) or None}
        if self.calls:
            message["tool_calls"] = list(self.calls)
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        for key, values in self.other_reasoning.items():
            kept = values[0] if len(values) == 1 else values
            message[key] = [message[key], kept] if key in message else kept
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        out: dict[str, Any] = {
            "object": "chat.completion",
            "choices": [choice] if self.choices_seen else [],
        }
        if self.id:
            out["id"] = self.id
        if self.model:
            out["model"] = self.model
        if self.usage is not None:
            out["usage"] = self.usage
        if self.timings is not None:
            out["timings"] = self.timings
        return out


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _starts_new_call(part: dict[str, Any], last: dict[str, Any]) -> bool:
    """True when a fragment with neither `index` nor `id` names a call after a finished one.

    The last call is finished when it has a name and its arguments are a whole JSON value
    (an object sent as such, or text that parses); a fragment naming a tool then starts the
    next call. A name while the arguments are still open continues the call (servers that
    repeat the name on every fragment, or split it).
    """
    fn = part.get("function")
    if fn is None:
        fn = part
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
        return False
    target = last.get("function")
    if not isinstance(target, dict) or not target.get("name"):
        return False
    args = target.get("arguments")
    if not isinstance(args, str):
        return args is not None
    if not args.strip():
        return False
    _, err = _json.loads(args, cleaned=False)
    return err is None
