"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1 (tests/loopback.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from harnesskit.errors import ModelError, ModelOutputError, UsageError
from harnesskit.messages import Message, ModelRequest, ToolCall
from harnesskit.models import base, get_model
from harnesskit.models._retry import RetryPolicy, backoff_seconds, retry_after_seconds
from harnesskit.models.openai_compat import OpenAICompatModel
from tests.support.loopback import LoopbackServer, Reply, completion, sse_events, tool_call

FAST = RetryPolicy(max_retries=3, initial_backoff_seconds=0.01, max_backoff_seconds=0.04)
TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "get_user",
            "description": "Look up a user.",
            "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {"name": "cancel", "parameters": {"type": "object", "properties": {}}},
    },
)


def make(srv: LoopbackServer, **kw) -> OpenAICompatModel:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout_seconds", 2.0)
    model = get_model("openai-compat:test-model", base_url=srv.url, **kw)
    assert isinstance(model, OpenAICompatModel)
    return model


def ask(text: str = "hi", *, tools=TOOLS, history=(), **settings) -> ModelRequest:
    messages = (*history, Message(role="user", content=text))
    fields = {k: settings.pop(k) for k in ("deadline_monotonic", "data_class", "on_attempt")
              if k in settings}  # fmt: skip
    return ModelRequest(messages=messages, tools=tools, settings=settings, **fields)


# -- presets, keys, guard --


@pytest.mark.parametrize(
    ("spec", "url"),
    [
        ("ollama:qwen2.5", "http://localhost:11434/v1"),
        ("vllm:Qwen/Qwen2.5-7B-Instruct", "http://localhost:8000/v1"),
        ("litellm:gpt-4o", "http://localhost:4000"),
        ("deepseek:deepseek-chat", "https://api.deepseek.com"),
        ("openai:gpt-4o-mini", "https://api.openai.com/v1"),
    ],
)
def test_presets_have_their_usual_base_urls(spec, url):
    model = get_model(spec)
    assert (model.name, model.base_url) == (spec, url)


def test_openai_compat_needs_a_base_url_and_a_model_name():
    with pytest.raises(UsageError, match="base_url"):
        get_model("openai-compat:m")
    with pytest.raises(UsageError, match="model name"):
        get_model("ollama:")


