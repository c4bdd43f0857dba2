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


@pytest.mark.parametrize(
    ("args", "before", "after"),
    [
        ('~~~json\n{"order_id": "A"}\n~~~', 0, 0),
        ('````json\n{"order_id": "A"}\n````', 0, 0),
        ('```json\n{"order_id": "A"}\n`````', 0, 0),
        ('Here you go:\n```json\n{"order_id": "A"}\n```', 12, 0),
        ('```json\n{"order_id": "A"}\n```\n`order_id` is the id.', 0, 21),
        ('```json\n{"order_id": "A"}\n```\n[Note] done', 0, 11),
    ],
    ids=["tildes", "four-backticks", "longer-close", "prose-before", "backtick-prose", "bracket"],
)
def test_commonmark_fences_and_prose_around_them_are_read(server, tmp_path, args, before, after):
    first = completion(tool_calls=[tool_call("lookup_order", args)])
    run = run_once(server, first, tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert result.ok is True, result.content
    assert json.loads(result.content)["order_id"] == "A"
    (call,) = run.log.of_type("tool.call")
    repair = call.payload["repair"]
    assert repair.startswith("markdown code fence removed")
    assert (f"dropped {before} chars of text before it" in repair) == bool(before)
    assert (f"dropped {after} chars of trailing text after it" in repair) == bool(after)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ('````json\n{"order_id": "A"}\n```', "never closed"),  # a shorter run does not close
        ('~~~json\n{"order_id": "A"}\n```', "never closed"),  # nor one of the other character
        ('~~~json\n{"order_id": "A', "incomplete"),
        ('Here:\n```json\n{"order_id": "A"}\n```\n```json\n{"order_id": "B"}\n```', "trailing"),
        ('```json\n{"order_id": "A"}\n```\n["B"]', "trailing data"),
    ],
    ids=["short-close", "other-char", "tilde-truncated", "second-fence", "second-list"],
)
def test_fences_still_refused_say_what_is_true(args, said):
    read = _json.read_arguments(args)
    assert read.arguments is None
    assert said in read.error


def test_text_opening_as_json_is_not_read_as_prose_before_a_fence():
    read = _json.read_arguments('{"order_id": "A"} {x}\n```json\n{"order_id": "B"}\n```')
    assert read.arguments is None


def test_a_fence_followed_by_many_fence_runs_is_read_in_one_pass(server, tmp_path):
    # 60 KB: each ``` used to be tried as the fence's end with a decode of all before it
    # (quadratic: about 10 s of CPU here, read twice per step); one scan says why at once
    args = '```json\n{"order_id": "' + "```" * 20_000
    first = completion(tool_calls=[tool_call("lookup_order", args)])
    run = run_once(server, first, tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert result.ok is False
    message = json.loads(result.content)["message"]
    assert "markdown code fence" in message and "incomplete" in message


_CALL = '{"name": "lookup_order", "arguments": {"order_id": "A"}}'


@pytest.mark.parametrize(
    ("content", "left"),
    [
        (f"~~~json\n{_CALL}\n~~~\nThanks", "Thanks"),
        (f"````json\n{_CALL}\n````", None),
        (f"Sure:\n~~~\n{_CALL}\n~~~", "Sure:"),
    ],
    ids=["tildes", "four-backticks", "prose-before"],
)
def test_a_call_written_in_any_fence_is_recovered_without_leftovers(
    server, tmp_path, content, left
):
    run = run_once(server, completion(content), tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert result.ok is True and json.loads(result.content)["order_id"] == "A"
    (response, _) = run.log.of_type("model.response")
    assert response.payload["message"].get("content") == left


def test_a_fence_inside_a_recovered_call_string_is_not_its_end(server, tmp_path):
    call = '{"name": "lookup_order", "arguments": {"order_id": "a ``` b"}}'
    run = run_once(server, completion(f"```json\n{call}\n```"), tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert json.loads(result.content)["order_id"] == "a ``` b"  # was "a", the rest as text


@pytest.mark.parametrize(
    "args",
    [
        '\ufeff```json\n{"order_id": "A"}\n```',
        '\u200b```json\n{"order_id": "A"}\n```',
        '\u200b\u2060{"order_id": "A"}',
        ' ```json\n{"order_id": "A"}\n```',
        '   ```json\n{"order_id": "A"}\n   ```',
        '\n  ~~~\n{"order_id": "A"}\n~~~\n',
        'Here:\n\ufeff```json\n{"order_id": "A"}\n\u200b```',
    ],
    ids=["bom", "zero-width", "zero-width-bare", "indent-1", "indent-3", "tildes-indent-2", "mid"],
)
def test_fences_after_invisible_characters_or_indented_up_to_3_spaces_are_read(
    server, tmp_path, args
):
    first = completion(tool_calls=[tool_call("lookup_order", args)])
    run = run_once(server, first, tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert result.ok is True, result.content
    assert json.loads(result.content)["order_id"] == "A"


def test_a_fenced_call_in_message_text_after_a_bom_leaves_no_text(server, tmp_path):
    text = '\ufeff```json\n{"name": "lookup_order", "arguments": {"order_id": "A"}}\n```'
    run = run_once(server, completion(text), tmp_path)

    (result,) = run.log.of_type("tool.result")
    assert result.ok is True
    (response, _) = run.log.of_type("model.response")
    assert response.payload["message"].get("content") in (None, "")
