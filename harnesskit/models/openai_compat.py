"""An OpenAI-compatible chat-completions client over httpx (R-M1–R-M4).

```python
model = hk.get_model("ollama:qwen2.5")                         # http://localhost:11434/v1
model = hk.get_model("openai-compat:my-model", base_url="http://127.0.0.1:8080/v1")
model = hk.get_model("deepseek:deepseek-chat")                  # key from $DEEPSEEK_API_KEY
```

Presets (prefix → default base URL, key variable):

| prefix | base URL | key from |
|---|---|---|
| `openai-compat` | (give `base_url=`) | `$OPENAI_COMPAT_API_KEY` |
| `ollama` | `http://localhost:11434/v1` | `$OLLAMA_API_KEY` (optional) |
| `vllm` | `http://localhost:8000/v1` | `$VLLM_API_KEY` (optional) |
| `litellm` | `http://localhost:4000` | `$LITELLM_API_KEY` (optional) |
| `deepseek` | `https://api.deepseek.com` | `$DEEPSEEK_API_KEY` (required) |
| `openai` | `https://api.openai.com/v1` | `$OPENAI_API_KEY` (required) |

`openai-compat` deliberately does not read `$OPENAI_API_KEY`, so that a real OpenAI key is never
sent to whatever server `base_url` points at. The key is never logged, put in a repr or in an
error message.

Behaviour, in one place:

- Sync and streaming (SSE) requests; a stream is folded into the same body a sync answer has,
  so both go through one tolerant parser (`_parse.parse_completion`).
- Retries (R-M3): timeouts, connection errors, 408/409/429/500/502/503/504 with capped
  exponential backoff and jitter, honouring `Retry-After` (seconds or HTTP-date) and
  `retry-after-ms` when longer than the backoff (an invalid one is ignored); never waiting
  past the deadline (`ModelRequest.deadline_monotonic`, a `time.monotonic()` value, or
  `max_wait_seconds`). 400/401/402/403/404/422 fail at once.
  An `error` object inside a 200 body or stream (also beside `choices`), a body or chunk
  that is an error object (`"object": "error"`), an SSE `event: error` event, or a finish
  reason saying the generation failed (`_parse.FAILED_FINISH_REASONS`: vLLM's and SGLang's
  `abort`, `error`, any case) fails the attempt, classified by its code or type as a status is.
- A provider error reporting the model's own malformed output (400 `tool_use_failed`, 500
  "error parsing tool call") is not retried blindly: one corrective request appends the failed
  generation and a message saying what went wrong. So is a reply that says a call was meant
  but holds none (`finish_reason: "tool_calls"`) or that the call failed
  (`_parse.MALFORMED_CALL_FINISH_REASONS`: Gemini's `MALFORMED_FUNCTION_CALL`,
  `UNEXPECTED_TOOL_CALL`, any case).
- Each failed attempt is reported to `on_attempt(Attempt)` (the loop logs `model.retry`).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from harnesskit import _json
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import ModelError, ModelOutputError, RateLimitError, UsageError
from harnesskit.messages import (
    RUNTIME_FIELDS,
    Message,
    ModelRequest,
    ModelResponse,
    StreamDelta,
)
from harnesskit.models._options import (
    MAX_SECONDS,
    check_client_options,
    secret_forms,
    shown_url,
    url_secrets,
)
from harnesskit.models._parse import (
    ProviderError,
    body_error,
    call_id_factory,
    malformed_call_finish,
    parse_completion,
    provider_error,
)
from harnesskit.models._read import Deadline, read_body, read_lines, send_within
from harnesskit.models._retry import (
    RETRY_STATUS,
    Attempt,
    RetryPolicy,
    backoff_seconds,
    retry_after_seconds,
    retryable,
)
from harnesskit.models._sse import StreamAccumulator, sse_events
from harnesskit.models.base import register_provider
from harnesskit.models.fallback import DATA_CLASSES

if TYPE_CHECKING:
    import httpx

__all__ = ["PRESETS", "Attempt", "OpenAICompatModel", "Preset", "RetryPolicy"]

#: Request settings that steer the client and are never sent to the provider.
CONTROL_KEYS = frozenset({"max_wait_seconds", "stream"})
#: Request fields only the runtime sets (`messages`, `tools`, `model`, ...) and the stream switch.
_OWNED = frozenset(RUNTIME_FIELDS) | {"stream"}
#: The current request's `on_delta` (set per request, so retries and streams need no plumbing).
_ON_DELTA: ContextVar[Callable[[StreamDelta], None] | None] = ContextVar("on_delta", default=None)


@frozen_dataclass(kw_only=True)
class Preset:
    """Defaults for one provider prefix."""

    base_url: str | None
    """Default server URL (up to and including `/v1` where the server has it)."""
    key_env: str
    """Environment variable holding the API key."""
    key_required: bool = False
    """True when the server refuses requests without a key (hosted APIs)."""
    context_window: int | None = None
    """Default context window (tokens, input + output); `None` = not declared."""
    max_output_tokens: int | None = None
    """Default output tokens reserved out of the window; `None` = not declared."""


PRESETS: dict[str, Preset] = {
    "openai-compat": Preset(base_url=None, key_env="OPENAI_COMPAT_API_KEY"),
    "ollama": Preset(base_url="http://localhost:11434/v1", key_env="OLLAMA_API_KEY"),
    "vllm": Preset(base_url="http://localhost:8000/v1", key_env="VLLM_API_KEY"),
    "litellm": Preset(base_url="http://localhost:4000", key_env="LITELLM_API_KEY"),
    "deepseek": Preset(
        base_url="https://api.deepseek.com", key_env="DEEPSEEK_API_KEY", key_required=True
    ),
    "openai": Preset(
        base_url="https://api.openai.com/v1", key_env="OPENAI_API_KEY", key_required=True
    ),
}

_BOM = b"\xef\xbb\xbf"
_TOOL_PARSE_ERROR = re.compile(r"error parsing tool call", re.I)
_RAW_GENERATION = re.compile(r"raw='(.*?)'(?:, err=|$)", re.S)
_CONTEXT_HINT = (
    "the prompt is longer than the model's context; keep less of the history "
    '(Harness(policy="window")) or lower max_tokens'
)
_HINTS = {
    401: "check the API key (environment variable {env} or api_key=)",
    403: "the key is not allowed to use this model or endpoint",
    404: "check base_url ({url}) and the model name ({model})",
}


@frozen_dataclass
class _Failure:
    status: int | None
    error: str
    retryable: bool
    retry_after: float | None = None
    body: str | None = None
    output: ProviderError | None = None  # set when the provider reports the model's bad output


class OpenAICompatModel:
    """A chat-completions model behind any OpenAI-compatible HTTP server.

    Implements the `Model` protocol: `request(ModelRequest) -> ModelResponse`.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "openai-compat",
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        http_client: httpx.Client | None = None,
        timeout_seconds: float = 60.0,
        stream: bool = False,
        stream_usage: bool = True,
        retry: RetryPolicy | None = None,
        max_wait_seconds: float | None = None,
        on_attempt: Callable[[Attempt], None] | None = None,
        headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        max_data_class: str | None = None,
        id_factory: Callable[[], str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        seed: int | None = None,
        max_response_bytes: int | None = 32_000_000,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
    ) -> None:
        """Create the client (no network traffic happens here).

        Args:
            model: the model name the server knows, e.g. `"qwen2.5"` or `"gpt-4o-mini"`.
            provider: a key of `PRESETS`; sets the default base URL and key variable.
            base_url: the server URL (e.g. `"http://localhost:11434/v1"`); `None` uses the
                preset's. `/chat/completions` is appended.
            api_key: the key; `None` reads it from `api_key_env` or the preset's variable.
            api_key_env: name of the environment variable holding the key.
            http_client: an `httpx.Client` to send with (not closed by this model); `None`
                creates one on first use.
            timeout_seconds: the most one attempt may take (seconds, > 0 and at most 86,400:
                one day), from connecting to the
                last byte of the body or stream: a server dribbling its status line and
                headers or its body, or a stream of `: ping` keep-alives, fails the attempt
                with a retryable timeout. Each connect
                and read is also bounded by it (httpx's timeouts), so a server that goes silent
                near the end can overrun it by at most one read. A streamed answer longer than
                this fails as a non-streamed one does: raise it for long generations.
            stream: request SSE streams by default (`settings["stream"]` overrides per request);
                a server that answers with a JSON body (`application/json`) instead of an event
                stream is read as a plain completion, and one that answers a plain request with
                `text/event-stream` (a proxy that always streams) is read as a stream.
            stream_usage: ask streaming servers for a final usage chunk
                (`stream_options.include_usage`); turn off for servers that reject it.
            retry: the retry policy; `None` uses `RetryPolicy()` (3 retries, 0.5-8 s backoff).
            max_wait_seconds: cap on one `request()` including retries and waits (seconds, at
                most 86,400);
                `None` means only the request's `deadline_monotonic` limits it.
            on_attempt: called with an `Attempt` for every failed or corrective attempt (before
                the request's own `on_attempt`, which the loop uses for events).
            headers: extra HTTP headers sent with every request: names are RFC 9110 tokens,
                values visible ASCII, spaces and tabs (no CR, LF, NUL or non-ASCII: httpx
                sends them as ASCII, and a line break would inject a header).
            extra_body: extra JSON fields sent with every request (e.g. `{"top_k": 20}`); the
                fields the runtime sets (`messages`, `tools`, `functions`, `model`, `n`,
                `stream`) are refused, naming where each belongs.
            max_data_class: the most sensitive data class this model is approved for
                (`public` < `internal` < `restricted` < `secret`); `None` approves all.
            id_factory: makes replacement tool-call ids; default ids derived from the request's
                run id and step (`_parse.call_id_factory`), the same in every identical run.
            sleep: the sleep function used between attempts (seconds).
            clock: a monotonic clock (seconds) that deadlines are measured on.
            seed: seed for the backoff jitter (`None` = unseeded).
            max_response_bytes: the largest response body read (bytes; a stream counts all
                its lines); a larger one fails the attempt with a `ModelError` naming the cap,
                without retry. `None` means no cap.
            context_window: the model's context window (tokens, input + output); `None` uses
                the preset's, if any. The run's input budget is this minus the reserved output.
            max_output_tokens: output tokens the model reserves out of the window (tokens,
                e.g. 128,000 for a reasoning model); `None` uses the preset's, else the
                request's `max_tokens`.

        Raises:
            UsageError: unknown provider, no base URL, empty model name, bad data class, or
                any option of the wrong type or value (named, with what it takes): e.g. a
                timeout that is not a number of seconds > 0, `stream="no"`, `headers="x"`,
                a `base_url` that is not an http(s) URL, a callback of the wrong arity.
        """
        check_client_options(locals())
        if provider not in PRESETS:
            raise UsageError(f"unknown provider {provider!r}; known: {', '.join(PRESETS)}")
        if not model:
            raise UsageError(
                f"give a model name after the prefix, e.g. get_model('{provider}:qwen2.5')"
            )
        preset = PRESETS[provider]
        url = base_url or preset.base_url
        if not url:
            raise UsageError(
                f"{provider}:{model} needs base_url=..., e.g. base_url='http://localhost:8080/v1'"
            )
        if max_data_class is not None and max_data_class not in DATA_CLASSES:
            raise UsageError(
                f"max_data_class must be one of {DATA_CLASSES}, got {max_data_class!r}"
            )
        self.name = f"{provider}:{model}"
        self.model = model
        self.provider = provider
        base, qmark, query = url.partition("?")
        self._url = f"{base.rstrip('/')}{qmark}{query}"  # exact, credentials included: only sent
        self._endpoint = _endpoint(self._url)
        self.base_url = shown_url(self._url)
        """The server URL as shown (hints, repr, errors): any `user:password@` is removed and
        credential query values (`?api_key=...`) are masked as `***`."""
        self.key_env = api_key_env or preset.key_env
        if api_key is None and api_key_env is not None and not os.environ.get(api_key_env):
            raise UsageError(
                f"api_key_env={api_key_env!r} names an environment variable that is not set; "
                f"export {api_key_env}=... (or pass api_key=...)"
            )
        self._api_key = api_key if api_key is not None else os.environ.get(self.key_env) or None
        self._key_required = preset.key_required
        self.timeout_seconds = timeout_seconds
        self.stream = stream
        self.stream_usage = stream_usage
        self.retry = retry or RetryPolicy()
        self.max_wait_seconds = max_wait_seconds
        self.on_attempt = on_attempt
        self.headers = dict(headers or {})
        self.extra_body = dict(extra_body or {})
        self.max_data_class = max_data_class
        self._id_factory = id_factory
        self._sleep = sleep
        self._clock = clock
        self._rng = random.Random(seed)
        self.max_response_bytes = max_response_bytes
        self.context_window = context_window or preset.context_window
        self.max_output_tokens = max_output_tokens or preset.max_output_tokens
        self._client = http_client
        self._owns_client = http_client is None
        self._lock = threading.Lock()

    # -- public -------------------------------------------------------------------------------

    def request(self, request: ModelRequest) -> ModelResponse:
        """Send one chat-completions request, retrying transient failures.

        Args:
            request: messages, tool specs, settings, `deadline_monotonic` (no attempt or wait
                goes past it), `data_class` and `on_attempt`. Settings are sent as request
                fields (`temperature`, `max_tokens`, `tool_choice`, ...), except the client's
                switches `stream` (bool) and `max_wait_seconds` (seconds).

        Returns:
            The normalized response; `usage` is `None` when the server reported none.

        Raises:
            UsageError: model requests are blocked (`harnesskit.models.block_real_models`),
                the key is missing, or the request's data class is above `max_data_class`.
            ModelError: the provider failed after its retries, or refused the request.
            ModelOutputError: the model's output stayed unusable after one corrective request.
        """
        from harnesskit.models import base

        if not base.ALLOW_MODEL_REQUESTS:
            raise UsageError(
                f"model requests are blocked (harnesskit.models.block_real_models()); "
                f"{self.name} was not sent anything. Use a ScriptedModel in tests, or set "
                "harnesskit.models.base.ALLOW_MODEL_REQUESTS = True for a loopback server"
            )
        settings = request.settings
        self._check_data_class(request.data_class)
        if self._key_required and not self._api_key:
            raise UsageError(
                f"{self.name} needs an API key: set the environment variable {self.key_env} "
                "or pass api_key=..."
            )
        deadline = self._deadline(request)
        on_attempt = _both(self.on_attempt, request.on_attempt)
        _ON_DELTA.set(request.on_delta)  # read by _read_stream, in this thread's context
        stream = settings.get("stream", self.stream)
        if not isinstance(stream, bool):  # "no" would switch streaming on
            raise UsageError(f"settings['stream'] takes True or False, got {stream!r:.40}")
        wait = settings.get("max_wait_seconds")
        if wait is not None and (
            isinstance(wait, bool)
            or not isinstance(wait, int | float)
            or not 0 < wait <= MAX_SECONDS
        ):
            raise UsageError(
                f"settings['max_wait_seconds'] takes a number of seconds > 0 and at most "
                f"{MAX_SECONDS:g}, got {wait!r:.40}"
            )
        taken = {c.id for m in request.messages for c in m.tool_calls if c.id}
        new_id = self._id_factory or call_id_factory(f"{request.run_id}:{request.step}")
        tool_names = request.tool_names
        limit = settings.get("max_tokens", settings.get("max_completion_tokens"))
        max_tokens = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
        outcome = self._with_retries(
            self._body(request.messages, request, stream),
            stream,
            deadline,
            on_attempt,
            tool_names,
            taken,
            new_id,
            max_tokens,
        )
        if isinstance(outcome, ModelResponse):
            return outcome
        if on_attempt is not None:
            on_attempt(
                Attempt(
                    model=self.name,
                    attempt=1,
                    status_code=outcome.status,
                    error=outcome.error,
                    will_retry=True,
                    kind="corrective",
                )
            )
        fixed = request.messages + self._corrective(outcome, request)
        second = self._with_retries(
            self._body(fixed, request, stream),
            stream,
            deadline,
            on_attempt,
            tool_names,
            taken,
            new_id,
            max_tokens,
        )
        if isinstance(second, ModelResponse):
            return second
        raise ModelOutputError(
            f"{self.name}: the model's output was rejected twice by the provider, also after a "
            f"corrective request ({second.error})",
            model=self.name,
            status_code=second.status,
            body=second.body,
        )

    def secrets(self) -> tuple[str, ...]:
        """The exact texts no error, event or log line may show (see `Model.secrets`).

        A run's log redactor adds them to its literals for every event, so a key the server
        or the model echoes back in an answer is scrubbed as one in an error is.

        Returns:
            The API key and the base URL's credentials (`user:password@`, `?api_key=...`),
            each raw, percent-encoded and base64-encoded (`_options.secret_forms`), longest
            first; `()` when the client has neither.
        """
        return secret_forms(self._api_key, *url_secrets(self._url))

    def close(self) -> None:
        """Close the HTTP client if this model created it."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> OpenAICompatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAICompatModel({self.name!r}, base_url={self.base_url!r})"

    # -- request building -----------------------------------------------------------------------

    def _body(self, messages: tuple[Message, ...], request: ModelRequest, stream: bool) -> bytes:
        # the runtime's own fields go in last, so that what the model.request event logged
        # (messages, tools, settings) is what is sent, whatever extra_body was edited to hold
        # names are compared without regard to case: some servers read "Messages" as "messages"
        body: dict[str, Any] = {
            k: v for k, v in self.extra_body.items() if str(k).lower() not in _OWNED
        }
        body.update(
            (k, v)
            for k, v in request.settings.items()
            if k not in CONTROL_KEYS and str(k).lower() not in _OWNED
        )
        body["model"] = self.model
        body["messages"] = [m.to_openai() for m in messages]
        if request.tools:
            body["tools"] = list(request.tools)
        else:
            body.pop("tools", None)
        if not request.tools:
            body.pop("tool_choice", None)
            body.pop("parallel_tool_calls", None)
        if stream:
            body["stream"] = True
            if self.stream_usage:
                body.setdefault("stream_options", {"include_usage": True})
        try:
            return json.dumps(body, ensure_ascii=False).encode()
        except (TypeError, ValueError) as exc:
            raise UsageError(f"request settings must be JSON values: {exc}") from None

    def _corrective(self, failure: _Failure, request: ModelRequest) -> tuple[Message, ...]:
        err = failure.output or ProviderError(failure.error)
        failed = (err.failed_generation or "")[:4000]
        required = request.settings.get("tool_choice") == "required"
        names = ", ".join(request.tool_names) or "(none)"
        text = (
            f"Your previous reply could not be used: the provider rejected it ({err.message})."
            + (f"\nYour reply was:\n{failed}\n" if failed else "\n")
            + f"To call a tool ({names}), use the tool-calling interface with the arguments as one "
            "JSON object that matches the tool's parameter schema."
            + ("" if required else " If no tool is needed, answer in plain text.")
        )
        out = [Message(role="assistant", content=failed)] if failed else []
        return (*out, Message(role="user", content=text))

    # -- sending --------------------------------------------------------------------------------

    def _with_retries(
        self,
        body: bytes,
        stream: bool,
        deadline: Deadline,
        on_attempt: Callable[[Attempt], None] | None,
        tool_names: list[str],
        taken: set[str],
        new_id: Callable[[], str],
        max_tokens: int | None = None,
    ) -> ModelResponse | _Failure:
        attempt = 0
        started = self._clock()
        while True:
            attempt += 1
            result = self._attempt(
                body, stream, deadline, tool_names, taken, new_id, max_tokens=max_tokens
            )
            if not isinstance(result, ModelResponse):
                result = self._scrubbed(result)  # R-S1: the key never reaches an error or event
            if isinstance(result, ModelResponse) or result.output is not None:
                return result
            wait, give_up = self._plan_wait(result, attempt, deadline)
            if on_attempt is not None:
                on_attempt(
                    Attempt(
                        model=self.name,
                        attempt=attempt,
                        status_code=result.status,
                        error=result.error,
                        wait_seconds=wait,
                        will_retry=give_up is None,
                    )
                )
            if give_up is not None:
                raise self._give_up(result, give_up, attempt, self._clock() - started)
            self._sleep(wait)

    def _give_up(self, failure: _Failure, why: str, attempts: int, spent: float) -> ModelError:
        """The error for a call given up: attempts, the server's Retry-After, the time spent."""
        after = (
            f"; the server's Retry-After was {failure.retry_after:g}s"
            if failure.retry_after is not None
            else ""
        )
        text = (
            f"{self.name}: {failure.error}{why} [{attempts} attempt{'s' * (attempts != 1)} in "
            f"{spent:.1f}s{after}]"
        )
        if failure.status == 429:
            return RateLimitError(
                text,
                model=self.name,
                body=failure.body,
                attempts=attempts,
                retry_after_seconds=failure.retry_after,
                elapsed_seconds=spent,
            )
        return ModelError(text, model=self.name, status_code=failure.status, body=failure.body)

    def _plan_wait(
        self, failure: _Failure, attempt: int, deadline: Deadline
    ) -> tuple[float, str | None]:
        """Return (wait seconds, None) to retry, or (0, reason suffix) to give up."""
        if not failure.retryable:
            return 0.0, self._hint(failure.status)
        if attempt > self.retry.max_retries:
            return 0.0, f" (gave up after {attempt} attempts)"
        cap = self.retry.max_retry_after_seconds
        if failure.retry_after is not None and failure.retry_after > cap:
            return 0.0, (
                f" (the server asked to wait {failure.retry_after:g}s, longer than "
                f"max_retry_after_seconds={cap:g})"
            )
        # the backoff is the floor: a server asking for 0s (or a past date) on every attempt
        # must not turn the retries into a burst
        wait = backoff_seconds(attempt, self.retry, self._rng)
        if failure.retry_after is not None:
            wait = max(wait, failure.retry_after)
        left = deadline.left()
        if left is not None and wait >= left:
            return 0.0, (
                f" (gave up after {attempt} attempts: waiting {wait:.2f}s more would pass the "
                "deadline)"
            )
        return wait, None

    def _scrubbed(self, failure: _Failure) -> _Failure:
        """`failure` without this client's own API key or URL credentials in any text."""
        # raw, percent- and base64-encoded (a server echoing `zq%2BKey...`), and JSON-escaped
        forms = [f for s in self.secrets() for f in dict.fromkeys((s, json.dumps(s)[1:-1]))]

        def clean(text: str | None) -> str | None:
            if text is None:
                return None
            for form in forms:
                text = text.replace(form, "[REDACTED:secret]")
            return text

        output = failure.output
        if output is not None:
            output = ProviderError(
                clean(output.message) or "", output.code, output.type,
                clean(output.failed_generation),
            )  # fmt: skip
        return _Failure(
            failure.status,
            clean(failure.error) or "",
            failure.retryable,
            failure.retry_after,
            clean(failure.body),
            output,
        )

    def _hint(self, status: int | None) -> str:
        hint = _HINTS.get(status or 0)
        if hint is None:
            return ""
        return "; " + hint.format(env=self.key_env, url=self.base_url, model=self.model)

    def _attempt(
        self,
        body: bytes,
        stream: bool,
        deadline: Deadline,
        tool_names: list[str],
        taken: set[str],
        new_id: Callable[[], str],
        *,
        max_tokens: int | None = None,
    ) -> ModelResponse | _Failure:
        import httpx

        timeout = self.timeout_seconds
        left = deadline.left()
        if left is not None:
            timeout = min(timeout, left)
            if timeout <= 0:
                return _Failure(None, "the deadline passed before the request was sent", False)
        # timeout_seconds bounds the whole attempt, headers and body included: httpx's timeouts
        # apply to each connect and read, so the wait for the headers is bounded as a whole
        # (send_within) and every chunk that arrives (keep-alives too) is checked against this
        # attempt's own deadline as well as the run's
        attempt = Deadline(at=deadline.clock() + timeout, clock=deadline.clock)
        # only the encodings `read_body` inflates a bounded step at a time (max_response_bytes)
        headers = {"content-type": "application/json", "accept-encoding": "gzip, deflate"}
        if any(k.lower() == "accept-encoding" for k in self.headers):
            del headers["accept-encoding"]  # the caller's own choice, sent once
        headers.update(self.headers)
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        if stream:
            headers["accept"] = "text/event-stream"
        url = self._endpoint
        exact: Any = None  # the body with numbers out of float range kept (see parse_completion)
        try:
            cap = self.max_response_bytes
            client = self._http()
            sent = client.build_request("POST", url, content=body, headers=headers, timeout=timeout)
            opened = send_within(client, sent, timeout)
            if opened is None:  # the status line and headers were still arriving
                if deadline.passed():  # the run's time is up: no retry
                    late = "the deadline passed while the response headers were arriving"
                    return _Failure(None, late, False)
                # worded as httpx's own timeout, which may trip at the same moment
                return _Failure(None, f"timeout after {timeout:.2f}s ({self.base_url})", True)
            # one deadline and one size cap bound the whole read, not each chunk
            with contextlib.closing(opened) as resp:
                if not 200 <= resp.status_code < 300:
                    return self._http_failure(resp, read_body(resp, attempt, cap))
                kind = resp.headers.get("content-type")
                # a server (or proxy) that always streams is read as the stream it says it is
                if (stream and not _is_json(kind)) or _is_sse(kind):
                    data = self._read_stream(resp, deadline, attempt)
                    if isinstance(data, _Failure):
                        return data
                    # 1e999 in object arguments: read as inf, refused by the parser (not null)
                    if _json.non_finite(data) is not None:
                        exact = _json.clean(data, keep_non_finite=True)[0]
                    data, why = _json.clean(data)
                    if why is not None:
                        return _Failure(200, f"the streamed answer is {why}", False)
                else:  # also a server answering a stream request with a plain completion
                    # a byte-order mark before the JSON text is dropped (RFC 8259 lets a
                    # parser ignore it; Python's decoder refuses it)
                    raw = read_body(resp, attempt, cap).removeprefix(_BOM)
                    data, why = _json.loads(raw)
                    if why is not None:
                        return _Failure(
                            resp.status_code,
                            f"the response body is {why} (cut off or garbled)",
                            True,
                            body=_json.clean_text(raw[:2000].decode(errors="replace")),
                        )
                    said = body_error(data, raw[:1000].decode(errors="replace"))
                    if said is not None:  # `error` (also beside `choices`), finish_reason error
                        text = _json.clean_text(raw[:2000].decode(errors="replace"))
                        return self._provider_failure(
                            200, said, f"provider error: {said.message}", text
                        )
                    if _json.may_hold_non_finite(raw):  # 1e999 in object arguments: kept as inf
                        kept = _json.loads(raw, cleaned=False)[0]
                        if _json.non_finite(kept) is not None:
                            exact = _json.clean(kept, keep_non_finite=True)[0]
        except ModelOutputError:  # a stream chunk of the wrong shape: no retry, as unstreamed
            raise
        except ModelError as exc:  # the deadline or the size cap passed while the body arrived
            return self._read_failure(exc, deadline, attempt)
        except httpx.TimeoutException:
            return _Failure(None, f"timeout after {timeout:.2f}s ({self.base_url})", True)
        except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
            return _Failure(None, f"connection failed ({type(exc).__name__}: {exc})", True)
        except httpx.HTTPError as exc:
            return _Failure(None, f"request failed ({type(exc).__name__}: {exc})", False)
        try:
            response = parse_completion(
                data,
                model=self.name,
                tool_names=tool_names,
                taken_ids=taken,
                new_id=new_id,
                max_tokens=max_tokens,
                exact=exact,
            )
        except ModelOutputError:
            raise
        except ModelError as exc:
            return _Failure(200, str(exc), False, body=exc.body)
        message = response.message
        if response.finish_reason == "tool_calls" and not message.tool_calls:
            # R-M2: the model meant to call a tool but sent no usable call (a server whose tool
            # parser failed drops the call and keeps the text before it): tell it so once,
            # whether or not there was a preamble; it is no complete answer
            why = "finish_reason was tool_calls but the reply held no tool call" + (
                " (only the text before it)" if message.text else " and no text"
            )
            return _Failure(200, why, False, output=ProviderError(why))
        if malformed_call_finish(response.finish_reason):
            # Gemini's MALFORMED_FUNCTION_CALL / UNEXPECTED_TOOL_CALL: the model tried to call a
            # tool and failed; the same one corrective request, whatever the reply holds
            word = str(response.finish_reason).strip()[:40]
            why = (
                f"finish_reason was {word}: the provider says the model's tool call was "
                "malformed, or made while no tool could be called"
            )
            return _Failure(200, why, False, output=ProviderError(why))
        return response

    def _read_failure(self, exc: ModelError, deadline: Deadline, attempt: Deadline) -> _Failure:
        """The failure for a body read stopped by the run's deadline, the attempt's, or the cap."""
        if deadline.passed() or "max_response_bytes" in str(exc):
            return _Failure(exc.status_code, str(exc), False)  # the run's time is up: no retry
        if attempt.passed():
            return _Failure(
                None,
                f"timeout after {self.timeout_seconds:g}s (timeout_seconds bounds the whole "
                f"request; the response was still arriving) ({self.base_url})",
                True,
            )
        return _Failure(exc.status_code, str(exc), False)

    def _read_stream(
        self, resp: httpx.Response, deadline: Deadline, attempt: Deadline
    ) -> dict[str, Any] | _Failure:
        acc = StreamAccumulator(on_delta=_ON_DELTA.get())
        plain: list[str] = []  # the lines, while none is an SSE field: a JSON body so labelled
        lines = _kept(read_lines(resp, attempt, self.max_response_bytes), plain)
        try:
            for kind, payload in sse_events(lines):
                if kind == "error":  # `event: error`: the provider failed mid-stream
                    acc.fail(payload)
                acc.feed(payload)
                if acc.done:
                    break
        except ModelOutputError as exc:  # a chunk of the wrong shape, as parse_completion says
            raise ModelOutputError(
                str(exc), model=self.name, status_code=200, body=exc.body
            ) from None
        except ModelError as exc:
            if deadline.passed() or attempt.passed():
                return self._read_failure(exc, deadline, attempt)
            if acc.error is not None:  # the provider's error, classified as an HTTP one is
                return self._provider_failure(exc.status_code or 200, acc.error, str(exc), exc.body)
            retryable = exc.status_code is None or exc.status_code in RETRY_STATUS
            return _Failure(exc.status_code or 200, str(exc), retryable, body=exc.body)
        if not acc.done and acc.chunks == 0 and plain:
            # a whole completion labelled `text/event-stream`: read as the JSON body it is
            data, why = _json.loads("\n".join(plain).removeprefix("\ufeff"), cleaned=False)
            if why is None and isinstance(data, dict):
                return data
        if not acc.done and acc.finish_reason is None:
            return _Failure(200, "the stream ended before its last chunk (no [DONE])", True)
        return acc.body()

    def _http_failure(self, resp: httpx.Response, content: bytes) -> _Failure:
        status = resp.status_code
        text = content.decode(resp.encoding or "utf-8", errors="replace").removeprefix("\ufeff")
        err = provider_error(text)
        return self._provider_failure(
            status,
            err,
            f"HTTP {status}: {err.message}",
            text[:2000],
            retry_after_seconds(resp.headers),
        )

    def _provider_failure(
        self,
        status: int,
        err: ProviderError,
        message: str,
        body: str | None,
        retry_after: float | None = None,
    ) -> _Failure:
        """The failure for an error the provider reported, by HTTP status or in a 200 answer.

        One classification (`_retry.retryable`) for an error status, a plain body's `error`
        (or a body that is an error object, vLLM's `"object": "error"`) and a stream's; a
        report of the model's own malformed tool call is an output error. A prompt too long
        for the model (`context_length_exceeded`, by code or by the provider's words) is named
        in the message with what to do.
        """
        inside = status < 300  # an error object in a 200 body or stream
        if ((inside or status == 400) and err.code == "tool_use_failed") or (
            (inside or status in (400, 500)) and _TOOL_PARSE_ERROR.search(err.message)
        ):
            failed = err.failed_generation
            if failed is None:
                raw = _RAW_GENERATION.search(err.message)
                failed = raw.group(1) if raw else None
            output = ProviderError(err.message, err.code, err.type, failed)
            return _Failure(status, message, False, body=body, output=output)
        if err.code == "context_length_exceeded":
            message += f" ({err.code}: {_CONTEXT_HINT})"
        return _Failure(
            status,
            message,
            retryable(status, err.code, err.type),
            retry_after=retry_after,
            body=body,
        )

    # -- helpers --------------------------------------------------------------------------------

    def _http(self) -> httpx.Client:
        if self._client is None:
            import httpx

            with self._lock:
                if self._client is None:
                    self._client = httpx.Client(timeout=self.timeout_seconds)
        return self._client

    def _deadline(self, request: ModelRequest) -> Deadline:
        # the run's deadline is a reading of the loop's timer, so Limits and client agree;
        # without one, the client's own clock measures its own wait budget
        clock = (request.clock if request.deadline_monotonic is not None else None) or self._clock
        limits = []
        if request.deadline_monotonic is not None:
            limits.append(float(request.deadline_monotonic))
        wait = request.settings.get("max_wait_seconds", self.max_wait_seconds)
        if isinstance(wait, (int, float)):
            limits.append(clock() + float(wait))
        return Deadline(at=min(limits) if limits else None, clock=clock)

    def _check_data_class(self, data_class: Any) -> None:
        if data_class is None or self.max_data_class is None:
            return
        if data_class not in DATA_CLASSES:
            raise UsageError(f"data_class must be one of {DATA_CLASSES}, got {data_class!r}")
        if DATA_CLASSES.index(data_class) > DATA_CLASSES.index(self.max_data_class):
            raise UsageError(
                f"{self.name} is approved up to {self.max_data_class!r} data; this request is "
                f"{data_class!r} and was not sent"
            )


