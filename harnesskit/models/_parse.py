"""Tolerant parsing of chat-completions answers at the edge (R-M2, R-M4).

`parse_completion(body, ...)` turns a response body into a `ModelResponse` or raises
`ModelError` (the body is not a completion: not JSON, an error object) or `ModelOutputError`
(a completion with nothing usable in it). It never raises anything else, whatever the body.

What it repairs, and how it records it:

- arguments given as a JSON string, an object, a double-encoded string, `null` or nothing;
- missing, empty or duplicate call ids (also ids already used earlier in the conversation)
  are replaced by fresh unique ids; the provider's id is kept in `ToolCall.original_id`;
- tool calls written in the message text (a markdown fence, `<tool_call>` tags, Mistral's
  `[TOOL_CALLS]`, or a bare JSON object among prose) become `ToolCall(recovered=True)` and the
  recovered span is removed from the text; bare JSON in prose, and a fence in a reply whose
  `finish_reason` is not `tool_calls`, count only when they name offered tools, so a model
  quoting JSON (a function definition it was asked for) is not mistaken for a call;
- one cut rule (`cut_finish`, or `usage.completion_tokens` reaching the request's
  `max_tokens`): arguments that do not parse in a cut reply get `parse_error="truncated"`,
  so the executor answers `truncated_call` with a hint to raise the output limit, and a cut
  answer without calls has `finish_reason` `length` (the run ends incomplete);
- invented tool names are passed on unchanged (the executor answers `unknown_tool`);
- an OpenAI refusal (`message.refusal` with `content` null) is the answer's text, and the
  reply's `finish_reason` is `content_filter` (the run ends so, as a filtered answer does);
- a filtered finish (`filtered_finish`: `content_filter`, Gemini's `SAFETY`, ... any case) is
  recorded as `content_filter`, with or without tool calls: the loop never runs the calls of a
  reply the provider's filter stopped (it may have cut or withheld part of it).

Only text inside a fence or tag is parsed leniently (with `json_repair`: single quotes,
trailing commas, Python literals), never structured `arguments`: there a parse failure goes
back to the model as `invalid_argument`, which lets it fix its own call instead of the runtime
guessing what it meant.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

from harnesskit import _json
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import ModelError, ModelOutputError
from harnesskit.messages import Message, ModelResponse, ToolCall, Usage

__all__ = [
    "CUT_FINISH_REASONS",
    "FAILED_FINISH_REASONS",
    "FILTERED_FINISH_REASONS",
    "MALFORMED_CALL_FINISH_REASONS",
    "ProviderError",
    "body_error",
    "error_from_object",
    "call_id_factory",
    "content_text",
    "cut_finish",
    "failed_finish",
    "filtered_finish",
    "json_kind",
    "malformed_call_finish",
    "parse_completion",
    "parse_usage",
    "provider_error",
    "recover_calls",
]

TRUNCATED = "truncated"

#: A markdown fence's opening: 3+ backticks or tildes, a language word, the rest of its line.
_FENCE = re.compile(r"(`{3,}|~{3,})[ \t]*([\w.+-]*)[^\n`]*\n?")
_CLOSE = {"`": re.compile("`{3,}"), "~": re.compile("~{3,}")}
_SCAN = json.JSONDecoder(parse_constant=lambda _: None)
_TAG = re.compile(
    r"<(tool_call|tool_calls|function_call|functioncall|function_calls)>\s*(.*?)\s*(?:</\1>|\Z)",
    re.S | re.I,
)
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*(.*)", re.S)
_NAME = re.compile(r"\"(?:name|tool|tool_name|function)\"\s*:\s*\"([^\"]+)\"")
#: A provider's words for a prompt longer than the model's context (OpenAI, vLLM, SGLang,
#: llama.cpp, TGI, Anthropic, Ollama).
_CONTEXT_LENGTH = re.compile(
    r"maximum context length|context (?:length|window|size) (?:is |was |has been )?exceeded"
    r"|exceeds? (?:the )?(?:available |model'?s? |maximum )?context"
    r"|longer than the model'?s? (?:maximum )?context|prompt is too long"
    r"|context_length_exceeded|exceed_context_size",
    re.I,
)
_START = re.compile(r"\{|\[(?=\s*\{)")
_MAX_STARTS = 200
_MAX_LENIENT_CHARS = 20_000
_NAME_KEYS = ("name", "tool_name", "tool", "function_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input")


def call_id_factory(seed: str) -> Callable[[], str]:
    """Replacement call ids for calls whose provider id was missing, empty or duplicate.

    The ids derive from `seed` (the loop passes `"<run_id>:<step>"`) and a counter, so two
    runs with the same inputs get the same ids (issue 13, part 7).

    Args:
        seed: any text naming the request, e.g. `"run-1:3"`.

    Returns:
        A function returning `call_hk_<12 hex of sha256(seed)>_<n>` with n = 1, 2, ... per call.
    """
    stem = f"call_hk_{hashlib.sha256(seed.encode()).hexdigest()[:12]}_"
    counter = itertools.count(1)
    return lambda: f"{stem}{next(counter)}"


@frozen_dataclass
class ProviderError:
    """What a provider said in an error body."""

    message: str
    code: str | None = None
    type: str | None = None
    failed_generation: str | None = None


def provider_error(text: str) -> ProviderError:
    """Read an error body (`{"error": {...}}`, `{"detail": ...}` or plain text)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return ProviderError(text.strip()[:1000] or "(empty body)")
    return error_from_object(data, text)


