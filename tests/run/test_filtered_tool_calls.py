"""The tool calls of a reply the provider's filter stopped are never run (R-M2).

A reply with a filtered finish reason (`content_filter`, Gemini's `SAFETY`, `RECITATION`, ...,
any case) that held tool calls had its calls run: only a call-free filtered answer ended the
run `content_filter`. A filter may have cut or withheld part of the generation, so its calls
must not act. The run now ends `content_filter` as for a call-free filtered answer, and every
call of the logged assistant message gets a "not run" result, so that a user turn sent after
it goes on from a valid prompt (no call without its tool message).
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log import ToolCallEvent, ToolResultEvent
from harnesskit.models._parse import FILTERED_FINISH_REASONS, parse_completion
from tests.support.edge_client import chunk, make
from tests.support.loopback import Reply, completion, sse_events, tool_call

DONE: list[str] = []


@hk.tool(risk="write")
def cancel_order(order_id: str) -> dict:
    """Cancel one order.

    Args:
        order_id: the order's id.

    Returns:
        The cancelled order.
    """
    DONE.append(order_id)
    return {"order_id": order_id, "status": "cancelled"}


@pytest.fixture(autouse=True)
def _nothing_done():
    DONE.clear()


def _calls() -> tuple[hk.ToolCall, ...]:
    return (
        hk.ToolCall(id="call_a", name="cancel_order", arguments={"order_id": "A1"}),
        hk.ToolCall(id="call_b", name="cancel_order", arguments={"order_id": "B2"}),
    )


def _assert_not_run(run: hk.Run, ids: list[str]) -> None:
    assert DONE == []
    assert run.finish_reason == "content_filter"
    (finished,) = run.log.of_type("run.finished")
    assert "not run" in finished.payload["reason"]
    assert [e.tool_call_id for e in run.log.of_type(ToolCallEvent)] == ids
    results = run.log.of_type(ToolResultEvent)
    assert [e.tool_call_id for e in results] == ids
    for e in results:
        body = json.loads(e.content)
        assert (e.ok, body["error_type"]) == (False, "permission_denied")
        assert body["message"].startswith("not run: the provider's content filter")
        assert e.payload["not_run"] is True


def _valid_prompt(messages: list[dict]) -> None:
    """Every assistant tool call is answered by a tool message right after it."""
    for i, m in enumerate(messages):
        ids = [c["id"] for c in m.get("tool_calls") or ()]
        if ids:
            after = [x.get("tool_call_id") for x in messages[i + 1 : i + 1 + len(ids)]]
            assert after == ids, messages


@pytest.mark.parametrize("finish", ["content_filter", "SAFETY", "Recitation", "blocklist"])
def test_a_scripted_filtered_reply_runs_none_of_its_calls(tmp_path, finish):
    filtered = hk.ModelResponse(
        message=hk.Message(role="assistant", content="Cancelling", tool_calls=_calls()),
        finish_reason=finish,
    )
    model = hk.ScriptedModel([filtered, "I cannot cancel orders here."])
    run = hk.Harness([cancel_order], model, log_dir=tmp_path).run("Cancel A1 and B2.")
    _assert_not_run(run, ["call_a", "call_b"])

    run.send("Then tell me what you can do.")  # a user turn goes on from a valid prompt
    run.run()
    assert (run.finish_reason, run.final_text) == ("stop", "I cannot cancel orders here.")
    sent = [m.to_openai() for m in model.requests[-1].messages]
    _valid_prompt(sent)
    assert [m["role"] for m in sent[-4:]] == ["assistant", "tool", "tool", "user"]
    assert DONE == []


@pytest.mark.parametrize("finish", sorted(FILTERED_FINISH_REASONS))
def test_every_filtered_word_in_any_case_is_content_filter_with_calls(finish):
    for word in (finish, finish.upper()):
        body = completion(None, tool_calls=[tool_call("cancel_order", {"order_id": "A1"})])
        body["choices"][0]["finish_reason"] = word
        reply = parse_completion(body, model="m", tool_names=["cancel_order"])
        assert (reply.finish_reason, len(reply.message.tool_calls)) == ("content_filter", 1)


def _filtered_body() -> dict:
    calls = [
        tool_call("cancel_order", {"order_id": "A1"}, id="call_a"),
        tool_call("cancel_order", {"order_id": "B2"}, id="call_b"),
    ]
    return completion(None, tool_calls=calls, finish_reason="SAFETY")


def _filtered_stream() -> list[str]:
    calls = [
        {"index": 0, "id": "call_a", "type": "function",
         "function": {"name": "cancel_order", "arguments": '{"order_id": "A1"}'}},
        {"index": 1, "id": "call_b", "type": "function",
         "function": {"name": "cancel_order", "arguments": '{"order_id": "B2"}'}},
    ]  # fmt: skip
    return sse_events([chunk({"role": "assistant", "tool_calls": calls}, finish="SAFETY")])


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_filtered_reply_over_loopback_runs_none_of_its_calls(server, tmp_path, stream):
    first = Reply(sse=_filtered_stream()) if stream else Reply(json=_filtered_body())
    server.script(first, Reply(json=completion("Nothing was cancelled.")))
    h = hk.Harness([cancel_order], make(server, stream=stream), log_dir=tmp_path)
    run = h.run("Cancel A1 and B2.")
    _assert_not_run(run, ["call_a", "call_b"])
    (response,) = run.log.of_type("model.response")
    assert response.payload["finish_reason"] == "content_filter"
    assert [c["id"] for c in response.payload["message"]["tool_calls"]] == ["call_a", "call_b"]

    run.send("What happened?")
    run.run()
    assert (run.finish_reason, run.final_text) == ("stop", "Nothing was cancelled.")
    sent = server.requests[-1].body["messages"]
    _valid_prompt(sent)
    assert [m["role"] for m in sent[-4:]] == ["assistant", "tool", "tool", "user"]
    assert "not run" in sent[-3]["content"]
    assert DONE == []


def _filtered_run(tmp_path):
    """A run whose reply with two calls was filtered (`SAFETY`): its harness and log path."""
    filtered = hk.ModelResponse(
        message=hk.Message(role="assistant", tool_calls=_calls()), finish_reason="SAFETY"
    )
    h = hk.Harness([cancel_order], hk.ScriptedModel([filtered, "Done."]), log_dir=tmp_path)
    run = h.run("Cancel A1 and B2.")
    run.log.close()
    return h, run.log.path


def test_a_resumed_filtered_run_has_no_pending_call(tmp_path):
    h, path = _filtered_run(tmp_path)

    resumed = h.resume(path)
    assert resumed.finish_reason == "content_filter"
    resumed.send("Go on.")
    resumed.run()
    assert (resumed.finish_reason, resumed.final_text) == ("stop", "Done.")
    assert DONE == []


@pytest.mark.parametrize("kept", [0, 1], ids=["killed-before-results", "killed-mid-results"])
def test_a_run_killed_before_its_not_run_results_resumes_without_running_them(tmp_path, kept):
    h, path = _filtered_run(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    types = [json.loads(x)["type"] for x in lines]
    # killed right after the reply, or after both calls were logged and the first answered
    cut = types.index("model.response") + 1 + (3 if kept else 0)
    path.write_bytes(b"".join(lines[:cut]))

    report = hk.check_resume(h, path)
    (calls,) = [c for c in report.checks if c.name == "tool_calls"]
    assert report.ok and "content filter stopped" in calls.detail, calls.detail
    assert "runs now" not in calls.detail
    resumed = h.resume(path)
    assert DONE == []  # the filtered reply's calls were never run
    assert resumed.finish_reason == "content_filter"
    results = resumed.log.of_type(ToolResultEvent)
    assert [e.tool_call_id for e in results] == ["call_a", "call_b"]
    assert all(e.payload["not_run"] is True for e in results)
    (event,) = resumed.log.of_type("run.resume")
    assert [c["tool_call_id"] for c in event.payload["filtered_calls"]] == ["call_a", "call_b"][
        kept:
    ]
    resumed.send("Go on.")
    resumed.run()
    assert (resumed.finish_reason, resumed.final_text) == ("stop", "Done.")
    assert DONE == []
