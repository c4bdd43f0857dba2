"""`send_within`: a send it gave up on returns None, whatever its own hang-up made the send raise.

Past `seconds`, `send_within` shuts the connection's socket down to end the worker's read; the
worker then fails at once (httpx: "Server disconnected without sending a response"). That
failure is ours, not the server's: the attempt is a timeout. Seen flaky under load, where the
worker stored the error before the caller looked, and the attempt read "connection failed".
"""

from __future__ import annotations

import socket
import time

import httpx

from harnesskit.models._read import send_within


class _SlowShutdown(socket.socket):
    """A socket whose shutdown lets the worker fail before the caller goes on (the race)."""

    def shutdown(self, how: int) -> None:
        super().shutdown(how)
        time.sleep(0.3)  # the worker's recv returns b"" at once and raises meanwhile


class _Stream:
    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def get_extra_info(self, name: str) -> object:
        return self._sock if name == "socket" else None


class _Client:
    """Stands in for httpx.Client: opens a socket pair and waits for headers that never come."""

    def __init__(self) -> None:
        a, b = socket.socketpair()
        self.ours = _SlowShutdown(fileno=a.detach())
        self.peer = b

    def send(self, request: httpx.Request, *, stream: bool) -> httpx.Response:
        request.extensions["trace"](
            "connection.connect_tcp.complete", {"return_value": _Stream(self.ours)}
        )
        if not self.ours.recv(1):  # the hang-up ends the read
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        raise AssertionError("no byte was ever sent")


def test_an_abandoned_send_is_a_timeout_even_when_the_hang_up_made_it_fail():
    client = _Client()
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    try:
        assert send_within(client, request, 0.1) is None  # type: ignore[arg-type]
    finally:
        client.ours.close()
        client.peer.close()
