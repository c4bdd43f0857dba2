"""Scripted and policy turns of the wrong shape are `UsageError`s naming the turn and the field.

A turn a test author wrote is test input: a bad one must say what is wrong, never surface as a
raw `AttributeError`, `TypeError` or `RecursionError` from deep inside the run.
"""

from __future__ import annotations

import pytest

import harnesskit as hk


def _deep(depth: int) -> dict:
    out: dict = {}
    cur = out
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]
    return out


BAD_TURNS = [
    ({"tool_calls": ["x"]}, "tool call 'x'"),
    ({"tool_calls": [{"id": "a", "function": "x"}]}, "has no function.name"),
    ({"tool_calls": {"id": "a", "function": {"name": "x", "arguments": "{}"}}}, "must be a list"),
    ({"tool_calls": [{"id": "a", "function": {"name": "x", "arguments": 5}}]}, "got int"),
    ({"content": 5}, "Message.content must be a str or None, got int"),
    ({"content": {"a": 1}}, "Message.content must be a str or None, got dict"),
    ({"content": [1, "a"]}, "content part 0 is a int"),
    ({"content": [{"type": "text", "text": 5}]}, "content part 0 has a int text"),
    (
        {"tool_calls": [{"id": "a", "function": {"name": "x", "arguments": _deep(3000)}}]},
        "nested too deep",
    ),
]


@pytest.mark.parametrize(("turn", "said"), BAD_TURNS)
def test_a_scripted_turn_of_the_wrong_shape_is_a_usage_error_naming_the_turn(turn, said):
    with pytest.raises(hk.UsageError) as err:
        hk.ScriptedModel(["fine", turn])
    assert "ScriptedModel turn 1" in str(err.value)
    assert said in str(err.value)


@pytest.mark.parametrize(("turn", "said"), BAD_TURNS)
def test_a_policy_turn_of_the_wrong_shape_ends_the_run_with_a_usage_error(turn, said, tmp_path):
    model = hk.FunctionModel(lambda messages, info: turn)
    run = hk.Harness([], model, log_dir=tmp_path).start("hello")

    with pytest.raises(hk.UsageError) as err:
        run.run()

    assert "at step 1" in str(err.value)
    assert said in str(err.value)
    assert run.finish_reason == "error"


def test_a_tool_call_object_with_arguments_too_deep_for_json_is_refused():
    call = hk.ToolCall(id="c1", name="take", arguments=_deep(3000))
    turn = hk.ModelResponse(message=hk.Message(role="assistant", tool_calls=(call,)))

    with pytest.raises(hk.UsageError, match="nested too deep"):
        hk.ScriptedModel([turn])


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (lambda: hk.Message(role="user", content=5), "Message.content"),
        (lambda: hk.Message(role="assistant", tool_calls=("x",)), "Message.tool_calls"),
        (lambda: hk.Message(role="tool", content="x", tool_call_id=5), "Message.tool_call_id"),
        (lambda: hk.ToolCall(id=None, name="x"), "ToolCall.id"),
        (lambda: hk.ToolCall(id="a", name=5), "ToolCall.name"),
        (lambda: hk.ToolCall(id="a", name="x", arguments=[1]), "ToolCall.arguments"),
        (lambda: hk.Message.from_openai("hi"), "must be a dict"),
    ],
)
def test_message_values_refuse_wrong_types(build, said):
    with pytest.raises(hk.UsageError, match=said):
        build()


def test_text_parts_are_still_joined_and_other_parts_skipped():
    message = hk.Message.from_openai(
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url"}]}
    )
    assert message.content == "a"
