import json

import pytest

import harnesskit as hk
from harnesskit.testing import reply


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up."""
    if key == "bad":
        raise hk.ToolNotFoundError(f"no key {key!r}")
    return {"key": key, "value": len(key)}


def make(turns, **kw):
    model = hk.ScriptedModel(turns)
    return hk.Harness([lookup], model, **kw), model


def test_step_by_step_then_stop():
    h, model = make([reply.tool_call("lookup", key="abc"), reply.text("value is 3")])
    run = h.start("what is abc?")
    run.step()
    assert run.finish_reason is None and run.state.step == 1
    run.step()
    assert run.finish_reason == "stop" and run.final_text == "value is 3"
    # the second request carried the tool result, matched by id
    second = model.requests[1].messages
    assert second[-1].role == "tool" and json.loads(second[-1].content) == {
        "key": "abc",
        "value": 3,
    }
    assert second[-1].tool_call_id == second[-2].tool_calls[0].id
    with pytest.raises(hk.UsageError, match="finished"):
        run.step()


def test_max_steps_brake_sends_exactly_one_closing_request_that_forbids_tools():
    turns = [reply.tool_call("lookup", key=f"k{i}") for i in range(3)] + [reply.text("best guess")]
    h, model = make(turns, limits=hk.Limits(max_steps=3))
    run = h.start("loop forever").run()
    assert run.finish_reason == "max_steps" and run.state.incomplete
    closing = [r for r in model.requests if r.final]
    assert len(closing) == 1 and closing[0] is model.requests[-1]
    # the same tools as every step (the prompt cache keys on them), none of them callable
    assert closing[0].tools == model.requests[0].tools != ()
    assert closing[0].settings["tool_choice"] == "none"
    assert all("tool_choice" not in r.settings for r in model.requests[:-1])
    assert "max_steps" in closing[0].messages[-1].content
    assert len(model.requests) == 4
    final = run.log.last("model.response")
    assert final.payload["incomplete"] is True and run.final_text == "best guess"
    assert [e.payload["brake"] for e in run.log.of_type("brake")] == ["max_steps"]
    with pytest.raises(hk.BrakeTripped) as info:
        run.raise_for_stop()
    assert (info.value.brake, info.value.limit, info.value.unit) == ("max_steps", 3, "steps")


def test_token_budget_brake():
    turns = [reply.tool_call("lookup", key="a" * 400)] * 3 + [reply.text("done")]
    h, _ = make(turns, limits=hk.Limits(max_tokens=150))
    run = h.start("x").run()
    assert run.finish_reason == "max_tokens"
    assert run.state.total_tokens >= 150


def test_wall_clock_brake_and_cancel():
    h, _ = make([reply.text("late answer")], limits=hk.Limits(max_seconds=0))
    assert h.start("x").run().finish_reason == "max_seconds"
    h, model = make([reply.tool_call("lookup", key="a")])
    run = h.start("x")
    run.cancel()
    run.step()
    assert run.finish_reason == "cancelled" and model.requests == []


def test_circuit_open_removes_tool_from_next_request():
    turns = [reply.tool_call("lookup", key="bad")] * 3 + [reply.text("giving up")]
    h, model = make(turns, limits=hk.Limits(max_consecutive_errors=None))
    run = h.start("x").run()
    assert [r.tool_names for r in model.requests] == [["lookup"]] * 3 + [[]]
    last_tool_msg = model.requests[3].messages[-1]
    assert "disabled" in json.loads(last_tool_msg.content)
    assert run.finish_reason == "stop"


def test_stuck_brake_on_consecutive_failures():
    turns = [reply.tool_call("nope")] * 2 + [reply.text("sorry")]
    h, _ = make(turns, limits=hk.Limits(max_consecutive_errors=2))
    run = h.start("x").run()
    assert run.finish_reason == "max_consecutive_errors"


def test_scripted_model_running_out_is_a_usage_error():
    h, _ = make([reply.tool_call("lookup", key="a")])
    run = h.start("x")
    run.step()
    with pytest.raises(hk.UsageError, match="ran out of turns"):
        run.step()


def test_duplicate_and_missing_ids_are_made_unique():
    turns = [
        reply.tool_calls(
            reply.call("lookup", id="same", key="a"), reply.call("lookup", id="same", key="b")
        ),
        hk.Message(
            role="assistant",
            tool_calls=(hk.ToolCall(id="same", name="lookup", arguments={"key": "c"}),),
        ),
        reply.text("ok"),
    ]
    h, model = make(turns)
    run = h.start("x").run()
    results = run.log.of_type("tool.result")
    ids = [e.payload["tool_call_id"] for e in results]
    assert len(set(ids)) == 3 and ids[0] == "same"
    calls = [
        c
        for e in run.log.of_type("model.response")
        for c in e.payload["message"].get("tool_calls", [])
    ]
    assert [c["id"] for c in calls] == ids
    assert [json.loads(r.payload["content"])["key"] for r in results] == ["a", "b", "c"]


def test_progress_stream():
    seen = []
    h, _ = make([reply.tool_call("lookup", key="a"), reply.text("ok")], progress=seen.append)
    h.start("x").run()
    assert [(p.step, p.status, p.tool) for p in seen] == [
        (1, "model", None),
        (1, "ok", "lookup"),
        (2, "model", None),
        (2, "finished", None),
    ]


def test_usage_is_estimated_when_model_reports_none():
    h, _ = make([reply.text("four")])
    run = h.start("hello there").run()
    usage = run.log.last("model.response").payload["usage"]
    assert (
        usage["estimated"] is True
        and usage["prompt_tokens"] > 0
        and usage["completion_tokens"] >= 1
    )


def test_model_error_ends_run_with_error_event():
    def broken(messages, info):
        raise hk.ModelError("provider down", model="x", status_code=503)

    h = hk.Harness([lookup], hk.FunctionModel(broken))
    run = h.start("x").run()
    assert run.finish_reason == "error"
    assert "provider down" in run.log.last("run.finished").payload["error"]
    with pytest.raises(hk.ModelError):
        run.raise_for_stop()


def test_send_continues_a_conversation():
    h, model = make([reply.text("hi"), reply.text("bye")])
    run = h.start("hello").run()
    run.send("thanks").run()
    assert run.final_text == "bye"
    # the system message is the bindings note (R-A6) of a run with tools
    roles = [m.role for m in model.requests[1].messages]
    assert roles == ["system", "user", "assistant", "user"]


def test_tool_context_emits_events_after_call():
    @hk.tool
    def check(cabin: str, ctx: hk.ToolContext) -> str:
        """C."""
        if cabin != "economy":
            ctx.emit("alert.mismatch", {"field": "cabin", "claimed": cabin, "actual": "economy"})
        return "economy"

    assert "ctx" not in check.parameters["properties"]
    h = hk.Harness(
        [check], hk.ScriptedModel([reply.tool_call("check", cabin="business"), reply.text("ok")])
    )
    run = h.start("x").run()
    (alert,) = run.log.of_type("alert.mismatch")
    call = run.log.of_type("tool.call")[0]
    assert alert.parent_id == call.event_id and alert.payload["claimed"] == "business"


def test_unavailable_model_pauses_and_resumes_when_configured():
    calls = {"n": 0}

    def flaky(messages, info):
        calls["n"] += 1
        if calls["n"] == 1:
            raise hk.ModelError("all nodes down", status_code=503)
        return "back again"

    h = hk.Harness([lookup], hk.FunctionModel(flaky), on_unavailable="pause")
    run = h.start("x").run()
    assert run.finish_reason == "paused"
    assert run.state.step == 0
    assert "all nodes down" in run.log.last("run.finished").payload["error"]
    run.run()
    assert run.finish_reason == "stop"
    assert run.final_text == "back again"
    assert run.state.step == 1
    with pytest.raises(hk.UsageError, match="on_unavailable"):
        hk.Harness([lookup], hk.FunctionModel(flaky), on_unavailable="retry")


def test_stop_run_raised_in_a_tool_ends_the_run():
    @hk.tool
    def escalate(reason: str) -> str:
        """Hand the conversation to a human."""
        raise hk.StopRun("transferred", reason)

    h = hk.Harness([escalate], hk.ScriptedModel([reply.tool_call("escalate", reason="angry")]))
    run = h.start("x").run()
    assert run.finish_reason == "transferred"


def test_tool_context_clock_is_the_harness_clock():
    seen = []

    @hk.tool
    def now(ctx: hk.ToolContext) -> str:
        """Now."""
        seen.append(ctx.now().isoformat())
        return seen[-1]

    h = hk.Harness(
        [now], hk.ScriptedModel([reply.tool_call("now"), reply.text("ok")]), clock=lambda: 0.0
    )
    h.start("x").run()
    assert seen == ["1970-01-01T00:00:00+00:00"]
