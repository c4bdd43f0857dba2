"""A failure's message and hint reach the model capped, the whole text kept in the log (R-A1).

A tool raising `RuntimeError("x" * 100000)` sent a 100,142-character tool message inline,
past the 8,000-character inline limit and the turn's budget. Every failure is built by
`ToolResult.failure`, which now caps what the model sees and keeps the rest in `meta`.
"""

import json

import pytest

import harnesskit as hk
from harnesskit.messages import FAILURE_TEXT_CHARS, ToolCall, ToolResult
from harnesskit.testing import reply

HUGE = "x" * 100_000


@hk.tool
def crash() -> str:
    """Fail with a huge exception message.

    Returns:
        Never.
    """
    raise RuntimeError(HUGE)


@hk.tool
def refuse() -> str:
    """Fail with a huge ToolError message and hint.

    Returns:
        Never.
    """
    raise hk.ToolError(HUGE, hint="h" * 50_000)


@pytest.mark.parametrize("tool", ["crash", "refuse"])
def test_a_huge_failure_is_capped_in_the_prompt_and_whole_in_the_log(tool):
    model = hk.ScriptedModel([reply.tool_call(tool), reply.text("done")])
    run = hk.Harness([crash, refuse], model).run("go")
    assert run.finish_reason == "stop"
    (result,) = run.log.of_type(hk.log.ToolResultEvent)
    sent = max(len(m.content or "") for m in model.requests[-1].messages)
    assert sent < 8_000 and len(result.content) < 8_000
    body = json.loads(result.content)
    assert "[cut: " in body["message"] and "full_message" in body["message"]
    assert HUGE in result.payload["full_message"]
    if tool == "refuse":
        assert result.payload["full_hint"] == "h" * 50_000 and "[cut: " in body["hint"]


def test_a_short_failure_is_unchanged():
    call = ToolCall(id="c", name="t", arguments={})
    r = ToolResult.failure(call, "tool_error", "m" * FAILURE_TEXT_CHARS, "do this")
    body = json.loads(r.content)
    assert body["message"] == "m" * FAILURE_TEXT_CHARS and body["hint"] == "do this"
    assert "full_message" not in r.meta and r.message == "m" * FAILURE_TEXT_CHARS
