"""A fenced JSON object naming a tool that was not offered is text, over loopback (R-M2).

Bare JSON in prose was recovered as a call only when it named an offered tool, but a fence
was not held to that rule: a final answer showing a function definition the user asked for
(`{"name": "calculate_tax", "parameters": {...}}`) lost the definition, a call to the
un-offered tool was made and answered `unknown_tool`, and the model was asked again. Unless
the provider said the reply is a call (`finish_reason: "tool_calls"`), a fence naming a tool
that was not offered is part of the answer.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.models._parse import recover_calls
from tests.support.edge_client import lookup_order, make
from tests.support.loopback import Reply, completion

DEFINITION = (
    "Here is the function definition you asked for:\n```json\n"
    '{"name": "calculate_tax", "parameters": {"type": "object", '
    '"properties": {"amount": {"type": "number"}}}}\n```'
)
PRODUCT = 'Our best seller:\n```\n{"name": "Blue Mug", "input": {"colour": "blue"}}\n```'


@pytest.mark.parametrize("text", [DEFINITION, PRODUCT], ids=["definition", "product"])
@pytest.mark.parametrize("finish", ["stop", None, "length"])
def test_a_fence_naming_an_unoffered_tool_stays_text(text, finish):
    calls, rest = recover_calls(text, ["lookup_order"], finish_reason=finish)
    assert calls == [] and rest == text


def test_a_fence_naming_an_offered_tool_is_still_a_call():
    text = 'Checking:\n```json\n{"name": "lookup_order", "arguments": {"order_id": "A1"}}\n```'
    calls, rest = recover_calls(text, ["lookup_order"], finish_reason="stop")
    assert [c.name for c in calls] == ["lookup_order"] and rest == "Checking:"


def test_under_finish_reason_tool_calls_an_invented_name_is_a_call():
    text = '```json\n{"name": "calculate_tax", "arguments": {"amount": 5}}\n```'
    calls, _ = recover_calls(text, ["lookup_order"], finish_reason="tool_calls")
    assert [c.name for c in calls] == ["calculate_tax"]  # answered unknown_tool by the runtime


def test_the_answer_keeps_the_definition(server, tmp_path):
    server.script(Reply(json=completion(DEFINITION)), Reply(json=completion("second answer")))
    h = hk.Harness([lookup_order], make(server), log_dir=tmp_path, limits=hk.Limits(max_seconds=30))
    run = h.run("Write me a JSON function definition for a tax calculator")
    assert run.finish_reason == "stop"
    assert run.final_text == DEFINITION
    assert len(server.requests) == 1
    assert run.log.of_type("tool.call") == []