def test_key_comes_from_the_environment_and_never_shows(server, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-secret-123")
    model = get_model("deepseek:deepseek-chat", base_url=server.url, retry=FAST)
    server.script(Reply(json=completion("ok")))
    model.request(ask(tools=()))
    assert server.requests[0].headers["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(model)
    assert "sk-secret" not in str(vars(model).get("name"))


def test_api_key_env_names_another_variable(server, monkeypatch):
    monkeypatch.setenv("MY_GATEWAY_KEY", "k-42")
    model = make(server, api_key_env="MY_GATEWAY_KEY")
    server.script(Reply(json=completion("ok")))
    model.request(ask())
    assert server.requests[0].headers["authorization"] == "Bearer k-42"


def test_openai_compat_does_not_send_the_openai_key_to_other_servers(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai")
    server.script(Reply(json=completion("ok")))
    make(server).request(ask())
    assert "authorization" not in server.requests[0].headers


def test_hosted_preset_without_key_fails_before_sending(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = get_model("openai:gpt-4o-mini", base_url=server.url)
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        model.request(ask())
    assert server.requests == []


def test_blocked_model_requests_send_nothing(server, monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", False)
    with pytest.raises(UsageError, match="blocked"):
        make(server).request(ask())
    assert server.requests == []


def test_data_class_above_approval_is_not_sent(server):
    with pytest.raises(UsageError, match="approved up to 'internal'"):
        make(server, max_data_class="internal").request(ask(data_class="secret"))
    assert server.requests == []


# -- request shape and plain answers --


def test_request_body_is_chat_completions_with_settings_but_no_control_keys(server):
    server.script(
        Reply(json=completion("hello", usage={"prompt_tokens": 9, "completion_tokens": 2}))
    )
    calls = []
    response = make(server, on_attempt=calls.append).request(
        ask("hi", temperature=0, tool_choice="auto", deadline_monotonic=1e12, data_class="public")
    )
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.body == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": list(TOOLS),
        "temperature": 0,
        "tool_choice": "auto",
    }
    assert (response.message.content, response.finish_reason, response.model) == (
        "hello",
        "stop",
        "loopback-model",
    )
    assert (response.usage.prompt_tokens, response.usage.total_tokens) == (9, 11)
    assert calls == []


def test_tool_less_request_drops_tool_choice(server):
    server.script(Reply(json=completion("done")))
    make(server).request(ask(tools=(), tool_choice="required"))
    assert "tool_choice" not in server.requests[0].body
    assert "tools" not in server.requests[0].body


# -- streaming --


def chunk(delta=None, finish=None, **extra):
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": choices,
        **extra,
    }


def test_stream_accumulates_text_and_tool_call_deltas_ignoring_keepalives(server):
    events = sse_events(
        [
            ": keep-alive comment\n\n",
            "\n\n",
            chunk({"role": "assistant", "content": "Let me "}),
            chunk({"content": "check."}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "get_user", "arguments": ""},
                        }
                    ]
                }
            ),
            ":ping\n\n",
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"user_'}}]}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "function": {"name": "cancel", "arguments": "{}"},
                        }
                    ]
                }
            ),
            "\n",
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'id": "u1"}'}}]}),
            chunk({}, finish="tool_calls"),
            chunk(
                None,
                usage={
                    "prompt_tokens": 30,
                    "completion_tokens": 12,
                    "prompt_tokens_details": {"cached_tokens": 16},
                },
            ),
        ]
    )
    server.script(Reply(sse=events))
    response = make(server, stream=True).request(ask())
    assert server.requests[0].body["stream"] is True
    assert server.requests[0].body["stream_options"] == {"include_usage": True}
    msg = response.message
    assert msg.content == "Let me check."
    assert [(c.id, c.name, c.arguments) for c in msg.tool_calls] == [
        ("call_a", "get_user", {"user_id": "u1"}),
        ("call_b", "cancel", {}),
    ]
    assert response.finish_reason == "tool_calls"
    assert (response.usage.prompt_tokens, response.usage.cached_tokens) == (30, 16)


def test_stream_where_every_call_comes_at_index_0_keeps_them_apart_by_id(server):
    events = sse_events(
        [
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "x1",
                            "function": {"name": "get_user", "arguments": '{"user_id":'},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"u1"}'}}]}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "x2",
                            "function": {"name": "get_user", "arguments": '{"user_id":"u2"}'},
                        }
                    ]
                }
            ),
            chunk({}, finish="tool_calls"),
        ]
    )
    server.script(Reply(sse=events))
    response = make(server).request(ask(stream=True))
    assert [(c.id, c.arguments) for c in response.message.tool_calls] == [
        ("x1", {"user_id": "u1"}),
        ("x2", {"user_id": "u2"}),
    ]
    assert response.usage is None


def test_stream_cut_before_done_is_retried(server):
    cut = sse_events([chunk({"content": "par"})], done=False)
    server.script(
        Reply(sse=cut), Reply(sse=sse_events([chunk({"content": "full"}, finish="stop")]))
    )
    attempts = []
    response = make(server, stream=True, on_attempt=attempts.append).request(ask())
    assert response.message.content == "full"
    assert [a.error for a in attempts] == ["the stream ended before its last chunk (no [DONE])"]


def test_stream_error_status_is_classified_like_sync(server):
    server.script(Reply(status=401, json={"error": {"message": "Invalid API key"}}))
    with pytest.raises(ModelError, match="HTTP 401: Invalid API key") as info:
        make(server, stream=True).request(ask())
    assert info.value.status_code == 401
    assert len(server.requests) == 1


# -- tolerant normalization (R-M2) --


def answer(server, body, **settings):
    server.script(Reply(json=body))
    counter = iter(range(1, 100))
    model = make(server, id_factory=lambda: f"hk_{next(counter)}")
    history = settings.pop("history", ())
    return model.request(ask(history=history, **settings))


