"""`timeout_seconds` bounds the whole request, body and stream included, over loopback.

httpx's timeouts apply to each read, so a server dribbling its body one byte at a time, or an
SSE stream of `: ping` keep-alives, held a request far past `timeout_seconds`.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from tests.support.edge_client import ask, chunk, make
from tests.support.loopback import Reply, completion, sse_events


def test_a_stream_of_keepalives_times_out_as_a_whole_and_is_retried(server):
    pings = Reply(sse=[": ping\n\n"] * 200, sse_gap_seconds=0.05)  # 10 s of keep-alives
    good = Reply(sse=sse_events([chunk({"content": "late but whole"}, finish="stop")]))
    server.script(pings, good)
    attempts = []
    model = make(server, stream=True, timeout_seconds=0.5, on_attempt=attempts.append)

    assert model.request(ask()).message.content == "late but whole"
    (first,) = attempts
    assert first.will_retry and first.status_code is None
    assert "timeout after 0.5s" in first.error and "whole request" in first.error


def test_a_body_dribbled_byte_by_byte_times_out_as_a_whole(server):
    body = json.dumps(completion("x")).encode()

    def dribble(_body):
        return Reply(sse=[chr(b) for b in body], sse_gap_seconds=0.05)  # ~5 s to finish

    server.script(dribble, dribble)
    attempts = []
    model = make(server, timeout_seconds=0.5, on_attempt=attempts.append)
    with pytest.raises(hk.ModelError, match="timeout after 0.5s"):
        model.request(ask())
    assert [a.will_retry for a in attempts] == [True, False]
