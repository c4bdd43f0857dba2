"""One step of a run at a time (R-L1): a second `step`/`run`/`send` while one runs is refused.

A notebook cell calling `run.step()` while the StepControls widget's "Run to end" steps on its
worker thread used to interleave both in the log (two step-2 requests, a request sent while a
tool call had no result). Real threads; a tool that waits on an event holds a step open.
"""

from __future__ import annotations

import threading
import time

import pytest

import harnesskit as hk
from harnesskit.testing import reply

BUSY = "a step of this run is already running"


def blocking_run(tmp_path):
    """A run whose first step blocks in its tool until `release` is set."""
    entered, release = threading.Event(), threading.Event()

    @hk.tool(timeout_seconds=None)
    def wait_here(q: str) -> str:
        """Wait.

        Args:
            q: anything.
        """
        entered.set()
        assert release.wait(30)
        return q

    model = hk.FunctionModel(
        lambda msgs, info: (
            reply.tool_call("wait_here", q=str(info.step)) if info.step < 3 else "done"
        )
    )
    run = hk.Harness([wait_here], model, log_dir=tmp_path).start("go")
    return run, entered, release


def test_step_run_send_and_fork_are_refused_while_a_step_runs_on_another_thread(tmp_path):
    run, entered, release = blocking_run(tmp_path)
    errors: list[BaseException] = []

    def worker():
        try:
            run.step()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=worker)
    t.start()
    try:
        assert entered.wait(30)
        before = len(run.log.events)
        for attempt in (run.step, run.run, lambda: run.send("hi"), lambda: run.fork(1, "b")):
            with pytest.raises(hk.UsageError, match=BUSY):
                attempt()
        assert len(run.log.events) == before  # the refused calls wrote nothing
    finally:
        release.set()
        t.join(30)
    assert errors == [] and run.state.step == 1
    run.run()  # free again once the step is done
    assert run.finish_reason == "stop"
    log = hk.EventLog.read(run.log.path)
    steps = [e.payload["step"] for e in log.of_type("model.request")]
    assert steps == sorted(steps) and len(steps) == len(set(steps))  # one request per step


def test_cancel_from_another_thread_is_not_refused(tmp_path):
    run, entered, release = blocking_run(tmp_path)
    t = threading.Thread(target=run.run)
    t.start()
    assert entered.wait(30)
    run.cancel()
    release.set()
    t.join(30)
    assert run.finish_reason == "cancelled"
    hk.EventLog.read(run.log.path)


def test_many_threads_stepping_at_once_leave_a_readable_log(tmp_path):
    run, entered, release = blocking_run(tmp_path)
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def go():
        barrier.wait()
        try:
            run.step()
            outcomes.append("stepped")
        except hk.UsageError as exc:
            outcomes.append("busy" if BUSY in str(exc) else f"other: {exc}")

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        assert entered.wait(30)  # one step holds the run in its tool ...
        for t in threads:
            t.join(0.2)
        deadline = time.monotonic() + 30
        while len(outcomes) < 3 and time.monotonic() < deadline:  # ... the others were refused
            time.sleep(0.01)
    finally:
        release.set()
        for t in threads:
            t.join(30)
    assert sorted(outcomes) == ["busy", "busy", "busy", "stepped"]
    log = hk.EventLog.read(run.log.path)  # no colliding or out-of-order ids
    assert [e.payload["step"] for e in log.of_type("model.request")] == [1]
    assert len(log.of_type("tool.call")) == len(log.of_type("tool.result")) == 1
    run.run()
    assert run.finish_reason == "stop"


def test_a_fork_shares_its_log_so_it_waits_its_turn_too(tmp_path):
    run, entered, release = blocking_run(tmp_path)
    branch = run.fork(2, "alt")
    t = threading.Thread(target=run.step)
    t.start()
    try:
        assert entered.wait(30)
        with pytest.raises(hk.UsageError, match=BUSY):
            branch.step()
    finally:
        release.set()
        t.join(30)
    branch.run()
    hk.EventLog.read(run.log.path)
