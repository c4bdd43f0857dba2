"""`timeout_seconds` bounds the whole request, body and stream included, over loopback.

httpx's timeouts apply to each read, so a server dribbling its body (or its status line and
headers) one byte at a time, or an SSE stream of `: ping` keep-alives, held a request far past
`timeout_seconds` and `Limits(max_seconds=...)`.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

import harnesskit as hk
from tests.support.edge_client import FAST, ask, chunk, make
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


class _SlowHeaders:
    """A raw loopback HTTP server that sends its status line and headers one byte per 50 ms
    (about 4 s), then a whole completion; `outcomes` says per connection whether the client
    read it all (`"sent"`) or hung up first (`"hung up"`)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.outcomes: list[str] = []
        self.threads: list[threading.Thread] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            while len(rest) < length:
                rest += conn.recv(65536)
            body = json.dumps(completion("too late")).encode()
            status = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            status += b"content-length: %d\r\n\r\n" % len(body)
            try:
                for byte in status:
                    conn.sendall(bytes([byte]))
                    time.sleep(0.05)
                conn.sendall(body)
            except OSError:
                self.outcomes.append("hung up")
                return
            self.outcomes.append("sent")

    def wait(self) -> list[str]:
        for thread in list(self.threads):
            thread.join(timeout=30)
        self.sock.close()
        return self.outcomes


@pytest.fixture
def slow_headers(monkeypatch):
    from harnesskit.models import base

    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    return _SlowHeaders()


def test_headers_dribbled_byte_by_byte_time_out_as_a_whole_and_are_retried(slow_headers):
    # httpx's read timeout is per read: each byte came in time, so the request took ~4 s per
    # attempt and answered, far past timeout_seconds
    attempts = []
    model = hk.get_model(
        "openai-compat:m", base_url=slow_headers.url, retry=FAST, timeout_seconds=0.5,
        on_attempt=attempts.append,
    )  # fmt: skip
    with pytest.raises(hk.ModelError, match=r"timeout after 0\.50s"):
        model.request(ask())
    assert [(a.will_retry, a.status_code) for a in attempts] == [(True, None), (False, None)]
    assert slow_headers.wait() == ["hung up", "hung up"]


def test_max_seconds_cuts_the_wait_for_dribbled_headers(slow_headers, tmp_path):
    model = hk.get_model(
        "openai-compat:m", base_url=slow_headers.url, retry=FAST, timeout_seconds=60.0
    )
    limits = hk.Limits(max_seconds=0.5, closing_seconds=0.5)
    run = hk.Harness([], model, limits=limits, log_dir=tmp_path).run("Where is order A1?")
    assert run.finish_reason == "max_seconds"
    assert run.log.last("model.response") is None
    # the step's request and the closing one: each hung up at its deadline, none read whole
    assert slow_headers.wait() == ["hung up", "hung up"]
