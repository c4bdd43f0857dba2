"""SSE streams at the byte level, over loopback: a leading BOM, a CR ending the last line.

The SSE specification drops one byte-order mark at the start of a stream (the first event was
lost: its `data` field was read as an unknown `\\ufeffdata` field), and a lone CR is a line end:
a server that sends `data: [DONE]\\r\\r` and keeps the connection open must not leave the client
waiting for an LF that never comes (it timed out).
"""

from __future__ import annotations

import json

import pytest

from harnesskit.errors import ModelError
from harnesskit.models._retry import RetryPolicy
from tests.support.edge_client import ask, chunk, make
from tests.support.loopback import Reply, completion, sse_events

ONCE = RetryPolicy(max_retries=0)


def _events(end: str = "\n") -> list[str]:
    events = sse_events([chunk({"content": "Refund "}), chunk({"content": "OK."}, finish="stop")])
    return [e.replace("\n", end) for e in events]


@pytest.mark.parametrize("split", [False, True], ids=["whole", "split-bom"])
def test_a_leading_byte_order_mark_is_dropped_not_the_first_event(server, split):
    body = "\ufeff" + "".join(_events())
    pieces = [body[:1], body[1:]] if split else [body]
    server.script(Reply(sse=pieces, sse_gap_seconds=0.02 if split else 0.0))
    assert make(server, stream=True, retry=ONCE).request(ask()).message.content == "Refund OK."


def test_a_bom_later_in_the_stream_is_text_not_dropped(server):
    events = sse_events([chunk({"content": "\ufeffa"}), chunk({"content": "b"}, finish="stop")])
    server.script(Reply(sse=events))
    assert make(server, stream=True, retry=ONCE).request(ask()).message.content == "\ufeffab"


def test_a_trailing_cr_ends_the_stream_while_the_server_holds_the_connection(server):
    # the whole stream in one write, then the server waits 3 s before closing: the client has
    # everything it needs and must not wait for an LF after the last CR (timeout 1 s)
    server.script(Reply(sse=["".join(_events("\r"))], sse_gap_seconds=3.0))
    model = make(server, stream=True, retry=ONCE, timeout_seconds=1.0)
    assert model.request(ask()).message.content == "Refund OK."


def test_an_lf_after_a_cr_in_the_next_read_is_not_a_second_line_end(server):
    # `data: x\r` | `\ndata: y\r\n\r\n`: had the LF been read as a line end of its own, the blank
    # line would end the first event early; here both data lines belong to one event
    first = json.dumps(chunk({"content": "a"}))
    second = json.dumps(chunk({"content": "b"}, finish="stop"))
    pieces = [f"data: {first}\r", f"\ndata: {second}\r\n\r\n", "data: [DONE]\r\n\r\n"]
    server.script(Reply(sse=pieces, sse_gap_seconds=0.05))
    with pytest.raises(ModelError, match="cut or garbled"):
        make(server, stream=True, retry=ONCE).request(ask())


def test_a_plain_body_with_a_byte_order_mark_is_read(server):
    body = json.dumps(completion("Refund OK.")).encode()
    server.script(Reply(body=b"\xef\xbb\xbf" + body))
    assert make(server, retry=ONCE).request(ask()).message.content == "Refund OK."


def test_an_error_body_with_a_byte_order_mark_is_read_as_an_error_object(server):
    body = json.dumps({"error": {"message": "no such model"}}).encode()
    server.script(Reply(status=404, body=b"\xef\xbb\xbf" + body))
    with pytest.raises(ModelError, match="HTTP 404: no such model;"):
        make(server, retry=ONCE).request(ask())


@pytest.mark.parametrize("empty", ["data:\n\n", "data: \n\n", "data\n\n"], ids=repr)
def test_an_event_with_empty_data_is_not_dispatched(server, empty):
    # the SSE spec dispatches no event whose data is empty (`data` with no colon is a data field
    # with an empty value); it was fed to the parser as a chunk and failed as "not valid JSON"
    events = sse_events([chunk({"content": "a"}), empty, chunk({"content": "b"}, finish="stop")])
    server.script(Reply(sse=[empty, *events]))
    assert make(server, stream=True, retry=ONCE).request(ask()).message.content == "ab"