def test_arguments_as_object_string_double_encoded_or_null(server):
    calls = [
        {"id": "a", "function": {"name": "get_user", "arguments": {"user_id": "u1"}}},
        {"id": "b", "function": {"name": "get_user", "arguments": '{"user_id": "u2"}'}},
        {"id": "c", "function": {"name": "get_user", "arguments": json.dumps('{"user_id": "u3"}')}},
        {"id": "d", "function": {"name": "cancel", "arguments": "null"}},
        {"id": "e", "function": {"name": "cancel"}},
    ]
    response = answer(server, completion(tool_calls=calls))
    assert [c.arguments for c in response.message.tool_calls] == [
        {"user_id": "u1"},
        {"user_id": "u2"},
        {"user_id": "u3"},
        {},
        {},
    ]
    assert response.message.tool_calls[1].raw_arguments == '{"user_id": "u2"}'


def test_missing_empty_duplicate_and_reused_ids_are_replaced_and_recorded(server):
    earlier = Message(
        role="assistant", tool_calls=(ToolCall(id="call_old", name="cancel", arguments={}),)
    )
    history = (
        Message(role="user", content="x"),
        earlier,
        Message(role="tool", content="{}", tool_call_id="call_old"),
    )
    calls = [
        tool_call("get_user", {"user_id": "u1"}, id=None),
        tool_call("get_user", {"user_id": "u2"}, id=""),
        tool_call("get_user", {"user_id": "u3"}, id="dup"),
        tool_call("get_user", {"user_id": "u4"}, id="dup"),
        tool_call("cancel", {}, id="call_old"),
    ]
    response = answer(server, completion(tool_calls=calls), history=history)
    assert [(c.id, c.original_id) for c in response.message.tool_calls] == [
        ("hk_1", ""),
        ("hk_2", ""),
        ("dup", None),
        ("hk_3", "dup"),
        ("hk_4", "call_old"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        'Sure.\n```json\n{"name": "get_user", "arguments": {"user_id": "u1"}}\n```',
        'I will look it up: {"name": "get_user", "arguments": {"user_id": "u1"}} and then answer.',
        '<tool_call>\n{"name": "get_user", "arguments": {"user_id": "u1"}}\n</tool_call>',
        "```\n{'name': 'get_user', 'arguments': {'user_id': 'u1',},}\n```",
        '[TOOL_CALLS] [{"name": "get_user", "arguments": {"user_id": "u1"}}]',
        '```json\n{"tool_calls": [{"function": {"name": "get_user", '
        '"arguments": "{\\"user_id\\": \\"u1\\"}"}}]}\n```',
    ],
    ids=["fence", "prose", "hermes-tag", "python-ish-fence", "mistral", "nested-fence"],
)
def test_tool_calls_written_in_text_are_recovered(server, text):
    response = answer(server, completion(text))
    (call,) = response.message.tool_calls
    assert (call.name, call.arguments, call.recovered, call.id) == (
        "get_user",
        {"user_id": "u1"},
        True,
        "hk_1",
    )
    assert "get_user" not in (response.message.content or "")


def test_json_in_prose_that_names_no_offered_tool_stays_text(server):
    text = 'The config is {"name": "prod", "arguments": {"x": 1}} as documented.'
    response = answer(server, completion(text))
    assert response.message.tool_calls == ()
    assert response.message.content == text


def test_no_recovery_when_no_tools_were_offered(server):
    text = '```json\n{"name": "get_user", "arguments": {}}\n```'
    response = answer(server, completion(text), tools=())
    assert response.message.tool_calls == ()


def test_invented_tool_names_pass_through(server):
    response = answer(server, completion(tool_calls=[tool_call("book_the_moon", {"when": "now"})]))
    (call,) = response.message.tool_calls
    assert (call.name, call.arguments, call.parse_error) == ("book_the_moon", {"when": "now"}, None)


def test_cut_off_arguments_with_finish_length_are_marked_truncated(server):
    calls = [
        tool_call("get_user", '{"user_id": "u1"}', id="a"),
        tool_call("get_user", '{"user_id": "u2", "note": "very lo', id="b"),
    ]
    response = answer(server, completion(tool_calls=calls, finish_reason="length"))
    ok, cut = response.message.tool_calls
    assert (ok.arguments, ok.parse_error) == ({"user_id": "u1"}, None)
    assert (cut.arguments, cut.parse_error_type, cut.raw_arguments) == (
        None,
        "truncated_call",
        '{"user_id": "u2", "note": "very lo',
    )
    assert cut.parse_error.startswith("the arguments were cut off by the output token limit")
    assert response.finish_reason == "length"


