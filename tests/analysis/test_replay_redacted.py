"""Replay of damaged and redacted logs (R-V7, R-S1).

A damaged log (a model turn that records a failure instead of a message, a stored tool spec
that is not one) is a `CorruptLogError` naming the event, never a `KeyError` or `TypeError`.
A log whose tool arguments were redacted replays with recorded tools; live, a call whose
arguments were redacted is never run.
"""

from __future__ import annotations

import copy
import json

import pytest

import harnesskit as hk
from harnesskit.errors import CorruptLogError
from harnesskit.testing import reply

SECRET = "hunter2-secret-value"


@hk.tool
def lookup(x: str) -> str:
    """Look something up.

    Args:
        x: what to look up.
    """
    return f"value of {x}"


def recorded(tmp_path):
    turns = [reply.tool_call("lookup", x="a"), reply.text("done")]
    run = hk.Harness(tools=[lookup], model=hk.ScriptedModel(turns), log_dir=tmp_path)
    run = run.start("go", run_id="ok").run()
    return [json.loads(x) for x in run.log.path.read_text().splitlines()]


def damaged(tmp_path, lines, edit):
    lines = copy.deepcopy(lines)
    event_id = edit(lines)
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path, event_id


def nth(lines, type_, n=0):
    return [x for x in lines if x["type"] == type_][n]


def set_message(value, n=-1):
    def edit(lines):
        e = nth(lines, "model.response", n)
        e["payload"]["message"] = value
        return e["event_id"]

    return edit


def set_tools(value):
    def edit(lines):
        e = nth(lines, "model.request")
        e["payload"]["tools"] = value
        return e["event_id"]

    return edit


DAMAGE = {
    "a recorded model failure": set_message({"error": "rate limited"}),
    "no message at all": set_message(None),
    "a call without a name": set_message({"role": "assistant", "tool_calls": [{"id": "x"}]}, 0),
    "a spec without its function": set_tools([{"type": "function"}]),
    "a spec that is a name": set_tools(["lookup"]),
    "a function that is a name": set_tools([{"type": "function", "function": "lookup"}]),
    "a function without a name": set_tools([{"type": "function", "function": {}}]),
    "parameters that are no schema": set_tools(
        [{"type": "function", "function": {"name": "lookup", "parameters": "bad"}}]
    ),
}


@pytest.mark.parametrize("mode", ["live", "recorded"])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_log_is_a_corrupt_log_error_naming_the_event(tmp_path, damage, mode):
    path, event_id = damaged(tmp_path, recorded(tmp_path), DAMAGE[damage])
    h = hk.Harness(tools=[lookup], model=hk.ScriptedModel(["unused"]))
    if mode == "live" and damage.startswith(("a spec", "a function", "parameters")):
        report = hk.replay(path, h, tools=mode)  # live tools: the spec is only compared
        assert [d.what for d in report.divergences] == ["request", "request"]
        return
    with pytest.raises(CorruptLogError, match=rf"event {event_id} \(model\.re"):
        hk.replay(path, h, tools=mode)


def test_a_plain_text_failure_reply_is_named_with_recorded_tools_and_compared_live(tmp_path):
    def edit(lines):
        e = nth(lines, "tool.result")
        e["payload"].update(ok=False, error_type="tool_error", content="Error: upstream failed")
        return e["event_id"]

    path, event_id = damaged(tmp_path, recorded(tmp_path), edit)
    h = hk.Harness(tools=[lookup], model=hk.ScriptedModel(["unused"]))
    with pytest.raises(CorruptLogError, match=rf"event {event_id} \(tool\.result\).*tools='live'"):
        hk.replay(path, h, tools="recorded")
    report = hk.replay(path, h, tools="live")
    assert "tool_result" in [d.what for d in report.divergences]


#: The password is constrained as a real form's would be: the placeholder the log holds in its
#: place (`[REDACTED:password]`) does not fit it.
LOGIN_SCHEMA = {
    "type": "object",
    "properties": {
        "user": {"type": "string", "description": "the user"},
        "password": {"type": "string", "pattern": "^[a-z0-9-]+$", "maxLength": 64},
    },
    "required": ["user", "password"],
    "additionalProperties": False,
}


class Desk:
    """A login write tool that records what it got."""

    def __init__(self, schema=LOGIN_SCHEMA):
        self.logins = []
        self.schema = schema

    def tools(self):
        @hk.tool
        def get_user(user: str) -> dict:
            """Read a user's profile.

            Args:
                user: the user.
            """
            return {"user": user, "plan": "gold"}

        @hk.tool(risk="write", parameters=self.schema)
        def login(user: str, password: str) -> dict:
            """Log a user in.

            Args:
                user: the user.
                password: the user's password.
            """
            self.logins.append((user, password))
            return {"session": f"s-{len(self.logins)}", "user": user}

        return [get_user, login]


