"""Value types that travel between the loop, the models and the tools.

`Message`, `ToolCall`, `ToolResult`, `Usage`, `ModelRequest` and `ModelResponse` are frozen
dataclasses. They
convert to and from the OpenAI chat-completions format (`to_openai()` / `from_openai()`)
without loss: a tool call's argument text is kept byte for byte when it came as a string.
This module imports nothing else from harnesskit except `errors`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import field
from typing import Any, Literal

from harnesskit import _json
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import UsageError

__all__ = [
    "DATA_CLASSES",
    "ERROR_TYPES",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "StreamDelta",
    "ToolCall",
    "ToolResult",
    "Usage",
    "check_data_class",
]

Role = Literal["system", "user", "assistant", "tool"]
_ROLES = ("system", "user", "assistant", "tool")

#: The structured error types of R-E1, in the order DESIGN.md lists them.
ERROR_TYPES = (
    "unknown_tool",
    "invalid_argument",
    "not_found",
    "permission_denied",
    "timeout",
    "tool_error",
    "circuit_open",
    "truncated_call",
)


@frozen_dataclass(kw_only=True)
class ToolCall:
    """One tool call requested by the model.

    `arguments` is the parsed object; when the model's argument text could not be parsed it is
    `None` and `parse_error` says why (the executor then answers `invalid_argument` or
    `truncated_call`, never raises).
    """

    id: str
    """The `tool_call_id` that the matching `ToolResult` must carry."""
    name: str
    """The tool name as the model wrote it (possibly a name no tool has)."""
    arguments: dict[str, Any] | None = None
    """Parsed arguments, or `None` when they could not be parsed."""
    raw_arguments: str | None = None
    """The argument text exactly as received, when it came as a string."""
    parse_error: str | None = None
    """Why `arguments` is `None`, e.g. `"truncated"` or a JSON decode message."""
    recovered: bool = False
    """True when the call was recovered from the message text rather than a structured field."""
    original_id: str | None = None
    """The provider's id when harnesskit replaced a missing, empty or duplicate one."""
    parse_hint: str | None = None
    """When `arguments` is `None`: what the model should send instead, naming the problem."""
    parse_error_type: str | None = None
    """When `arguments` is `None`: `invalid_argument` or `truncated_call` (R-E1)."""
    repair: str | None = None
    """A note when the arguments were read after a safe normalization (e.g. a fence removed)."""

    def __post_init__(self) -> None:
        call_id, name, arguments = self.id, self.name, self.arguments
        if (type(call_id) is not str or type(name) is not str) and (
            not isinstance(call_id, str) or not isinstance(name, str)
        ):
            bad = "id" if not isinstance(call_id, str) else "name"
            raise UsageError(
                f"ToolCall.{bad} must be a str, got {type(getattr(self, bad)).__name__}; "
                'e.g. ToolCall(id="call_1", name="lookup_order", arguments={...})'
            )
        if (
            arguments is not None
            and type(arguments) is not dict
            and not isinstance(arguments, dict)
        ):
            raise UsageError(
                f"ToolCall.arguments must be a dict (or None), got "
                f"{type(self.arguments).__name__}; pass the parsed JSON object"
            )

    def to_openai(self, *, wire: bool = True) -> dict[str, Any]:
        """Return the chat-completions `tool_calls[i]` dict for this call.

        Args:
            wire: the form sent to a provider: argument text that does not parse strictly is
                replaced by a valid, capped stand-in (`_json.stand_in`), normalized text by the
                object read from it, and a name providers refuse by `_json.wire_name(name)`.
                `False` keeps the text byte for byte (the log's form).

        Returns:
            `{"id", "type": "function", "function": {"name", "arguments"}}`.
        """
        text = self.raw_arguments
        if text is None:
            text = json.dumps(self.arguments if self.arguments is not None else {})
        elif wire and self.arguments is None:
            text = _json.stand_in(text, self.parse_error)
        elif wire and not _json.echoable(text, repaired=self.repair is not None):
            text = json.dumps(self.arguments, ensure_ascii=False)
        name = _json.wire_name(self.name) if wire else self.name
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": name, "arguments": text},
        }

    @classmethod
    def from_openai(cls, data: dict[str, Any]) -> ToolCall:
        """Build a call from a chat-completions `tool_calls[i]` dict.

        Arguments may be a JSON string (kept verbatim in `raw_arguments`) or an object.

        Args:
            data: `{"id", "type": "function", "function": {"name", "arguments"}}`.

        Returns:
            The call; unparseable argument text gives `arguments=None` with `parse_error`.

        Raises:
            UsageError: `data` is not a dict, its `function` is not a dict with a string
                `name`, or its arguments are neither text nor a JSON-encodable object.
        """
        fn = data.get("function") if isinstance(data, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str):
            raise UsageError(
                f"tool call {_short(data)} has no function.name; expected a chat-completions "
                'tool call {"id": ..., "function": {"name": ..., "arguments": ...}}'
            )
        raw = fn.get("arguments")  # type: ignore[union-attr]
        if isinstance(raw, dict):
            try:  # arguments travel as JSON text: refuse what cannot become one here
                json.dumps(raw)
            except (TypeError, ValueError, RecursionError) as exc:
                why = "nested too deep" if isinstance(exc, RecursionError) else str(exc)
                raise UsageError(
                    f"tool call {name!r:.80}: arguments cannot be encoded as JSON ({why:.120}); "
                    "give a JSON object of plain values"
                ) from None
            if cls is ToolCall:  # every field checked above: no second check
                return trusted_call(str(data.get("id") or ""), name, raw)
            return cls(id=str(data.get("id") or ""), name=name, arguments=raw)
        if raw is not None and not isinstance(raw, str):
            raise UsageError(
                f"tool call {name!r:.80}: arguments must be a JSON object or its text, got "
                f"{type(raw).__name__}"
            )
        text = raw if isinstance(raw, str) else ""
        plain = _json.plain_arguments(text)
        if plain is not None:  # well-formed (the common case): what read_arguments gives
            if cls is ToolCall:  # every field checked above: no second check
                return trusted_call(str(data.get("id") or ""), name, plain, text)
            return cls(id=str(data.get("id") or ""), name=name, arguments=plain, raw_arguments=text)
        read = _json.read_arguments(text)
        return cls(
            id=str(data.get("id") or ""),
            name=name,
            arguments=read.arguments,
            raw_arguments=text,
            parse_error=read.error,
            parse_hint=read.hint,
            parse_error_type=read.error_type,
            repair=read.repair,
        )


