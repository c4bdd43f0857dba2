"""`Limits(max_prompt_tokens=...)` is a cap no request passes (R-L2), checked before sending.

It was checked on the running total at the top of the next step, after the request was sent:
`max_prompt_tokens=32000` let a 93k-token request go out. Now a request whose estimated prompt
would take the run's total past the cap is never sent; the run ends with the brake, and the
closing request after a brake is sent only when it fits too.
"""

import pytest

import harnesskit as hk
from harnesskit.log import ContextInjectedEvent
from harnesskit.testing import reply


@hk.tool
def page(i: int) -> str:
    """Read a page of a long document.

    Args:
        i: the page.

    Returns:
        The page's text.
    """
    return f"word{i} " * 600  # ~4,200 chars, about a thousand tokens


def _sent_total(model: hk.ScriptedModel, run: hk.Run) -> int:
    """The estimated prompt tokens of every request the model received."""
    injected = run.log.of_type(ContextInjectedEvent)
    return sum(e.payload["request_tokens"] for e in injected[: len(model.requests)])


def test_a_first_request_over_the_cap_is_never_sent():
    model = hk.ScriptedModel([reply.text("answer"), reply.text("closing")])
    h = hk.Harness([page], model, limits=hk.Limits(max_prompt_tokens=200))
    run = h.run("summarize this: " + "lorem ipsum " * 400)
    assert run.finish_reason == "max_prompt_tokens" and run.state.incomplete
    assert model.requests == [] and run.state.prompt_tokens == 0
    (brake,) = run.log.of_type("brake")
    assert brake.payload["value"] > 200 and brake.payload["limit"] == 200
    finished = run.log.last("run.finished")
    assert finished.payload["closing"].startswith("not sent")
    with pytest.raises(hk.BrakeTripped) as info:
        run.raise_for_stop()
    assert info.value.brake == "max_prompt_tokens" and info.value.value == brake.payload["value"]


def test_a_turn_that_would_push_the_next_request_past_the_cap_ends_the_run_unsent():
    calls = reply.tool_calls(*[reply.call("page", i=i) for i in range(4)])
    model = hk.ScriptedModel([calls, reply.text("done"), reply.text("closing")])
    h = hk.Harness([page], model, limits=hk.Limits(max_prompt_tokens=2_000))
    run = h.run("read the pages")
    assert run.finish_reason == "max_prompt_tokens"
    assert len(model.requests) == 1  # the second (~4k tokens with the pages) was not sent
    assert run.state.prompt_tokens <= 2_000 and _sent_total(model, run) <= 2_000


def test_the_closing_request_is_sent_when_it_fits_the_cap():
    calls = reply.tool_calls(reply.call("page", i=1))
    model = hk.ScriptedModel([calls, reply.text("best guess")])
    h = hk.Harness([page], model, limits=hk.Limits(max_steps=1, max_prompt_tokens=100_000))
    run = h.run("read page 1")
    assert run.finish_reason == "max_steps" and run.final_text == "best guess"
    assert [r.final for r in model.requests] == [False, True]
    assert "closing" not in run.log.last("run.finished").payload


def test_a_closing_request_over_the_cap_is_not_sent_after_another_brake():
    calls = reply.tool_calls(*[reply.call("page", i=i) for i in range(3)])
    model = hk.ScriptedModel([calls, reply.text("best guess")])
    h = hk.Harness([page], model, limits=hk.Limits(max_steps=1, max_prompt_tokens=1_500))
    run = h.run("read the pages")
    assert run.finish_reason == "max_steps"
    assert [r.final for r in model.requests] == [False]
    assert "not sent" in run.log.last("run.finished").payload["closing"]
    assert run.state.prompt_tokens <= 1_500
