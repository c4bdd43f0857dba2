"""A run that ended for good refuses a new user turn and says what does go on (R-L1, R-V5, R-V6).

`send()` reopens a run that ended `stop`, `length` or `paused`. After `error`, `cancelled`, a
brake or a tool's `StopRun` it used to log a user turn that was never answered, and `step()`
advised `send()`. Now both refuse with a UsageError naming the finish reason and the ways that
work — and each way named is followed here to check that it does.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import ModelError, StopRun, UsageError
from harnesskit.testing import reply


def flaky(first_error=None):
    """A model that fails once (a server down by default), then answers."""
    n = {"i": 0}

    def fn(messages, info):
        n["i"] += 1
        if n["i"] == 1:
            raise first_error or ModelError("server down", model="f")
        return reply.text("hello again")

    return hk.FunctionModel(fn)


def refused(run, path=None):
    """`send()` and `step()` on an ended run: both refuse, nothing is written; the messages."""
    events = len(run.log)
    size = path.stat().st_size if path is not None else None
    with pytest.raises(UsageError) as sent:
        run.send("try again")
    with pytest.raises(UsageError) as stepped:
        run.step()
    assert len(run.log) == events and not run.log.of_type("user.message")[1:]
    if path is not None:
        assert path.stat().st_size == size
    assert run.run().finish_reason == run.finish_reason  # run() leaves an ended run as it is
    return str(sent.value), str(stepped.value)


def test_after_a_model_outage_send_refuses_and_fork_or_restart_go_on(tmp_path):
    h = hk.Harness([], flaky(), log_dir=tmp_path)
    run = h.start("hi", run_id="r").run()
    assert run.finish_reason == "error"
    sent, stepped = refused(run, tmp_path / "r.jsonl")
    for message in (sent, stepped):
        assert "finished (error)" in message
        assert "run.fork(-1, 'retry')" in message and "restart(" in message
        assert "on_unavailable='pause'" in message  # an outage could pause instead
        assert "send() a user turn" not in message
    assert "nothing was written" in sent
    assert "takes a new user turn only after stop, length or paused" in sent
    branch = run.fork(-1, "retry").run()  # the advice works: the same history, asked again
    assert branch.finish_reason == "stop" and branch.final_text == "hello again"
    again = hk.Harness([], flaky(), log_dir=tmp_path).restart(tmp_path / "r.jsonl", reason="x")
    assert again.run().finish_reason == "error"  # a fresh flaky model fails once again


def test_a_broken_reply_is_not_an_outage_so_pausing_is_not_offered(tmp_path):
    from harnesskit.errors import ModelOutputError

    h = hk.Harness([], flaky(ModelOutputError("no choices", model="f")), log_dir=tmp_path)
    run = h.start("hi", run_id="r").run()
    assert run.finish_reason == "error"
    sent, _ = refused(run)
    assert "on_unavailable" not in sent and "run.fork(-1, 'retry')" in sent


def test_after_cancel_send_refuses_and_fork_goes_on():
    run = hk.Harness([], hk.ScriptedModel([reply.text("ok")])).start("hi")
    run.cancel()
    run.run()
    assert run.finish_reason == "cancelled"
    sent, stepped = refused(run)
    assert "finished (cancelled)" in sent and "run.fork(-1, 'retry')" in sent
    assert "restart(" not in sent  # a log kept in memory cannot be restarted from a path
    assert "run.fork(-1, 'retry')" in stepped and "send()" not in stepped.split(";")[0]
    assert run.fork(-1, "retry").run().final_text == "ok"


@hk.tool
def look(x: str) -> str:
    """Look something up.

    Use when asked to look. Do not use otherwise.

    Args:
        x: what to look up.

    Returns:
        What was found.
    """
    return "found " + x


def test_after_a_brake_the_advice_names_the_limit_to_raise(tmp_path):
    turns = [reply.tool_call("look", x="a"), reply.text("closing")]
    h = hk.Harness([look], hk.ScriptedModel(turns), log_dir=tmp_path, limits=hk.Limits(max_steps=1))
    run = h.start("look", run_id="r").run()
    assert run.finish_reason == "max_steps"
    sent, stepped = refused(run)
    for message in (sent, stepped):
        assert "finished (max_steps)" in message and "hk.Limits(max_steps=...)" in message
    more = hk.Harness([look], hk.ScriptedModel([reply.text("done")]), limits=hk.Limits(max_steps=5))
    assert run.fork(-1, "more", harness=more).run().final_text == "done"


SLOW = {"n": 0}


@hk.tool(timeout_seconds=None)
def slow(x: str) -> str:
    """Work slowly.

    Use when asked to work. Do not use otherwise.

    Args:
        x: the work.

    Returns:
        The result.
    """
    SLOW["n"] += 1
    if SLOW["n"] == 1:
        raise KeyboardInterrupt  # a notebook's "interrupt kernel" during the call
    return "fine"


def test_interrupted_during_a_tool_call_resume_finishes_it_and_goes_on(tmp_path):
    SLOW["n"] = 0
    turns = [reply.tool_call("slow", x="a"), reply.text("k")]
    run = hk.Harness([slow], hk.ScriptedModel(turns), log_dir=tmp_path).start("go", run_id="r")
    with pytest.raises(KeyboardInterrupt):
        run.run()
    assert run.finish_reason == "cancelled"
    path = tmp_path / "r.jsonl"
    sent, stepped = refused(run, path)
    assert f"resume({str(path)!r})" in sent and f"resume({str(path)!r})" in stepped
    assert "run.fork(-1" not in sent  # refused there: the call has no result yet
    with pytest.raises(UsageError, match="have no result there yet"):
        run.fork(-1, "x")
    resumed = hk.Harness([slow], hk.ScriptedModel([reply.text("k2")]), log_dir=tmp_path)
    resumed = resumed.resume(path)
    assert resumed.finish_reason is None and SLOW["n"] == 2  # the call ran; the run goes on
    assert resumed.run().finish_reason == "stop" and resumed.final_text == "k2"


def test_after_a_tool_stop_send_refuses():
    @hk.tool
    def transfer(reason: str) -> str:
        """Transfer to a human agent.

        Use when the user asks for a human. Do not use otherwise.

        Args:
            reason: why.

        Returns:
            Never returns.
        """
        raise StopRun("transferred", reason)

    model = hk.ScriptedModel([reply.tool_call("transfer", reason="asked")])
    run = hk.Harness([transfer], model).run("a human please")
    assert run.finish_reason == "transferred"
    sent, _ = refused(run)
    assert "finished (transferred)" in sent


@pytest.mark.parametrize("how", ["stop", "paused"])
def test_stop_and_paused_still_take_a_new_turn(how):
    asked = []

    def fn(messages, info):
        asked.append(1)
        if how == "paused" and len(asked) == 1:
            raise StopRun("paused", "waiting")
        return reply.text("answer")

    run = hk.Harness([], hk.FunctionModel(fn)).run("hi")
    assert run.finish_reason == how
    run.send("and then?")
    assert run.finish_reason is None and run.run().finish_reason == "stop"
