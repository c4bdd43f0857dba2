"""Hypothesis fuzzing of the response parser: malformed bodies raise only documented errors.

Documented: `ModelError` (the body is not a completion) and its subclass `ModelOutputError`
(a completion with nothing usable). Everything else must come back as a `ModelResponse`.
"""

from __future__ import annotations

import json
import os

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harnesskit.errors import ModelError
from harnesskit.messages import Message, ModelRequest, ModelResponse
from harnesskit.models import base
from harnesskit.models._parse import parse_completion, recover_calls
from harnesskit.models._retry import RetryPolicy
from harnesskit.models._sse import StreamAccumulator, sse_data
from harnesskit.models.openai_compat import OpenAICompatModel

TOOLS = ({"type": "function", "function": {"name": "get_user", "parameters": {}}},)
NAMES = ["get_user"]

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
keys = st.sampled_from(
    [
        "id",
        "type",
        "function",
        "name",
        "arguments",
        "content",
        "tool_calls",
        "message",
        "choices",
        "finish_reason",
        "usage",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "prompt_tokens_details",
        "cached_tokens",
        "error",
        "delta",
        "index",
        "refusal",
        "role",
    ]
)
# Bodies shaped like completions, with any value in any slot.
shaped = st.recursive(
    scalars,
    lambda children: st.dictionaries(keys, children, max_size=5) | st.lists(children, max_size=3),
    max_leaves=16,
)
argument_texts = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda s, n: s[:n],
        st.just('{"user_id": "u1", "x": [1, 2, {"y": "z"}]}'),
        st.integers(0, 45),
    ),
)


def completion(message, finish, usage):
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}


near_miss = st.builds(
    completion,
    st.fixed_dictionaries(
        {},
        optional={
            "content": st.one_of(st.none(), st.text(max_size=60), json_values),
            "tool_calls": st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "id": st.one_of(st.none(), st.just(""), st.just("dup"), json_values),
                        "function": st.one_of(
                            json_values,
                            st.fixed_dictionaries(
                                {},
                                optional={
                                    "name": st.one_of(st.just("get_user"), json_values),
                                    "arguments": st.one_of(argument_texts, json_values),
                                },
                            ),
                        ),
                    },
                ),
                max_size=3,
            ),
        },
    ),
    st.one_of(st.none(), st.sampled_from(["stop", "length", "tool_calls"]), json_values),
    st.one_of(st.none(), json_values, st.dictionaries(keys, st.integers() | st.floats())),
)
text_with_json = st.lists(
    st.one_of(
        st.text(max_size=20),
        st.sampled_from(
            [
                "```",
                "```json\n",
                "<tool_call>",
                "</tool_call>",
                "[TOOL_CALLS]",
                '{"name": "get_user", "arguments": ',
                '{"a": ',
                "}",
                "]",
                "'",
                "{",
                '"get_user"',
            ]
        ),
    ),
    max_size=12,
).map("".join)

# HK_FUZZ_EXAMPLES=5000 for a longer hunt; the default keeps the suite fast.
EXAMPLES = int(os.environ.get("HK_FUZZ_EXAMPLES", "250"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(body) -> None:
    try:
        response = parse_completion(body, model="fuzz", tool_names=NAMES, taken_ids={"dup"})
    except ModelError:
        return
    assert isinstance(response, ModelResponse)
    ids = [c.id for c in response.message.tool_calls]
    assert all(ids)
    assert len(set(ids)) == len(ids)
    assert "dup" not in ids
    json.dumps(response.to_dict())  # what the loop logs is always JSON


@FUZZ
@given(shaped)
def test_any_json_body_parses_or_raises_a_documented_error(body):
    check(body)


@FUZZ
@given(near_miss)
def test_near_miss_completions_parse_or_raise_a_documented_error(body):
    check(body)


@FUZZ
@given(text_with_json, st.sampled_from([None, "stop", "length"]))
def test_text_recovery_never_raises(text, finish):
    calls, rest = recover_calls(text, NAMES, finish_reason=finish)
    assert all(c.recovered for c in calls)
    assert rest is None or isinstance(rest, str)


@FUZZ
@given(
    st.lists(
        st.one_of(st.text(max_size=30), st.sampled_from(["data: [DONE]", "", ": c"])), max_size=15
    )
)
def test_stream_lines_fold_or_raise_a_documented_error(lines):
    acc = StreamAccumulator()
    try:
        for payload in sse_data(lines):
            acc.feed(payload)
    except ModelError:
        return
    check(acc.body())


@FUZZ
@given(st.lists(shaped, max_size=6))
def test_stream_chunks_of_any_shape_fold_or_raise_a_documented_error(chunks):
    acc = StreamAccumulator()
    try:
        for chunk in chunks:
            acc.feed(json.dumps(chunk))
    except ModelError:
        return
    check(acc.body())


@pytest.fixture(scope="module")
def allow():
    before = base.ALLOW_MODEL_REQUESTS
    base.ALLOW_MODEL_REQUESTS = True
    yield
    base.ALLOW_MODEL_REQUESTS = before


@settings(
    max_examples=max(50, EXAMPLES // 2),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.sampled_from([200, 400, 429, 500, 503, 418]),
    st.one_of(st.binary(max_size=80), shaped.map(lambda v: json.dumps(v).encode())),
    st.booleans(),
)
def test_the_client_raises_only_documented_errors_for_any_http_answer(allow, status, body, stream):
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body)

    model = OpenAICompatModel(
        "m",
        base_url="http://fuzz.invalid/v1",
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        retry=RetryPolicy(max_retries=1, initial_backoff_seconds=0, max_backoff_seconds=0),
        sleep=lambda s: None,
    )
    messages = (Message(role="user", content="hi"),)
    try:
        response = model.request(
            ModelRequest(messages=messages, tools=TOOLS, settings={"stream": stream})
        )
    except ModelError:
        return
    assert isinstance(response, ModelResponse)