def error_from_object(data: Any, text: str = "") -> ProviderError:
    """Read a decoded error body; `text` is the fallback message.

    A message saying the prompt does not fit the model's context, sent with no code or with
    code 400, gets the code `context_length_exceeded` (classified as HTTP 400: not retried).
    """
    err = data.get("error", data) if isinstance(data, dict) else None
    if isinstance(err, str):
        return ProviderError(err)
    if not isinstance(err, dict):
        return ProviderError(text.strip()[:1000] or "(empty body)")
    message = err.get("message") or err.get("detail") or err.get("msg")
    if not isinstance(message, str):
        message = _snippet(message if message is not None else err)[:1000]
    code = err.get("code")
    code = str(code) if isinstance(code, (str, int)) and not isinstance(code, bool) else None
    if (code is None or code.strip() == "400") and _CONTEXT_LENGTH.search(message):
        # vLLM, SGLang, llama.cpp and TGI name no code (or only 400) for a prompt too long for
        # the model: named as OpenAI names it, so the error says what happened
        code = "context_length_exceeded"
    failed = err.get("failed_generation")
    return ProviderError(
        message,
        code=code,
        type=err.get("type") if isinstance(err.get("type"), str) else None,
        failed_generation=failed if isinstance(failed, str) else None,
    )


def body_error(data: Any, text: str = "") -> ProviderError | None:
    """The provider error a response body or stream chunk reports, or `None` for none.

    An `error` holding anything (`"error": null` is none), alone or next to `choices`; a body
    that is itself an error object (`"object": "error"` with `message`, `type` and `code` at
    the top, as vLLM, SGLang and FastChat send with HTTP 200 or in a stream, or a
    Responses-style `"type": "error"` with a `message`); or a first choice ended with a
    finish reason saying the generation failed (`failed_finish`: vLLM's and SGLang's `abort`,
    vLLM's and OpenRouter's `error`, any case; the text so far is a fragment). `text` is the
    fallback message, as for `error_from_object`.
    """
    if not isinstance(data, dict):
        return None
    if data.get("error"):
        return error_from_object(data, text)
    if data.get("object") == "error" or (data.get("type") == "error" and "message" in data):
        # vLLM, SGLang, FastChat, and a Responses-style error event: the body is the error
        return error_from_object({"error": data}, text)
    choices = data.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        if (
            isinstance(choice, dict)
            and choice.get("index") in (0, None)
            and failed_finish(choice.get("finish_reason"))
        ):
            finish = choice["finish_reason"].strip()[:40]
            return ProviderError(
                f'the answer ended with finish_reason "{finish}": the generation failed '
                "mid-answer (aborted, or an error on the provider's side)"
            )
    return None


