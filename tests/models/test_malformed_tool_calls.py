"""Malformed `tool_calls` entries become errors the model can act on (R-M2), never a silent stop.

Over a real loopback HTTP server: entries that are not objects are answered with a structured
tool error, and a reply that says `finish_reason="tool_calls"` but holds no call gets one
corrective request.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from tests.support.edge_client import lookup_order
from tests.support.loopback import LoopbackServer, Reply, completion


def _run(server: LoopbackServer, first: dict, tmp_path) -> hk.Run:
    server.script(Reply(json=first), Reply(json=completion("done")))
    model = hk.get_model("openai-compat:loop", base_url=server.url)
    h = hk.Harness([lookup_order], model, log_dir=tmp_path, limits=hk.Limits(max_seconds=30))
    return h.run("Where is order A?")


@pytest.mark.parametrize(
    ("entry", "error_type", "said"),
    [
        ("lookup_order", "invalid_argument", "the tool call is str, not an object"),
        (None, "unknown_tool", "the tool call is null, not an object"),
        (7, "unknown_tool", "the tool call is int, not an object"),
    ],
)
def test_a_tool_call_entry_that_is_not_an_object_is_answered_with_an_error(
    server, tmp_path, entry, error_type, said
):
    run = _run(server, completion(tool_calls=[entry], finish_reason="tool_calls"), tmp_path)

    assert run.finish_reason == "stop"
    assert run.final_text == "done"
    (result,) = run.log.of_type("tool.result")
    assert result.ok is False
    body = json.loads(result.content)
    assert body["error_type"] == error_type
    assert said in body["message"]
    # the model saw the error under the id of the call it was sent back with
    sent = server.requests[1].body["messages"]
    assert sent[-1]["role"] == "tool"
    assert sent[-1]["tool_call_id"] == sent[-2]["tool_calls"][0]["id"] != ""
    assert json.loads(sent[-1]["content"])["error_type"] == error_type


def test_a_malformed_entry_keeps_its_hint_when_its_id_is_replaced(server, tmp_path):
    run = _run(
        server, completion(tool_calls=["lookup_order"], finish_reason="tool_calls"), tmp_path
    )

    body = json.loads(run.log.of_type("tool.result")[0].content)
    assert "tool-calling interface" in body["hint"]


@pytest.mark.parametrize("calls", [[], None])
def test_finish_reason_tool_calls_without_a_call_gets_one_corrective_request(
    server, tmp_path, calls
):
    run = _run(server, completion(tool_calls=calls, finish_reason="tool_calls"), tmp_path)

    assert run.finish_reason == "stop"
    assert run.final_text == "done"
    assert len(server.requests) == 2
    fix = server.requests[1].body["messages"][-1]
    assert fix["role"] == "user"
    assert "held no tool call" in fix["content"]
    (retry,) = run.log.of_type("model.retry")
    assert retry.payload["kind"] == "corrective"


def test_a_reply_that_stays_without_a_call_ends_the_run_with_a_model_output_error(server, tmp_path):
    empty = completion(tool_calls=[], finish_reason="tool_calls")
    server.script(Reply(json=empty), Reply(json=empty))
    model = hk.get_model("openai-compat:loop", base_url=server.url)
    h = hk.Harness([lookup_order], model, log_dir=tmp_path, limits=hk.Limits(max_seconds=30))

    run = h.run("Where is order A?")

    assert run.finish_reason == "error"
    assert isinstance(run.error, hk.ModelOutputError)
