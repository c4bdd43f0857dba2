"""A pause during `h.resume()` ends like a pause during `run()` (R-V6).

The gate's confirm callback raises `StopRun("paused")` (a human who is not there yet) while
resume finishes the step in flight: resume returns the run `paused`, with `run.finished`
logged, exactly as the first run did. When a later resume's confirmation approves, the
call runs and the returned run's state is current, not the stale `paused`.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import StopRun
from harnesskit.testing import reply

AUDIT: list[str] = []
DEPLOYS: list[str] = []


@hk.tool(risk="write")
def write_audit(line: str) -> str:
    """Append an audit line.

    Use before each action. Do not use for anything else.

    Args:
        line: the line.

    Returns:
        ok.
    """
    AUDIT.append(line)
    return "ok"


@hk.tool(risk="destructive")
def deploy(env: str) -> str:
    """Deploy to an environment.

    Use when asked to deploy. Do not use without approval.

    Args:
        env: the environment.

    Returns:
        The deployment id.
    """
    DEPLOYS.append(env)
    return "dep-1"


TURNS = [
    reply.tool_calls(reply.call("write_audit", line="x"), reply.call("deploy", env="prod")),
    reply.text("deployed"),
]


HUMAN = {"there": False}


def approver(request):
    """A human who approves once there; until then the run pauses."""
    if not HUMAN["there"]:
        raise StopRun("paused", "waiting for a human")
    return True


def harness(folder, turns, *, there=False):
    HUMAN["there"] = there
    return hk.Harness(
        [write_audit, deploy],
        hk.ScriptedModel(turns),
        log_dir=folder,
        gate=hk.Gate(confirm=approver),
    )


@pytest.fixture
def paused_log(tmp_path):
    AUDIT.clear()
    DEPLOYS.clear()
    run = harness(tmp_path, TURNS).start("deploy prod", run_id="r").run()
    assert run.finish_reason == "paused" and DEPLOYS == []
    run.log.close()
    return tmp_path / "r.jsonl"


def test_a_pause_during_resume_returns_the_run_paused_with_run_finished(paused_log):
    folder = paused_log.parent
    for _ in range(2):  # paused again, twice: each resume ends like the first run did
        run = harness(folder, TURNS[1:]).resume(paused_log)
        assert run.finish_reason == "paused" and DEPLOYS == []
        log = hk.EventLog.read(paused_log)
        assert [e.type for e in log][-2:] == ["run.resume", "run.finished"]
        assert log.events[-1].payload["finish_reason"] == "paused"
        assert "waiting for a human" in log.events[-1].payload["reason"]
        run.log.close()
    run = harness(folder, TURNS[1:], there=True).resume(paused_log)
    assert run.finish_reason is None and DEPLOYS == ["prod"]  # current: the call ran
    assert run.run().finish_reason == "stop" and run.final_text == "deployed"
    back = hk.EventLog.read(paused_log)
    assert back.events[-1].type == "run.finished" and DEPLOYS == ["prod"]


def test_a_pause_in_a_resumed_run_still_resumes_on_run(paused_log):
    """The paused run returned by resume goes on with `run()`, as a paused run does."""
    run = harness(paused_log.parent, TURNS[1:]).resume(paused_log)
    assert run.finish_reason == "paused"
    run.log.close()
    again = harness(paused_log.parent, TURNS[1:], there=True).resume(paused_log).run()
    assert again.finish_reason == "stop" and DEPLOYS == ["prod"]


def test_run_after_a_pause_at_an_approval_runs_the_waiting_calls(tmp_path):
    """`run()` on a run paused at an approval asks again and runs the calls, never skips them.

    It used to ask the model for a new turn instead: the waiting calls never ran and the run
    ended `stop` with the model's "deployed".
    """
    AUDIT.clear()
    DEPLOYS.clear()
    run = harness(tmp_path, TURNS).start("deploy prod", run_id="r").run()
    assert run.finish_reason == "paused" and DEPLOYS == []
    assert run.run().finish_reason == "paused" and DEPLOYS == []  # still not there
    HUMAN["there"] = True
    assert run.run().finish_reason == "stop" and run.final_text == "deployed"
    assert AUDIT == ["x"] and DEPLOYS == ["prod"]
    log = hk.EventLog.read(tmp_path / "r.jsonl")
    assert len(log.of_type("tool.call")) == 2  # logged once, answered once each
    assert [e.tool for e in log.of_type("tool.result")] == ["write_audit", "deploy"]


def test_run_after_a_pause_during_resume_runs_the_waiting_calls(paused_log):
    run = harness(paused_log.parent, TURNS[1:]).resume(paused_log)
    assert run.finish_reason == "paused"
    HUMAN["there"] = True
    assert run.run().finish_reason == "stop" and DEPLOYS == ["prod"] and AUDIT == ["x"]