def parse_usage(data: Any) -> Usage | None:
    """Read token counts as the providers name them; `None` when none were reported.

    Cached prompt tokens come from `prompt_tokens_details.cached_tokens` (OpenAI, vLLM,
    LiteLLM), `prompt_cache_hit_tokens` (DeepSeek), `cached_tokens` or
    `cache_read_input_tokens`. When a provider's `total_tokens` exceeds prompt + completion
    (hidden reasoning tokens left out of `completion_tokens`, as Gemini's compatible endpoint
    does), the difference is added to `completion_tokens` so that `total_tokens` matches the
    provider's bill.
    """
    if not isinstance(data, dict):
        return None
    prompt = _int(data.get("prompt_tokens", data.get("input_tokens")))
    completion = _int(data.get("completion_tokens", data.get("output_tokens")))
    total = _int(data.get("total_tokens"))
    if not prompt and not completion:
        return None
    if total > prompt + completion:
        completion = total - prompt
    details = data.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    for key in ("prompt_cache_hit_tokens", "cached_tokens", "cache_read_input_tokens"):
        cached = cached or _int(data.get(key))
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached)


def parse_completion(
    body: Any,
    *,
    model: str,
    tool_names: Sequence[str] = (),
    taken_ids: Collection[str] = (),
    new_id: Callable[[], str] | None = None,
    max_tokens: int | None = None,
    exact: Any = None,
) -> ModelResponse:
    """Turn a chat-completions response body into a `ModelResponse`.

    Args:
        body: the decoded JSON body (any value: it is checked here).
        model: the model name to record when the body names none.
        tool_names: names of the tools offered; enables recovery of calls written as text.
        taken_ids: call ids already used in the conversation; a reused one is replaced.
        new_id: factory for replacement call ids; default `call_id_factory("")`.
        max_tokens: the request's output limit (tokens); a reply whose `completion_tokens`
            reached it counts as cut off (like `finish_reason="length"`), and the truncation
            error quotes the value.
        exact: the same body decoded with its out-of-range numbers kept as infinite floats
            (where `body` has `null`), or `None` when it holds none. It is read instead of
            `body`, so that a tool call whose object arguments hold `1e999` is refused
            (`invalid_argument`) instead of reaching the tool with `null`.

    Returns:
        The normalized response; `raw` is `body`. Its `finish_reason` is the choice's, `None`
        when the choice has none (or `null`, or ""). A refusal (`message.refusal`, no content)
        is the message's text, and `finish_reason` is `content_filter` when the provider said
        `stop` or nothing. An answer without tool calls that was cut at the output limit (a
        cut word of `CUT_FINISH_REASONS` in any case, or `usage.completion_tokens` reaching
        `max_tokens`) has `finish_reason` `length`, whatever the provider said. A reply
        under a filtered finish reason (`filtered_finish`) has `finish_reason`
        `content_filter`, with or without tool calls.

    Raises:
        ModelError: the body is not a chat completion (not an object), or it reports a
            provider error (an `error` object, or a failed finish such as `abort`).
        ModelOutputError: a completion with no choice or no message in it, or whose message
            content is neither text nor a list of text parts (a number, an object).
    """
    if not isinstance(body, dict):
        raise ModelError(
            f"response body is a {type(body).__name__}, not a chat-completion object",
            model=model,
            body=_snippet(body),
        )
    err = body_error(body)
    if err is not None:
        raise ModelError(f"provider error: {err.message}", model=model, body=_snippet(body))
    raw_body, body = body, exact if isinstance(exact, dict) else body
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelOutputError(
            "the completion has no choices; the model produced no answer",
            model=model,
            body=_snippet(body),
        )
    # the answer is the choice with index 0 (providers may list choices in any order); a
    # choice without an index is taken where it stands
    choice = next((c for c in choices if isinstance(c, dict) and _index(c) == 0), choices[0])
    message = choice.get("message")
    if not isinstance(message, dict):
        message = choice.get("delta") if isinstance(choice.get("delta"), dict) else None
    if message is None:
        raise ModelOutputError(
            "the completion's first choice has no message", model=model, body=_snippet(body)
        )
    finish = choice.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise ModelOutputError(
            f"the completion's finish_reason is a JSON {_json_kind(finish)}, not a string",
            model=model,
            body=_snippet(body),
        )
    finish = said = finish or None
    content, wrong = content_text(message.get("content"))
    if wrong is not None:
        raise ModelOutputError(f"the message {wrong}", model=model, body=_snippet(body))
    refusal = message.get("refusal")
    refused = not content and isinstance(refusal, str) and bool(refusal.strip())
    if refused:  # OpenAI's refusal (content null): the model's answer is that it declines
        content = refusal
    usage = parse_usage(body.get("usage"))
    # one cut rule for text and tool arguments: the provider's cut word, or the usage figure
    reached = max_tokens is not None and usage is not None and usage.completion_tokens >= max_tokens
    cut = _Cut(cut_finish(finish) or reached, max_tokens)
    raw_calls = message.get("tool_calls")
    if raw_calls is None and isinstance(message.get("function_call"), dict):
        raw_calls = [{"function": message["function_call"]}]  # the legacy single-call field
    if raw_calls is not None and not isinstance(raw_calls, list):
        raw_calls = [raw_calls]  # one call object, or a bare name: answered as a malformed call
    calls = (
        [_call(c, cut) if isinstance(c, dict) else _malformed_call(c) for c in raw_calls]
        if isinstance(raw_calls, list)
        else []
    )
    original = None
    if not calls and content and tool_names:
        recovered, remaining = recover_calls(
            content, tool_names, finish_reason="length" if cut.cut_off else finish
        )
        if recovered:
            original = content
        calls, content = recovered, remaining
    calls = _unique_ids(calls, set(taken_ids), new_id or call_id_factory(""))
    if refused and not calls and finish in (None, "stop"):
        finish = "content_filter"  # a refusal ends the run as a filtered answer does
    elif cut.cut_off and not calls:
        finish = "length"  # an answer cut at the output limit never passes as complete (R-M2)
    elif filtered_finish(finish):
        # Gemini's SAFETY, RECITATION, ...: a filtered reply, also one holding tool calls (the
        # loop runs none of them: the filter may have cut or withheld part of the reply)
        finish = "content_filter"
    # a choice with no finish_reason keeps None: the provider said nothing, and an invented
    # "stop" would pass for its word in the log and in exported traces
    reported = body.get("model")
    name = reported if isinstance(reported, str) and reported else model
    return ModelResponse(
        message=Message(role="assistant", content=content, tool_calls=tuple(calls)),
        usage=usage,
        finish_reason=finish,
        model=name,
        raw=raw_body,
        original_content=original,
        provider_finish_reason=said if said is not None and said != finish else None,
    )


