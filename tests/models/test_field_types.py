"""Every field of a reply the client reads is type-checked where it is read, streamed or not.

A streamed tool-call `index` of `[0]` raised a raw `TypeError`; content `[5, null, {...}]`
became no content and the run ended `stop`; `finish_reason: {"a": 1}` was stored as its repr;
a stream chunk `{"error": null}` failed as "provider error in stream: None"; a streamed call's
`arguments: 5` became `{}`. Each is now the same R-M2 error a wrong shape already gave: a
`ModelOutputError` for the reply, or a call answered `invalid_argument` the model can fix.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import ModelError, ModelOutputError
from harnesskit.models._retry import RetryPolicy
from tests.support.edge_client import ask, chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events

ONCE = RetryPolicy(max_retries=0)


def _stream_call(call: dict) -> list[str]:
    return sse_events([chunk({"tool_calls": [call]}, finish="tool_calls")])


@pytest.mark.parametrize("index", [[0], {"i": 0}, "0", True, 1.5], ids=repr)
def test_a_streamed_tool_call_index_that_is_not_an_integer_is_an_output_error(server, index):
    call = {"index": index, "id": "c1", "function": {"name": "lookup_order", "arguments": "{}"}}
    server.script(Reply(sse=_stream_call(call)))
    with pytest.raises(ModelOutputError, match="tool call index is a JSON .*, not an integer"):
        make(server, stream=True, retry=ONCE).request(ask())
    assert len(server.requests) == 1


def test_a_streamed_choice_index_that_is_not_an_integer_is_an_output_error(server):
    event = {"choices": [{"index": "0", "delta": {"content": "x"}, "finish_reason": "stop"}]}
    server.script(Reply(sse=sse_events([event])))
    with pytest.raises(ModelOutputError, match="choice's index is a JSON string"):
        make(server, stream=True, retry=ONCE).request(ask())


@pytest.mark.parametrize("finish", [{"a": 1}, 5, ["stop"]], ids=["object", "number", "array"])
def test_a_finish_reason_that_is_not_a_string_is_an_output_error_streamed_or_not(server, finish):
    body = completion("x")
    body["choices"][0]["finish_reason"] = finish
    event = {"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": finish}]}
    server.script(Reply(json=body), Reply(sse=sse_events([event])))
    model = make(server, retry=ONCE)
    with pytest.raises(ModelOutputError, match="finish_reason is a JSON .*, not a string"):
        model.request(ask())
    with pytest.raises(ModelOutputError, match="finish_reason is a JSON .*, not a string"):
        model.request(ask(stream=True))


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ([5, None, {"type": "text"}], "part 0 is a JSON number"),
        ([{"type": "text", "text": "a"}, None], "part 1 is null"),
        ([{"type": "text"}], "part 0 is a text part whose text is missing"),
        ([{"type": "image_url", "text": "a"}], "part 0 is a part of type 'image_url'"),
        ([{"type": "text", "text": 5}], "whose text is number"),
    ],
    ids=["number", "null", "no-text", "image", "text-number"],
)
def test_a_content_list_holds_text_parts_only_streamed_or_not(server, tmp_path, content, said):
    event = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": "stop"}]}
    server.script(Reply(json=completion(content)), Reply(sse=sse_events([event])))  # type: ignore[arg-type]
    model = make(server, retry=ONCE)
    with pytest.raises(ModelOutputError, match=said) as plain:
        model.request(ask())
    with pytest.raises(ModelOutputError, match=said):
        model.request(ask(stream=True))
    assert "text parts only" in str(plain.value)


def test_a_list_of_text_parts_is_read_streamed_or_not(server):
    parts = [{"type": "text", "text": "All "}, {"text": "good."}]
    event = {"choices": [{"index": 0, "delta": {"content": parts}, "finish_reason": "stop"}]}
    server.script(Reply(json=completion(parts)), Reply(sse=sse_events([event])))  # type: ignore[arg-type]
    model = make(server, retry=ONCE)
    assert model.request(ask()).message.content == "All good."
    assert model.request(ask(stream=True)).message.content == "All good."


def test_a_stream_chunk_with_error_null_is_no_error(server):
    events = sse_events(
        [
            {**chunk({"content": "fine"}), "error": None},
            {**chunk({}, finish="stop"), "error": None},
            {"error": None, "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
        ]
    )
    server.script(Reply(sse=events))
    assert make(server, stream=True, retry=ONCE).request(ask()).message.content == "fine"


@pytest.mark.parametrize(
    ("error", "said"),
    [
        ({"message": "quota", "code": 429}, "provider error in stream: quota"),
        ("overloaded", "provider error in stream: overloaded"),
        ({"message": {"detail": "x"}}, 'provider error in stream: {"detail": "x"}'),
        (5, 'provider error in stream: {"error": 5}'),
    ],
    ids=["object", "string", "message-object", "number"],
)
def test_a_stream_error_object_is_read_as_a_plain_one(server, error, said):
    server.script(Reply(sse=sse_events([{"error": error}])))
    with pytest.raises(ModelError, match="provider error in stream") as info:
        make(server, stream=True, retry=ONCE).request(ask())
    assert said in str(info.value)
    assert "None" not in str(info.value)


def _answer(run: hk.Run) -> str:
    (result,) = run.log.of_type("tool.result")
    assert result.ok is False
    return json.loads(result.content)["message"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(
    ("function", "said"),
    [
        ("lookup_order", "the tool call's function is a JSON string, not an object"),
        ({"name": 5, "arguments": "{}"}, "the tool call's function name is a JSON number"),
        ({"name": "lookup_order", "arguments": 5}, "arguments must be a JSON object, got int"),
        ({"name": "lookup_order", "arguments": ["x"]}, "arguments must be a JSON object"),
    ],
    ids=["function-str", "name-int", "args-int", "args-list"],
)
def test_a_tool_call_field_of_the_wrong_type_is_answered_streamed_or_not(
    server, tmp_path, stream, function, said
):
    call = {"index": 0, "id": "c1", "type": "function", "function": function}
    first = (
        Reply(sse=_stream_call(call))
        if stream
        else Reply(json=completion(tool_calls=[call], finish_reason="tool_calls"))
    )
    done = sse_events([chunk({"content": "done"}, finish="stop")])
    server.script(first, Reply(sse=done) if stream else Reply(json=completion("done")))
    model = make(server, stream=stream, retry=ONCE)
    run = hk.Harness([lookup_order], model, log_dir=tmp_path).run("Where is order A?")

    assert said in _answer(run)
    assert run.final_text == "done"
