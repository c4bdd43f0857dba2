"""Tool-call arguments in a markdown fence: closed and followed by prose is read (R-M2).

The refusal said "a markdown code fence that is never closed" of a fence that was closed, with
text after it; docs/providers.md says non-JSON text after the object is removed.
"""

from __future__ import annotations

import json

import pytest

from harnesskit import _json
from tests.support.edge_client import run_once
from tests.support.loopback import completion, tool_call


def test_fenced_arguments_followed_by_prose_are_read(server, tmp_path):
    args = '```json\n{"order_id": "A"}\n```\nHope this helps'
    first = completion(tool_calls=[tool_call("lookup_order", args)])
    run = run_once(server, first, tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert result.ok is True
    (call,) = run.log.of_type("tool.call")
    assert "fence removed" in call.payload["repair"] and "trailing text" in call.payload["repair"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ('```json\n{"order_id": "A"}', "never closed"),
        ('```json\n{"order_id": "A', "incomplete"),
        ('```json\n{"order_id": "A"} note\n```', "text besides"),
    ],
    ids=["unclosed", "truncated", "text-inside"],
)
def test_fenced_arguments_that_cannot_be_read_say_why(server, tmp_path, args, said):
    first = completion(tool_calls=[tool_call("lookup_order", args)])
    run = run_once(server, first, tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert result.ok is False
    assert said in json.loads(result.content)["message"]


def test_a_closed_fence_then_another_json_value_is_trailing_data_not_prose():
    read = _json.read_arguments('```json\n{"order_id": "A"}\n```\n{"order_id": "B"}')
    assert read.arguments is None
    assert "trailing data after the closed markdown code fence" in read.error


def test_a_fence_closed_inside_a_string_value_is_not_its_end():
    read = _json.read_arguments('```json\n{"note": "a ``` b"}\n```\nThanks')
    assert read.arguments == {"note": "a ``` b"} and "trailing text" in read.repair
