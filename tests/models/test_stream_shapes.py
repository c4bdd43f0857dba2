"""Streams and bodies of the wrong shape: a stream agrees with a plain body, over loopback.

A stream of `data: [DONE]` alone is no answer, as an empty body is; chunks whose `choices` or
`delta` have the wrong type are `ModelOutputError`s, not skipped; SSE lines may end with CR,
CRLF or LF; `tool_calls` given as a bare name, and `content` that is not text, are errors the
model (or the user) sees instead of a silent `stop` with no content.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import ModelOutputError
from tests.support.edge_client import ask, chunk, lookup_order, make, run_once
from tests.support.loopback import Reply, completion, sse_events


def test_a_stream_of_done_alone_is_no_answer_as_an_empty_body_is(server):
    server.script(Reply(sse=["data: [DONE]\n\n"]), Reply(json={"choices": []}))
    model = make(server, stream=True)
    with pytest.raises(ModelOutputError, match="no choices") as streamed:
        model.request(ask())
    with pytest.raises(ModelOutputError, match="no choices") as plain:
        model.request(ask(stream=False))
    assert str(streamed.value) == str(plain.value)
    assert len(server.requests) == 2  # an output error is not retried blindly


@pytest.mark.parametrize(
    "event",
    ['data: {"choices": "x"}\n\n', 'data: {"choices": [{"index": 0, "delta": "hey"}]}\n\n'],
    ids=["choices-a-string", "delta-a-string"],
)
def test_a_stream_chunk_of_the_wrong_shape_is_a_model_output_error(server, event):
    server.script(Reply(sse=[event, *sse_events([chunk({}, finish="stop")])]))
    with pytest.raises(ModelOutputError, match="not a list|not an object"):
        make(server, stream=True).request(ask())
    assert len(server.requests) == 1


def test_a_usage_only_chunk_with_empty_choices_is_still_fine(server):
    events = sse_events([chunk({"content": "ok"}, finish="stop"), chunk(None)])
    server.script(Reply(sse=events))
    assert make(server, stream=True).request(ask()).message.content == "ok"


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"], ids=["cr", "crlf", "lf"])
def test_sse_lines_may_end_with_cr_crlf_or_lf(server, end):
    events = sse_events([chunk({"content": "All "}), chunk({"content": "good."}, finish="stop")])
    server.script(Reply(sse=[e.replace("\n", end) for e in events]))
    assert make(server, stream=True).request(ask()).message.content == "All good."


def test_a_crlf_split_across_two_writes_is_one_line_end(server):
    first = json.dumps(chunk({"content": "a"}))
    second = json.dumps(chunk({"content": "b"}, finish="stop"))
    pieces = [f"data: {first}\r", f"\n\r\ndata: {second}\r\n\r", "\ndata: [DONE]\r\n\r\n"]
    server.script(Reply(sse=pieces, sse_gap_seconds=0.05))
    assert make(server, stream=True).request(ask()).message.content == "ab"


def test_tool_calls_given_as_a_bare_name_is_answered_with_an_error(server, tmp_path):
    body = completion(finish_reason="tool_calls")
    body["choices"][0]["message"]["tool_calls"] = "lookup_order"
    run = run_once(server, body, tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert result.ok is False
    answer = json.loads(result.content)
    assert answer["error_type"] == "invalid_argument"
    assert "the tool call is str, not an object" in answer["message"]
    assert run.final_text == "done"


def test_tool_calls_given_as_a_bare_name_in_a_stream_is_answered_the_same(server, tmp_path):
    events = sse_events([chunk({"tool_calls": "lookup_order"}, finish="tool_calls")])
    server.script(Reply(sse=events), Reply(json=completion("done")))
    h = hk.Harness([lookup_order], make(server, stream=True), log_dir=tmp_path)
    run = h.run("Where is order A?")

    (result,) = run.log.of_type("tool.result")
    assert "the tool call is str, not an object" in json.loads(result.content)["message"]


@pytest.mark.parametrize("content", [12345, {"a": 1}, True], ids=["number", "object", "bool"])
def test_content_that_is_not_text_is_a_model_output_error(server, tmp_path, content):
    run = run_once(server, completion(content), tmp_path)  # type: ignore[arg-type]

    assert run.finish_reason == "error"
    assert isinstance(run.error, ModelOutputError)
    assert "not text" in str(run.error)
