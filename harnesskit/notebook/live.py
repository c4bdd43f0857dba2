"""Tokens streaming into the cell: a `Harness(on_delta=...)` callback that shows the answer live.

```python
h = hk.Harness(tools, model, settings={"stream": True}, on_delta=hk.notebook.live_stream())
h.run("...")   # the cell shows the text and each tool call's arguments as they arrive
```

In Jupyter the display is one output area updated in place through a display handle; outside
IPython the text fragments are written to a stream (stdout by default) as they come.
"""

from __future__ import annotations

import html
import sys
from typing import IO, Any, cast

from harnesskit.messages import StreamDelta

__all__ = ["LiveStream", "live_stream"]


class LiveStream:
    """Collects `StreamDelta`s and shows the answer so far (a service; one per harness).

    Args:
        display: `"auto"` (a display handle in IPython, else `stream`), `"notebook"`,
            `"text"`, or `"none"` (collect only, e.g. for tests).
        stream: where `"text"` mode writes; default `sys.stdout`.
        max_chars: show at most this many trailing characters of text per block.
    """

    def __init__(
        self, *, display: str = "auto", stream: IO[str] | None = None, max_chars: int = 4000
    ) -> None:
        if display == "auto":
            display = "notebook" if _in_ipython() else "text"
        self.mode = display
        self.stream = stream
        self.max_chars = max_chars
        self.text = ""
        """The answer text of the current attempt, so far."""
        self.calls: dict[int, dict[str, str]] = {}
        """`{index: {"name", "id", "arguments"}}` of the current attempt's tool calls."""
        self.attempts = 0
        """How many attempts (`start` deltas) were shown."""
        self.updates = 0
        """How many times the display was updated."""
        self._handle: Any = None

    def __call__(self, delta: StreamDelta) -> None:
        """Fold in one delta and refresh the display."""
        if delta.kind == "start":
            self.attempts += 1
            self.text, self.calls = "", {}
            if self.mode == "notebook":
                self._handle = None  # a new attempt (a new step) gets a new output area
        elif delta.kind == "text":
            self.text += delta.text
        elif delta.kind == "tool_call":
            call = self.calls.setdefault(delta.index, {"name": "", "id": "", "arguments": ""})
            call["name"] = delta.name or call["name"]
            call["id"] = delta.tool_call_id or call["id"]
            call["arguments"] += delta.text
        self._show(delta)

    def _show(self, delta: StreamDelta) -> None:
        if self.mode == "none":
            return
        self.updates += 1
        if self.mode == "text":
            out = self.stream or sys.stdout
            if delta.kind in ("text", "tool_call") and delta.text:
                out.write(delta.text)
                out.flush()
            return
        import IPython.display as ipd

        show: Any = ipd.display  # IPython is untyped; these are its documented calls
        body = cast(Any, ipd.HTML)(self.html())
        if self._handle is None:
            self._handle = show(body, display_id=True)
        else:
            self._handle.update(body)

    def html(self) -> str:
        """The answer so far as escaped HTML (text, then one line per tool call)."""
        parts = []
        if self.text:
            shown = html.escape(self.text[-self.max_chars :])
            parts.append(f"<div style='white-space:pre-wrap'>{shown}</div>")
        for i in sorted(self.calls):
            c = self.calls[i]
            args = html.escape(c["arguments"][-self.max_chars :])
            parts.append(f"<div><code>{html.escape(c['name'])}({args}</code></div>")
        return "".join(parts) or "<div><em>waiting for the model…</em></div>"


def live_stream(*, display: str = "auto", max_chars: int = 4000) -> LiveStream:
    """A `Harness(on_delta=...)` callback that shows each answer live in the cell.

    Args:
        display: `"auto"`, `"notebook"`, `"text"` or `"none"` (see `LiveStream`).
        max_chars: at most this many trailing characters shown per block.

    Returns:
        A `LiveStream`; its `text` and `calls` hold the current answer.
    """
    return LiveStream(display=display, max_chars=max_chars)


def _in_ipython() -> bool:
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    return bool(get is not None and get() is not None)
