import json

import pytest

import harnesskit as hk
from harnesskit.messages import parse_arguments


def test_openai_roundtrip_keeps_argument_text_byte_for_byte():
    raw = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x":  1}'}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}},
        ],
    }
    msg = hk.Message.from_openai(raw)
    assert msg.tool_calls[0].arguments == {"x": 1}
    assert msg.to_openai() == raw


@pytest.mark.parametrize(
    "data",
    [
        {"role": "user", "content": "héllo"},
        {"role": "system", "content": "s"},
        {"role": "tool", "content": "{}", "tool_call_id": "c1"},
        {"role": "assistant", "content": "x", "name": "bot"},
    ],
)
def test_roundtrip_simple_messages(data):
    assert hk.Message.from_openai(data).to_openai() == {"content": data["content"], **data}


def test_arguments_given_as_object_are_accepted():
    call = hk.ToolCall.from_openai({"id": "1", "function": {"name": "f", "arguments": {"a": 2}}})
    assert call.arguments == {"a": 2}
    assert json.loads(call.to_openai()["function"]["arguments"]) == {"a": 2}


def test_bad_argument_text_is_kept_with_reason():
    call = hk.ToolCall.from_openai({"id": "1", "function": {"name": "f", "arguments": '{"a": '}})
    assert call.arguments is None
    assert "not valid JSON" in call.parse_error
    assert parse_arguments("[1]")[1] == "arguments must be a JSON object, got list"


def test_tool_message_needs_id():
    with pytest.raises(hk.UsageError, match="tool_call_id"):
        hk.Message(role="tool", content="x")


def test_usage_reads_cached_tokens_from_details():
    u = hk.messages.Usage.from_dict(
        {"prompt_tokens": 10, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 4}}
    )
    assert (u.total_tokens, u.cached_tokens) == (15, 4)


def test_failure_rejects_unknown_error_type():
    with pytest.raises(hk.UsageError, match="error_type"):
        hk.messages.ToolResult.failure(hk.ToolCall(id="1", name="f"), "oops", "m")
