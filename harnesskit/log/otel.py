"""OpenTelemetry spans from the event log (R-O5), GenAI semantic conventions (extra `[otel]`).

The log is the trace: one `SpanRecorder` turns events into spans, live (`Harness(tracer=...)`
subscribes one to the run's log) or after the fact (`export_otlp`, `otlp_json`):

- one span per run, `invoke_agent <run id>` (`gen_ai.operation.name = invoke_agent`,
  `gen_ai.conversation.id`), from the task contract to `run.finished`;
- one child span per model request, `chat <model>` (`gen_ai.request.model`,
  `gen_ai.response.model`, `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`,
  `gen_ai.response.finish_reasons`, only for a value in `FINISH_REASONS`: a reply that named
  none, or an unknown one, has no such attribute), from `model.request` to `model.response`;
- one child span per tool call, `execute_tool <tool>` (`gen_ai.tool.name`,
  `gen_ai.tool.call.id`), from `tool.call` to `tool.result`; a failed call has status ERROR
  and `error.type`.

Span times are the events' log-clock times. The spans also carry the OpenInference names
(`openinference.span.kind`, `llm.token_count.*`) that Phoenix reads. opentelemetry is
imported inside the functions.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

from harnesskit.errors import UsageError, checked_path
from harnesskit.log._types import (
    Event,
    ModelRequestEvent,
    ModelResponseEvent,
    RunFinishedEvent,
    TaskContractEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from harnesskit.log.events import EventLog

__all__ = [
    "FINISH_REASONS",
    "SERVICE_NAME",
    "SpanRecorder",
    "export_otlp",
    "otlp_json",
    "spans_of",
]

#: The `service.name` resource attribute of exported spans.
SERVICE_NAME = "harnesskit"
FINISH_REASONS = frozenset(
    {"stop", "length", "content_filter", "tool_calls", "tool_call", "function_call", "error"}
)
"""Finish reasons exported as `gen_ai.response.finish_reasons`: the GenAI semantic
conventions' values (`stop`, `length`, `content_filter`, `tool_call`, `error`) and the
OpenAI-compatible names for them (`tool_calls`, `function_call`)."""


def _otel() -> Any:
    try:
        from opentelemetry import trace
    except ImportError as exc:
        raise UsageError(
            "OpenTelemetry export needs the [otel] extra: pip install 'harnesskit[otel]'"
        ) from exc
    return trace


def _ns(created_at: str) -> int | None:
    try:
        return int(dt.datetime.fromisoformat(created_at).timestamp() * 1_000_000_000)
    except (TypeError, ValueError):
        return None


class SpanRecorder:
    """Turns a run's events into OpenTelemetry spans as they are appended.

    Args:
        tracer: an `opentelemetry.trace.Tracer`.
        run_id: the run's id, used until the task contract names it.
        before_span: called with the event each span starts at, just before it starts (the
            exporter uses it to derive span ids from event ids).
    """

    def __init__(
        self,
        tracer: Any,
        *,
        run_id: str = "",
        before_span: Callable[[Event], None] | None = None,
    ) -> None:
        self.tracer, self.run_id, self._before = tracer, run_id, before_span
        self._run: Any = None
        self._chat: dict[str, Any] = {}
        self._tools: dict[str, Any] = {}
        self._model = ""

    def _start(self, name: str, event: Event, attributes: dict[str, Any], kind: str) -> Any:
        trace = _otel()
        if self._before is not None:
            self._before(event)
        parent = None if self._run is None else trace.set_span_in_context(self._run)
        return self.tracer.start_span(
            name,
            context=parent,
            kind=getattr(trace.SpanKind, kind),
            attributes=attributes,
            start_time=_ns(event.created_at),
        )

    def _open_run(self, event: Event) -> None:
        run_id = self.run_id or "run"
        self._run = self._start(
            f"invoke_agent {run_id}",
            event,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": SERVICE_NAME,
                "gen_ai.conversation.id": run_id,
                "gen_ai.request.model": self._model,
                "openinference.span.kind": "AGENT",
                "session.id": run_id,
            },
            "INTERNAL",
        )

    def on_event(self, event: Event) -> None:
        """Open or close the spans this event starts or ends (use as a log listener)."""
        match event:
            case TaskContractEvent():
                self.run_id = event.run_id or self.run_id
                self._model = event.model or ""
                if self._run is None:
                    self._open_run(event)
                return
        if self._run is None:  # a resumed run: the contract was read, not appended
            self._open_run(event)
        match event:
            case ModelRequestEvent():
                model = event.model or self._model
                self._chat[event.branch_id] = self._start(
                    f"chat {model}",
                    event,
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": model,
                        "gen_ai.conversation.id": self.run_id,
                        "harnesskit.step": event.step or 0,
                        "harnesskit.branch": event.branch_id,
                        "openinference.span.kind": "LLM",
                        "llm.model_name": model,
                    },
                    "CLIENT",
                )
            case ModelResponseEvent():
                span = self._chat.pop(event.branch_id, None)
                if span is not None:
                    self._end_chat(span, event)
            case ToolCallEvent():
                self._tools[event.tool_call_id or ""] = self._start(
                    f"execute_tool {event.tool}",
                    event,
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": event.tool or "",
                        "gen_ai.tool.call.id": event.tool_call_id or "",
                        "gen_ai.tool.type": "function",
                        "harnesskit.step": event.step or 0,
                        "openinference.span.kind": "TOOL",
                        "tool.name": event.tool or "",
                    },
                    "INTERNAL",
                )
            case ToolResultEvent():
                span = self._tools.pop(event.tool_call_id or "", None)
                if span is not None:
                    if not event.ok:
                        trace = _otel()
                        span.set_attribute("error.type", event.error_type or "tool_error")
                        span.set_status(trace.Status(trace.StatusCode.ERROR, event.error_type))
                    span.end(end_time=_ns(event.created_at))
            case RunFinishedEvent():
                self.close(event)

    def _end_chat(self, span: Any, event: ModelResponseEvent) -> None:
        usage = event.usage or {}
        prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
        if event.finish_reason in FINISH_REASONS:  # none said, or not a known value: left out
            span.set_attribute("gen_ai.response.finish_reasons", [event.finish_reason])
        span.set_attributes(
            {
                "gen_ai.response.model": event.model or self._model,
                "gen_ai.usage.input_tokens": prompt,
                "gen_ai.usage.output_tokens": completion,
                "llm.token_count.prompt": prompt,
                "llm.token_count.completion": completion,
                "llm.token_count.total": prompt + completion,
                "harnesskit.usage_estimated": bool(usage.get("estimated")),
            }
        )
        span.end(end_time=_ns(event.created_at))

    def close(self, event: Event | None = None) -> None:
        """End every open span (at `event`'s time, else now); the run span last."""
        end = _ns(event.created_at) if event is not None else None
        for span in [*self._chat.values(), *self._tools.values()]:
            span.end(end_time=end)
        self._chat, self._tools = {}, {}
        if self._run is not None:
            if isinstance(event, RunFinishedEvent):
                p = event.payload
                finish = p.get("finish_reason")
                self._run.set_attributes(
                    {
                        **({"harnesskit.finish_reason": finish} if isinstance(finish, str) else {}),
                        "gen_ai.usage.input_tokens": p.get("prompt_tokens") or 0,
                        "gen_ai.usage.output_tokens": p.get("completion_tokens") or 0,
                    }
                )
            self._run.end(end_time=end)
            self._run = None


def _log_of(obj: Any) -> EventLog:
    if isinstance(obj, EventLog):
        return obj
    log = getattr(obj, "log", None)
    if isinstance(log, EventLog):
        return log
    raise UsageError(f"expected a Run or an EventLog, got {type(obj).__name__}")


def _run_id(log: EventLog) -> str:
    contract = log.last("task.contract")
    return log.run_id or (contract.payload.get("run_id") if contract else None) or "run"


def spans_of(run_or_log: Any) -> list[Any]:
    """The finished spans of a logged run, with ids derived from the run id and event ids.

    The trace id is the first 16 bytes of sha256(run id), each span id 8 bytes of
    sha256(run id:event id), so exporting the same log twice gives the same ids.

    Args:
        run_or_log: a `Run` or an `EventLog`.

    Returns:
        `ReadableSpan`s in the order they ended (children before their run span).

    Raises:
        UsageError: the [otel] extra is missing, or the argument is neither a Run nor a log.
    """
    _otel()
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    log = _log_of(run_or_log)
    run_id = _run_id(log)

    class _Ids(IdGenerator):
        next_span = 1

        def generate_trace_id(self) -> int:
            return int(hashlib.sha256(run_id.encode()).hexdigest()[:32], 16)

        def generate_span_id(self) -> int:
            return self.next_span

    ids = _Ids()

    def before(event: Event) -> None:
        digest = hashlib.sha256(f"{run_id}:{event.event_id}".encode()).hexdigest()
        ids.next_span = int(digest[:16], 16) or 1

    memory = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": SERVICE_NAME}), id_generator=ids
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    recorder = SpanRecorder(provider.get_tracer("harnesskit"), run_id=run_id, before_span=before)
    for event in log.events:
        recorder.on_event(event)
    recorder.close(log.events[-1] if log.events else None)
    provider.shutdown()
    return list(memory.get_finished_spans())


def _hex_ids(node: Any) -> Any:
    """OTLP/JSON writes trace and span ids as hex, not protobuf JSON's base64."""
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else _hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def otlp_json(run_or_log: Any) -> dict[str, Any]:
    """The spans of a run as one OTLP/JSON `ExportTraceServiceRequest` object.

    Args:
        run_or_log: a `Run` or an `EventLog`.

    Returns:
        `{"resourceSpans": [...]}` as the OTLP/HTTP JSON encoding has it (hex ids).

    Raises:
        UsageError: the [otel] extra is missing.
    """
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    message = encode_spans(spans_of(run_or_log))
    out: dict[str, Any] = _hex_ids(MessageToDict(message))
    return out


def export_otlp(
    runs: Any,
    *,
    endpoint: str | None = None,
    path: str | Path | None = None,
    timeout_seconds: float = 10.0,
) -> int:
    """Export the spans of one or more runs over OTLP/HTTP, to a JSON-lines file, or both.

    Args:
        runs: a `Run` or `EventLog`, or an iterable of them.
        endpoint: an OTLP/HTTP traces URL (e.g. `http://127.0.0.1:6006/v1/traces` for Phoenix,
            `http://127.0.0.1:4318/v1/traces` for a collector); `None` sends nothing.
        path: a `.jsonl` file to append one OTLP/JSON request per run to; `None` writes none.
        timeout_seconds: the HTTP export's timeout (seconds).

    Returns:
        The number of spans exported.

    Raises:
        UsageError: neither `endpoint` nor `path` is given, `path` is not a usable file path
            (a NUL byte, a name too long, a folder: `errors.checked_path`), the [otel] extra
            is missing, or the collector refused the spans.
    """
    if endpoint is None and path is None:
        raise UsageError("export_otlp needs endpoint=... (OTLP/HTTP URL) or path=... (a .jsonl)")
    if path is not None:
        checked_path(path, "export_otlp(path=...)", kind="file", fix="pass a writable .jsonl path")
    items: Iterable[Any] = [runs] if isinstance(runs, EventLog) or hasattr(runs, "log") else runs
    exporter = None
    if endpoint is not None:
        _otel()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = cast(Any, OTLPSpanExporter)(endpoint=endpoint, timeout=timeout_seconds)
    count = 0
    try:
        for item in items:
            spans = spans_of(item)
            count += len(spans)
            if exporter is not None:
                result = exporter.export(spans)
                if result.name != "SUCCESS":
                    raise UsageError(f"the OTLP endpoint {endpoint} did not accept the spans")
            if path is not None:
                with open(path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(otlp_json(item), separators=(",", ":")) + "\n")
    finally:
        if exporter is not None:
            exporter.shutdown()
    return count