def test_cut_off_call_in_a_fence_is_recovered_as_truncated(server):
    text = '```json\n{"name": "get_user", "arguments": {"user_id": "u'
    response = answer(server, completion(text, finish_reason="length"))
    (call,) = response.message.tool_calls
    assert (call.name, call.parse_error, call.recovered) == ("get_user", "truncated", True)


def test_bad_arguments_without_length_keep_the_json_error(server):
    response = answer(server, completion(tool_calls=[tool_call("get_user", "{user_id: u1}")]))
    (call,) = response.message.tool_calls
    assert call.arguments is None
    assert call.parse_error.startswith("arguments are not valid JSON")


def test_a_completion_without_choices_is_a_model_output_error(server):
    server.script(Reply(json={"id": "x", "choices": []}))
    with pytest.raises(ModelOutputError, match="no choices"):
        make(server).request(ask())


# -- usage (R-M4) --


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {
                "prompt_tokens": 100,
                "completion_tokens": 5,
                "prompt_tokens_details": {"cached_tokens": 64},
            },
            (100, 5, 64),
        ),
        (
            {
                "prompt_tokens": 100,
                "completion_tokens": 5,
                "prompt_cache_hit_tokens": 80,
                "prompt_cache_miss_tokens": 20,
            },
            (100, 5, 80),
        ),
        ({"prompt_tokens": 35, "completion_tokens": 12, "total_tokens": 109}, (35, 74, 0)),
        (None, None),
        ({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}, None),
    ],
    ids=["openai-cached", "deepseek-cache-hit", "hidden-reasoning-in-total", "absent", "zeros"],
)
def test_usage_as_providers_name_it(server, usage, expected):
    response = answer(server, completion("ok", usage=usage))
    got = response.usage
    assert (
        None if got is None else (got.prompt_tokens, got.completion_tokens, got.cached_tokens)
    ) == expected


# -- retries (R-M3) --


def test_503_then_success_reports_one_attempt(server):
    server.script(
        Reply(status=503, json={"error": {"message": "overloaded"}}), Reply(json=completion("ok"))
    )
    attempts = []
    response = make(server, on_attempt=attempts.append).request(ask())
    assert response.message.content == "ok"
    assert len(server.requests) == 2
    (a,) = attempts
    assert (a.attempt, a.status_code, a.error, a.will_retry, a.kind) == (
        1,
        503,
        "HTTP 503: overloaded",
        True,
        "retry",
    )
    assert 0 < a.wait_seconds <= FAST.initial_backoff_seconds


@pytest.mark.parametrize(
    "headers",
    [{"Retry-After": "0.3"}, {"retry-after-ms": "300"}],
    ids=["seconds", "milliseconds"],
)
def test_429_honours_retry_after(server, headers):
    server.script(
        Reply(status=429, headers=headers, json={"error": {"message": "slow down"}}),
        Reply(json=completion("ok")),
    )
    attempts, slept = [], []
    model = make(server, on_attempt=attempts.append, sleep=slept.append)
    assert model.request(ask()).message.content == "ok"
    assert slept == [pytest.approx(0.3)]
    assert attempts[0].wait_seconds == pytest.approx(0.3)


