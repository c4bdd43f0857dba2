"""The provider's own finish reason is kept when the parser reads it as another word.

`SAFETY` and `RECITATION` are both `content_filter` to the loop, `MAX_TOKENS` is `length`,
and a `stop` whose completion tokens reached the output limit is `length` too: the log kept
only the loop's word, so a study of filtered replies could not tell Gemini's safety filter
from its recitation check.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.models._parse import parse_completion
from tests.support.edge_client import make
from tests.support.loopback import Reply, completion


@pytest.mark.parametrize(
    ("said", "read", "max_tokens", "usage"),
    [
        ("SAFETY", "content_filter", None, None),
        ("RECITATION", "content_filter", None, None),
        ("MAX_TOKENS", "length", None, None),
        ("stop", "length", 5, {"prompt_tokens": 3, "completion_tokens": 5}),
    ],
)
def test_a_word_read_as_another_is_kept(said, read, max_tokens, usage):
    body = completion("partial answer", finish_reason=said)
    if usage:
        body["usage"] = usage
    reply = parse_completion(body, model="m", max_tokens=max_tokens)
    assert (reply.finish_reason, reply.provider_finish_reason) == (read, said)
    again = hk.ModelResponse.from_dict(reply.to_dict())
    assert again.provider_finish_reason == said


@pytest.mark.parametrize("said", ["stop", "length", "tool_calls", None])
def test_a_word_read_as_itself_is_not_repeated(said):
    reply = parse_completion(completion("answer", finish_reason=said), model="m")
    assert reply.provider_finish_reason is None
    assert "provider_finish_reason" not in reply.to_dict()


def test_the_log_holds_the_providers_word(server, tmp_path):
    server.script(Reply(json=completion("I can't continue that.", finish_reason="RECITATION")))
    run = hk.Harness([], make(server), log_dir=tmp_path).run("Quote the whole book.")
    (response,) = run.log.of_type("model.response")
    assert response.payload["finish_reason"] == "content_filter"
    assert response.payload["provider_finish_reason"] == "RECITATION"
    assert run.finish_reason == "content_filter"
    read = hk.EventLog.read(run.log.path)
    assert read.of_type("model.response")[0].payload["provider_finish_reason"] == "RECITATION"
