"""A refusal or a filtered answer ends the run as `content_filter`, over loopback (R-M2).

OpenAI sends a refusal as `message.refusal` with `content: null` (`delta.refusal` in a stream),
with `finish_reason: "stop"`; Azure and others stop a filtered answer with
`finish_reason: "content_filter"`. A streamed refusal was dropped (an empty answer), and both
ended the run as a plain `stop`, so a refusal passed for an answer. The run now ends with
finish reason `content_filter`, recorded in `run.finished`, and a user turn goes on from it,
in the same process or after a resume.
"""

from __future__ import annotations

import pytest

import harnesskit as hk
from harnesskit.log.resume import RESUMABLE_BY_USER
from tests.support.edge_client import chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events

SORRY = "I'm sorry, I can't help with that."


def _refusal_body() -> dict:
    body = completion(None)
    body["choices"][0]["message"]["refusal"] = SORRY
    return body


REPLIES = {
    "refusal": (Reply(json=_refusal_body()), False, SORRY),
    "refusal-stream": (
        Reply(
            sse=sse_events(
                [
                    chunk({"role": "assistant", "content": None, "refusal": ""}),
                    chunk({"refusal": "I'm sorry, "}),
                    chunk({"refusal": "I can't help with that."}, finish="stop"),
                ]
            )
        ),
        True,
        SORRY,
    ),
    "filtered": (
        Reply(json=completion("Here is how to", finish_reason="content_filter")),
        False,
        "Here is how to",
    ),
    "filtered-stream": (
        Reply(sse=sse_events([chunk({"content": "Here is how to"}, finish="content_filter")])),
        True,
        "Here is how to",
    ),
}


@pytest.mark.parametrize("where", list(REPLIES))
def test_the_run_ends_content_filter_with_the_answer_text(server, tmp_path, where):
    reply, stream, text = REPLIES[where]
    server.script(reply, Reply(json=completion("Order A1 has shipped.")))
    h = hk.Harness([lookup_order], make(server, stream=stream), log_dir=tmp_path)
    run = h.run("Where is order A1?")

    assert run.finish_reason == "content_filter"
    assert run.final_text == text
    (finished,) = run.log.of_type("run.finished")
    assert finished.payload["finish_reason"] == "content_filter"
    assert "content filter" in finished.payload["reason"]
    (response,) = run.log.of_type("model.response")
    assert response.payload["finish_reason"] == "content_filter"

    run.send("Where is order A1, please?")  # a user turn goes on from a refusal
    run.run()
    assert (run.finish_reason, run.final_text) == ("stop", "Order A1 has shipped.")


def test_a_user_turn_after_a_refusal_goes_on_after_resume_too(server, tmp_path):
    server.script(Reply(json=_refusal_body()), Reply(json=completion("Shipped.")))
    h = hk.Harness([lookup_order], make(server), log_dir=tmp_path)
    run = h.run("Where is order A1?")
    run.send("Please check order A1.")
    path = tmp_path / f"{run.state.run_id}.jsonl"
    run.log.close()

    resumed = h.resume(path)
    assert resumed.finish_reason is None
    resumed.run()
    assert (resumed.finish_reason, resumed.final_text) == ("stop", "Shipped.")


def test_a_scripted_filtered_answer_ends_content_filter(tmp_path):
    filtered = hk.ModelResponse(
        message=hk.Message(role="assistant", content="No."), finish_reason="content_filter"
    )
    run = hk.Harness([lookup_order], hk.ScriptedModel([filtered]), log_dir=tmp_path).run("x")
    assert run.finish_reason == "content_filter"
    assert "content_filter" in RESUMABLE_BY_USER


def test_a_refusal_beside_text_is_not_a_refusal(server, tmp_path):
    body = completion("Order A1 has shipped.")
    body["choices"][0]["message"]["refusal"] = None
    server.script(Reply(json=body))
    run = hk.Harness([lookup_order], make(server), log_dir=tmp_path).run("Where is A1?")
    assert (run.finish_reason, run.final_text) == ("stop", "Order A1 has shipped.")
