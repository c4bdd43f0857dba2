"""Property tests: parsing never crashes, whatever the provider or the tools send (R-M2).

Hypothesis draws argument texts, response bodies and stream chunks from the hostile families
(lone surrogates, huge integers, deep nesting, NaN/Infinity, duplicate keys, invalid UTF-8, NUL,
long strings) and checks that only documented harnesskit errors come out, that everything
left is encodable, and that what would be echoed to a provider is one strict JSON object.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harnesskit as hk
from harnesskit import _json
from harnesskit.errors import HarnessError, ModelError
from harnesskit.models import base
from harnesskit.models._parse import parse_completion
from harnesskit.models._retry import RetryPolicy
from harnesskit.models._sse import StreamAccumulator

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

pieces = st.sampled_from(
    [
        '"\\ud83d"',
        '"\\ude00"',
        '"\\u0000"',
        "9" * 4500,
        "NaN",
        "Infinity",
        "[" * 1200 + "]" * 1200,
        '"<|im_end|>"',
        "true",
        "{}",
        '"x"',
        "1e999",
        "-0",
    ]
)


@st.composite
def argument_texts(draw: Any) -> str:
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return draw(st.text())
    if kind == 1:
        return '{"a": ' + draw(pieces) + "}"
    if kind == 2:
        return '{"a": ' + draw(pieces) + ', "a": ' + draw(pieces) + "}"
    if kind == 3:
        return "```json\n" + '{"a": ' + draw(pieces) + "}" + draw(st.sampled_from(["```", ""]))
    if kind == 4:
        return '{"a": ' + draw(pieces) + "}" + draw(st.text(max_size=20))
    if kind == 5:
        text = '{"a": ' + draw(pieces) + "}"
        return text[: draw(st.integers(0, len(text)))]
    return json.dumps(
        draw(
            st.recursive(
                st.none() | st.text(),
                lambda c: st.lists(c) | st.dictionaries(st.text(), c),
                max_leaves=10,
            )
        )
    )


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(name)

    return json.loads(text, parse_constant=refuse)


@SETTINGS
@given(argument_texts(), st.booleans(), st.integers(1, 4096) | st.none())
def test_reading_arguments_never_raises_and_the_wire_form_is_one_strict_object(
    text, cut_off, max_tokens
):
    read = _json.read_arguments(text, cut_off=cut_off, max_tokens=max_tokens)
    if read.arguments is None:
        assert read.error and read.error_type in ("invalid_argument", "truncated_call")
        assert read.hint
        if read.error_type == "truncated_call" and cut_off and max_tokens is not None:
            assert f"max_tokens={max_tokens}" in read.hint
    call = hk.ToolCall(
        id="c1",
        name="f",
        arguments=read.arguments,
        raw_arguments=text,
        parse_error=read.error,
        repair=read.repair,
    )
    wire = call.to_openai()["function"]["arguments"]
    assert isinstance(_strict(wire), dict)
    assert len(wire) <= max(len(text), 1) + 400 or read.arguments is not None
    wire.encode("utf-8")  # nothing unencodable goes back
    if read.arguments is None:
        assert "<|im_end|>" not in wire and "\x00" not in wire


bodies = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda c: (
        st.lists(c, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "message",
                    "content",
                    "tool_calls",
                    "function",
                    "arguments",
                    "name",
                    "id",
                    "usage",
                    "error",
                    "finish_reason",
                    "delta",
                    "index",
                ]
            )
            | st.text(max_size=5),
            c,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@SETTINGS
@given(bodies, st.integers(1, 4096) | st.none())
def test_parse_completion_raises_only_model_errors(body, max_tokens):
    try:
        response = parse_completion(body, model="m", tool_names=["echo"], max_tokens=max_tokens)
    except ModelError:
        return
    json.dumps(response.message.to_openai(), ensure_ascii=False).encode("utf-8", "surrogatepass")


@SETTINGS
@given(
    st.lists(
        st.one_of(
            st.text(), pieces.map(lambda p: '{"choices": [{"delta": {"content": ' + p + "}}]}")
        ),
        max_size=6,
    )
)
def test_the_stream_accumulator_raises_only_model_errors(payloads):
    acc = StreamAccumulator()
    for p in payloads:
        try:
            acc.feed(p)
        except ModelError:
            return
    body, why = _json.clean(acc.body())
    assert why is None or "nested" in why
    if why is None:
        json.dumps(body, ensure_ascii=False).encode("utf-8")


raw_bodies = st.one_of(
    st.binary(max_size=300),
    argument_texts().map(
        lambda a: json.dumps(
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {"id": "c", "function": {"name": "echo", "arguments": a}}
                            ],
                        }
                    }
                ]
            }
        ).encode()
    ),
    pieces.map(
        lambda p: (
            '{"choices": [{"message": {"content": '
            + p
            + '}}], "usage": {"prompt_tokens": '
            + p
            + "}}"
        ).encode()
    ),
)


@hk.tool
def echo(text: str) -> str:
    """Echo."""
    return text


@SETTINGS
@given(raw_bodies)
def test_a_full_run_on_any_body_finishes_with_a_documented_reason(body):
    served = iter([body])

    def handler(request: httpx.Request) -> httpx.Response:
        nxt = next(served, None)
        if nxt is None:
            nxt = json.dumps({"choices": [{"message": {"content": "done"}}]}).encode()
        return httpx.Response(200, content=nxt)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    model = hk.get_model(
        "openai-compat:m",
        base_url="http://fuzz.invalid/v1",
        http_client=client,
        retry=RetryPolicy(max_retries=0),
    )
    run = hk.Harness([echo], model, limits=hk.Limits(max_steps=3)).start("go")
    allowed, base.ALLOW_MODEL_REQUESTS = base.ALLOW_MODEL_REQUESTS, True
    try:
        run.run()
    except HarnessError:
        pass
    finally:
        base.ALLOW_MODEL_REQUESTS = allowed
    assert run.error is None or isinstance(run.error, HarnessError)
    assert run.finish_reason in {"stop", "max_steps", "error", "max_consecutive_errors"}
    assert [e for e in run.log if e.type == "run.finished"]


def test_the_answer_is_the_choice_with_index_0_wherever_it_is_listed():
    def choice(i, text):
        return {
            "index": i,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }

    body = {"choices": [choice(1, "SECOND"), choice(0, "FIRST")]}
    assert parse_completion(body, model="m").message.content == "FIRST"
    # no index 0 (or indexes that are not ints): the first listed, as before
    assert (
        parse_completion({"choices": [choice(2, "A"), choice(1, "B")]}, model="m").message.content
        == "A"
    )
    assert (
        parse_completion(
            {"choices": [choice(True, "A"), choice(0, "B")]}, model="m"
        ).message.content
        == "B"
    )
