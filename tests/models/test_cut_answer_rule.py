"""One cut rule for final text and tool arguments, over loopback (R-M2).

A final answer cut by the output limit ended `stop`, complete, unless the provider said exactly
`length`: `finish_reason: "stop"` with `usage.completion_tokens` equal to `max_tokens` (the
rule tool arguments already followed), and the cut words other providers use (`max_tokens`,
`MAX_TOKENS`, `max_output_tokens`) passed a fragment off as a whole answer. Each is now
`length`, and the run ends `length`, incomplete.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.models._parse import parse_completion
from tests.support.edge_client import chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events

CUT_TEXT = "The answer is: the order A1 was shipp"
LIMIT = 10


def _at_limit(finish: str, tokens: int) -> dict:
    usage = {"prompt_tokens": 20, "completion_tokens": tokens, "total_tokens": 20 + tokens}
    return completion(CUT_TEXT, finish_reason=finish, usage=usage)


CUT = {
    "stop-at-limit": _at_limit("stop", LIMIT),
    "stop-past-limit": _at_limit("stop", LIMIT + 1),
    "max_tokens": _at_limit("max_tokens", 7),
    "MAX_TOKENS": _at_limit("MAX_TOKENS", 7),
    "max_output_tokens": _at_limit("max_output_tokens", 7),
    "length": _at_limit("length", 7),
    "model_length": _at_limit("model_length", 7),
    "insufficient_system_resource": _at_limit("insufficient_system_resource", 7),
}


def _run(server, tmp_path, reply: Reply, *, stream: bool = False) -> hk.Run:
    server.script(reply)
    h = hk.Harness(
        [lookup_order],
        make(server, stream=stream),
        settings={"max_tokens": LIMIT},
        log_dir=tmp_path,
        limits=hk.Limits(max_seconds=30),
    )
    return h.run("Where is order A1?")


@pytest.mark.parametrize("body", list(CUT.values()), ids=list(CUT))
def test_a_cut_final_answer_ends_the_run_as_length(server, tmp_path, body):
    run = _run(server, tmp_path, Reply(json=body))
    assert run.finish_reason == "length"
    assert run.state.incomplete


def test_a_streamed_answer_reaching_the_limit_is_cut(server, tmp_path):
    usage = {"prompt_tokens": 20, "completion_tokens": LIMIT, "total_tokens": 30}
    chunks = [chunk({"content": CUT_TEXT}, "stop"), {"choices": [], "usage": usage}]
    run = _run(server, tmp_path, Reply(sse=sse_events(chunks)), stream=True)
    assert run.finish_reason == "length" and run.state.incomplete


def test_an_answer_under_the_limit_stays_complete(server, tmp_path):
    run = _run(server, tmp_path, Reply(json=_at_limit("stop", LIMIT - 1)))
    assert run.finish_reason == "stop"
    assert not run.state.incomplete


@pytest.mark.parametrize("finish", ["max_tokens", "MAX_TOKENS", "max_output_tokens"])
def test_cut_arguments_under_a_provider_cut_word_are_truncated(finish):
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": "x'}}
    body = completion(None, tool_calls=[call], finish_reason=finish)
    (parsed,) = parse_completion(body, model="m", tool_names=["f"]).message.tool_calls
    assert parsed.parse_error_type == "truncated_call", parsed


@pytest.mark.parametrize(
    "finish", ["content_filter", "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "blocklist"]
)
def test_a_filtered_answer_ends_the_run_as_content_filter(server, tmp_path, finish):
    run = _run(server, tmp_path, Reply(json=_at_limit(finish, 3)))
    assert run.finish_reason == "content_filter"
