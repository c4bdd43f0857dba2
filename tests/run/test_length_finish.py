"""A final answer cut by the model's output limit never passes for a complete one (R-M2).

With `finish_reason=length` and no tool calls the run ended as a normal `stop` with
`incomplete=False`. It now ends with finish reason `length`, `incomplete=True`.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from tests.support.edge_client import chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events


@pytest.mark.parametrize("stream", [False, True])
def test_a_final_answer_cut_by_the_output_limit_ends_incomplete(server, tmp_path, stream):
    if stream:
        events = sse_events([chunk({"content": "Your refund of $1"}, finish="length")])
        server.script(Reply(sse=events))
    else:
        server.script(Reply(json=completion("Your refund of $1", finish_reason="length")))
    h = hk.Harness(
        [lookup_order], make(server, stream=stream), log_dir=tmp_path, settings={"max_tokens": 5}
    )
    run = h.run("refund?")

    assert run.finish_reason == "length"
    (finished,) = run.log.of_type("run.finished")
    assert finished.payload["incomplete"] is True
    assert "max_tokens=5" in finished.payload["reason"]
    (response,) = run.log.of_type("model.response")
    assert response.payload["incomplete"] is True
    assert run.final_text == "Your refund of $1"


def test_a_scripted_cut_answer_ends_length_and_send_goes_on(tmp_path):
    cut = hk.ModelResponse(
        message=hk.Message(role="assistant", content="Step one is"), finish_reason="length"
    )
    model = hk.ScriptedModel([cut, "Short: done."])
    run = hk.Harness([lookup_order], model, log_dir=tmp_path).run("how?")

    assert (run.finish_reason, run.state.incomplete) == ("length", True)
    assert "max_tokens=" not in run.log.of_type("run.finished")[0].payload["reason"]

    run.send("Shorter, please.")
    run.run()
    assert (run.finish_reason, run.state.incomplete) == ("stop", False)
    assert run.final_text == "Short: done."


def test_a_cut_answer_with_a_tool_call_still_runs_the_call(tmp_path):
    call = hk.ToolCall(id="c1", name="lookup_order", arguments={"order_id": "A"})
    cut = hk.ModelResponse(
        message=hk.Message(role="assistant", content=None, tool_calls=(call,)),
        finish_reason="length",
    )
    run = hk.Harness([lookup_order], hk.ScriptedModel([cut, "done"]), log_dir=tmp_path).run("x")

    assert run.finish_reason == "stop"
    assert run.log.of_type("tool.result")[0].ok is True


def test_a_user_turn_after_a_cut_answer_goes_on_after_resume_too(tmp_path):
    cut = hk.ModelResponse(
        message=hk.Message(role="assistant", content="Step one is"), finish_reason="length"
    )
    h = hk.Harness([lookup_order], hk.ScriptedModel([cut, "Short: done."]), log_dir=tmp_path)
    run = h.run("how?")
    run.send("Shorter, please.")  # written and flushed; the process ends here
    path = tmp_path / f"{run.state.run_id}.jsonl"
    run.log.close()

    resumed = h.resume(path)  # reads the log: the cut answer is behind the new user turn
    assert (resumed.finish_reason, resumed.state.incomplete) == (None, False)
    resumed.run()
    assert (resumed.finish_reason, resumed.final_text) == ("stop", "Short: done.")
