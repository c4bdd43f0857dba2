"""A `BaseException` a tool raises (`GeneratorExit`, `CancelledError`, its own) is its failure.

`GeneratorExit` raised inside a tool escaped `h.run` (only `Exception` and `SystemExit` were
caught), ending the notebook cell instead of giving the model a `tool_error`. Ctrl-C still
cancels the run (`test_tool_exit.py`).
"""

import asyncio
import json

import pytest

import harnesskit as hk
from harnesskit.testing import reply


class Custom(BaseException):
    """A library's own `BaseException` subclass."""


def _raiser(exc: BaseException, timeout, is_async: bool):
    if is_async:

        @hk.tool(timeout_seconds=timeout)
        async def boom() -> str:
            """Fail.

            Returns:
                Never.
            """
            raise exc

    else:

        @hk.tool(timeout_seconds=timeout)
        def boom() -> str:
            """Fail.

            Returns:
                Never.
            """
            raise exc

    return boom


@hk.tool
def fine() -> str:
    """Work.

    Returns:
        ok.
    """
    return "ok"


@pytest.mark.parametrize(
    "exc",
    [GeneratorExit("closed"), asyncio.CancelledError("cancelled"), Custom("own")],
    ids=["GeneratorExit", "CancelledError", "custom"],
)
@pytest.mark.parametrize("timeout", [None, 5])  # on the caller's thread, on a worker
@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("is_async", [False, True])
def test_a_base_exception_in_a_tool_is_a_tool_error_and_the_run_goes_on(
    exc, timeout, parallel, is_async
):
    calls = [reply.call("boom")] + ([reply.call("fine")] if parallel else [])
    model = hk.ScriptedModel([reply.tool_calls(*calls), reply.text("done")])
    run = hk.Harness([_raiser(exc, timeout, is_async), fine], model).run("go")
    assert run.finish_reason == "stop" and run.final_text == "done"
    results = run.log.of_type(hk.log.ToolResultEvent)
    body = json.loads(results[0].content)
    assert body["error_type"] == "tool_error"
    assert type(exc).__name__ in body["message"]
    if parallel:
        assert results[1].ok and results[1].content == "ok"
