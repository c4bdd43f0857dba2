"""Streaming into the cell: deltas arrive as generated; the assembled message is byte-identical.

The recorded chat completions (../shared cassettes) are served twice on loopback: as the
recorded JSON body, and re-cut into SSE chunks (text and argument fragments of a few
characters, as providers send them). Both answers must serialize to the same bytes, and the
deltas must join to the same text and argument strings.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest
import yaml

import harnesskit as hk
from harnesskit.messages import Message, ModelRequest, StreamDelta
from harnesskit.models import base, get_model
from harnesskit.models._retry import RetryPolicy
from harnesskit.notebook import LiveStream, live_stream
from harnesskit.testing import reply
from tests.support.loopback import LoopbackServer, Reply, sse_events

CASSETTES = (
    Path(__file__).resolve().parents[2].parent
    / "shared/datasets/pydantic__pydantic-ai/tests/models/cassettes/test_openai"
)
FAST = RetryPolicy(max_retries=1, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)


def recorded():
    if not CASSETTES.is_dir():
        pytest.skip(f"recorded exchanges at {CASSETTES} are absent (no ../shared datasets)")
    out = []
    for path in sorted(CASSETTES.glob("*.yaml")):
        for i in yaml.safe_load(path.read_text())["interactions"]:
            if (
                i["request"]["uri"].endswith("/chat/completions")
                and i["response"]["status"]["code"] == 200
            ):
                out.append((path.stem, i["request"]["parsed_body"], i["response"]["parsed_body"]))
    return out


def _pieces(text: str, n: int = 3) -> list[str]:
    return [text[i : i + n] for i in range(0, len(text), n)] or [""]


def as_chunks(body: dict) -> list[dict]:
    """Re-cut a chat.completion body into chat.completion.chunk objects."""
    choice = body["choices"][0]
    msg = choice["message"]
    head = {
        "id": body.get("id", "x"),
        "object": "chat.completion.chunk",
        "model": body.get("model", "m"),
    }

    def chunk(delta, finish=None):
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant"})]
    for piece in _pieces(msg.get("content") or "") if msg.get("content") else []:
        out.append(chunk({"content": piece}))
    for i, call in enumerate(msg.get("tool_calls") or []):
        first = {
            "index": i,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        out.append(chunk({"tool_calls": [first]}))
        for piece in _pieces(call["function"]["arguments"]):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    out.append(chunk({}, finish=choice["finish_reason"]))
    if body.get("usage"):
        out.append({**head, "choices": [], "usage": body["usage"]})
    return out


def _request(body, on_delta=None):
    msgs = tuple(Message.from_openai(m) for m in body["messages"])
    return ModelRequest(messages=msgs, tools=tuple(body.get("tools") or ()), on_delta=on_delta)


def test_streamed_and_non_streamed_recorded_answers_are_byte_identical(monkeypatch):
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    cases = recorded()
    assert cases
    for name, req, body in cases:
        with LoopbackServer([Reply(json=body), Reply(sse=sse_events(as_chunks(body)))]) as srv:
            model = get_model("openai-compat:m", base_url=srv.url, retry=FAST)
            plain = model.request(_request(req))
            deltas: list[StreamDelta] = []
            streamed = model.request(
                dataclasses.replace(_request(req, deltas.append), settings={"stream": True})
            )
            assert srv.requests[1].body["stream"] is True, name
        a = json.dumps(plain.message.to_openai(), sort_keys=True).encode()
        b = json.dumps(streamed.message.to_openai(), sort_keys=True).encode()
        assert a == b, name
        assert (plain.finish_reason, plain.usage) == (streamed.finish_reason, streamed.usage), name
        assert deltas[0].kind == "start"
        text = "".join(d.text for d in deltas if d.kind == "text")
        assert text == (plain.message.content or ""), name
        for i, call in enumerate(plain.message.tool_calls):
            parts = [d for d in deltas if d.kind == "tool_call" and d.index == i]
            assert "".join(d.text for d in parts) == call.raw_arguments, name
            assert parts[-1].name == call.name
        # one delta per fragment sent, not one final blob
        msg = body["choices"][0]["message"]
        pieces = len(_pieces(msg["content"])) if msg.get("content") else 0
        pieces += sum(
            1 + len(_pieces(c["function"]["arguments"])) for c in msg.get("tool_calls") or []
        )
        assert len(deltas) == 1 + pieces, name


def test_a_harness_streams_deltas_and_logs_the_same_message():
    seen: list[StreamDelta] = []
    turns = [reply.tool_call("echo", text="hi"), reply.text("all done")]

    @hk.tool
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    run = hk.Harness([echo], hk.ScriptedModel(turns), on_delta=seen.append).run("go")
    assert [d.kind for d in seen] == ["start", "tool_call", "start", "text"]
    assert seen[1].name == "echo" and json.loads(seen[1].text) == {"text": "hi"}
    assert seen[3].text == run.final_text == "all done"
    quiet = hk.Harness([echo], hk.ScriptedModel(turns)).run("go")

    def strip(log):
        return [
            (e.type, e.payload.get("message")) for e in log.events if e.type == "model.response"
        ]

    assert strip(run.log) == strip(quiet.log)


def test_live_stream_collects_per_attempt_and_writes_text_mode():
    out = io.StringIO()
    live = LiveStream(display="text", stream=out)
    for d in [
        StreamDelta(kind="start"),
        StreamDelta(kind="text", text="Hel"),
        StreamDelta(kind="text", text="lo"),
        StreamDelta(kind="tool_call", index=0, name="f", tool_call_id="c1", text='{"a"'),
        StreamDelta(kind="tool_call", index=0, name="f", text=": 1}"),
    ]:
        live(d)
    assert out.getvalue() == 'Hello{"a": '  # the last word is held back until the answer ends
    live.end()
    assert out.getvalue() == 'Hello{"a": 1}'
    assert live.text == "Hello" and live.calls == {
        0: {"name": "f", "id": "c1", "arguments": '{"a": 1}'}
    }
    assert "f({&quot;a&quot;: 1}" in live.html()
    live(StreamDelta(kind="start"))
    assert (live.text, live.calls, live.attempts) == ("", {}, 2)


def test_live_stream_notebook_mode_updates_one_display_handle(monkeypatch):
    pytest.importorskip("IPython")
    import IPython.display as ipd

    shown, updated = [], []

    class Handle:
        def update(self, obj):
            updated.append(obj.data)

    def fake_display(obj, display_id=False):
        shown.append(obj.data)
        return Handle()

    monkeypatch.setattr(ipd, "display", fake_display)
    live = live_stream(display="notebook")
    for piece in ["a", "b", "<c>"]:
        live(StreamDelta(kind="text", text=piece))
    assert len(shown) == 1 and len(updated) == 2
    assert "ab&lt;c&gt;" not in updated[-1]  # the last word is held back until the end
    live.end()
    assert len(shown) == 1 and len(updated) == 3
    assert "ab&lt;c&gt;" in updated[-1]
