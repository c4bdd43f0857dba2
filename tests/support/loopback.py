"""A real HTTP server on 127.0.0.1 that answers with scripted replies, for model-client tests.

```python
with LoopbackServer([Reply(status=503), Reply(json=completion("hi"))]) as srv:
    model = get_model("openai-compat:m", base_url=srv.url)
    ...
    srv.requests  # what the client sent, in order (path, headers, parsed JSON body)
```

Replies are served in order; a callable reply is called with the request body and returns a
`Reply`. Faults: `status` with `headers` (Retry-After), `delay_seconds` (slow response),
`body` bytes that are not JSON, `claim_length` (a Content-Length larger than the body, then
the connection closes), and `sse` events written one by one (keep-alive lines included as given).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted HTTP answer."""

    status: int = 200
    json: Any = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_seconds: float = 0.0
    sse: list[str] | None = None
    sse_gap_seconds: float = 0.0
    claim_length: int | None = None


@dataclass
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any


def completion(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = "loopback-model",
) -> dict[str, Any]:
    """A chat.completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def tool_call(name: str, arguments: Any, id: str | None = "call_1") -> dict[str, Any]:
    """A chat-completions tool call; `arguments` given as a dict is JSON-encoded."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    out: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": text}}
    if id is not None:
        out["id"] = id
    return out


def sse_events(chunks: Iterable[dict[str, Any] | str], *, done: bool = True) -> list[str]:
    """SSE event texts for chunk dicts (`data: {...}` + blank line); strings are sent verbatim."""
    out = [c if isinstance(c, str) else f"data: {json.dumps(c)}\n\n" for c in chunks]
    if done:
        out.append("data: [DONE]\n\n")
    return out


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 (port chosen by the OS) serving scripted replies."""

    def __init__(self, replies: Iterable[Reply | Callable[[Any], Reply]] = ()) -> None:
        self._replies: list[Reply | Callable[[Any], Reply]] = list(replies)
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                # OSError: the client gave up (e.g. its timeout); there is no one to answer
                with contextlib.suppress(OSError):
                    server._serve(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL including `/v1`."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply | Callable[[Any], Reply]) -> None:
        """Queue more replies."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def remaining(self) -> int:
        """Replies not served yet."""
        return len(self._replies)

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        with self._lock:
            self.requests.append(
                Seen(handler.path, {k.lower(): v for k, v in handler.headers.items()}, body)
            )
            reply = self._replies.pop(0) if self._replies else None
        if reply is None:
            reply = Reply(status=599, json={"error": {"message": "loopback: no scripted reply"}})
        elif callable(reply):
            reply = reply(body)
        if reply.delay_seconds:
            time.sleep(reply.delay_seconds)
        handler.send_response(reply.status)
        for k, v in reply.headers.items():
            handler.send_header(k, v)
        if reply.sse is not None:
            handler.send_header("content-type", "text/event-stream")
            handler.send_header("cache-control", "no-cache")
            handler.end_headers()
            for event in reply.sse:
                handler.wfile.write(event.encode())
                handler.wfile.flush()
                if reply.sse_gap_seconds:
                    time.sleep(reply.sse_gap_seconds)
            return
        data = reply.body if reply.body is not None else json.dumps(reply.json).encode()
        if not any(k.lower() == "content-type" for k in reply.headers):  # else sent above
            handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(reply.claim_length or len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()