def test_retry_after_as_http_date():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    header = format_datetime(now + timedelta(seconds=7), usegmt=True)
    assert retry_after_seconds({"retry-after": header}, now=now) == pytest.approx(7)
    assert retry_after_seconds({"retry-after": "garbage"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_is_exponential_capped_and_jittered():
    policy = RetryPolicy(initial_backoff_seconds=1, max_backoff_seconds=5, jitter=0.5)
    waits = [backoff_seconds(n, policy) for n in (1, 2, 3, 4, 5) for _ in range(50)]
    assert all(0.5 <= w <= 1 for w in waits[:50])
    assert all(2.5 <= w <= 5 for w in waits[-50:])


def test_retry_after_past_the_deadline_gives_up_without_sleeping(server):
    import time

    server.script(
        Reply(status=429, headers={"Retry-After": "5"}, json={"error": {"message": "rl"}})
    )
    slept, attempts = [], []
    model = make(server, sleep=slept.append, on_attempt=attempts.append)
    with pytest.raises(ModelError, match="would pass the deadline") as info:
        model.request(ask(deadline_monotonic=time.monotonic() + 1.0))
    assert slept == []
    assert info.value.status_code == 429
    assert [(a.will_retry, a.wait_seconds) for a in attempts] == [(False, 0.0)]


def test_max_wait_seconds_bounds_the_whole_request(server):
    server.script(*[Reply(status=503, json={"error": {"message": "busy"}})] * 10)
    slow = RetryPolicy(
        max_retries=10, initial_backoff_seconds=0.2, max_backoff_seconds=0.2, jitter=0
    )
    with pytest.raises(ModelError, match="deadline"):
        make(server, retry=slow, max_wait_seconds=0.5).request(ask())
    assert len(server.requests) <= 3


def test_retry_after_longer_than_the_cap_gives_up(server):
    server.script(
        Reply(status=429, headers={"Retry-After": "3600"}, json={"error": {"message": "rl"}})
    )
    with pytest.raises(ModelError, match="asked to wait 3600s"):
        make(server).request(ask())


def test_persistent_503_fails_after_the_retries(server):
    server.script(*[Reply(status=503, json={"error": {"message": "down"}})] * 4)
    attempts = []
    with pytest.raises(ModelError, match=r"HTTP 503: down \(gave up after 4 attempts\)") as info:
        make(server, on_attempt=attempts.append).request(ask())
    assert info.value.status_code == 503
    assert len(server.requests) == 4
    assert [a.will_retry for a in attempts] == [True, True, True, False]


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 422])
def test_client_errors_fail_at_once_with_the_providers_message(server, status):
    server.script(Reply(status=status, json={"error": {"message": f"nope {status}", "type": "x"}}))
    with pytest.raises(ModelError, match=f"HTTP {status}: nope {status}") as info:
        make(server).request(ask())
    assert info.value.status_code == status
    assert len(server.requests) == 1
    assert f"nope {status}" in info.value.body


