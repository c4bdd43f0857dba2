"""A tool's StopRun keeps the turn's other results; emitted events follow the tool block."""

from __future__ import annotations

import harnesskit as hk
from harnesskit.log import ToolCallEvent, ToolResultEvent, UserMessageEvent
from harnesskit.testing import reply


@hk.tool
def escalate(reason: str) -> str:
    """Hand the conversation to a human."""
    raise hk.StopRun("transferred", reason)


@hk.tool
def lookup(key: str) -> dict:
    """Look a key up."""
    return {"key": key}


def test_a_stop_run_keeps_every_other_result_of_its_turn_and_leaves_its_call_pending(tmp_path):
    turn = reply.tool_calls(
        reply.call("lookup", id="a", key="k1"),
        reply.call("escalate", id="b", reason="angry"),
        reply.call("lookup", id="c", key="k2"),
    )
    h = hk.Harness([lookup, escalate], hk.ScriptedModel([turn]), log_dir=tmp_path)
    run = h.start("x", run_id="r").run()
    assert run.finish_reason == "transferred"
    results = [e for e in run.log if isinstance(e, ToolResultEvent)]
    assert [(e.tool_call_id, e.ok) for e in results] == [("a", True), ("c", True)]
    assert [e.tool_call_id for e in run.log if isinstance(e, ToolCallEvent)] == ["a", "b", "c"]
    # resume sees the call without a result: it is pending and runs again
    report = hk.check_resume(h, tmp_path / "r.jsonl")
    assert report.ok and report.pending == ("b",)


def test_a_tool_emitted_user_message_follows_the_whole_tool_block():
    @hk.tool
    def chart(series: str, ctx: hk.ToolContext) -> dict:
        """Render a chart."""
        ctx.emit("user.message", {"content": "attachment chart.png"})
        return {"ok": True}

    model = hk.ScriptedModel(
        [
            reply.tool_calls(
                reply.call("chart", id="c1", series="s"), reply.call("lookup", id="c2", key="k")
            ),
            reply.text("done"),
        ]
    )
    run = hk.Harness([chart, lookup], model).run("chart it")
    sent = [m.to_openai() for m in model.requests[1].messages]
    roles = [(m["role"], m.get("tool_call_id")) for m in sent]
    i = roles.index(("assistant", None))
    assert roles[i + 1 : i + 3] == [("tool", "c1"), ("tool", "c2")]
    (extra,) = [m for m in sent[i + 3 :] if "chart.png" in (m["content"] or "")]
    assert extra["role"] == "user" and "c1" in extra["content"]
    kinds = [type(e).__name__ for e in run.log if e.payload.get("step") == 1]
    assert kinds.index("UserMessageEvent") > max(
        i for i, k in enumerate(kinds) if k == "ToolResultEvent"
    )
    assert UserMessageEvent