def recover_calls(
    text: str, tool_names: Collection[str], *, finish_reason: str | None = None
) -> tuple[list[ToolCall], str | None]:
    """Find tool calls written in message text.

    Args:
        text: the assistant's text.
        tool_names: names of the offered tools; bare JSON in prose, and a fenced block
            unless `finish_reason` is `tool_calls`, must name only these (else it is text).
        finish_reason: the provider's finish reason; with `"length"` an unparseable block
            becomes a call with `parse_error="truncated"` when its tool name can be read.

    Returns:
        `(calls, remaining_text)`: calls have `recovered=True` and an empty id (ids are given
        later); the remaining text is `None` when nothing but the calls was written.
    """
    calls: list[ToolCall] = []
    spans: list[tuple[int, int]] = []
    for pattern, group in ((_TAG, 2), (_MISTRAL, 1)):
        for m in pattern.finditer(text):
            if any(s <= m.start() < e for s, e in spans):
                continue
            found = _calls_in_block(m.group(group), finish_reason)
            if found:
                calls.extend(found)
                spans.append(m.span())
    for start, end, block in _fences(text):
        if any(s <= start < e for s, e in spans):
            continue
        found = _calls_in_block(block, finish_reason)
        # a fence is read as a call only when it names offered tools, as bare JSON is (a
        # function definition or a product shown in an answer is no call), unless the
        # provider said the reply is a call (`tool_calls`: an invented name gets unknown_tool)
        if finish_reason != "tool_calls" and any(c.name not in tool_names for c in found):
            continue
        if found:
            calls.extend(found)
            spans.append((start, end))
    if not calls:
        for start, end, value in _json_values(text):
            found = [c for c in _calls_from_value(value) if c.name in tool_names]
            if found:
                calls.extend(found)
                spans.append((start, end))
    if not calls:
        return [], text
    rest = text
    for start, end in sorted(spans, reverse=True):
        rest = rest[:start] + rest[end:]
    rest = rest.strip().strip(_json.INVISIBLE).strip()  # a BOM left alone is no text
    return calls, rest or None


