"""`finish_reason: "tool_calls"` with a text preamble and no call, over loopback (R-M2).

This is what a server-side tool-parser failure looks like (vLLM, Ollama drop a call they cannot
parse and keep the text before it). Without a preamble the reply got one corrective request;
with one, the preamble ended the run as a complete `stop` ("Let me look that up for you.").
Both now get the same corrective request.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import ModelOutputError
from tests.support.edge_client import ask, chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events

PREAMBLE = "Let me look that up for you."


def _plain(calls: list | None) -> Reply:
    return Reply(json=completion(PREAMBLE, tool_calls=calls, finish_reason="tool_calls"))


def _streamed() -> Reply:
    return Reply(sse=sse_events([chunk({"content": PREAMBLE}), chunk({}, "tool_calls")]))


SHAPES = {"no-list": _plain(None), "empty-list": _plain([]), "stream": _streamed()}


@pytest.mark.parametrize("shape", list(SHAPES), ids=str)
def test_a_preamble_without_a_call_gets_the_corrective_request(server, tmp_path, shape):
    server.script(SHAPES[shape], Reply(json=completion("Order A has shipped.")))
    model = make(server, stream=shape == "stream")
    h = hk.Harness([lookup_order], model, log_dir=tmp_path, limits=hk.Limits(max_seconds=30))
    run = h.run("Where is order A?")
    assert run.final_text == "Order A has shipped."
    assert run.finish_reason == "stop"
    assert len(server.requests) == 2
    fix = server.requests[1].body["messages"][-1]
    assert fix["role"] == "user" and "held no tool call" in fix["content"]
    (retry,) = run.log.of_type("model.retry")
    assert retry.payload["kind"] == "corrective"


def test_a_preamble_twice_is_an_output_error_not_an_answer(server):
    server.script(_plain(None), _plain([]))
    with pytest.raises(ModelOutputError, match="held no tool call"):
        make(server).request(ask())
