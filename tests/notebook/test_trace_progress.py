"""The progress stream drives a tqdm bar (R-L3)."""

import io
import os
import sys
import threading
import types

import tqdm

import harnesskit as hk
from harnesskit.testing import reply


@hk.tool
def ping(n: int) -> int:
    """Echo a number.

    Use this when asked to ping. Do not use it for anything else.

    Args:
        n: the number.

    Returns:
        The same number.
    """
    if n < 0:
        raise hk.ToolNotFoundError("negative")
    return n


def test_tqdm_bar_counts_steps_tools_and_finish():
    out = io.StringIO()
    bar = hk.TqdmProgress("demo", tqdm_class=tqdm.tqdm, file=out, mininterval=0, disable=False)
    turns = [reply.tool_call("ping", n=1), reply.tool_call("ping", n=-1), reply.text("done")]
    h = hk.Harness([ping], hk.ScriptedModel(turns), progress=bar, limits=hk.Limits(max_steps=5))
    run = h.run("go")
    text = out.getvalue()
    assert run.finish_reason == "stop"
    assert "demo:" in text and "3/5" in text
    assert "ping ok" in text and "ping not_found" in text
    assert "finished: stop | 2 tool calls, 1 failed" in text
    assert bar.bar is None and bar.finish_reason == "stop"
    # the same callback draws a fresh bar for the next run of the harness
    h2 = hk.Harness(
        [ping], hk.ScriptedModel([reply.text("hi")]), progress=bar, limits=hk.Limits(max_steps=5)
    )
    h2.run("again")
    assert "finished: stop | 0 tool calls" in out.getvalue()


def test_default_bar_is_tqdm_auto_and_brakes_show_their_name():
    out = io.StringIO()
    bar = hk.TqdmProgress(file=out, mininterval=0, disable=False)
    turns = [reply.tool_call("ping", n=i) for i in range(2)] + [reply.text("best effort")]
    hk.Harness([ping], hk.ScriptedModel(turns), progress=bar, limits=hk.Limits(max_steps=2)).run(
        "x"
    )
    assert "2/2" in out.getvalue() and "finished: max_steps" in out.getvalue()
    import tqdm.auto

    assert bar.tqdm_class is None and tqdm.auto.tqdm is not None
    bar.close()  # closing an idle callback is harmless
    assert repr(bar) == "<TqdmProgress 'run' idle>"


def _run_with(bar):
    turns = [reply.tool_call("ping", n=1), reply.text("done")]
    hk.Harness([ping], hk.ScriptedModel(turns), progress=bar).run("go")


def test_no_bar_lines_in_redirected_output_such_as_ci_logs(capsys):
    out = io.StringIO()  # not a TTY, like a CI log
    _run_with(hk.TqdmProgress(file=out, mininterval=0))
    assert out.getvalue() == ""
    _run_with(hk.TqdmProgress(mininterval=0))  # the default file, stderr, captured: not a TTY
    assert "run:" not in capsys.readouterr().err


def test_a_terminal_gets_the_bar():
    leader, follower = os.openpty()  # a real pseudo-terminal
    chunks: list[bytes] = []

    def drain() -> None:  # read while the run writes: a full pty buffer would block the writer
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO once the follower side is closed (Linux)
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    with os.fdopen(follower, "w", encoding="utf-8") as tty:
        assert tty.isatty()
        _run_with(hk.TqdmProgress(file=tty, mininterval=0))
        tty.flush()
    reader.join(timeout=10)
    os.close(leader)
    drawn = b"".join(chunks).decode("utf-8", "replace")
    assert "run:" in drawn and "finished: stop" in drawn


def test_a_notebook_kernel_gets_the_bar_whatever_its_streams(monkeypatch):
    shell = types.SimpleNamespace(kernel=object())  # what IPython's get_ipython() is in Jupyter
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", fake)
    out = io.StringIO()  # a kernel's streams are no TTY
    _run_with(hk.TqdmProgress(tqdm_class=tqdm.tqdm, file=out, mininterval=0))
    assert "finished: stop" in out.getvalue()