def _fences(text: str) -> Iterator[tuple[int, int, str]]:
    """Markdown fenced blocks in `text` as `(start, end, body)`; an unclosed one runs to the end.

    A fence opens with 3+ backticks or tildes and closes with a run of the same character at
    least as long (CommonMark). When the body opens with a JSON value followed by a closing
    run, the block ends there, so a fence inside a string value is not its end; otherwise the
    first closing run ends it. At most `_MAX_STARTS` fences are read.
    """
    pos = 0
    for _ in range(_MAX_STARTS):
        m = _FENCE.search(text, pos)
        if m is None:
            return
        marker = m.group(1)
        close_run = _CLOSE[marker[0]]
        body = m.end()
        first = len(text) - len(text[body:].lstrip())
        close = None
        try:
            end = _SCAN.raw_decode(text, first)[1]
        except (ValueError, RecursionError):
            end = None
        if end is not None:
            after = len(text) - len(text[end:].lstrip())
            close = close_run.match(text, after)
            if close is not None and len(close.group()) < len(marker):
                close = None
            if close is not None:
                yield m.start(), close.end(), text[body:end]
                pos = close.end()
                continue
        for run in close_run.finditer(text, body):
            if len(run.group()) >= len(marker):
                yield m.start(), run.end(), text[body : run.start()]
                pos = run.end()
                break
        else:
            yield m.start(), len(text), text[body:]
            return


def _calls_in_block(block: str, finish_reason: str | None) -> list[ToolCall]:
    block = block.strip()
    if not block:
        return []
    try:
        return _calls_from_value(json.loads(block))
    except (ValueError, RecursionError):
        pass
    values = [v for _, _, v in _json_values(block)]
    if values:
        return [c for v in values for c in _calls_from_value(v)]
    if finish_reason == "length":
        name = _NAME.search(block)
        if name:
            return [
                ToolCall(
                    id="",
                    name=name.group(1),
                    raw_arguments=block,
                    parse_error=TRUNCATED,
                    parse_error_type="truncated_call",
                    recovered=True,
                )
            ]
        return []
    if len(block) > _MAX_LENIENT_CHARS:
        return []
    try:
        import json_repair
    except ImportError:  # pragma: no cover - a declared dependency
        return []
    try:
        value = json_repair.loads(block)
    except Exception:  # a third-party repairer: any failure means "no call here"
        return []
    return _calls_from_value(value)


def _json_values(text: str) -> Iterator[tuple[int, int, Any]]:
    """Top-level JSON objects (or lists of objects) in `text`, with their spans.

    At most `_MAX_STARTS` start positions are tried, so that degenerate output (a model
    repeating `[[[[` for its whole output budget) costs milliseconds, not seconds.
    """
    decoder = json.JSONDecoder()
    end = 0
    for tries, m in enumerate(_START.finditer(text)):
        if tries >= _MAX_STARTS:
            return
        if m.start() < end:
            continue
        try:
            value, stop = decoder.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            continue
        yield m.start(), stop, value
        end = stop


