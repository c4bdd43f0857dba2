"""A lone tool call with a timeout runs on a reusable worker thread, with pool semantics.

Lone read calls on the main thread run inline under SIGALRM instead
(`test_executor_inline.py`); here that is switched off, so the worker path is what runs.
"""

import multiprocessing
import threading

import pytest

import harnesskit as hk
from harnesskit.tools import executor as executor_module


@pytest.fixture(autouse=True)
def _worker_path(monkeypatch):
    monkeypatch.setattr(executor_module, "INLINE_READS", False)


def _run(executor, name, **arguments):
    (done,) = executor.execute(
        [hk.ToolCall(id="c", name=name, arguments=arguments)],
        lambda c: hk.ToolContext(tool_call_id=c.id),
    )
    return done.result


@hk.tool(timeout_seconds=5)
def where() -> int:
    """Return the id of the thread the call runs on."""
    return threading.get_ident()


def test_lone_calls_run_off_the_caller_thread_on_a_reused_worker():
    first = _run(hk.tools.Executor(hk.ToolRegistry([where])), "where").value
    # another run's executor
    second = _run(hk.tools.Executor(hk.ToolRegistry([where])), "where").value
    assert first == second != threading.get_ident()


def test_a_timed_out_worker_is_abandoned_and_ends_when_its_call_returns():
    release = threading.Event()
    stuck_on = []

    @hk.tool(timeout_seconds=0.05)
    def stuck() -> int:
        """Block until released."""
        stuck_on.append(threading.current_thread())
        release.wait(10)
        return threading.get_ident()

    ex = hk.tools.Executor(hk.ToolRegistry([stuck, where]))
    assert _run(ex, "stuck").error_type == "timeout"
    (late,) = stuck_on
    assert _run(ex, "where").value != late.ident  # the stuck worker is not handed out again
    release.set()
    late.join(5)
    assert not late.is_alive()


def test_base_exceptions_reach_the_caller_as_from_a_pool_future():
    @hk.tool(timeout_seconds=5)
    def interrupted() -> None:
        """Raise KeyboardInterrupt."""
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(hk.tools.Executor(hk.ToolRegistry([interrupted])), "interrupted")
    assert _run(hk.tools.Executor(hk.ToolRegistry([where])), "where").ok  # the worker survived


def _child(queue):
    queue.put(_run(hk.tools.Executor(hk.ToolRegistry([where])), "where").ok)


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_starts_its_own_worker():
    _run(hk.tools.Executor(hk.ToolRegistry([where])), "where")  # the parent has an idle worker
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue,))
    child.start()
    child.join(20)
    assert child.exitcode == 0 and queue.get(timeout=1) is True


def test_lone_reads_go_to_a_worker_thread_by_default():
    # the inline SIGALRM path is opt-in: a tool can defeat an alarm, never a worker's timeout
    assert executor_module.INLINE_READS is False