def test_slow_response_past_the_timeout_is_retried(server):
    # the retries are answered at once, but on a loaded machine one of them can miss the
    # 0.2 s budget too (it was flaky with one retry and one spare reply): spares are scripted,
    # and every failed attempt must be a timeout, so the slow one is what was retried
    ok = [Reply(json=completion("ok"))] * 4
    server.script(Reply(json=completion("late"), delay_seconds=1.0), *ok)
    attempts = []
    retry = RetryPolicy(max_retries=4, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
    model = make(server, timeout_seconds=0.2, retry=retry, on_attempt=attempts.append)
    response = model.request(ask())
    assert response.message.content == "ok"
    assert attempts[0].status_code is None
    assert attempts[0].error.startswith("timeout after 0.20s")
    assert all(a.status_code is None and a.error.startswith("timeout") for a in attempts)
    assert all(a.will_retry for a in attempts)


def test_truncated_json_body_is_retried(server):
    server.script(
        Reply(body=b'{"choices": [{"message": {"role": "assis'), Reply(json=completion("ok"))
    )
    attempts = []
    assert make(server, on_attempt=attempts.append).request(ask()).message.content == "ok"
    assert "not valid JSON" in attempts[0].error


def test_connection_closed_mid_body_is_retried(server):
    body = json.dumps(completion("ok")).encode()
    server.script(Reply(body=body[:20], claim_length=len(body)), Reply(json=completion("ok")))
    attempts = []
    assert make(server, on_attempt=attempts.append).request(ask()).message.content == "ok"
    assert attempts[0].error.startswith("connection failed")


def test_connection_refused_is_retried_then_fails(monkeypatch):
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    model = get_model("vllm:m", base_url=f"http://127.0.0.1:{port}/v1", retry=FAST)
    with pytest.raises(ModelError, match="connection failed.*gave up after 4 attempts"):
        model.request(ask())


# -- model-output errors: one corrective request --


def test_ollama_error_parsing_tool_call_gets_one_corrective_request(server):
    message = "error parsing tool call: raw='{\"user_id\": u1}', err=invalid character 'u'"
    server.script(
        Reply(status=500, json={"error": {"message": message, "type": "api_error"}}),
        Reply(json=completion(tool_calls=[tool_call("get_user", {"user_id": "u1"})])),
    )
    attempts = []
    response = make(server, on_attempt=attempts.append).request(ask("find u1"))
    assert response.message.tool_calls[0].arguments == {"user_id": "u1"}
    first, second = (r.body["messages"] for r in server.requests)
    assert second[: len(first)] == first
    fixed = second[len(first) :]
    assert fixed[0] == {"role": "assistant", "content": '{"user_id": u1}'}
    assert fixed[1]["role"] == "user"
    assert "error parsing tool call" in fixed[1]["content"]
    assert [(a.kind, a.status_code) for a in attempts] == [("corrective", 500)]


def test_second_model_output_error_raises_model_output_error(server):
    bad = Reply(
        status=400,
        json={
            "error": {
                "code": "tool_use_failed",
                "message": "bad call",
                "failed_generation": "maybe",
            }
        },
    )
    server.script(bad, bad)
    with pytest.raises(ModelOutputError, match="rejected twice"):
        make(server).request(ask())
    assert len(server.requests) == 2


def test_the_models_hook_and_the_requests_hook_both_see_each_attempt(server):
    server.script(Reply(status=502, json={"error": {"message": "bad gateway"}}))
    server.script(Reply(json=completion("ok")))
    mine, loops = [], []
    make(server, on_attempt=mine.append).request(ask(on_attempt=loops.append))
    assert [a.status_code for a in mine] == [a.status_code for a in loops] == [502]


def test_stream_with_crlf_line_endings_and_multiline_data(server):
    text = json.dumps(chunk({"content": "crlf ok"}, finish="stop"))
    cut = text.index(" ", len(text) // 2)  # data lines join with "\n": split between tokens
    events = [
        f": hi\r\n\r\ndata: {text[:cut]}\r\ndata:{text[cut:]}\r\n\r\n",
        "data: [DONE]\r\n\r\n",
    ]
    server.script(Reply(sse=events))
    assert make(server, stream=True).request(ask()).message.content == "crlf ok"


def test_stream_dripping_past_the_deadline_stops(server):
    import time

    drip = sse_events([chunk({"content": "."})] * 20)
    server.script(Reply(sse=drip, sse_gap_seconds=0.05))
    with pytest.raises(ModelError, match="deadline passed while the stream"):
        make(server, stream=True).request(ask(deadline_monotonic=time.monotonic() + 0.3))


def test_error_parsing_tool_call_inside_a_stream_gets_a_corrective_request(server):
    bad = sse_events(['data: {"error": {"message": "error parsing tool call: raw=\'{x\'"}}\n\n'])
    server.script(
        Reply(sse=bad), Reply(sse=sse_events([chunk({"content": "fixed"}, finish="stop")]))
    )
    attempts = []
    response = make(server, stream=True, on_attempt=attempts.append).request(ask())
    assert response.message.content == "fixed"
    assert [a.kind for a in attempts] == ["corrective"]
    assert "error parsing tool call" in server.requests[1].body["messages"][-1]["content"]


def test_a_streamed_answer_keeps_llama_servers_timings(server):
    from harnesskit.models.local import server_timings

    timings = {"cache_n": 900, "prompt_n": 100, "predicted_n": 7, "prompt_ms": 50.0,
               "predicted_ms": 70.0}  # fmt: skip
    events = sse_events(
        [
            chunk({"role": "assistant", "content": "Hi."}),
            chunk({}, finish="stop", timings=timings),
            chunk(None, usage={"prompt_tokens": 1000, "completion_tokens": 7}),
        ]
    )
    server.script(Reply(sse=events))
    response = make(server, stream=True).request(ask())
    t = server_timings(response)
    assert (t.prompt_cached, t.prompt_evaluated, t.generated) == (900, 100, 7)
    assert t.cache_share == 0.9