def _calls_from_value(value: Any, depth: int = 0) -> list[ToolCall]:
    if depth > 3:
        return []
    if isinstance(value, list):
        out = [c for v in value for c in _calls_from_value(v, depth + 1)]
        return out if out and len(out) >= len([v for v in value if isinstance(v, dict)]) else []
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("tool_calls"), list):
        return _calls_from_value(value["tool_calls"], depth + 1)
    if isinstance(value.get("function"), dict):
        return _calls_from_value(value["function"], depth + 1)
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if not name or not any(k in value for k in _ARG_KEYS):
        return []
    raw = next(value[k] for k in _ARG_KEYS if k in value)
    read = _arguments(raw, _Cut())
    return [
        ToolCall(
            id="",
            name=name,
            arguments=read.arguments,
            raw_arguments=_raw_text(raw),
            parse_error=read.error,
            parse_hint=read.hint,
            parse_error_type=read.error_type,
            repair=read.repair,
            recovered=True,
        )
    ]


def _call(data: dict[str, Any], cut: _Cut) -> ToolCall:
    fn = data.get("function")
    if fn is None:
        fn = data  # some servers put name/arguments at the top level
    elif not isinstance(fn, dict):
        return _wrong_field(data, "function", fn, 'an object {"name": ..., "arguments": ...}')
    name = fn.get("name")
    if name is not None and not isinstance(name, str):
        return _wrong_field(data, "function name", name, "a string")
    raw = fn.get("arguments", fn.get("parameters"))
    raw_id = data.get("id")
    plain = _json.plain_arguments(raw) if isinstance(raw, str) else None
    if plain is not None:  # well-formed (the common case): what `_arguments` reads, no repair
        return ToolCall(
            id=raw_id if isinstance(raw_id, str) else "",
            name=name if isinstance(name, str) else "",
            arguments=plain,
            raw_arguments=raw,
            original_id=None
            if isinstance(raw_id, str)
            else ("" if raw_id is None else str(raw_id)),
        )
    read = _arguments(raw, cut)
    return ToolCall(
        id=raw_id if isinstance(raw_id, str) else "",
        name=name if isinstance(name, str) else "",
        arguments=read.arguments,
        raw_arguments=_raw_text(raw),
        parse_error=read.error,
        parse_hint=read.hint,
        parse_error_type=read.error_type,
        repair=read.repair,
        original_id=None if isinstance(raw_id, str) else ("" if raw_id is None else str(raw_id)),
    )


_CALL_SHAPE_HINT = (
    'send each tool call as {"id": ..., "type": "function", "function": {"name": '
    '<tool name>, "arguments": <JSON object>}} through the tool-calling interface'
)


def _malformed_call(entry: Any) -> ToolCall:
    """A `tool_calls` entry that is not an object: a call the executor answers with an error.

    A bare string is read as the tool's name (what the model most likely meant); anything else
    leaves the name empty. Either way the call has no arguments, so the model is told what the
    entry should have looked like (R-M2) instead of the entry being dropped.
    """
    kind = "null" if entry is None else type(entry).__name__
    return ToolCall(
        id="",
        name=entry[:200] if isinstance(entry, str) else "",
        raw_arguments=_raw_text(entry),
        parse_error=f"the tool call is {kind}, not an object",
        parse_error_type="invalid_argument",
        parse_hint=_CALL_SHAPE_HINT,
    )


def _wrong_field(data: dict[str, Any], field: str, value: Any, takes: str) -> ToolCall:
    """A call with a field of the wrong type: answered with an error, like `_malformed_call`."""
    raw_id = data.get("id")
    fn = data.get("function")
    name = fn if isinstance(fn, str) else fn.get("name") if isinstance(fn, dict) else None
    return ToolCall(
        id=raw_id if isinstance(raw_id, str) else "",
        name=name[:200] if isinstance(name, str) else "",
        raw_arguments=_raw_text(data),
        parse_error=f"the tool call's {field} is a JSON {_json_kind(value)}, not {takes}",
        parse_error_type="invalid_argument",
        parse_hint=_CALL_SHAPE_HINT,
        original_id=None if isinstance(raw_id, str) else ("" if raw_id is None else str(raw_id)),
    )


