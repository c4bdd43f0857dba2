"""Private: a response read under one deadline for the whole request (R-M3, R-L2).

httpx's read timeout applies per chunk, so a server dripping one byte every half second, or an
SSE stream of `: ping` keep-alive comments, never trips it. `Deadline` carries the request's
deadline with the clock it is measured on (the harness's timer when the loop sends the
request), and `read_body` / `read_lines` check it after every chunk that arrives, comments
included. `send_within` bounds the wait for the status line and headers, which no chunk check
sees, the same way.
"""

from __future__ import annotations

import codecs
import contextlib
import re
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import ModelError

if TYPE_CHECKING:
    import httpx

__all__ = ["Deadline", "read_body", "read_lines", "send_within"]

_EOL = re.compile(r"\r\n|\r|\n")


@frozen_dataclass(kw_only=True)
class Deadline:
    """A deadline and the monotonic clock (seconds) it is measured on."""

    at: float | None
    """The clock reading (seconds) nothing may pass; `None` = no deadline."""
    clock: Callable[[], float]
    """The monotonic clock (seconds)."""

    def left(self) -> float | None:
        """Seconds left on `clock` (may be <= 0), or `None` without a deadline."""
        return None if self.at is None else self.at - self.clock()

    def passed(self) -> bool:
        """True once `clock` reads past the deadline."""
        return self.at is not None and self.clock() > self.at


def send_within(
    client: httpx.Client, request: httpx.Request, seconds: float
) -> httpx.Response | None:
    """Send `request` and return its streamed response once its headers are in, within `seconds`.

    httpx's timeouts bound each connect and each read, not their sum: a server sending its
    status line and headers one byte at a time never trips them. So the send runs in a worker
    thread that the caller waits for at most `seconds`. Past that, the connection's socket
    (known from httpx's `trace` extension when the request opened it) is shut down, which ends
    the worker's read at once, and a response that still arrives is closed unread. On a
    connection reused from the pool (the trace does not show its socket) the caller returns as
    surely, and the worker runs on in the background until the server ends the headers or
    httpx's per-read timeout trips, then closes what it got.

    Args:
        client: the client to send with.
        request: the request (its `trace` extension is set here).
        seconds: the most the caller waits for the status line and headers (seconds).

    Returns:
        The response, its body not read yet (close it); `None` when the status line and
        headers had not all arrived after `seconds`.

    Raises:
        httpx.HTTPError: the send failed (as `client.send` raises it).
    """
    import socket

    lock = threading.Lock()
    sockets: list[socket.socket] = []
    box: dict[str, Any] = {}
    done = threading.Event()

    def hang_up(socks: list[socket.socket]) -> None:
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def trace(event: str, info: dict[str, Any]) -> None:
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with lock:
                sockets.append(sock)
                late = "abandoned" in box
            if late:
                hang_up([sock])

    def send() -> None:
        try:
            response = client.send(request, stream=True)
        except BaseException as exc:  # handed to the caller, which raises it
            with lock:
                box["error"] = exc
        else:
            with lock:
                late = "abandoned" in box
                if not late:
                    box["response"] = response
            if late:
                response.close()
        finally:
            done.set()

    request.extensions["trace"] = trace
    threading.Thread(target=send, name="harnesskit-send", daemon=True).start()
    try:
        done.wait(seconds)
    finally:
        with lock:
            finished = "response" in box or "error" in box
            if not finished:
                box["abandoned"] = True
                socks = list(sockets)
        if not finished:
            hang_up(socks)
    if not finished:  # abandoned: a failure the hang-up itself caused is not the server's
        return None
    if "error" in box:
        raise box["error"]
    response: httpx.Response | None = box.get("response")
    return response


def _check(deadline: Deadline, what: str) -> None:
    if deadline.passed():
        raise ModelError(f"the deadline passed while the {what} was arriving", status_code=200)


def _too_large(resp: httpx.Response, cap: int, size: int) -> ModelError:
    return ModelError(
        f"the response body passed max_response_bytes={cap} (at least {size} bytes arrived); "
        "the answer was dropped unread. Raise max_response_bytes= if such answers are expected",
        status_code=resp.status_code,
    )


def read_body(resp: httpx.Response, deadline: Deadline, cap: int | None = None) -> bytes:
    """Read a whole response body, checking the deadline and the size cap after every chunk.

    Args:
        resp: a streamed httpx response whose body has not been read.
        deadline: the request's deadline.
        cap: the most bytes accepted (`None`: no cap), compressed as sent and decoded;
            reading stops as soon as either passes it (a gzip body is inflated a step at a
            time, so a small body that inflates to gigabytes stops near the cap).

    Returns:
        The body bytes, decoded.

    Raises:
        ModelError: the deadline passed before the body ended (`status_code` 200), or the body
            passed `cap` bytes (the response's status code).
    """
    parts: list[bytes] = []
    size = 0
    for chunk in _decoded(resp, cap, deadline, "body"):
        size += len(chunk)
        if cap is not None and size > cap:
            raise _too_large(resp, cap, size)
        parts.append(chunk)
        _check(deadline, "body")
    return b"".join(parts)