def parse_arguments(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Parse a tool call's argument text strictly (see `_json.read_arguments` for the rules).

    Returns:
        `(arguments, None)` on success (empty text counts as `{}`), else `(None, reason)`.
    """
    read = _json.read_arguments(text)
    return read.arguments, read.error


@frozen_dataclass(kw_only=True)
class Message:
    """One chat message in the OpenAI chat-completions shape."""

    role: Role
    """`system`, `user`, `assistant` or `tool`."""
    content: str | None = None
    """The text; `None` for an assistant message that only calls tools."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls of an assistant message, in the order the model wrote them."""
    tool_call_id: str | None = None
    """For `role="tool"`: the id of the call this message answers."""
    name: str | None = None
    """Optional participant or tool name."""

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise UsageError(f"Message role must be one of {_ROLES}, got {_short(self.role)}")
        if (
            type(self.content) not in _TEXT_OR_NONE
            or type(self.tool_call_id) not in _TEXT_OR_NONE
            or type(self.name) not in _TEXT_OR_NONE
            or (self.tool_calls and not _all_calls(self.tool_calls))
        ):
            _check_fields(self)  # the slow path: str subclasses pass, anything else raises
        if self.role == "tool" and not self.tool_call_id:
            raise UsageError(
                "a tool message needs tool_call_id: results are matched to calls by id"
            )

    def to_openai(self, *, wire: bool = True) -> dict[str, Any]:
        """Return the chat-completions message dict.

        Args:
            wire: the form sent to a provider (see `ToolCall.to_openai`); `False` keeps each
                call's argument text byte for byte.

        Returns:
            `{"role", "content", ...}` with `tool_calls`, `tool_call_id`, `name` when set.
        """
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_openai(wire=wire) for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_openai(cls, data: dict[str, Any]) -> Message:
        """Build a message from a chat-completions dict.

        Args:
            data: `{"role", "content", "tool_calls", "tool_call_id", "name"}`; `content` may
                be a list of `{"type": "text", "text": ...}` parts (other part types are
                skipped).

        Returns:
            The message.

        Raises:
            UsageError: `data` is not a dict, the role is unknown, a tool message lacks
                `tool_call_id`, `content` is neither text, `None` nor a list of part objects,
                or `tool_calls` is not a list of chat-completions tool calls.
        """
        if not isinstance(data, dict):
            raise UsageError(
                f"a chat-completions message must be a dict, got {type(data).__name__}; "
                'e.g. {"role": "assistant", "content": "hi"}'
            )
        content = data.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = _parts_text(content)
        raw_calls = data.get("tool_calls") or ()
        if not isinstance(raw_calls, (list, tuple)):  # a tuple: faster than a union
            raise UsageError(
                f"tool_calls must be a list of tool calls, got {type(raw_calls).__name__}; "
                'e.g. [{"id": "c1", "function": {"name": "lookup", "arguments": "{}"}}]'
            )
        calls = tuple([ToolCall.from_openai(c) for c in raw_calls])
        role, call_id, name = data.get("role"), data.get("tool_call_id"), data.get("name")
        if (
            cls is Message
            and role.__class__ is str
            and role in _ROLES
            and content.__class__ in _TEXT_OR_NONE
            and call_id.__class__ in _TEXT_OR_NONE
            and name.__class__ in _TEXT_OR_NONE
            and (call_id or role != "tool")
        ):  # what `__post_init__` checks, checked here (the calls are ToolCalls built above)
            return trusted_message(role, content, calls, call_id, name)
        return cls(
            role=data.get("role"),  # type: ignore[arg-type]
            content=content,
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )

    @property
    def text(self) -> str:
        """The content, or `""` when there is none."""
        return self.content or ""


_TEXT_OR_NONE = frozenset({str, type(None)})

_new = object.__new__


def _setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot descriptors' `__set__` of `cls` for `names` (they bypass the frozen setattr)."""
    return tuple(cls.__dict__[n].__set__ for n in names)


_SET_MESSAGE = _setters(Message, ("role", "content", "tool_calls", "tool_call_id", "name"))


def trusted_message(
    role: str,
    content: str | None = None,
    tool_calls: tuple[ToolCall, ...] = (),
    tool_call_id: str | None = None,
    name: str | None = None,
) -> Message:
    """Private: a `Message` of fields the caller has checked, without `__post_init__`.

    For the library's own paths whose values are known to pass `Message`'s checks (a role
    of `_ROLES`; `content`, `tool_call_id` and `name` exact `str` or `None`; `tool_calls` a
    tuple of `ToolCall`; a tool message with a non-empty `tool_call_id`). The value is equal
    to `Message(...)` of the same fields. Anything a user or a model reply gives goes through
    `Message(...)` or `Message.from_openai`, which check.
    """
    m = _new(Message)
    s_role, s_content, s_calls, s_call_id, s_name = _SET_MESSAGE
    s_role(m, role)
    s_content(m, content)
    s_calls(m, tool_calls)
    s_call_id(m, tool_call_id)
    s_name(m, name)
    return m


_SET_CALL = _setters(
    ToolCall,
    (
        "id",
        "name",
        "arguments",
        "raw_arguments",
        "parse_error",
        "recovered",
        "original_id",
        "parse_hint",
        "parse_error_type",
        "repair",
    ),
)


def trusted_call(
    call_id: str, name: str, arguments: dict[str, Any] | None, raw_arguments: str | None = None
) -> ToolCall:
    """Private: a `ToolCall` of fields the caller has checked, without `__post_init__`.

    `call_id` and `name` are `str`, `arguments` a `dict` or `None`; the other fields take
    their defaults. Equal to `ToolCall(id=call_id, name=name, arguments=arguments,
    raw_arguments=raw_arguments)`.
    """
    c = _new(ToolCall)
    s_id, s_name, s_args, s_raw, s_error, s_recovered, s_original, s_hint, s_type, s_repair = (
        _SET_CALL
    )
    s_id(c, call_id)
    s_name(c, name)
    s_args(c, arguments)
    s_raw(c, raw_arguments)
    s_error(c, None)
    s_recovered(c, False)
    s_original(c, None)
    s_hint(c, None)
    s_type(c, None)
    s_repair(c, None)
    return c


def _all_calls(calls: Any) -> bool:
    if type(calls) is not tuple:
        return False
    for call in calls:  # noqa: SIM110 - a loop: no generator object on the hot path
        if type(call) is not ToolCall:
            return False
    return True


def _check_fields(message: Message) -> None:
    """Raise `UsageError` naming the first field of `message` of the wrong type."""
    for key in ("content", "tool_call_id", "name"):
        value = getattr(message, key)
        if value is not None and not isinstance(value, str):
            raise UsageError(
                f"Message.{key} must be a str or None, got {type(value).__name__} "
                f"{_short(value, 60)}; convert it to text first (e.g. json.dumps(value))"
            )
    calls = message.tool_calls
    if not isinstance(calls, tuple | list) or not all(isinstance(c, ToolCall) for c in calls):
        raise UsageError(
            f"Message.tool_calls must be a tuple of ToolCall, got {_short(calls)}; build each "
            "with ToolCall(id=..., name=..., arguments=...)"
        )


def _short(value: Any, limit: int = 120) -> str:
    """`repr(value)` cut to `limit` characters; a value too deep to show is named by type."""
    try:
        text = repr(value)
    except RecursionError:
        return f"<a {type(value).__name__} nested too deep to show>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parts_text(parts: list[Any]) -> str:
    """The text of chat-completions content parts (`{"type": "text", "text": ...}`)."""
    out = []
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise UsageError(
                f"content part {i} is a {type(part).__name__}, not an object; give content as "
                'text or as a list of {"type": "text", "text": ...} parts'
            )
        text = part.get("text", "")
        if not isinstance(text, str):
            raise UsageError(f"content part {i} has a {type(text).__name__} text, not a str")
        out.append(text)
    return "".join(out)


@frozen_dataclass(kw_only=True)
class Usage:
    """Token counts of one model response (units: tokens)."""

    prompt_tokens: int = 0
    """Tokens in the request (messages and tool specs)."""
    completion_tokens: int = 0
    """Tokens the model generated."""
    cached_tokens: int = 0
    """Prompt tokens served from the provider's cache (0 when not reported)."""
    estimated: bool = False
    """True when the counts come from harnesskit's estimator, not the provider."""

    @property
    def total_tokens(self) -> int:
        """`prompt_tokens + completion_tokens`."""
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """Return the counts as a plain dict (with `total_tokens`)."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cached_tokens": self.cached_tokens,
            "estimated": self.estimated,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """Read counts as OpenAI-compatible providers name them (`prompt_tokens_details` too)."""
        details = data.get("prompt_tokens_details") or {}
        cached = data.get("cached_tokens", details.get("cached_tokens", 0)) or 0
        return cls(
            prompt_tokens=int(data.get("prompt_tokens") or 0),
            completion_tokens=int(data.get("completion_tokens") or 0),
            cached_tokens=int(cached),
            estimated=bool(data.get("estimated", False)),
        )


#: Data classes from least to most sensitive (R-S2).
DATA_CLASSES = ("public", "internal", "restricted", "secret")


def check_data_class(value: Any, what: str, *, optional: bool = True) -> str | None:
    """Check a data-class name: one of `DATA_CLASSES`, exactly (R-S2).

    Every place that takes a class (a model's `max_data_class`, a transport's `data_class`)
    checks it here, so a misspelt class is refused where it is given instead of failing
    open (e.g. `"Public"` approving nothing, or everything).

    Args:
        value: the class given.
        what: how the caller names the value in the message (e.g. `"max_data_class"`).
        optional: `None` is accepted (and returned) as "not given".

    Returns:
        `value`, unchanged.

    Raises:
        UsageError: `value` is not one of `public`, `internal`, `restricted`, `secret` (lower
            case), or is `None` when not optional; the message names the value and the classes.
    """
    if (value is None and optional) or (isinstance(value, str) and value in DATA_CLASSES):
        return value
    raise UsageError(f"{what} must be one of {DATA_CLASSES} (lower case), got {value!r}")


#: Request fields that used to travel in `settings`; naming one there is a usage error.
_NOT_SETTINGS = (
    "deadline_monotonic",
    "clock",
    "on_attempt",
    "on_switch",
    "on_delta",
    "data_class",
)


#: Request fields the runtime builds itself, and where what they would carry belongs: sent in
#: `settings` (or a client's `extra_body`) they would replace the prompt, the tools or the model
#: the run chose, unlogged and unchecked (R-S1, R-S2).
RUNTIME_FIELDS: dict[str, str] = {
    "messages": "the prompt is built from the run's log: pass the task to start()/run(), "
    "messages with run.send(...), and the system prompt as Harness(system_prompt=...)",
    "tools": "the tools offered are the harness's: Harness([tool, ...])",
    "functions": "the tools offered are the harness's: Harness([tool, ...])",
    "model": "choose the model with get_model('<provider>:<model>')",
    "n": "only the first choice of an answer is read; send one request per answer",
}

#: Options of the model client itself, given to its constructor (`get_model(...)`,
#: `OpenAICompatModel(...)`): in `settings` they were sent to the provider as body fields and
#: never took effect. (`seed` and `provider` are not here: they are also request fields,
#: a sampling seed and OpenRouter's routing preferences.)
CLIENT_OPTIONS = frozenset(
    {
        "timeout_seconds",
        "api_key",
        "api_key_env",
        "base_url",
        "headers",
        "extra_body",
        "http_client",
        "retry",
        "stream_usage",
        "max_response_bytes",
        "context_window",
        "max_output_tokens",
        "max_data_class",
        "id_factory",
        "sleep",
    }
)

#: Sampling settings whose type and range are checked: name -> (check, what it takes).
_SAMPLING_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "max_tokens": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "an int of tokens >= 1, e.g. {'max_tokens': 1024}",
    ),
    "max_completion_tokens": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "an int of tokens >= 1, e.g. {'max_completion_tokens': 1024}",
    ),
    "temperature": (
        lambda v: _finite(v) and v >= 0,
        "a finite number >= 0, e.g. {'temperature': 0.2}",
    ),
    "top_p": (
        lambda v: _finite(v) and 0 <= v <= 1,
        "a finite number from 0 to 1, e.g. {'top_p': 0.9}",
    ),
}

_NOT_SETTINGS_SET = (
    frozenset(_NOT_SETTINGS)
    | frozenset(RUNTIME_FIELDS)
    | CLIENT_OPTIONS
    | frozenset(_SAMPLING_CHECKS)
)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


#: The HTTP client's per-request switches in `settings` (never sent to the provider).
_CONTROL_FIELDS = frozenset({"stream", "max_wait_seconds"})


#: Every key `check_settings` refuses or checks (lower case), and those it only checks.
_CHECKED = _NOT_SETTINGS_SET | _CONTROL_FIELDS
_SAMPLING_OR_CONTROL = frozenset(_SAMPLING_CHECKS) | _CONTROL_FIELDS


def reserved_field(key: Any) -> str | None:
    """The request field the runtime sets that `key` names, matched without regard to case.

    Servers that read JSON field names without regard to case (Go's `encoding/json`, behind
    Ollama and others) take `"Messages"` for `messages`, so a case variant is refused as the
    field itself is.

    Args:
        key: a settings or `extra_body` key.

    Returns:
        The field's name in `RUNTIME_FIELDS` (lower case), or `None`.
    """
    if not isinstance(key, str):
        return None
    low = key.lower()
    return low if low in RUNTIME_FIELDS else None


def _case_note(key: str) -> str:
    if key == key.lower():
        return ""
    return f" (names are matched without regard to case: servers read {key!r} as {key.lower()!r})"


def check_settings(settings: dict[str, Any]) -> None:
    """Refuse request settings that are not sampling settings, or of the wrong type or range.

    Args:
        settings: the request's settings (`ModelRequest.settings`, `Harness(settings=...)`).

    Raises:
        UsageError: a key names a field the runtime sets (`messages`, `tools`, `model`, `n`),
            a `ModelRequest` field (`deadline_monotonic`, `on_delta`, ...) or an option of
            the model client (`timeout_seconds`, `api_key`, `headers`, ...); or `max_tokens` /
            `max_completion_tokens` is not an int >= 1, `temperature` not a finite number >= 0,
            `top_p` not a finite number from 0 to 1 (`None` is accepted: the provider's
            default). The message names the key, what it takes or where it belongs.
    """
    folded = {k.lower() if isinstance(k, str) else k for k in settings}
    hits = _CHECKED.intersection(folded)
    if not hits:
        return  # no key to refuse or check
    if hits <= _SAMPLING_OR_CONTROL and all(k in settings for k in hits):
        _check_sampling(settings, hits)  # the common case: max_tokens, stream; nothing sorted
        return
    keys = sorted((k for k in settings if isinstance(k, str)), key=str.lower)
    owned = [k for k in keys if k.lower() in RUNTIME_FIELDS]
    if owned:
        raise UsageError(
            f"settings[{owned[0]!r}] is a request field the runtime sets, not a sampling "
            f"setting{_case_note(owned[0])}: {RUNTIME_FIELDS[owned[0].lower()]}"
        )
    smuggled = sorted(set(settings) & set(_NOT_SETTINGS))
    if smuggled:
        raise UsageError(
            f"ModelRequest.settings is for sampling settings; pass {smuggled} as "
            f"ModelRequest fields instead (e.g. ModelRequest(..., {smuggled[0]}=...))"
        )
    options = [k for k in keys if k.lower() in CLIENT_OPTIONS]
    if options:
        raise UsageError(
            f"settings[{options[0]!r}] is an option of the model client, not a request field "
            f"(in settings it would be sent to the provider and never take effect); pass it to "
            f"the model's constructor, e.g. get_model('openai-compat:<model>', "
            f"{options[0].lower()}=...)"
        )
    variants = [k for k in keys if k.lower() in _CONTROL_FIELDS and k not in _CONTROL_FIELDS]
    if variants:
        raise UsageError(
            f"settings[{variants[0]!r}] is not a setting: the client's switch is spelt "
            f"{variants[0].lower()!r} (lower case); sent as given, a server that reads field "
            "names without regard to case would take it for the switch the client did not set"
        )
    _check_sampling(settings, hits)


def _check_sampling(settings: dict[str, Any], hits: AbstractSet[str]) -> None:
    for key in _SAMPLING_CHECKS.keys() & hits:
        ok, takes = _SAMPLING_CHECKS[key]
        value = settings.get(key)
        if value is not None and not ok(value):
            raise UsageError(f"settings[{key!r}] takes {takes}; got {value!r:.80}")


@frozen_dataclass(kw_only=True)
class StreamDelta:
    """One fragment of an answer as it is generated, for a live display (`stream=True`).

    Joining the `text` of the `text` deltas gives the message content; joining those of the
    `tool_call` deltas with the same `index` gives that call's argument text, byte for byte.
    """

    kind: Literal["start", "text", "reasoning", "tool_call"]
    """`start` opens an attempt (a retried request streams again from the start), `text` and
    `reasoning` carry answer text, `tool_call` carries a fragment of a call's arguments."""
    text: str = ""
    """The new fragment (may be empty, e.g. when a tool call's name arrives first)."""
    index: int = 0
    """For `tool_call`: the call's position in the turn (0-based)."""
    name: str = ""
    """For `tool_call`: the tool's name, as far as it has arrived."""
    tool_call_id: str = ""
    """For `tool_call`: the provider's call id, once sent."""


@frozen_dataclass(kw_only=True)
class ModelRequest:
    """Everything a model is sent for one turn."""

    messages: tuple[Message, ...]
    """The prompt, in order, exactly as assembled by the context builder."""
    tools: tuple[dict[str, Any], ...] = ()
    """Tool specs in chat-completions form (`{"type": "function", "function": {...}}`)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """Sampling settings sent as request fields (`temperature`, `max_tokens`, `tool_choice`,
    `seed`), plus the HTTP client's per-request switches `stream` and `max_wait_seconds`. The
    fields the runtime sets (`RUNTIME_FIELDS`: `messages`, `tools`, `model`, ...) and the client's
    own options (`CLIENT_OPTIONS`: `timeout_seconds`, `api_key`, ...) are refused with a
    `UsageError` saying where each belongs (`check_settings`)."""
    run_id: str = ""
    """The run this request belongs to (for fakes that keep per-run state, and call ids)."""
    step: int = 0
    """The loop step (1-based) that sends this request."""
    final: bool = False
    """True for the closing request after a brake: the same tools are offered (the prompt
    cache keys on them) with `tool_choice="none"`, and a call in its reply is never run."""
    deadline_monotonic: float | None = None
    """A reading of `clock` (seconds) no attempt, retry wait or body read may pass; `None` =
    none."""
    clock: Callable[[], float] | None = None
    """The monotonic clock (seconds) `deadline_monotonic` is on; `None` = the model's own
    (`time.monotonic` by default). The loop passes the harness's timer."""
    data_class: str | None = None
    """The most sensitive data class in the prompt; a model not approved for it is not sent
    the request (R-M5). `None` = not stated."""
    on_attempt: Callable[[Any], None] | None = None
    """Called with each failed or corrective attempt (`models.Attempt`); never logged itself."""
    on_switch: Callable[[Any], None] | None = None
    """Called with each move to another fallback node (`models.Switch`); never logged itself."""
    on_delta: Callable[[StreamDelta], None] | None = None
    """Called with each `StreamDelta` as the answer arrives (streaming clients and the fakes);
    the returned `ModelResponse` is the same as without it."""

    def __post_init__(self) -> None:
        check_settings(self.settings)

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered, in order."""
        return [t["function"]["name"] for t in self.tools]


@frozen_dataclass(kw_only=True)
class ModelResponse:
    """One answer of a model: an assistant message plus its metadata."""

    message: Message
    """The assistant message (text and/or tool calls)."""
    usage: Usage | None = None
    """Provider token counts, or `None` when the provider reported none (the loop estimates)."""
    finish_reason: str | None = "stop"
    """`stop`, `tool_calls`, `length` or `content_filter`, as the provider said; `None` when
    the provider's reply named none (it is never invented)."""
    model: str = ""
    """The model that answered."""
    raw: dict[str, Any] | None = None
    """The provider's raw response body, when there was one."""
    original_content: str | None = None
    """The message text exactly as the model wrote it, when tool calls were recovered from it
    (`message.content` then holds the text left after the recovered spans were cut out)."""
    provider_finish_reason: str | None = None
    """The provider's own `finish_reason` when `finish_reason` reads it as another word:
    Gemini's `SAFETY` or `RECITATION` (`content_filter`), `MAX_TOKENS` (`length`), a `stop`
    whose `usage.completion_tokens` reached the output limit (`length`); `None` when the
    two are the same or the provider named none."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict: `message` in chat-completions form, usage, finish_reason.

        `provider_finish_reason` is a key only when it is set.
        """
        out = {
            "message": self.message.to_openai(),
            "usage": self.usage.to_dict() if self.usage else None,
            "finish_reason": self.finish_reason,
            "model": self.model,
        }
        if self.provider_finish_reason is not None:
            out["provider_finish_reason"] = self.provider_finish_reason
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelResponse:
        """Inverse of `to_dict()`."""
        usage = data.get("usage")
        return cls(
            message=Message.from_openai(data["message"]),
            usage=Usage.from_dict(usage) if usage else None,
            finish_reason=data.get("finish_reason", "stop"),
            model=data.get("model", ""),
            provider_finish_reason=data.get("provider_finish_reason"),
        )


@frozen_dataclass(kw_only=True)
class ToolResult:
    """The outcome of one tool call, success or structured failure (R-E1).

    On failure `ok` is False and `error_type` is one of `ERROR_TYPES`; `content` is then the
    JSON text `{"ok": false, "error_type", "message", "hint"}` sent to the model.
    """

    tool_call_id: str
    """The id of the call this answers (never matched by position)."""
    name: str
    """The tool's name as called."""
    ok: bool
    """True when the tool ran and returned."""
    content: str
    """The exact text that goes into the tool message for the model."""
    value: Any = None
    """The tool's return value (JSON-ready) on success."""
    error_type: str | None = None
    """On failure: one of `ERROR_TYPES`."""
    message: str | None = None
    """On failure: what went wrong."""
    hint: str | None = None
    """On failure: what the model should do next."""
    duration_seconds: float = 0.0
    """Wall time the tool took (seconds)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Runtime facts about the call: `dry_run`, `duplicate`, `artifact`, `circuit_opened`, ...;
    `data_class` (R-S2) is the class its `tool.result` event gets (`internal` when absent)."""

    def to_message(self) -> Message:
        """Return the `role="tool"` message carrying `content`."""
        return Message(role="tool", content=self.content, tool_call_id=self.tool_call_id)

    @classmethod
    def failure(
        cls,
        call: ToolCall,
        error_type: str,
        message: str,
        hint: str | None = None,
        **meta: Any,
    ) -> ToolResult:
        """Build the structured failure for `call` (R-E1).

        The one way a failure reaches the model: its `message` and `hint` go into `content`
        capped at `FAILURE_TEXT_CHARS` each (a tool's 100,000-character exception message
        would otherwise go inline past R-A1's 8,000-character limit); a capped text says how
        much was cut and where the rest is. The whole texts stay on the result (`message`,
        `hint`) and in `meta` (`full_message`, `full_hint`), which the `tool.result` event logs.

        Args:
            call: the call this answers.
            error_type: one of `ERROR_TYPES`.
            message: what went wrong (any length).
            hint: what the model should do next (any length), or `None`.
            **meta: runtime facts logged with the result.

        Returns:
            The failure, `content` at most about `2 * FAILURE_TEXT_CHARS` + 200 characters.

        Raises:
            UsageError: `error_type` is not one of `ERROR_TYPES`.
        """
        if error_type not in ERROR_TYPES:
            raise UsageError(f"error_type must be one of {ERROR_TYPES}, got {error_type!r}")
        shown_message, shown_hint = _capped(message, "message"), _capped(hint, "hint")
        if shown_message is not message:
            meta["full_message"] = message
        if shown_hint is not hint:
            meta["full_hint"] = hint
        body = {"ok": False, "error_type": error_type, "message": shown_message, "hint": shown_hint}
        return cls(
            tool_call_id=call.id,
            name=call.name,
            ok=False,
            content=json.dumps(body, ensure_ascii=False),
            error_type=error_type,
            message=message,
            hint=hint,
            meta=dict(meta),
        )


#: The most characters of a failure's `message` (and of its `hint`) the model is sent.
FAILURE_TEXT_CHARS = 2_000


def _capped(text: Any, field_name: str) -> Any:
    """`text` cut to `FAILURE_TEXT_CHARS` with a note on what was cut; `text` itself if short."""
    if not isinstance(text, str) or len(text) <= FAILURE_TEXT_CHARS:
        return text
    return (
        f"{text[:FAILURE_TEXT_CHARS]}… [cut: {len(text) - FAILURE_TEXT_CHARS:,} of "
        f"{len(text):,} characters not shown; the whole {field_name} is in the run's log, "
        f"in this tool.result event's full_{field_name}]"
    )


# -- prompts that grow: proving in O(1) that one starts with another ----------------------------


class _Grown(tuple):  # type: ignore[type-arg]
    """A tuple whose first `_line[1]` items are those of the append-only list `_line[0]`."""

    _line: tuple[list[Any], int]

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))  # a copy is a plain tuple: it proves nothing


