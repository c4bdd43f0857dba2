"""`sys.exit` inside a tool (argparse on a bad argument string) is the tool's failure (R-E1).

It ended the run `cancelled` and exited the process. A `SystemExit` raised by a signal
handler while a tool runs on the main thread (SIGTERM -> `sys.exit`) is still the
process's exit, and Ctrl-C still cancels the run.
"""

import argparse
import json
import signal
import sys

import pytest

import harnesskit as hk
from harnesskit.testing import reply


def _grep_cli(timeout):
    @hk.tool(timeout_seconds=timeout)
    def grep_cli(args: str) -> str:
        """Run the grep-like command line.

        Args:
            args: the command line.

        Returns:
            What it searched.
        """
        parser = argparse.ArgumentParser(prog="g")
        parser.add_argument("pattern")
        parser.add_argument("--n", type=int)
        return f"searched {parser.parse_args(args.split()).pattern}"

    return grep_cli


@pytest.mark.parametrize("timeout", [None, 5])  # on the caller's thread, on a worker
@pytest.mark.parametrize("parallel", [False, True])
def test_argparse_exiting_in_a_tool_is_a_tool_error_and_the_run_goes_on(timeout, parallel):
    calls = [reply.call("grep_cli", args="foo --n notanint")]
    if parallel:
        calls.append(reply.call("grep_cli", args="foo --n 3"))
    model = hk.ScriptedModel([reply.tool_calls(*calls), reply.text("done")])
    run = hk.Harness([_grep_cli(timeout)], model).run("search")
    assert run.finish_reason == "stop" and run.final_text == "done"
    results = run.log.of_type(hk.log.ToolResultEvent)
    body = json.loads(results[0].content)
    assert body["error_type"] == "tool_error"
    assert "sys.exit(2)" in body["message"] and "grep_cli" in body["message"]
    assert "argument" in body["hint"]
    if parallel:
        assert results[1].ok and results[1].content == "searched foo"


def test_sys_exit_from_a_signal_handler_during_a_tool_still_ends_the_run_cancelled():
    @hk.tool(timeout_seconds=None)  # runs on the main thread, where handlers run
    def long_job() -> str:
        """Get SIGTERM while working."""
        signal.raise_signal(signal.SIGTERM)
        return "never"

    def on_term(signum, frame):
        sys.exit(143)

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        model = hk.ScriptedModel([reply.tool_call("long_job"), reply.text("done")])
        h = hk.Harness([long_job], model)
        run = h.start("work")
        with pytest.raises(SystemExit):
            run.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert run.finish_reason == "cancelled"


def test_ctrl_c_in_a_tool_still_cancels_the_run():
    @hk.tool(timeout_seconds=None)
    def interrupted() -> str:
        """Ctrl-C."""
        raise KeyboardInterrupt

    model = hk.ScriptedModel([reply.tool_call("interrupted"), reply.text("done")])
    run = hk.Harness([interrupted], model).start("work")
    with pytest.raises(KeyboardInterrupt):
        run.run()
    assert run.finish_reason == "cancelled"