def redacted_run(tmp_path, schema=LOGIN_SCHEMA):
    desk = Desk(schema)
    turns = [
        reply.tool_call("get_user", user="bob"),
        reply.tool_call("login", user="bob", password=SECRET),
        reply.text("you are in"),
    ]
    h = hk.Harness(tools=desk.tools(), model=hk.ScriptedModel(turns), log_dir=tmp_path)
    run = h.start("log me in, my password is in the next message", run_id="red").run()
    text = run.log.path.read_text()
    assert SECRET not in text and "[REDACTED:password]" in text
    return run.log.path, desk


def test_recorded_replay_of_redacted_arguments_reproduces_the_recorded_results(tmp_path):
    path, _ = redacted_run(tmp_path)
    desk = Desk()
    report = hk.replay(
        path, hk.Harness(tools=desk.tools(), model=hk.ScriptedModel([])), tools="recorded"
    )
    assert report.identical, report.divergences
    assert report.replayed_steps == report.steps == 3
    assert report.run.finish_reason == "stop"
    assert desk.logins == []
    results = [e.payload["content"] for e in report.run.log.of_type("tool.result")]
    recorded_results = [e.payload["content"] for e in hk.EventLog.read(path).of_type("tool.result")]
    assert results == recorded_results


# ---------------------------------------------------------------- the call that ended the run


@hk.tool
def hand_over(summary: str) -> str:
    """Hand the conversation to a human agent; the run ends.

    Args:
        summary: what the human agent needs to know.
    """
    raise hk.StopRun("transferred", f"transferred to a human agent: {summary}")


def stopped_run(tmp_path):
    turns = [
        reply.tool_call("lookup", x="a"),
        reply.tool_call("hand_over", summary="needs a human"),
    ]
    h = hk.Harness(tools=[lookup, hand_over], model=hk.ScriptedModel(turns), log_dir=tmp_path)
    run = h.start("help", run_id="stop").run()
    assert run.finish_reason == "transferred"
    return run.log.path


@pytest.mark.parametrize("mode", ["recorded", "live"])
def test_the_call_that_ended_the_run_replays_with_the_same_finish_reason(tmp_path, mode):
    path = stopped_run(tmp_path)
    h = hk.Harness(tools=[lookup, hand_over], model=hk.ScriptedModel([]))
    report = hk.replay(path, h, tools=mode)
    assert report.identical, report.divergences
    assert report.run.finish_reason == "transferred"
    finished = report.run.log.last("run.finished").payload
    assert finished["reason"] == "transferred to a human agent: needs a human"


def test_a_real_transfer_replays_with_recorded_tools(tmp_path):
    from harnesskit.domains import airline
    from harnesskit.domains.airline import replay as air
    from tests.conftest import SHARED

    path = (
        SHARED / "datasets/sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"
    )
    if not path.is_file():
        pytest.skip(f"recorded τ-bench runs not at {path} (../shared exists only in the dev setup)")
    run = next(r for r in airline.load_recorded_runs(path) if (r.task_id, r.trial) == (4, 0))
    log = airline.replay_run(run, log_dir=tmp_path, mode="strict").log
    assert log.last("run.finished").payload["finish_reason"] == "transferred"
    harness, _ = air.replay_harness(run, mode="strict")
    report = hk.replay(log.path, harness, tools="recorded")
    assert report.identical, report.divergences
    assert report.run.finish_reason == "transferred"


@pytest.mark.parametrize("schema", [LOGIN_SCHEMA, None], ids=["pattern", "any string"])
def test_live_replay_never_runs_a_call_whose_arguments_were_redacted(tmp_path, schema):
    path, _ = redacted_run(tmp_path, schema)
    desk = Desk(schema)
    report = hk.replay(path, hk.Harness(tools=desk.tools(), model=hk.ScriptedModel([])))
    assert desk.logins == []  # never acted with "[REDACTED:password]"
    assert report.run.finish_reason == "redacted_arguments"
    reason = report.run.log.last("run.finished").payload["reason"]
    assert "login" in reason and "[REDACTED:password]" in reason and "tools='recorded'" in reason
    assert report.replayed_steps == 2 and not report.identical
    step_one = [d for d in report.divergences if d.step == 1]
    assert step_one == []  # the steps before it replayed as recorded
