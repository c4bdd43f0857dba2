"""Brakes hold on a slow server and a slow tool (R-L2, R-M3): one timer for Limits and client.

Every run uses an injected timer that runs twice as fast as real time, so a `max_seconds=3`
brake trips after 1.5 real seconds; the assertions read that timer only.
"""

from __future__ import annotations

import json
import time

import harnesskit as hk
from harnesskit.models._retry import RetryPolicy
from harnesskit.testing import reply
from tests.support.loopback import Reply, completion, sse_events

FAST = RetryPolicy(max_retries=2, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
LIMITS = hk.Limits(max_seconds=3, closing_seconds=2)
BOUND = 3 + 2  # max_seconds + the closing allowance, on the injected timer


class FastTimer:
    """A monotonic timer (seconds) running `factor` times faster than the real one."""

    def __init__(self, factor: float = 2.0) -> None:
        self.t0, self.factor = time.monotonic(), factor

    def __call__(self) -> float:
        return (time.monotonic() - self.t0) * self.factor


def run_against(server, tmp_path, *, stream: bool = False) -> tuple[hk.Run, float]:
    timer = FastTimer()
    model = hk.get_model("openai-compat:m", base_url=server.url, retry=FAST, stream=stream)
    h = hk.Harness([], model, log_dir=tmp_path, limits=LIMITS, timer=timer)
    run = h.run("hello")
    return run, timer()


def test_a_slow_loris_body_stops_at_max_seconds_and_the_closing_request_is_sent(server, tmp_path):
    text = json.dumps(completion("never whole"))  # one byte every 0.5 s on the timer
    server.script(Reply(sse=list(text), sse_gap_seconds=0.25), Reply(json=completion("best")))

    run, seconds = run_against(server, tmp_path)

    assert run.finish_reason == "max_seconds"
    assert seconds <= BOUND
    assert run.final_text == "best"  # the closing request had its own allowance
    assert len(server.requests) == 2 and "tools" not in server.requests[1].body
    (retry,) = run.log.of_type("model.retry")
    # the dribble is served as `text/event-stream` (the loopback's way to send byte by byte),
    # which the client reads as the stream it says it is
    assert "deadline passed while the stream" in retry.payload["error"]


def test_sse_keep_alive_comments_do_not_keep_a_request_alive(server, tmp_path):
    pings = Reply(sse=[": ping\n\n"] * 200, sse_gap_seconds=0.25)
    closing = Reply(
        sse=sse_events(
            [{"choices": [{"index": 0, "delta": {"content": "best"}, "finish_reason": "stop"}]}]
        )
    )
    server.script(pings, closing)

    run, seconds = run_against(server, tmp_path, stream=True)

    assert run.finish_reason == "max_seconds"
    assert seconds <= BOUND
    assert run.final_text == "best"


def test_a_server_silent_past_the_deadline_is_cut_at_the_deadline(server, tmp_path):
    server.script(Reply(json=completion("late"), delay_seconds=5), Reply(json=completion("best")))

    run, seconds = run_against(server, tmp_path)

    assert run.finish_reason == "max_seconds"
    assert run.final_text == "best"


def test_a_slow_tool_stops_at_the_runs_remaining_time_not_its_own_timeout(tmp_path):
    @hk.tool(timeout_seconds=30)
    def slow() -> str:
        """Take a long time."""
        time.sleep(4)
        return "done"

    timer = FastTimer()
    model = hk.ScriptedModel([reply.tool_call("slow"), reply.text("best")])
    h = hk.Harness([slow], model, log_dir=tmp_path, limits=LIMITS, timer=timer)

    run = h.run("go")

    assert timer() <= BOUND
    assert run.finish_reason == "max_seconds"
    (result,) = run.log.of_type("tool.result")
    assert result.payload["error_type"] == "timeout"
    assert "remaining time" in result.content
    assert run.final_text == "best"


def test_the_closing_request_gets_its_own_deadline_on_the_harness_timer():
    timer = FastTimer()
    seen = []

    class Spy:
        name = "spy"

        def request(self, request: hk.ModelRequest) -> hk.ModelResponse:
            seen.append((request.final, request.deadline_monotonic, request.clock))
            return hk.ModelResponse(message=hk.Message(role="assistant", content="x"))

    h = hk.Harness([], Spy(), limits=hk.Limits(max_tokens=0, closing_seconds=4), timer=timer)
    run = h.run("hi")
    assert run.finish_reason == "max_tokens"
    ((final, deadline, clock),) = seen
    assert final and clock is timer and 4 <= deadline <= timer() + 4
