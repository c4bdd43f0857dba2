import copy as copy_module
import dataclasses
import json
import pickle
import re

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


@pytest.mark.parametrize(
    "data",
    [
        {"role": "user", "content": "hi"},
        {"role": "tool", "content": "{}", "tool_call_id": "c1"},
        {"role": "assistant", "content": None, "name": "bot"},
        {
            "role": "assistant",
            "content": "x",
            "tool_calls": [
                {"id": "a", "function": {"name": "f", "arguments": '{"x": 1}'}},
                {"id": "", "function": {"name": "g", "arguments": {"y": [2]}}},
                {"id": "c", "function": {"name": "h", "arguments": "{not json"}},
            ],
        },
    ],
)
def test_from_openai_gives_the_value_the_checked_constructors_give(data):
    # from_openai builds its values without a second check: they must be the same values,
    # field for field, as the public constructors build from the same fields
    msg = hk.Message.from_openai(data)
    calls = tuple(
        hk.ToolCall(**{f.name: getattr(c, f.name) for f in dataclasses.fields(c)})
        for c in msg.tool_calls
    )
    checked = hk.Message(
        role=data["role"],
        content=data.get("content"),
        tool_calls=calls,
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
    )
    assert msg == checked
    assert repr(msg) == repr(checked)
    assert [type(c) for c in msg.tool_calls] == [hk.ToolCall] * len(calls)
    assert all(
        dataclasses.asdict(a) == dataclasses.asdict(b)
        for a, b in zip(msg.tool_calls, calls, strict=True)
    )


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"role": "robot", "content": "x"}, "role must be one of"),
        ({"role": "tool", "content": "x"}, "needs tool_call_id"),
        ({"role": "tool", "content": "x", "tool_call_id": ""}, "needs tool_call_id"),
        ({"role": "user", "content": 5}, "Message.content must be a str or None"),
        ({"role": "tool", "content": "x", "tool_call_id": 7}, "Message.tool_call_id must be"),
        ({"role": "user", "content": "x", "name": ["n"]}, "Message.name must be"),
        ({"role": ["user"], "content": "x"}, "role must be one of"),
    ],
)
def test_from_openai_still_refuses_what_the_constructor_refuses(data, match):
    with pytest.raises(hk.UsageError, match=match):
        hk.Message.from_openai(data)
    with pytest.raises(hk.UsageError, match=match):
        hk.Message(**data)


def test_a_subclass_of_message_keeps_its_own_type_and_checks():
    class Tagged(hk.Message):
        __slots__ = ()

    msg = Tagged.from_openai({"role": "user", "content": "hi"})
    assert type(msg) is Tagged
    with pytest.raises(hk.UsageError, match="role must be one of"):
        Tagged.from_openai({"role": "robot", "content": "hi"})


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"temperature": 0, "clock": 1}, "['clock']"),
        ({"on_delta": 1, "data_class": "x", "seed": 3}, "['data_class', 'on_delta']"),
    ],
)
def test_request_fields_given_as_settings_are_refused_by_name(settings, named):
    with pytest.raises(hk.UsageError, match=re.escape(named)):
        hk.ModelRequest(messages=(), settings=settings)
    assert hk.ModelRequest(messages=(), settings={"temperature": 0}).settings == {"temperature": 0}


def test_grown_tuples_prove_only_real_extensions():
    from harnesskit.messages import grown_tuple, known_prefix

    spine = [hk.Message(role="user", content=str(i)) for i in range(3)]
    note = hk.Message(role="system", content="closing")
    a = grown_tuple(spine)
    with_note = grown_tuple(spine, (note,))
    spine.append(hk.Message(role="assistant", content="3"))
    b = grown_tuple(spine)
    assert a == tuple(spine[:3]) and b == tuple(spine) and with_note == (*spine[:3], note)
    assert known_prefix(a, b) and known_prefix(a, a) and known_prefix(a, with_note)
    assert not known_prefix(b, a)  # shorter: no extension
    assert not known_prefix(with_note, b)  # ends with a message the spine never held
    assert not known_prefix(a, grown_tuple(list(spine)))  # equal items, another list
    assert not known_prefix(tuple(a), b) and not known_prefix(a, tuple(b))  # plain: compare
    # copies and slices are plain tuples: they prove nothing, and pickle as tuples
    for copy in (b[:], b[:2], pickle.loads(pickle.dumps(b)), copy_module.deepcopy(b)):
        assert type(copy) is tuple and not known_prefix(a, copy)
    assert pickle.loads(pickle.dumps(b)) == b