#: The finish reasons providers give an answer cut at the output limit, in lower case: OpenAI's
#: `length`, Anthropic's and Gemini's `max_tokens` / `MAX_TOKENS`, the Responses API's
#: `max_output_tokens`, vLLM's `model_length` (the context window), DeepSeek's
#: `insufficient_system_resource` (the answer was interrupted).
CUT_FINISH_REASONS = frozenset(
    {"length", "max_tokens", "max_output_tokens", "model_length", "insufficient_system_resource"}
)
#: The finish reasons providers give an answer their filter stopped, in lower case: OpenAI's
#: `content_filter`, Gemini's `SAFETY`, `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`,
#: `SPII`, `IMAGE_SAFETY`. A reply with one of them is `content_filter`: the run ends so,
#: never as a complete `stop` with the fragment as its answer, and a tool call in it is never
#: run (each is answered "not run"; `run.loop`).
FILTERED_FINISH_REASONS = frozenset(
    {
        "content_filter",
        "safety",
        "recitation",
        "blocklist",
        "prohibited_content",
        "spii",
        "image_safety",
    }
)
#: The finish reasons providers give a generation that failed rather than finished, in lower
#: case: vLLM's `abort` (the engine aborted the request) and `error` (a retryable
#: request-level internal error; `FINISH_REASON_STRINGS` in vllm/v1/engine/__init__.py),
#: SGLang's `abort` (`FINISH_ABORT`), OpenRouter's `error` (a provider failing mid-answer). The
#: text so far is a fragment: the attempt fails as a provider error naming no status does
#: (`body_error`, retried).
FAILED_FINISH_REASONS = frozenset({"abort", "error"})
#: The finish reasons that say the model tried to call a tool and failed, in lower case:
#: Gemini's `MALFORMED_FUNCTION_CALL` (the call it generated is invalid) and
#: `UNEXPECTED_TOOL_CALL` (a call while no tool was enabled), per the `FinishReason` enum of
#: the Gemini API (ai.google.dev/api/generate-content#FinishReason). The client answers them as
#: a `tool_calls` finish without a call: one corrective request, then `ModelOutputError`.
MALFORMED_CALL_FINISH_REASONS = frozenset({"malformed_function_call", "unexpected_tool_call"})


def _said(finish: Any, reasons: frozenset[str]) -> bool:
    """Whether `finish` (as sent, any case and surrounding spaces) is one of `reasons`."""
    return isinstance(finish, str) and finish.strip().lower() in reasons


def cut_finish(finish: str | None) -> bool:
    """Whether a provider's `finish_reason` says the answer was cut at the output limit.

    Args:
        finish: the choice's finish reason as sent (any case), or `None`.

    Returns:
        True for a member of `CUT_FINISH_REASONS`, whatever its case.
    """
    return _said(finish, CUT_FINISH_REASONS)


def filtered_finish(finish: str | None) -> bool:
    """Whether a provider's `finish_reason` says its content filter stopped the reply.

    Args:
        finish: the choice's finish reason as sent (any case), or `None`.

    Returns:
        True for a member of `FILTERED_FINISH_REASONS`, whatever its case.
    """
    return _said(finish, FILTERED_FINISH_REASONS)


def failed_finish(finish: str | None) -> bool:
    """Whether a provider's `finish_reason` says the generation failed (vLLM's `abort`, ...).

    Args:
        finish: the choice's finish reason as sent (any case), or `None`.

    Returns:
        True for a member of `FAILED_FINISH_REASONS`, whatever its case.
    """
    return _said(finish, FAILED_FINISH_REASONS)


def malformed_call_finish(finish: str | None) -> bool:
    """Whether a provider's `finish_reason` says the model's tool call failed (Gemini's).

    Args:
        finish: the choice's finish reason as sent (any case), or `None`.

    Returns:
        True for a member of `MALFORMED_CALL_FINISH_REASONS`, whatever its case.
    """
    return _said(finish, MALFORMED_CALL_FINISH_REASONS)


@frozen_dataclass
class _Cut:
    """Whether the provider stopped at its output limit, and that limit (tokens)."""

    cut_off: bool = False
    max_tokens: int | None = None


