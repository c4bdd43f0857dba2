"""`Limits` checks itself: one check before each request, one after each response."""

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def test_check_before_request_names_the_first_brake_its_value_limit_and_unit():
    limits = hk.Limits(max_steps=3, max_tokens=10)
    st = hk.run.RunState(run_id="r", step=3, prompt_tokens=20)
    with pytest.raises(hk.BrakeTripped) as err:
        limits.check_before_request(st, seconds=0.0)
    assert (err.value.brake, err.value.value, err.value.limit, err.value.unit) == (
        "max_steps", 3, 3, "steps",
    )  # fmt: skip
    hk.Limits(max_steps=None).check_before_request(
        hk.run.RunState(run_id="r", step=99), seconds=1e9
    )


def test_check_after_response_trips_only_the_stuck_brake_and_only_with_tool_calls():
    limits = hk.Limits(max_consecutive_errors=2, max_seconds=1)
    stuck = hk.run.RunState(run_id="r", consecutive_errors=2)
    with pytest.raises(hk.BrakeTripped, match="max_consecutive_errors"):
        limits.check_after_response(stuck, reply.tool_call("t"), seconds=0.0)
    limits.check_after_response(stuck, reply.text("answer"), seconds=0.0)
    # with the clock brake tripped too, the next check_before_request reports it first
    limits.check_after_response(stuck, reply.tool_call("t"), seconds=5.0)
    with pytest.raises(hk.BrakeTripped, match="max_seconds"):
        limits.check_before_request(stuck, seconds=5.0)
