"""Body forms a server may choose on its own, over loopback (R-M3).

- A plain request answered with `content-type: text/event-stream` (a proxy that always
  streams) failed as "the response body is not valid JSON", retried to the end: it is read as
  the stream it says it is.
- `max_response_bytes` on a gzip body was checked per decoded chunk, so a small body that
  inflates to 50 MB was refused only after ~33 MB arrived: the body is inflated a bounded step
  at a time, and the compressed and decoded sizes are both checked as they arrive.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib

import pytest

from harnesskit.errors import ModelError
from tests.support.edge_client import ask, chunk, make
from tests.support.loopback import Reply, completion, sse_events

CAP = 1_000_000


def test_a_plain_request_answered_as_a_stream_is_read_as_one(server):
    events = sse_events([chunk({"content": "Checked: "}), chunk({"content": "shipped."}, "stop")])
    server.script(Reply(sse=events))
    attempts = []
    response = make(server, on_attempt=attempts.append).request(ask())
    assert response.message.content == "Checked: shipped."
    assert response.finish_reason == "stop"
    assert attempts == [] and len(server.requests) == 1


def _bomb(size: int) -> bytes:
    text = json.dumps(completion("x" * size)).encode()
    return gzip.compress(text, compresslevel=9)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_gzip_body_that_inflates_past_the_cap_stops_near_it(server, stream):
    body = _bomb(50_000_000)
    assert len(body) < CAP  # the compressed body is under the cap: only the inflated one passes
    kind = "text/event-stream" if stream else "application/json"
    payload = b"data: " + gzip.decompress(body) + b"\n\n" if stream else None
    sent = gzip.compress(payload, compresslevel=9) if stream else body
    headers = {"content-encoding": "gzip", "content-type": kind}
    server.script(Reply(body=sent, headers=headers))
    with pytest.raises(ModelError, match="max_response_bytes") as info:
        make(server, stream=stream, max_response_bytes=CAP).request(ask())
    arrived = int(re.search(r"at least (\d+) bytes", str(info.value)).group(1))
    assert arrived <= 2 * CAP


def test_a_compressed_body_past_the_cap_stops_before_inflating_it(server):
    noise = bytes(range(256)) * 8_000  # 2 MB that deflate cannot shrink much
    body = zlib.compress(noise, 0)
    server.script(Reply(body=body, headers={"content-encoding": "deflate"}))
    with pytest.raises(ModelError, match="max_response_bytes"):
        make(server, max_response_bytes=CAP).request(ask())


@pytest.mark.parametrize(
    ("encoding", "pack"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, without the zlib header
    ],
    ids=["gzip", "deflate", "raw-deflate"],
)
def test_a_compressed_answer_is_read(server, encoding, pack):
    body = pack(json.dumps(completion("Checked: shipped.")).encode())
    server.script(Reply(body=body, headers={"content-encoding": encoding}))
    assert make(server).request(ask()).message.content == "Checked: shipped."


def test_a_corrupt_gzip_body_fails_with_a_model_error(server):
    corrupt = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xff" * 20
    server.script(Reply(body=corrupt, headers={"content-encoding": "gzip"}))
    with pytest.raises(ModelError, match="corrupt"):
        make(server).request(ask())


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("indent", [None, 2], ids=["one-line", "pretty"])
def test_a_json_completion_labelled_as_a_stream_is_read_as_json(server, stream, indent):
    body = json.dumps(completion("Checked: shipped."), indent=indent).encode()
    server.script(Reply(body=body, headers={"content-type": "text/event-stream"}))
    attempts = []
    response = make(server, stream=stream, on_attempt=attempts.append).request(ask())
    assert response.message.content == "Checked: shipped."
    assert attempts == []