def _arguments(raw: Any, cut: _Cut) -> _json.ArgumentsRead:
    if raw is None:
        return _json.ArgumentsRead(arguments={})
    if isinstance(raw, dict):  # an object: refused if it holds inf (a number like 1e999)
        return _json.finite_arguments(raw)
    if not isinstance(raw, str):
        return _json.ArgumentsRead(
            arguments=None,
            error=f"arguments must be a JSON object, got {type(raw).__name__}",
            error_type="invalid_argument",
            hint="send the arguments as one bare JSON object matching the tool's schema",
        )
    if raw.strip() == "null":
        return _json.ArgumentsRead(arguments={})
    return _json.read_arguments(raw, cut_off=cut.cut_off, max_tokens=cut.max_tokens)


def _raw_text(raw: Any) -> str | None:
    if raw is None or isinstance(raw, dict):
        return None
    if isinstance(raw, str):
        return raw
    try:
        return json.dumps(raw, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(type(raw))


def _unique_ids(
    calls: list[ToolCall], taken: set[str], new_id: Callable[[], str]
) -> list[ToolCall]:
    out = []
    for call in calls:
        if call.id and call.id not in taken:
            taken.add(call.id)
            out.append(call)
            continue
        fresh = new_id()
        while fresh in taken:
            fresh = new_id()
        taken.add(fresh)
        original = None if call.recovered else (call.original_id or call.id)
        out.append(
            ToolCall(
                id=fresh,
                name=call.name,
                arguments=call.arguments,
                raw_arguments=call.raw_arguments,
                parse_error=call.parse_error,
                parse_hint=call.parse_hint,
                parse_error_type=call.parse_error_type,
                repair=call.repair,
                recovered=call.recovered,
                original_id=original,
            )
        )
    return out


def content_text(content: Any) -> tuple[str | None, str | None]:
    """Read message content: a string, a list of text parts, or nothing.

    Args:
        content: the `content` of a message or stream delta, as decoded.

    Returns:
        `(text, None)` (text `None` for no content or an empty list), or `(None, what)` where
        `what` says what is wrong ("content is a JSON number, not text ..."): a number, an
        object or a boolean, or a list holding anything but text parts
        (`{"type": "text", "text": "..."}`).
    """
    if content is None or isinstance(content, str):
        return content, None
    if not isinstance(content, list):
        return None, (
            f"content is a JSON {_json_kind(content)}, not text (a string or a list of text parts)"
        )
    parts = []
    for n, part in enumerate(content):
        if (
            not isinstance(part, dict)
            or not isinstance(part.get("text"), str)
            or part.get("type", "text") != "text"
        ):
            kind = _part_kind(part)
            return None, (
                f"content list's part {n} is {kind}, not a text part "
                '({"type": "text", "text": "..."}); the list must hold text parts only'
            )
        parts.append(part["text"])
    return ("".join(parts) if parts else None), None


def _part_kind(part: Any) -> str:
    if part is None:
        return "null"
    if not isinstance(part, dict):
        return f"a JSON {_json_kind(part)}"
    kind = part.get("type", "text")
    if kind != "text":
        return f"a part of type {str(kind)[:40]!r}"
    text = "missing" if "text" not in part else _json_kind(part["text"])
    return f"a text part whose text is {text}"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array" if isinstance(value, list) else "value"


def json_kind(value: Any) -> str:
    """The JSON name of a decoded value's type (`number`, `array`, ...), for error messages."""
    return _json_kind(value)


def _int(value: Any) -> int:
    """A reported token count; 0 (not reported) for anything else, or for a count over 10**15.

    No bill holds so many tokens, and a count that large breaks the frame's 64-bit columns.
    """
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(0, value) if value < 10**15 else 0
    if isinstance(value, float) and value == value and abs(value) < 1e15:
        return max(0, int(value))
    return 0


def _snippet(body: Any) -> str:
    try:
        text = json.dumps(body, default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(body)
    return text[:2000]


def _index(choice: dict[str, Any]) -> int | None:
    """A choice's `index` when it is an int (not a bool), else None."""
    index = choice.get("index")
    return index if index.__class__ is int else None