#: The most decoded bytes one step of decompression may make (bytes): a compressed chunk that
#: inflates far (a gzip bomb) is decoded a step at a time, each step checked against the cap.
_STEP = 65_536
#: `wbits` for the encodings decoded here: gzip, and deflate (zlib-wrapped; raw as a fallback).
_WBITS = {"gzip": 16 + 15, "x-gzip": 16 + 15, "deflate": 15}


def _decoded(
    resp: httpx.Response, cap: int | None, deadline: Deadline, what: str
) -> Iterator[bytes]:
    """The body's bytes, decoded a bounded step at a time, checking the cap on the raw bytes.

    httpx decodes a compressed body a whole network chunk at a time, so a 64 KB gzip chunk of
    zeros arrived as 33 MB before any size check ran. A `gzip` or `deflate` body is read raw
    here and inflated at most `_STEP` bytes at a time, the raw size checked against `cap` as
    it arrives (and the decoded size by the caller); any other encoding is left to httpx.

    Raises:
        ModelError: the raw body passed `cap`, or the deadline passed.
        httpx.DecodingError: the compressed body is corrupt (as httpx raises it).
    """
    import zlib

    import httpx

    encoding = resp.headers.get("content-encoding", "").strip().lower()
    wbits = _WBITS.get(encoding)
    if wbits is None:
        yield from resp.iter_bytes()
        return
    inflate = zlib.decompressobj(wbits)
    raw_size = 0
    first = True
    for raw in resp.iter_raw():
        raw_size += len(raw)
        if cap is not None and raw_size > cap:
            raise _too_large(resp, cap, raw_size)
        data = raw
        while data and not inflate.eof:
            try:
                out = inflate.decompress(data, _STEP)
            except zlib.error as exc:
                if first and encoding == "deflate":  # raw deflate, without the zlib header
                    inflate, first = zlib.decompressobj(-15), False
                    continue
                raise httpx.DecodingError(f"{encoding} body is corrupt: {exc}") from None
            first = False
            data = inflate.unconsumed_tail
            if out:
                yield out
                _check(deadline, what)
    try:
        rest = inflate.flush()
    except zlib.error as exc:
        raise httpx.DecodingError(f"{encoding} body is corrupt: {exc}") from None
    if rest:
        yield rest


def read_lines(resp: httpx.Response, deadline: Deadline, cap: int | None = None) -> Iterator[str]:
    """The lines of a streamed body, checking the deadline per chunk.

    Lines end as the SSE specification allows: CRLF, LF or a lone CR. A CR ends its line as
    soon as it arrives, so a stream whose server then waits is not held back; an LF arriving
    first in the next chunk is the rest of that CRLF and is dropped. The body is UTF-8; one
    byte-order mark at its start is dropped, as the specification says.

    Every chunk counts, so keep-alive comments and a body dripping without a newline stop at
    the deadline as surely as data lines do.

    Args:
        resp: a streamed httpx response whose body has not been read.
        deadline: the request's deadline.
        cap: the most bytes accepted (`None`: no cap), compressed as sent and decoded;
            reading stops as soon as either passes it.

    Yields:
        Each line without its line end; undecodable bytes become U+FFFD.

    Raises:
        ModelError: the deadline passed before the stream ended (`status_code` 200), or the
            stream passed `cap` bytes.
    """
    size = 0
    # utf-8-sig drops one byte-order mark at the start of the stream only (the SSE spec says
    # to), also when it arrives split across chunks
    decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
    pending = ""
    after_cr = False  # the last text ended with a CR: an LF opening the next is its other half
    for chunk in _decoded(resp, cap, deadline, "stream"):
        size += len(chunk)
        if cap is not None and size > cap:
            raise _too_large(resp, cap, size)
        _check(deadline, "stream")
        text = decoder.decode(chunk)
        if not text:
            continue
        if after_cr and text[0] == "\n":
            text = text[1:]
        after_cr = text.endswith("\r")
        pending += text
        if "\r" not in pending:  # the common case: LF ends only
            *lines, pending = pending.split("\n")
            yield from lines
            continue
        # a trailing CR ends its line now (the server may send nothing more for a while);
        # the LF of a CRLF split across reads is dropped when it arrives
        *lines, pending = _EOL.split(pending)
        yield from lines
    pending += decoder.decode(b"", final=True)
    *lines, last = _EOL.split(pending)
    yield from lines
    if last:
        yield last
