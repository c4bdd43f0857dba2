"""`model.request` deltas: the fast tool-message references give what the plain path gives."""

from __future__ import annotations

import itertools

import pytest

from harnesskit.log import EventLog
from harnesskit.log._codec import message_of
from harnesskit.messages import Message, ToolCall


class _Sub(Message):
    """A `Message` subclass: takes the plain path."""


def _plain_refs(log: EventLog, new: tuple[Message, ...], since: int) -> list[object]:
    """The reference rule written the plain way: `message_of(e) == m.to_openai()`."""
    out: list[object] = []
    for m in new:
        d = m.to_openai()
        want = {"tool": "tool.result", "assistant": "model.response"}.get(d["role"])
        ref = None
        if want is not None:
            for e in reversed(log.events[since:]):
                if e.type == want and message_of(e) == d:
                    ref = e.event_id
                    break
        out.append(d if ref is None else ref)
    return out


_CONTENTS = ["ok", "", None, "x" * 600, '{"a": 1}', "ok "]
_RESULT_PAYLOADS = [
    {"tool_call_id": "c1", "content": "ok"},
    {"tool_call_id": "c1", "content": "".join(["o", "k"])},  # equal, not the same object
    {"tool_call_id": "c2", "content": None},
    {"tool_call_id": "c2"},  # no content key: `message_of` reads None
    {"content": "ok"},  # no call id
    {"tool_call_id": 1, "content": "ok"},  # a hostile id type
    {"tool_call_id": "c3", "content": 5},
    {"tool_call_id": "c3", "content": ["ok"]},
    {"tool_call_id": "c4", "content": "x" * 600},
]


def _messages() -> list[Message]:
    out = [
        Message(role="tool", content=c, tool_call_id=i)
        for c, i in itertools.product(_CONTENTS, ["c1", "c2", "c3", "c4", "zz"])
    ]
    out += [
        Message(role="tool", content="ok", tool_call_id="c1", name="get_user"),
        Message(role="tool", content="ok", tool_call_id="c1", tool_calls=(ToolCall(id="c9", name="f", arguments={}),)),
        _Sub(role="tool", content="ok", tool_call_id="c1"),
        Message(role="assistant", content=None, tool_calls=(ToolCall(id="c1", name="f", arguments={"a": 1}),)),
        Message(role="user", content="ok"),
    ]  # fmt: skip
    return out


@pytest.mark.parametrize("since", [0, 3, 7])
def test_tool_message_refs_match_the_plain_rule(since):
    log = EventLog()
    log.append("user.message", {"content": "hi"})
    for payload in _RESULT_PAYLOADS:
        log.append("tool.result", {"tool": "t", "ok": True, **payload})
    log.append(
        "model.response",
        {"message": {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}},
    )  # fmt: skip
    new = tuple(_messages())
    assert log._as_refs(new, since) == _plain_refs(log, new, since)


def test_refs_include_fast_path_hits_and_misses():
    log = EventLog()
    log.append("tool.result", {"tool": "t", "ok": True, "tool_call_id": "c1", "content": "ok"})
    log.append("tool.result", {"tool": "t", "ok": True, "tool_call_id": "c2", "content": "no"})
    new = (
        Message(role="tool", content="ok", tool_call_id="c1"),
        Message(role="tool", content="changed", tool_call_id="c2"),
        Message(role="tool", content="ok", tool_call_id="c1", name="n"),
    )
    assert log._as_refs(new, 0) == [
        1,
        {"role": "tool", "content": "changed", "tool_call_id": "c2"},
        {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "n"},
    ]
    assert log._as_refs(new[:1], 1) == [new[0].to_openai()]  # the result is before `since`


def test_request_messages_give_back_each_request_as_sent(tmp_path):
    path = tmp_path / "run.jsonl"
    log = EventLog(path)
    sent: list[tuple[int, list[dict[str, object]]]] = []
    msgs: tuple[Message, ...] = (
        Message(role="system", content="s"),
        Message(role="user", content="u"),
    )
    tools = ({"type": "function", "function": {"name": "f"}},)
    for step, m in enumerate(_messages()):
        ev = log.append_request(msgs, tools, step=step)
        sent.append((ev.event_id, [x.to_openai() for x in msgs]))
        call_id = m.tool_call_id or f"c{step}"
        log.append(
            "tool.result", {"tool": "t", "ok": True, "tool_call_id": call_id, "content": m.content}
        )
        msgs = (*msgs, m)
    log.close()
    back = EventLog.read(path)
    for event_id, messages in sent:
        assert log.request_messages(event_id) == messages
        assert back.request_messages(event_id) == messages
        assert back.request_tools(event_id) == list(tools)
    # at least one tool message was written as a reference, one in full
    new = [m for e in back.events if e.type == "model.request" for m in e.new_messages or ()]
    assert any(isinstance(m, int) for m in new) and any(isinstance(m, dict) for m in new)
