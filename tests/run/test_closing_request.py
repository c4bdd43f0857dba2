"""The closing request after a brake keeps the tools (prompt cache) and forbids calling them.

Against the loopback server: the request bodies are read as the server received them.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.models import base
from tests.support.loopback import LoopbackServer, Reply, completion, tool_call

WRITES: list[str] = []


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up."""
    return {"key": key, "value": len(key)}


@hk.tool(risk="write")
def delete(key: str) -> dict:
    """Delete a key."""
    WRITES.append(key)
    return {"deleted": key}


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    WRITES.clear()
    with LoopbackServer() as srv:
        yield srv


def harness(model: hk.Model, tmp_path) -> hk.Harness:
    settings = {"tool_choice": "required", "parallel_tool_calls": False, "temperature": 0}
    limits = hk.Limits(max_steps=1)
    return hk.Harness([lookup, delete], model, log_dir=tmp_path, limits=limits, settings=settings)


def run_to_brake(server, tmp_path, closing: Reply) -> hk.Run:
    step = Reply(json=completion(tool_calls=[tool_call("lookup", {"key": "a"}, id="c1")]))
    server.script(step, closing)
    return harness(hk.get_model("openai-compat:m", base_url=server.url), tmp_path).run("find a")


def test_the_closing_request_sends_the_same_tools_with_tool_choice_none(server, tmp_path):
    run = run_to_brake(server, tmp_path, Reply(json=completion("a is 1")))

    assert run.finish_reason == "max_steps" and run.final_text == "a is 1"
    first, last = (s.body for s in server.requests)
    assert last["tools"] == first["tools"] and [t["function"]["name"] for t in last["tools"]] == [
        "lookup",
        "delete",
    ]
    assert first["tool_choice"] == "required" and last["tool_choice"] == "none"
    assert "parallel_tool_calls" not in last and last["temperature"] == 0
    # the prompt grew by the result and the closing note only: the first request is a prefix
    assert last["messages"][: len(first["messages"])] == first["messages"]
    request = run.log.of_type("model.request")[-1]
    assert request.payload["final"] is True and request.payload["settings"]["tool_choice"] == "none"


@pytest.mark.parametrize("form", ["structured", "text"])
def test_a_tool_call_in_the_closing_reply_is_logged_but_never_run(server, tmp_path, form):
    if form == "structured":
        closing = completion(tool_calls=[tool_call("delete", {"key": "a"}, id="x9")])
    else:
        closing = completion('```json\n{"name": "delete", "arguments": {"key": "a"}}\n```')
    run = run_to_brake(server, tmp_path, Reply(json=closing))

    assert run.finish_reason == "max_steps" and WRITES == []
    assert [e.tool for e in run.log.of_type("tool.call")] == ["lookup"]
    response = run.log.last("model.response")
    assert response.payload["final"] is True and response.payload["message"].get("tool_calls") in (
        None,
        [],
    )
    (dropped,) = response.payload["unexecuted_calls"]
    assert dropped["function"]["name"] == "delete"
    assert json.loads(dropped["function"]["arguments"]) == {"key": "a"}
    if form == "text":  # the model's text is the answer, as it came
        assert '"delete"' in run.final_text
    # a resume finds nothing in flight: the dropped call is not pending
    resumed = harness(hk.ScriptedModel([]), tmp_path).resume(run.log.path)
    resumed.log.close()
    assert WRITES == [] and resumed.finish_reason == "max_steps"