def grown_tuple(spine: list[Any], extra: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    """`tuple(spine) + extra`, marked so that `known_prefix` compares it with others in O(1).

    Made by a producer of growing sequences (the context builder's verbatim prompt): all tuples
    made from the same `spine` share their first items, as long as the producer only ever
    appends to `spine` (to start over, it makes a new list).

    Args:
        spine: the producer's list; never changed in place nor shortened from now on.
        extra: items after the spine's (shared with no later tuple).

    Returns:
        A tuple (of a private subclass) equal to `tuple(spine) + extra`; it keeps `spine`
        alive. Its copies and slices are plain tuples.
    """
    out = _Grown(spine + list(extra) if extra else spine)
    out._line = (spine, len(spine))
    return out


def known_prefix(previous: Sequence[Any], items: Sequence[Any]) -> bool:
    """Whether `grown_tuple` marks prove that `previous` is the start of `items`, in O(1).

    Args:
        previous: an earlier sequence.
        items: a later one.

    Returns:
        True when both were made by `grown_tuple` from the same spine and `previous` holds
        spine items only (then its items are the first items of `items`, the same objects);
        False when that cannot be told this way (compare the items then).
    """
    if type(previous) is not _Grown or type(items) is not _Grown:
        return False
    (spine, n), (other, m) = previous._line, items._line
    return spine is other and n == len(previous) and n <= m
