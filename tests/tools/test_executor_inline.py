"""A lone read call on the main thread runs inline under SIGALRM, exactly as on a worker thread.

The inline path is off by default (`executor.INLINE_READS = False`): a tool that swallows every
interruption in a loop, or sets its own SIGALRM timer, would defeat its timeout there, while a
worker thread is given up on at the timeout whatever the tool does. These tests switch it on.
Every tool here runs through both paths (`executor.INLINE_READS` on and off) and the results
must be the same, field for field (the traceback text and durations aside); the SIGALRM handler
and timer are put back exactly; every case the alarm cannot serve goes to the worker thread.
"""

import asyncio
import contextlib
import dataclasses
import math
import signal
import threading
import time

import pytest

import harnesskit as hk
from harnesskit.tools import executor as executor_module

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "setitimer"), reason="SIGALRM timers are POSIX only"
)


@pytest.fixture(autouse=True)
def _inline_on(monkeypatch):
    monkeypatch.setattr(executor_module, "INLINE_READS", True)


class Odd:
    """Not JSON."""


@hk.tool(timeout_seconds=5)
def where() -> int:
    """Return the id of the thread the call runs on."""
    return threading.get_ident()


@hk.tool(timeout_seconds=5)
def fast(n: int) -> dict:
    """Return a small object."""
    return {"n": n, "items": list(range(n)), "text": "café"}


@hk.tool(timeout_seconds=0.1)
def slow() -> str:
    """Sleep past the timeout."""
    time.sleep(1.5)
    return "late"


@hk.tool(timeout_seconds=0.1)
def spin() -> int:
    """Busy Python code past the timeout."""
    end, n = time.monotonic() + 1.5, 0
    while time.monotonic() < end:
        n += 1
    return n


@hk.tool(timeout_seconds=0.1)
def swallow() -> str:
    """Catch every interruption and keep going, then return."""
    end = time.monotonic() + 0.4
    while time.monotonic() < end:
        with contextlib.suppress(BaseException):  # the point of the test
            time.sleep(0.01)
    return "swallowed"


@hk.tool(timeout_seconds=0.1)
def swallow_then_fail() -> str:
    """Catch the interruption and raise something else."""
    try:
        time.sleep(1.5)
    except BaseException as exc:
        raise RuntimeError("interrupted") from exc
    return "never"


@hk.tool(timeout_seconds=5)
def fails() -> str:
    """Raise a plain error."""
    raise RuntimeError("disk on fire")


@hk.tool(timeout_seconds=5)
def not_found() -> str:
    """Raise a tool error."""
    raise hk.ToolNotFoundError("no such user", hint="ask the user")


@hk.tool(timeout_seconds=5)
def odd_value() -> object:
    """Return something that is not JSON."""
    return Odd()


@hk.tool(timeout_seconds=5)
def nan_value() -> dict:
    """Return a NaN."""
    return {"x": math.nan, "y": [math.inf]}


@hk.tool(timeout_seconds=5)
def surrogate_value() -> list:
    """Return a lone surrogate, as os.listdir of a non-UTF-8 name does."""
    return ["caf\udce9.txt", {"k\ud800": "v"}]


@hk.tool(timeout_seconds=5)
def cyclic() -> list:
    """Return a cycle."""
    out: list = []
    out.append(out)
    return out


@hk.tool(timeout_seconds=5)
def stops() -> str:
    """End the run."""
    raise hk.StopRun("transferred", "to a human")


@hk.tool(timeout_seconds=5)
def emits(ctx: hk.ToolContext) -> str:
    """Emit an event and return."""
    ctx.emit("note", {"x": 1})
    return "ok"


TOOLS = [where, fast, slow, spin, swallow, swallow_then_fail, fails, not_found, odd_value]
TOOLS += [nan_value, surrogate_value, cyclic, stops, emits]
CASES = [
    ("fast", {"n": 3}),
    ("slow", {}),
    ("spin", {}),
    ("swallow", {}),
    ("swallow_then_fail", {}),
    ("fails", {}),
    ("not_found", {}),
    ("odd_value", {}),
    ("nan_value", {}),
    ("surrogate_value", {}),
    ("cyclic", {}),
    ("emits", {}),
    ("fast", {"n": "three"}),  # invalid: never reaches either path
]


