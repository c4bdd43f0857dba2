"""OpenTelemetry export (R-O5): spans decoded from the OTLP wire format on a loopback receiver."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip(
    "opentelemetry.sdk", reason="the [otel] extra (opentelemetry-sdk) is not installed"
)
pytest.importorskip(
    "opentelemetry.exporter.otlp.proto.http", reason="the [otel] extra is not installed"
)

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import harnesskit as hk
from harnesskit.log.otel import export_otlp, otlp_json, spans_of
from harnesskit.messages import Usage
from harnesskit.testing import reply


@hk.tool
def lookup(key: str) -> str:
    """Look a key up."""
    if key == "bad":
        raise hk.ToolNotFoundError("no such key")
    return key.upper()


def _with_usage(r, p, c):
    import dataclasses

    return dataclasses.replace(r, usage=Usage(prompt_tokens=p, completion_tokens=c))


def a_run(**kw):
    turns = [
        _with_usage(
            reply.tool_calls(reply.call("lookup", key="a"), reply.call("lookup", key="bad")),
            100,
            10,
        ),
        _with_usage(reply.text("A"), 150, 5),
    ]
    return (
        hk.Harness([lookup], hk.ScriptedModel(turns, name="scripted-m"), **kw)
        .start("go", run_id="r-otel")
        .run()
    )


class Receiver:
    """A loopback OTLP/HTTP receiver that decodes each protobuf export request."""

    def __init__(self):
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["content-length"]))
                assert self.headers["content-type"] == "application/x-protobuf"
                msg = ExportTraceServiceRequest()
                msg.ParseFromString(body)
                outer.requests.append(msg)
                outer.paths.append(self.path)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def spans(self):
        return [
            s
            for r in self.requests
            for rs in r.resource_spans
            for ss in rs.scope_spans
            for s in ss.spans
        ]


def _attrs(span):
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes}


def test_spans_reach_a_loopback_otlp_receiver_with_genai_attributes():
    run = a_run()
    with Receiver() as rx:
        assert export_otlp(run, endpoint=rx.url) == 5  # the run, 2 model requests, 2 tool calls
    assert rx.paths == ["/v1/traces"]
    resource = {
        a.key: a.value.string_value for a in rx.requests[0].resource_spans[0].resource.attributes
    }
    assert resource["service.name"] == "harnesskit"
    by_name = {}
    for s in rx.spans():
        by_name.setdefault(s.name, []).append(s)
    (root,) = by_name["invoke_agent r-otel"]
    chats, tools = by_name["chat scripted-m"], by_name["execute_tool lookup"]
    assert len(chats) == 2 and len(tools) == 2
    assert root.parent_span_id == b""
    assert {s.parent_span_id for s in chats + tools} == {root.span_id}
    assert {s.trace_id for s in rx.spans()} == {root.trace_id}
    first = _attrs(chats[0]) if _attrs(chats[0])["harnesskit.step"] == 1 else _attrs(chats[1])
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.request.model"] == "scripted-m"
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (100, 10)
    assert first["llm.token_count.total"] == 110
    assert _attrs(root)["gen_ai.usage.input_tokens"] == 250
    failed = [t for t in tools if t.status.code == 2]  # STATUS_CODE_ERROR
    assert len(failed) == 1 and _attrs(failed[0])["error.type"] == "not_found"
    assert {_attrs(t)["gen_ai.tool.call.id"] for t in tools} == {
        e.payload["tool_call_id"] for e in run.log.events if e.type == "tool.call"
    }
    for s in rx.spans():
        assert s.start_time_unix_nano <= s.end_time_unix_nano
        assert root.start_time_unix_nano <= s.start_time_unix_nano


def test_the_same_log_exports_the_same_ids_and_a_jsonl_file(tmp_path):
    run = a_run()
    a, b = spans_of(run), spans_of(run.log)
    assert [(s.name, s.context.span_id) for s in a] == [(s.name, s.context.span_id) for s in b]
    path = tmp_path / "trace.jsonl"
    assert export_otlp([run, run.log], path=path) == 10
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0]) == json.loads(lines[1]) == otlp_json(run)
    spans = json.loads(lines[0])["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root = next(s for s in spans if "parentSpanId" not in s)
    assert len(root["traceId"]) == 32 and len(root["spanId"]) == 16  # hex, as OTLP/JSON says
    assert {s["parentSpanId"] for s in spans if s is not root} == {root["spanId"]}


def test_a_live_tracer_gets_the_same_spans_as_the_export():
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    run = a_run(tracer=provider)
    live = memory.get_finished_spans()
    exported = spans_of(run)

    def shape(spans):
        root = next(s for s in spans if s.parent is None)
        return sorted(
            (
                s.name,
                s.parent is not None and s.parent.span_id == root.context.span_id,
                s.start_time,
                s.end_time,
                tuple(sorted((k, str(v)) for k, v in s.attributes.items())),
            )
            for s in spans
        )

    assert len(live) == 5 and shape(live) == shape(exported)


def test_export_needs_a_target():
    with pytest.raises(hk.UsageError, match="endpoint"):
        export_otlp(a_run())