def _is_json(content_type: str | None) -> bool:
    """True for a JSON media type (`application/json`, `...+json`): a plain body, not SSE."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _kept(lines: Iterator[str], kept: list[str]) -> Iterator[str]:
    """Yield `lines`, copying them into `kept` until one is an SSE field (then `kept` is cleared).

    A body labelled `text/event-stream` whose lines hold no `data:` (nor any other field) is a
    plain body under the wrong label; the lines are kept to read it so. `read_lines` bounds
    their size (`max_response_bytes`).
    """
    keeping = True
    for line in lines:
        if keeping:
            field = line.partition(":")[0]
            if field in ("data", "event", "id", "retry") or line.startswith(":"):
                keeping = False
                kept.clear()
            else:
                kept.append(line)
        yield line


def _is_sse(content_type: str | None) -> bool:
    """True for `text/event-stream`: an SSE stream, whether or not one was asked for."""
    return (content_type or "").split(";", 1)[0].strip().lower() == "text/event-stream"


def _endpoint(url: str) -> str:
    """The chat-completions URL of base URL `url`: `/chat/completions` after its path.

    A query stays at the end: `http://h/v1?key=k` -> `http://h/v1/chat/completions?key=k`.
    """
    base, qmark, query = url.partition("?")
    return f"{base.rstrip('/')}/chat/completions{qmark}{query}"


def _both(
    first: Callable[[Attempt], None] | None, second: Callable[[Attempt], None] | None
) -> Callable[[Attempt], None] | None:
    """Call the model's own hook and the request's (the loop's), in that order."""
    if first is None or second is None:
        return first or second

    def call(attempt: Attempt) -> None:
        first(attempt)
        second(attempt)

    return call


def _factory(provider: str) -> Callable[..., OpenAICompatModel]:
    def make(name: str = "", **kwargs: Any) -> OpenAICompatModel:
        import inspect

        known = [p for p in inspect.signature(OpenAICompatModel).parameters if p != "model"]
        unknown = sorted(k for k in kwargs if k not in known or k == "provider")
        if unknown:
            raise UsageError(
                f"get_model('{provider}:{name}', ...) got option(s) it does not take: "
                f"{', '.join(unknown)}; the provider comes from the prefix, and the options are "
                f"{', '.join(k for k in known if k != 'provider')}"
            )
        return OpenAICompatModel(name, provider=provider, **kwargs)

    return make


for _prefix in PRESETS:
    register_provider(_prefix, _factory(_prefix))