def _run(name, arguments=None, *, inline=True, monkeypatch=None, tools=TOOLS, **kw):
    if monkeypatch is not None:
        monkeypatch.setattr(executor_module, "INLINE_READS", inline)
    ex = hk.tools.Executor(hk.ToolRegistry(tools))
    try:
        return ex.execute(
            [hk.ToolCall(id="c", name=name, arguments=arguments or {})],
            lambda c: hk.ToolContext(tool_call_id=c.id),
            **kw,
        )
    finally:
        ex.close()


def _comparable(executed):
    (ex,) = executed
    r = ex.result
    meta = {k: v for k, v in r.meta.items() if k != "traceback"}
    return (
        r.tool_call_id,
        r.name,
        r.ok,
        r.content,
        r.value if r.ok else None,
        r.error_type,
        r.message,
        r.hint,
        meta,
        "traceback" in r.meta,
        ex.arguments,
        ex.emitted,
    )


def _alarm_state():
    return signal.getsignal(signal.SIGALRM), signal.getitimer(signal.ITIMER_REAL)


@pytest.mark.parametrize(
    ("name", "arguments"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
)
def test_inline_and_worker_paths_give_the_same_result(monkeypatch, name, arguments):
    before = _alarm_state()
    inline = _run(name, arguments, inline=True, monkeypatch=monkeypatch)
    assert _alarm_state() == before
    threaded = _run(name, arguments, inline=False, monkeypatch=monkeypatch)
    assert _comparable(inline) == _comparable(threaded)


def test_timeouts_are_reported_at_the_timeout_and_name_it(monkeypatch):
    for inline in (True, False):
        for name in ("slow", "spin", "swallow_then_fail"):
            t0 = time.monotonic()
            (ex,) = _run(name, inline=inline, monkeypatch=monkeypatch)
            assert time.monotonic() - t0 < 1.0, (name, inline)  # not the tool's 1.5 s
            assert ex.result.error_type == "timeout"
            assert ex.result.message == (
                f"{name} did not finish within 0.1 s; side effect: none (read-only tool)"
            )
            assert ex.result.meta == {"outcome_unknown": False}


def test_a_lone_read_runs_on_the_calling_main_thread(monkeypatch):
    (ex,) = _run("where", inline=True, monkeypatch=monkeypatch)
    assert ex.result.value == threading.get_ident()
    (ex,) = _run("where", inline=False, monkeypatch=monkeypatch)
    assert ex.result.value != threading.get_ident()


def test_a_stop_run_is_kept_for_raise_stop_on_both_paths(monkeypatch):
    for inline in (True, False):
        monkeypatch.setattr(executor_module, "INLINE_READS", inline)
        ex = hk.tools.Executor(hk.ToolRegistry(TOOLS))
        out = ex.execute(
            [hk.ToolCall(id="c", name="stops", arguments={})],
            lambda c: hk.ToolContext(tool_call_id=c.id),
        )
        assert out == []
        with pytest.raises(hk.StopRun, match="to a human"):
            ex.raise_stop()


@pytest.mark.parametrize("inline", [True, False])
def test_ctrl_c_reaches_the_caller_and_a_tool_exit_is_its_failure_on_both_paths(
    monkeypatch, inline
):
    @hk.tool(timeout_seconds=5)
    def interrupted() -> None:
        """Raise."""
        raise KeyboardInterrupt

    @hk.tool(timeout_seconds=5)
    def exits() -> None:
        """Exit."""
        raise SystemExit(2)

    before = _alarm_state()
    with pytest.raises(KeyboardInterrupt):
        _run("interrupted", inline=inline, monkeypatch=monkeypatch, tools=[interrupted])
    assert _alarm_state() == before
    (done,) = _run("exits", inline=inline, monkeypatch=monkeypatch, tools=[exits])
    assert done.result.error_type == "tool_error" and "sys.exit(2)" in done.result.content
    assert _alarm_state() == before
    assert _run("where", inline=inline, monkeypatch=monkeypatch)[0].result.ok


def test_a_real_ctrl_c_during_an_inline_call_interrupts_it_and_restores_the_alarm(monkeypatch):
    @hk.tool(timeout_seconds=5)
    def waits() -> str:
        """Get a SIGINT while sleeping."""
        signal.raise_signal(signal.SIGINT)
        time.sleep(3)
        return "never"

    before = _alarm_state()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _run("waits", inline=True, monkeypatch=monkeypatch, tools=[waits])
    assert time.monotonic() - t0 < 2
    assert _alarm_state() == before


def test_the_alarm_is_not_left_armed_or_installed_after_any_outcome(monkeypatch):
    for name, arguments in CASES:
        _run(name, arguments, inline=True, monkeypatch=monkeypatch)
        assert _alarm_state() == (signal.SIG_DFL, (0.0, 0.0)), name
    time.sleep(0.15)  # a stray re-armed alarm would kill the process (default action) here


def _ran_inline(**kw):
    (ex,) = _run("where", **kw)
    return ex.result.value == threading.get_ident()


def test_another_sigalrm_user_keeps_its_handler_and_timer_and_the_call_uses_a_thread():
    hits = []

    def handler(signum, frame):
        hits.append(signum)

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        assert not _ran_inline()
        assert signal.getsignal(signal.SIGALRM) is handler
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        assert not _ran_inline()
        assert signal.getsignal(signal.SIGALRM) == signal.SIG_IGN
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        assert not _ran_inline()
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < remaining <= 0.3  # the other user's timer still runs
        time.sleep(0.5)
        assert hits == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_default_handler_with_a_pending_timer_is_left_alone():
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        assert not _ran_inline()
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 29 < remaining <= 30
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def test_calls_the_alarm_cannot_serve_run_on_a_thread(monkeypatch):
    main = threading.get_ident()

    @hk.tool(timeout_seconds=5, risk="write")
    def write_where() -> int:
        """A write."""
        return threading.get_ident()

    @hk.tool(timeout_seconds=5)
    async def async_where() -> int:
        """An async read."""
        await asyncio.sleep(0)
        return threading.get_ident()

    class Forward:  # as harnesskit.tools.mcp._Forward declares
        _hk_needs_thread = True

        def __call__(self) -> int:
            return threading.get_ident()

    mcp_like = hk.Tool(
        name="mcp_where",
        description="An MCP-like forwarder.",
        parameters={"type": "object", "properties": {}},
        fn=Forward(),
        timeout_seconds=5,
    )
    tools = [where, write_where, async_where, mcp_like]
    for name in ("write_where", "async_where", "mcp_where"):
        (ex,) = _run(name, tools=tools)
        assert ex.result.ok and ex.result.value != main, name
    (ex,) = _run("where", tools=tools, deadline=time.perf_counter() + 60)  # max_seconds
    assert ex.result.value != main
    ex = hk.tools.Executor(hk.ToolRegistry(tools))
    two = ex.execute(
        [hk.ToolCall(id=i, name="where", arguments={}) for i in ("a", "b")],
        lambda c: hk.ToolContext(tool_call_id=c.id),
    )
    assert all(e.result.value != main for e in two)
    ex.close()
    off_main = []
    thread = threading.Thread(target=lambda: off_main.append(_run("where", tools=tools)))
    thread.start()
    thread.join(10)
    (ex,) = off_main[0]
    assert ex.result.value not in (main, thread.ident)  # a worker, not the calling thread
    assert _ran_inline(tools=tools)  # and the plain lone read on the main thread is inline


def test_no_timeout_still_runs_inline_without_an_alarm(monkeypatch):
    calls = []
    monkeypatch.setattr(executor_module, "_run_under_alarm", lambda *a: calls.append(a))
    unlimited = dataclasses.replace(where, timeout_seconds=None)
    (ex,) = _run("where", tools=[unlimited])
    assert ex.result.value == threading.get_ident() and calls == []


def test_the_mcp_forwarder_asks_for_a_thread():
    from harnesskit.tools.mcp import _Forward

    assert _Forward._hk_needs_thread is True


def test_the_default_path_gives_up_on_a_tool_that_swallows_every_interruption(monkeypatch):
    # off by default: inline, this retry loop catches every alarm and never ends
    monkeypatch.setattr(executor_module, "INLINE_READS", False)
    stop = threading.Event()

    @hk.tool(timeout_seconds=0.2)
    def fetch() -> str:
        """Retry forever, catching everything (until the test ends)."""
        while not stop.is_set():
            try:
                time.sleep(0.02)
                raise ConnectionError
            except BaseException:  # what a careless tool does
                continue
        return "late"

    started = time.monotonic()
    try:
        (ex,) = _run("fetch", tools=[fetch])
    finally:
        stop.set()
    assert not ex.result.ok and ex.result.error_type == "timeout"
    assert time.monotonic() - started < 5
