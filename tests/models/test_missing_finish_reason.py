"""A reply whose choice has no `finish_reason` is recorded with none, not an invented "stop".

The parser filled in `"stop"` (or `"tool_calls"`) for a choice without the field, so the log
and the exported traces claimed the provider said so. The `model.response` now records
`None`, and the OpenTelemetry exporter writes `gen_ai.response.finish_reasons` only for a
value it knows (GenAI semantic conventions), never `None` or a stray string.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.log import ModelResponseEvent
from harnesskit.log.otel import FINISH_REASONS, SpanRecorder
from harnesskit.models._parse import parse_completion
from tests.support.edge_client import chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events, tool_call


def _without_finish(body: dict, value: object = ...) -> dict:
    choice = body["choices"][0]
    if value is ...:
        del choice["finish_reason"]
    else:
        choice["finish_reason"] = value
    return body


@pytest.mark.parametrize("value", [..., None, ""], ids=["absent", "null", "empty"])
def test_the_parser_invents_no_finish_reason(value):
    text = parse_completion(_without_finish(completion("hi"), value), model="m")
    call = parse_completion(
        _without_finish(
            completion(tool_calls=[tool_call("lookup_order", {"order_id": "A"})]), value
        ),
        model="m",
    )
    assert text.finish_reason is None and text.message.content == "hi"
    assert call.finish_reason is None and call.message.tool_calls[0].name == "lookup_order"


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_the_log_records_none_and_the_run_still_ends(server, tmp_path, stream):
    call = tool_call("lookup_order", {"order_id": "A1"})
    if stream:
        first = Reply(
            sse=sse_events([chunk({"role": "assistant", "tool_calls": [{"index": 0, **call}]})])
        )
        last = Reply(sse=sse_events([chunk({"content": "Shipped."})]))
    else:
        first = Reply(json=_without_finish(completion(tool_calls=[call])))
        last = Reply(json=_without_finish(completion("Shipped.")))
    server.script(first, last)
    run = hk.Harness([lookup_order], make(server, stream=stream), log_dir=tmp_path).run("A1?")
    assert (run.finish_reason, run.final_text) == ("stop", "Shipped.")
    assert [e.finish_reason for e in run.log.of_type(ModelResponseEvent)] == [None, None]
    assert run.log.of_type("tool.result")[0].ok  # the call ran, as with "tool_calls"
    logged = [
        json.loads(line)
        for line in (tmp_path / f"{run.state.run_id}.jsonl").read_text().splitlines()
    ]
    responses = [e for e in logged if e["type"] == "model.response"]
    assert [e["payload"]["finish_reason"] for e in responses] == [None, None]


class _Span:
    def __init__(self) -> None:
        self.attributes: dict[str, object] = {}

    def set_attribute(self, key: str, value: object) -> None:
        self.attributes[key] = value

    def set_attributes(self, attributes: dict[str, object]) -> None:
        self.attributes.update(attributes)

    def end(self, end_time: object = None) -> None:
        pass


def _chat_attributes(finish_reason: str | None) -> dict[str, object]:
    """The attributes the exporter gives the chat span a `model.response` ends."""
    log = hk.EventLog()
    log.append("model.response", {"message": {"role": "assistant", "content": "x"},
                                  "finish_reason": finish_reason, "model": "m"})  # fmt: skip
    recorder = SpanRecorder(tracer=None)
    recorder._run, span = _Span(), _Span()  # a run and a chat span already open
    recorder._chat["main"] = span
    recorder.on_event(log[1])
    return span.attributes


@pytest.mark.parametrize("finish_reason", sorted(FINISH_REASONS))
def test_a_known_finish_reason_is_exported(finish_reason):
    attributes = _chat_attributes(finish_reason)
    assert attributes["gen_ai.response.finish_reasons"] == [finish_reason]


@pytest.mark.parametrize("finish_reason", [None, "eos_token", "None", "STOP"])
def test_none_or_an_unknown_finish_reason_is_left_out(finish_reason):
    attributes = _chat_attributes(finish_reason)
    assert "gen_ai.response.finish_reasons" not in attributes
    assert attributes["gen_ai.response.model"] == "m"  # the rest is exported as before


def test_the_sdk_export_leaves_it_out_too(server, tmp_path):
    pytest.importorskip("opentelemetry.sdk", reason="the [otel] extra is not installed")
    from harnesskit.log.otel import spans_of

    server.script(Reply(json=_without_finish(completion("Shipped."))))
    run = hk.Harness([lookup_order], make(server), log_dir=tmp_path).run("A1?")
    (chat,) = [s for s in spans_of(run) if s.name.startswith("chat ")]
    assert "gen_ai.response.finish_reasons" not in chat.attributes
