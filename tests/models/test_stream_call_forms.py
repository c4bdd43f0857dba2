"""A streamed reply is read as the same reply sent whole: tool-call forms and reasoning.

A streamed call with its name and arguments at the top level (`{"name": 5, ...}`, no
`function` object) became a call named `''` with `{}` arguments and no error, where the plain
path answers it naming the field; a `tool_calls` entry that is not an object moved behind the
turn's other calls; a `reasoning_content` that is not text was dropped from the folded body,
which a plain body keeps as sent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import harnesskit as hk
from harnesskit.models._retry import RetryPolicy
from tests.support.edge_client import ask, chunk, lookup_order, make
from tests.support.loopback import LoopbackServer, Reply, completion, sse_events

ONCE = RetryPolicy(max_retries=0)
GOOD = {"index": 1, "id": "c2", "type": "function"}
GOOD["function"] = {"name": "lookup_order", "arguments": '{"order_id": "A"}'}


def _reply(message: dict[str, Any], stream: bool) -> Reply:
    if stream:
        return Reply(sse=sse_events([chunk(message, finish="tool_calls")]))
    body = completion(finish_reason="tool_calls")
    body["choices"][0]["message"].update(message)
    return Reply(json=body)


def _calls(server: LoopbackServer, message: dict[str, Any], stream: bool) -> list[tuple]:
    server.script(_reply(message, stream))
    response = make(server, retry=ONCE).request(ask(stream=stream))
    return [(c.name, c.arguments, c.parse_error) for c in response.message.tool_calls]


@pytest.mark.parametrize(
    "calls",
    [
        [{"index": 0, "id": "c1", "name": 5, "arguments": "{}"}],
        [{"index": 0, "id": "c1", "function": None, "name": 5}],
        [{"index": 0, "id": "c1", "name": "lookup_order", "arguments": '{"order_id": "A"}'}],
        [{"index": 0, "id": "c1", "name": "lookup_order", "parameters": {"order_id": "A"}}],
        ["x", GOOD],
        [GOOD, 5, None],
    ],
    ids=["flat-name-number", "null-function", "flat", "flat-parameters", "bare-first", "mixed"],
)
def test_a_streamed_call_is_read_as_the_same_call_sent_whole(server, calls):
    plain = _calls(server, {"tool_calls": calls}, stream=False)
    streamed = _calls(server, {"tool_calls": calls}, stream=True)

    assert streamed == plain


def test_a_streamed_name_that_is_not_a_string_is_answered_naming_the_field(server, tmp_path):
    call = {"index": 0, "id": "c1", "type": "function", "name": 5, "arguments": "{}"}
    done = sse_events([chunk({"content": "done"}, finish="stop")])
    server.script(_reply({"tool_calls": [call]}, stream=True), Reply(sse=done))
    run = hk.Harness([lookup_order], make(server, stream=True, retry=ONCE), log_dir=tmp_path).run(
        "Where is order A?"
    )

    (result,) = run.log.of_type("tool.result")
    assert result.ok is False
    said = json.loads(result.content)["message"]
    assert "the tool call's function name is a JSON number, not a string" in said
    assert run.final_text == "done"


@pytest.mark.parametrize("value", [5, {"steps": ["a"]}, ["a", "b"]], ids=repr)
def test_a_streamed_reasoning_that_is_not_text_is_kept_as_a_plain_body_keeps_it(server, value):
    body = completion("hi")
    body["choices"][0]["message"]["reasoning_content"] = value
    events = sse_events([chunk({"content": "hi", "reasoning_content": value}, finish="stop")])
    server.script(Reply(json=body), Reply(sse=events))
    model = make(server, retry=ONCE)
    plain, streamed = model.request(ask()), model.request(ask(stream=True))

    assert streamed.message == plain.message
    assert streamed.raw["choices"][0]["message"]["reasoning_content"] == value
    assert plain.raw["choices"][0]["message"]["reasoning_content"] == value
