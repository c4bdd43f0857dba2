"""Streamed tool calls sent without `index` and `id` are told apart, over loopback.

Some OpenAI-compatible servers (older Ollama, some gateways) stream calls with neither. A
fragment with neither was always read as continuing the last call, so two calls (two entries
of one `tool_calls` list, or one per chunk) became one whose arguments were both objects run
together (`{"order_id":"A"}{"order_id":"B"}`), answered `invalid_argument`, and neither ran.
"""

from __future__ import annotations

import json

import pytest

import harnesskit as hk
from harnesskit.models._sse import StreamAccumulator
from tests.support.edge_client import ask, chunk, lookup_order, make
from tests.support.loopback import Reply, completion, sse_events


def _bare(name: str | None = None, arguments: str | None = None) -> dict:
    """A tool-call delta with neither `index` nor `id`."""
    fn = {k: v for k, v in (("name", name), ("arguments", arguments)) if v is not None}
    return {"type": "function", "function": fn}


def _whole(order: str) -> dict:
    return _bare("lookup_order", json.dumps({"order_id": order}))


def _called(server, chunks) -> list[tuple[str, dict]]:
    server.script(Reply(sse=sse_events([*chunks, chunk({}, finish="tool_calls")])))
    response = make(server, stream=True).request(ask())
    return [(c.name, c.arguments) for c in response.message.tool_calls]


TWO = [("lookup_order", {"order_id": "A"}), ("lookup_order", {"order_id": "B"})]


def test_two_entries_of_one_chunks_list_are_two_calls(server):
    assert _called(server, [chunk({"tool_calls": [_whole("A"), _whole("B")]})]) == TWO


def test_two_complete_calls_in_two_chunks_are_two_calls(server):
    chunks = [chunk({"tool_calls": [_whole("A")]}), chunk({"tool_calls": [_whole("B")]})]
    assert _called(server, chunks) == TWO


def test_calls_streamed_name_first_then_arguments_are_told_apart_by_the_new_name(server):
    chunks = []
    for order in ("A", "B"):
        chunks.append(chunk({"tool_calls": [_bare("lookup_order", "")]}))
        chunks.append(chunk({"tool_calls": [_bare(arguments='{"order_id": ')]}))
        chunks.append(chunk({"tool_calls": [_bare(arguments=json.dumps(order) + "}")]}))
    assert _called(server, chunks) == TWO


@pytest.mark.parametrize(
    "parts",
    [
        # the name repeated on every fragment while the arguments are still open
        [("lookup_order", '{"order_'), ("lookup_order", 'id": "A"}')],
        # the name itself split over fragments, then the arguments
        [("lookup_", ""), ("order", None), (None, '{"order_id": "A"}')],
        # only the first fragment names the call
        [("lookup_order", '{"order_id"'), (None, ': "A"'), (None, "}")],
    ],
)
def test_fragments_of_one_call_without_index_or_id_still_join(server, parts):
    chunks = [chunk({"tool_calls": [_bare(name, args)]}) for name, args in parts]
    assert _called(server, chunks) == [("lookup_order", {"order_id": "A"})]


def test_streamed_deltas_name_each_call_by_its_own_index():
    seen = []
    acc = StreamAccumulator(seen.append)
    acc.feed(json.dumps(chunk({"tool_calls": [_whole("A"), _whole("B")]})))
    calls = [d for d in seen if d.kind == "tool_call"]
    assert [(d.index, d.text) for d in calls] == [
        (0, '{"order_id": "A"}'),
        (1, '{"order_id": "B"}'),
    ]


def test_both_calls_run_in_a_harness(server, tmp_path):
    events = sse_events(
        [chunk({"tool_calls": [_whole("A"), _whole("B")]}), chunk({}, finish="tool_calls")]
    )
    server.script(Reply(sse=events), Reply(json=completion("done")))
    h = hk.Harness(
        [lookup_order],
        make(server, stream=True),
        log_dir=tmp_path,
        limits=hk.Limits(max_seconds=30),
    )
    run = h.run("Where are orders A and B?")
    results = [e for e in run.log if e.type == "tool.result"]
    assert [(e.payload["tool"], e.payload["ok"]) for e in results] == [
        ("lookup_order", True),
        ("lookup_order", True),
    ]
    assert run.finish_reason == "stop"
