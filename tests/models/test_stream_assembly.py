"""A streamed answer is the answer a plain body gives, over loopback.

Parallel tool calls are told apart by their `index`, as a plain body tells them apart by
position: two calls sharing an id were merged into one whose arguments were both objects
run together.
"""

from __future__ import annotations

import json

from tests.support.edge_client import ask, chunk, make
from tests.support.loopback import Reply, completion, sse_events, tool_call


def _part(index: int, call_id: str, order: str) -> dict:
    args = json.dumps({"order_id": order})
    fn = {"name": "lookup_order", "arguments": args}
    return {"index": index, "id": call_id, "type": "function", "function": fn}


def _calls(response) -> list[tuple[str, str, dict]]:
    return [(c.id, c.name, c.arguments) for c in response.message.tool_calls]


def test_two_streamed_calls_sharing_an_id_stay_two_calls_as_in_a_plain_body(server):
    streamed = sse_events(
        [
            chunk({"tool_calls": [_part(0, "c1", "A1"), _part(1, "c1", "B2")]}),
            chunk({}, finish="tool_calls"),
        ]
    )
    plain = completion(
        tool_calls=[
            tool_call("lookup_order", {"order_id": "A1"}, id="c1"),
            tool_call("lookup_order", {"order_id": "B2"}, id="c1"),
        ]
    )
    server.script(Reply(sse=streamed), Reply(json=plain))
    model = make(server, stream=True)

    from_stream = _calls(model.request(ask()))
    from_body = _calls(model.request(ask(stream=False)))

    assert [args for _, _, args in from_stream] == [{"order_id": "A1"}, {"order_id": "B2"}]
    assert from_stream == from_body


def test_fragments_of_one_call_join_by_index_when_later_ones_repeat_the_id(server):
    first = _part(0, "c1", "A1")
    first["function"]["arguments"] = '{"order_id": '
    rest = {"index": 0, "id": "c1", "function": {"arguments": '"A1"}'}}
    events = sse_events(
        [chunk({"tool_calls": [first]}), chunk({"tool_calls": [rest]}), chunk({}, "tool_calls")]
    )
    server.script(Reply(sse=events))
    assert _calls(make(server, stream=True).request(ask())) == [
        ("c1", "lookup_order", {"order_id": "A1"})
    ]


def test_a_plain_json_completion_answering_a_stream_request_is_read_as_one(server):
    # a server (or proxy) that ignores `stream: true` answers application/json: it was read as
    # an SSE stream without [DONE], retried, and failed with "the stream ended before its last
    # chunk"
    server.script(Reply(json=completion("Your order A1 has shipped.")))
    attempts = []
    model = make(server, stream=True, on_attempt=attempts.append)
    assert model.request(ask()).message.content == "Your order A1 has shipped."
    assert attempts == [] and len(server.requests) == 1
    assert server.requests[0].body["stream"] is True


def test_an_event_stream_is_still_read_as_one(server):
    server.script(Reply(sse=sse_events([chunk({"content": "ok"}, finish="stop")])))
    assert make(server, stream=True).request(ask()).message.content == "ok"
