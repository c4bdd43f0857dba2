"""A body that is itself an error object (vLLM's `"object": "error"`), over loopback (R-M3).

vLLM, SGLang and FastChat answer some failures with HTTP 200 and a body such as
`{"object": "error", "message": "...", "type": "BadRequestError", "code": 400}`: no `choices`.
It failed as a malformed reply ("the completion has no choices"), a `ModelOutputError` never
retried, whatever the code said. It is classified by its code as the HTTP status is.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import ModelError, ModelOutputError
from harnesskit.models._parse import body_error, provider_error
from harnesskit.models._retry import RetryPolicy
from tests.support.edge_client import ask, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events

RETRIES = RetryPolicy(max_retries=3, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
CONTEXT = (
    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
    "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages "
    "or completion."
)
GOOD_BODY = Reply(json=completion("Checked: shipped."))
GOOD_STREAM = Reply(
    sse=sse_events(
        [
            {
                "choices": [
                    {"index": 0, "delta": {"content": "Checked: shipped."}, "finish_reason": "stop"}
                ]
            }
        ]
    )
)


def vllm_error(code: int | str | None, message: str = "bad", kind: str = "BadRequestError") -> dict:
    """vLLM's `ErrorResponse` as it sends it."""
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


def _reply(error: dict, stream: bool) -> Reply:
    return Reply(sse=sse_events([error])) if stream else Reply(json=error)


@pytest.mark.parametrize("stream", [False, True], ids=["plain-200", "stream"])
@pytest.mark.parametrize("code", [400, "400", 401, 404, 422], ids=str)
def test_a_client_error_code_fails_at_once_as_a_provider_error(server, code, stream):
    server.script(_reply(vllm_error(code, "temperature must be >= 0"), stream), GOOD_BODY)
    attempts = []
    model = make(server, stream=stream, retry=RETRIES, on_attempt=attempts.append)
    with pytest.raises(ModelError, match="temperature must be >= 0") as info:
        model.request(ask())
    assert not isinstance(info.value, ModelOutputError)  # the provider's error, not our parse
    assert len(server.requests) == 1
    assert [a.will_retry for a in attempts] == [False]


@pytest.mark.parametrize("stream", [False, True], ids=["plain-200", "stream"])
@pytest.mark.parametrize(
    ("code", "kind"),
    [(429, "RateLimitError"), (500, "InternalServerError"), ("503", "ServiceUnavailable")],
    ids=["429", "500", "503"],
)
def test_a_transient_code_is_retried(server, code, kind, stream):
    server.script(
        _reply(vllm_error(code, "busy", kind), stream), GOOD_STREAM if stream else GOOD_BODY
    )
    attempts = []
    model = make(server, stream=stream, retry=RETRIES, on_attempt=attempts.append)
    assert model.request(ask()).message.content == "Checked: shipped."
    assert [a.will_retry for a in attempts] == [True]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(json=vllm_error(400, CONTEXT)),
        Reply(json=vllm_error(None, CONTEXT, "invalid_request")),
        Reply(sse=sse_events([vllm_error(400, CONTEXT)])),
        Reply(status=400, json=vllm_error(400, CONTEXT)),
        Reply(status=400, json={"error": {"message": CONTEXT, "code": 400}}),
        Reply(
            status=400,
            json={
                "error": {
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                }
            },
        ),
    ],
    ids=["plain-200", "no-code", "stream", "http-400", "http-400-error-object", "llama-cpp"],
)
def test_a_context_length_error_is_named_and_not_retried(server, reply):
    server.script(reply, GOOD_BODY)
    model = make(server, retry=RETRIES, stream=reply.sse is not None)
    with pytest.raises(ModelError, match="context_length_exceeded") as info:
        model.request(ask())
    assert "policy=" in str(info.value)  # says what to do
    assert len(server.requests) == 1


def test_the_run_ends_as_an_error_naming_the_provider_message(server, tmp_path):
    server.script(Reply(json=vllm_error(400, CONTEXT)), GOOD_BODY)
    harness = hk.Harness([lookup_order], make(server, retry=RETRIES), log_dir=tmp_path)
    run = harness.run("Where is order A1?")
    assert run.finish_reason == "error"
    assert "maximum context length" in str(run.error) and "no choices" not in str(run.error)
    assert not isinstance(run.error, ModelOutputError)
    assert len(server.requests) == 1


def test_the_readers_see_the_error_object_body():
    said = body_error(vllm_error(429, "slow down", "RateLimitError"))
    assert said is not None and (said.message, said.code, said.type) == (
        "slow down",
        "429",
        "RateLimitError",
    )
    assert body_error({"object": "chat.completion", "choices": []}) is None
    assert provider_error('{"message": "prompt is too long: 210000 tokens"}').code == (
        "context_length_exceeded"
    )
    # a code naming another class is kept: the words do not override it
    assert provider_error('{"message": "maximum context length", "code": 429}').code == "429"
