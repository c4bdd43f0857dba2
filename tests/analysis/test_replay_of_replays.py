"""`hk.replay` agrees with runs that created artifacts, were cancelled, or were themselves
replays written by `harnesskit replay --log-dir` (R-V7)."""

from __future__ import annotations

from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.domains import airline
from harnesskit.testing import reply

SHARED = Path(__file__).parents[2] / "../shared/datasets"
RECORDED = SHARED / "sierra-research__tau-bench/historical_trajectories/gpt-4o-airline.json"

needs_shared = pytest.mark.skipif(
    not RECORDED.is_file(),
    reason=f"recorded τ-bench runs not at {RECORDED} (../shared exists only in the dev setup)",
)


@hk.tool
def list_orders(user: str) -> list:
    """List a user's orders.

    Use this to list orders. Do not use it to change one.

    Args:
        user: the user id.

    Returns:
        The orders.
    """
    return [{"order_id": f"A{i}", "status": "shipped"} for i in range(40)]


def _harness(turns, **kw):
    return hk.Harness([list_orders], hk.ScriptedModel(turns), **kw)


@pytest.mark.parametrize("mode", ["recorded", "live"])
def test_a_run_that_stored_an_artifact_replays_in_both_tool_modes(tmp_path, mode):
    turns = [reply.tool_call("list_orders", user="u1"), reply.text("You have 40 orders.")]
    run = _harness(turns, log_dir=tmp_path).start("my orders?").run()
    assert run.log.of_type("artifact.created")

    report = hk.replay(run.log.path, _harness([]), tools=mode)
    assert report.identical, report.divergences
    assert report.run.log.of_type("artifact.created")


def test_a_cancelled_run_replays_as_cancelled(tmp_path):
    run = _harness([reply.text("hello")], log_dir=tmp_path).start("hi")
    run.cancel()
    run.step()
    assert run.finish_reason == "cancelled"

    report = hk.replay(run.log.path, _harness([]))
    assert report.identical, report.divergences
    assert report.run.finish_reason == "cancelled"


def test_a_run_cancelled_after_a_user_turn_replays_without_asking_the_model(tmp_path):
    run = _harness([reply.text("Hi.")], log_dir=tmp_path).start("hello").run()
    run.send("thanks, bye")
    run.cancel()
    run.step()

    report = hk.replay(run.log.path, _harness([]))
    assert report.identical, report.divergences
    assert report.run.finish_reason == "cancelled"
    assert len(report.run.log.of_type("model.request")) == 1


@needs_shared
@pytest.mark.parametrize("mode", ["recorded", "live"])
def test_a_replay_written_by_the_cli_replays_again_identically(tmp_path, mode):
    runs = airline.load_recorded_runs(RECORDED)[:3]
    for recorded in runs:
        result = airline.replay_run(recorded, log_dir=tmp_path)
        assert result.finish_reason == "cancelled"  # the recording ended, not the model
        harness, _ = airline.replay_harness(recorded)
        report = hk.replay(result.log.path, harness, tools=mode)
        assert report.identical, (recorded.task_id, report.divergences[:2])
        assert report.run.finish_reason == "cancelled"
