"""A tool call that never returns must not keep the Python process from exiting.

Each script runs in its own interpreter: the run gives up on the hung call (a `timeout`
result), prints `done`, and the interpreter must then exit on its own.
"""

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import harnesskit as hk
from harnesskit.testing import reply

ROOT = Path(hk.__file__).resolve().parent.parent

HUNG_TOOL = """
import time
import harnesskit as hk
from harnesskit.testing import reply

@hk.tool(timeout_seconds={timeout})
def slow(x: str) -> str:
    '''Wait.

    Args:
        x: anything.

    Returns:
        x.
    '''
    time.sleep(10**6)
    return x
"""


def _exits(script: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("timeout", ["0.5", "None"])
def test_a_hung_call_in_a_parallel_turn_lets_the_process_exit(timeout):
    limits = "None" if timeout != "None" else "hk.Limits(max_seconds=1)"
    out = _exits(
        HUNG_TOOL.format(timeout=timeout)
        + f"""
model = hk.ScriptedModel(
    [reply.tool_calls(reply.call("slow", x="a"), reply.call("slow", x="b")), reply.text("k")]
)
run = hk.Harness([slow], model, limits={limits}).run("hi")
print("done", [e.error_type for e in run.log.of_type(hk.log.ToolResultEvent)])
"""
    )
    assert out.startswith("done ['timeout', 'timeout']")


def test_a_lone_call_bounded_by_the_run_deadline_lets_the_process_exit():
    out = _exits(
        HUNG_TOOL.format(timeout="None")
        + """
model = hk.ScriptedModel([reply.tool_call("slow", x="a"), reply.text("k")])
run = hk.Harness([slow], model, limits=hk.Limits(max_seconds=1)).run("hi")
print("done", run.finish_reason)
"""
    )
    assert out.startswith("done max_seconds")


def test_threads_of_abandoned_calls_end_when_the_calls_return_and_idle_ones_are_reused():
    release = threading.Event()

    @hk.tool(timeout_seconds=0.2)
    def stuck(x: str) -> str:
        """Block until released.

        Args:
            x: anything.

        Returns:
            x.
        """
        release.wait(30)
        return x

    @hk.tool(timeout_seconds=5)
    def quick(x: str) -> str:
        """Return at once.

        Args:
            x: anything.

        Returns:
            x.
        """
        return x

    def turn(name):
        calls = [reply.call(name, x=str(i)) for i in range(3)]
        model = hk.ScriptedModel([reply.tool_calls(*calls), reply.text("k")])
        return hk.Harness([stuck, quick], model).run("go")

    turn("quick")  # idle workers exist now
    before = threading.active_count()
    for _ in range(5):  # many runs of parallel turns: no thread is added per run
        turn("quick")
    assert threading.active_count() <= before

    stuck_run = turn("stuck")
    assert [e.error_type for e in stuck_run.log.of_type(hk.log.ToolResultEvent)] == ["timeout"] * 3
    stuck_threads = [t for t in threading.enumerate() if t.daemon and t.name == "hk-tool"]
    assert all(t.daemon for t in threading.enumerate() if t.name.startswith("hk-tool"))
    release.set()
    end = time.monotonic() + 20
    while threading.active_count() > before and time.monotonic() < end:
        time.sleep(0.05)
    assert threading.active_count() <= before, stuck_threads


def test_max_workers_bounds_the_calls_running_at_once_and_every_call_gets_its_result():
    running, peak, lock = [0], [0], threading.Lock()

    @hk.tool(timeout_seconds=5)
    def nap(x: str) -> str:
        """Sleep a little.

        Args:
            x: anything.

        Returns:
            x.
        """
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return x

    ex = hk.tools.Executor(hk.ToolRegistry([nap]), max_workers=2)
    calls = [hk.ToolCall(id=f"c{i}", name="nap", arguments={"x": str(i)}) for i in range(5)]
    done = ex.execute(calls, lambda c: hk.ToolContext(tool_call_id=c.id))
    assert [d.result.value for d in done] == ["0", "1", "2", "3", "4"]
    assert peak[0] == 2
