"""Finish reasons that say the generation failed, not finished, over loopback (R-M2, R-M3).

vLLM and SGLang end a request the engine aborted with `finish_reason: "abort"`, and vLLM one
that hit an internal error with `"error"`; Gemini ends a reply whose tool call it could not
take with `MALFORMED_FUNCTION_CALL` or `UNEXPECTED_TOOL_CALL`. Each ended the run `stop` with
the fragment as a final answer (only a lower-case `"error"` failed the attempt). Now a failed
generation (`FAILED_FINISH_REASONS`, any case) fails the attempt as a provider error naming
no status does (retried), and a failed call (`MALFORMED_CALL_FINISH_REASONS`, any case) gets
the one corrective request a `tool_calls` finish without a call gets.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.errors import ModelError, ModelOutputError
from harnesskit.models._parse import (
    FAILED_FINISH_REASONS,
    MALFORMED_CALL_FINISH_REASONS,
    body_error,
    parse_completion,
)
from harnesskit.models._retry import RetryPolicy
from tests.support.edge_client import ask, chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events, tool_call

RETRIES = RetryPolicy(max_retries=3, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)
FRAGMENT = "Order A1 is"
GOOD = "Order A1 has shipped."


def _cases(words: frozenset[str]) -> list[str]:
    return sorted({w for word in words for w in (word, word.upper(), word.title())})


def _ended(finish: str, *, stream: bool, text: str | None = FRAGMENT) -> Reply:
    if stream:
        return Reply(sse=sse_events([chunk({"content": text}), chunk({}, finish)]))
    return Reply(json=completion(text, finish_reason=finish))


def _good(stream: bool) -> Reply:
    if stream:
        return Reply(sse=sse_events([chunk({"content": GOOD}, finish="stop")]))
    return Reply(json=completion(GOOD))


@pytest.mark.parametrize("finish", _cases(FAILED_FINISH_REASONS))
def test_a_failed_finish_in_any_case_is_a_provider_error(finish):
    body = completion(FRAGMENT, finish_reason=finish)
    said = body_error(body)
    assert said is not None and f'finish_reason "{finish}"' in said.message
    with pytest.raises(ModelError, match="generation failed"):
        parse_completion(body, model="m")


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("finish", ["abort", "ABORT", "Error"])
def test_a_failed_generation_is_retried_not_taken_as_the_answer(server, tmp_path, finish, stream):
    server.script(_ended(finish, stream=stream), _good(stream))
    attempts: list = []
    model = make(server, stream=stream, retry=RETRIES, on_attempt=attempts.append)
    run = hk.Harness([lookup_order], model, log_dir=tmp_path).run("Where is order A1?")

    assert (run.finish_reason, run.final_text) == ("stop", GOOD)
    (failed,) = attempts
    assert failed.will_retry and failed.kind == "retry"
    assert f'finish_reason "{finish}"' in failed.error
    (retry,) = run.log.of_type("model.retry")
    assert retry.payload["kind"] == "retry"


def test_a_generation_that_keeps_failing_ends_the_run_error(server, tmp_path):
    server.script(*[_ended("abort", stream=False) for _ in range(4)])
    model = make(server, retry=RETRIES)
    run = hk.Harness([lookup_order], model, log_dir=tmp_path).run("Where is order A1?")
    assert run.finish_reason == "error"
    assert isinstance(run.error, ModelError) and "abort" in str(run.error)
    assert len(server.requests) == 4


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("finish", _cases(MALFORMED_CALL_FINISH_REASONS))
def test_a_failed_tool_call_gets_the_corrective_request(server, tmp_path, finish, stream):
    server.script(_ended(finish, stream=stream, text=None), Reply(json=completion(GOOD)))
    model = make(server, stream=stream)
    h = hk.Harness([lookup_order], model, log_dir=tmp_path, limits=hk.Limits(max_seconds=30))
    run = h.run("Where is order A1?")

    assert (run.finish_reason, run.final_text) == ("stop", GOOD)
    assert len(server.requests) == 2
    fix = server.requests[1].body["messages"][-1]
    assert fix["role"] == "user" and finish in fix["content"]
    assert "tool-calling interface" in fix["content"]
    (retry,) = run.log.of_type("model.retry")
    assert retry.payload["kind"] == "corrective"


def test_a_failed_tool_call_with_a_call_in_it_is_not_run(server, tmp_path):
    calls = [tool_call("lookup_order", {"order_id": "A1"})]
    body = completion(None, tool_calls=calls, finish_reason="MALFORMED_FUNCTION_CALL")
    server.script(Reply(json=body), Reply(json=completion(GOOD)))
    run = hk.Harness([lookup_order], make(server), log_dir=tmp_path).run("Where is A1?")
    assert (run.finish_reason, run.final_text) == ("stop", GOOD)
    assert run.log.of_type("tool.call") == []


def test_a_failed_tool_call_twice_is_an_output_error(server):
    server.script(
        _ended("MALFORMED_FUNCTION_CALL", stream=False, text=None),
        _ended("unexpected_tool_call", stream=False, text="Calling"),
    )
    with pytest.raises(ModelOutputError, match="corrective request"):
        make(server).request(ask())
