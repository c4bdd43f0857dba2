"""In-stream provider errors in the SSE `event: error` form, over loopback (R-M3).

A stream that sent `event: error` with a bare error object (`{"message", "code"}`, or the
Responses-style `{"type": "error", ...}`) or a wrapped one (`{"error": {...}}`, Anthropic's
form) after some text was read past: the text so far became a complete answer (`stop`). The
event now fails the attempt as the HTTP status its code names would: retried when 5xx or 429
(the partial text is discarded), at once otherwise, with the provider's message.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.errors import ModelError
from harnesskit.models._retry import RetryPolicy
from harnesskit.models._sse import sse_events
from tests.support.edge_client import ask, chunk, make
from tests.support.loopback import Reply
from tests.support.loopback import sse_events as events

RETRIES = RetryPolicy(max_retries=2, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
GOOD = Reply(sse=events([chunk({"content": "All checks passed."}, "stop")]))


def _error_event(data: object) -> str:
    text = data if isinstance(data, str) else json.dumps(data)
    return f"event: error\ndata: {text}\n\n"


TRANSIENT = {
    "bare": {"message": "overloaded", "code": 503},
    "bare-string-code": {"message": "overloaded", "code": "503"},
    "wrapped": {"error": {"message": "overloaded", "code": 503}},
    "anthropic": {"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}},
    "responses": {"type": "error", "code": "rate_limit_exceeded", "message": "overloaded"},
    "no-code": {"message": "overloaded"},
    "plain-text": "overloaded",
}
FINAL = {
    "bare-400": {"message": "bad temperature", "code": 400},
    "wrapped-401": {"error": {"message": "bad temperature", "type": "authentication_error"}},
    "responses-400": {"type": "error", "code": "invalid_value", "message": "bad temperature"},
}


def _cut(data: object) -> Reply:
    return Reply(sse=events([chunk({"content": "Check"}), _error_event(data)]))


@pytest.mark.parametrize("data", list(TRANSIENT.values()), ids=list(TRANSIENT))
def test_a_transient_error_event_is_retried_and_the_partial_text_dropped(server, data):
    server.script(_cut(data), GOOD)
    attempts = []
    model = make(server, stream=True, retry=RETRIES, on_attempt=attempts.append)
    response = model.request(ask())
    assert response.message.content == "All checks passed."
    assert len(server.requests) == 2
    assert [a.will_retry for a in attempts] == [True]
    assert "overloaded" in attempts[0].error


@pytest.mark.parametrize("data", list(FINAL.values()), ids=list(FINAL))
def test_a_client_error_event_fails_at_once_with_the_providers_message(server, data):
    server.script(_cut(data), GOOD)
    model = make(server, stream=True, retry=RETRIES)
    with pytest.raises(ModelError, match="bad temperature"):
        model.request(ask())
    assert len(server.requests) == 1


def test_an_object_error_chunk_after_text_is_retried(server):
    error = {"object": "error", "message": "CUDA out of memory", "code": 500}
    server.script(Reply(sse=events([chunk({"content": "Check"}), error])), GOOD)
    attempts = []
    model = make(server, stream=True, retry=RETRIES, on_attempt=attempts.append)
    assert model.request(ask()).message.content == "All checks passed."
    assert "CUDA out of memory" in attempts[0].error


def test_the_run_does_not_take_the_fragment_for_an_answer(server, tmp_path):
    server.script(*[_cut(TRANSIENT["bare"])] * 3)
    model = make(server, stream=True, retry=RETRIES)
    run = hk.Harness([], model, log_dir=tmp_path).run("check it")
    assert run.finish_reason == "error"
    assert "overloaded" in str(run.error)


def test_the_event_type_lasts_one_event():
    lines = ["event: error\n", "data: x\n", "\n", "data: y\n", "\n", "event: ping\n", "\n"]
    assert list(sse_events(lines)) == [("error", "x"), ("message", "y")]
