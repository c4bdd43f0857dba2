"""Errors a provider reports inside a 200 answer, over loopback (R-M3).

OpenRouter documents a mid-stream failure as a chunk holding an `error` object next to
`choices`, with `finish_reason: "error"`: it was ignored, and the fragment sent so far ("Ch")
ended the run as `stop`. Such an error is classified by its code or type as the same error
sent with an HTTP status is: `context_length_exceeded` inside a stream was retried three
times, while as HTTP 400 it failed at once.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import ModelError
from harnesskit.models._retry import RetryPolicy, retryable
from tests.support.edge_client import ask, chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events

RETRIES = RetryPolicy(max_retries=3, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
DISCONNECTED = {"code": "server_error", "message": "Provider disconnected unexpectedly"}
CONTEXT = {
    "message": "This model's maximum context length is 8192 tokens",
    "type": "invalid_request_error",
    "code": "context_length_exceeded",
}
FAILED = {"index": 0, "delta": {"content": ""}, "finish_reason": "error"}


def _stream(last: dict) -> Reply:
    return Reply(sse=sse_events([chunk({"content": "Ch"}), last]))


def _partial(error: dict | None) -> Reply:
    body = completion("Ch", finish_reason="error")
    if error is not None:
        body["error"] = error
    return Reply(json=body)


GOOD_STREAM = Reply(sse=sse_events([chunk({"content": "Checked: shipped."}, finish="stop")]))
GOOD_BODY = Reply(json=completion("Checked: shipped."))


@pytest.mark.parametrize(
    ("first", "stream"),
    [
        (_stream({"error": DISCONNECTED, "choices": [FAILED]}), True),
        (_stream({"error": DISCONNECTED, "choices": [{**FAILED, "finish_reason": None}]}), True),
        (_stream({"error": DISCONNECTED, "choices": []}), True),
        (_stream({"choices": [{"index": 0, "delta": {}, "finish_reason": "error"}]}), True),
        (_partial(DISCONNECTED), False),
        (_partial(None), False),
    ],
    ids=[
        "stream-error-and-finish",
        "stream-error-beside-choices",
        "stream-error-empty-choices",
        "stream-finish-error",
        "body-error-and-finish",
        "body-finish-error",
    ],
)
def test_a_provider_error_beside_a_partial_answer_fails_the_attempt(server, first, stream):
    server.script(first, GOOD_STREAM if stream else GOOD_BODY)
    attempts = []
    model = make(server, stream=stream, retry=RETRIES, on_attempt=attempts.append)

    assert model.request(ask()).message.content == "Checked: shipped."
    (failed,) = attempts
    assert failed.will_retry and failed.kind == "retry"
    assert "Provider disconnected" in failed.error or 'finish_reason "error"' in failed.error


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
def test_a_run_ends_with_the_retried_answer_not_the_fragment(server, tmp_path, stream):
    chunk_or_body = {"error": DISCONNECTED, "choices": [FAILED]}
    server.script(
        _stream(chunk_or_body) if stream else _partial(DISCONNECTED),
        GOOD_STREAM if stream else GOOD_BODY,
    )
    harness = hk.Harness([lookup_order], make(server, stream=stream), log_dir=tmp_path)
    run = harness.run("Where is order A1?")
    assert (run.finish_reason, run.final_text) == ("stop", "Checked: shipped.")
    assert len(run.log.of_type("model.retry")) == 1


@pytest.mark.parametrize(
    "error",
    [
        CONTEXT,
        {"message": "Incorrect API key provided", "code": "invalid_api_key"},
        {"message": "bad key", "type": "authentication_error"},
        {"message": "no such model", "code": 404},
    ],
    ids=["context-length", "invalid-api-key", "authentication", "numeric-404"],
)
@pytest.mark.parametrize("where", ["stream", "stream-beside-choices", "plain-200", "http-400"])
def test_a_non_transient_error_fails_at_once_wherever_it_is_sent(server, error, where):
    reply = {
        "stream": _stream({"error": error}),
        "stream-beside-choices": _stream({"error": error, "choices": [FAILED]}),
        "plain-200": Reply(json={"error": error}),
        "http-400": Reply(status=400, json={"error": error}),
    }[where]
    server.script(reply, GOOD_STREAM if where.startswith("stream") else GOOD_BODY)
    model = make(server, stream=where.startswith("stream"), retry=RETRIES)
    with pytest.raises(ModelError, match=error["message"]):
        model.request(ask())
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "error",
    [
        DISCONNECTED,
        {"message": "slow down", "code": "rate_limit_exceeded"},
        {"message": "Overloaded", "type": "overloaded_error"},
        {"message": "busy", "code": "503"},
        {"message": "something went wrong"},
    ],
    ids=["server-error", "rate-limit", "overloaded", "numeric-503", "unnamed"],
)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain-200"])
def test_a_transient_error_inside_a_200_answer_is_retried(server, error, stream):
    first = _stream({"error": error}) if stream else Reply(json={"error": error})
    server.script(first, GOOD_STREAM if stream else GOOD_BODY)
    attempts = []
    model = make(server, stream=stream, retry=RETRIES, on_attempt=attempts.append)
    assert model.request(ask()).message.content == "Checked: shipped."
    assert [a.will_retry for a in attempts] == [True]


def test_one_rule_classifies_statuses_codes_and_types():
    assert retryable(503) and retryable(429, "insufficient_quota")  # the HTTP status decides
    assert not retryable(400) and not retryable(418)
    assert not retryable(200, "context_length_exceeded")
    assert not retryable(None, None, "invalid_request_error")
    assert not retryable(200, "401") and retryable(200, 503)
    assert retryable(200, "server_error") and retryable(None, None, "rate_limit_error")
    assert retryable(200)  # an error object naming no class: the provider failed mid-answer
