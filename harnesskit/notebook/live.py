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

from harnesskit.log.redact import Redactor
from harnesskit.messages import StreamDelta

__all__ = ["LiveStream", "live_stream"]

_REDACTOR = Redactor()


class LiveStream:
    """Collects `StreamDelta`s and shows the answer so far (a service; one per harness).

    Args:
        display: `"auto"` (a display handle in IPython, else `stream`), `"notebook"`,
            `"text"`, or `"none"` (collect only, e.g. for tests).
        stream: where `"text"` mode writes; default `sys.stdout`.
        max_chars: show at most this many trailing characters of text per block.
        redactor: what is shown is redacted with it (R-S1: secrets never shown in clear), the
            default `Redactor()`; `None` shows the text exact. A line holding a secret's trigger
            (and the last word of any line, which may still grow into one) is held back until
            the line ends or the answer does (`end`), then shown redacted; `text` and `calls`
            keep the exact text.
    """

    def __init__(
        self,
        *,
        display: str = "auto",
        stream: IO[str] | None = None,
        max_chars: int = 4000,
        redactor: Redactor | None = _REDACTOR,
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
        self.redactor = redactor
        self._written: dict[object, str] = {}  # text mode: what each block has shown so far
        self._block: object = None  # text mode: the block being written ("text" or a call index)
        self._ended = False

    def __call__(self, delta: StreamDelta) -> None:
        """Fold in one delta and refresh the display."""
        if delta.kind == "start":
            self.end()  # the previous attempt's held-back tail, redacted
            self._ended = False
            self.attempts += 1
            self.text, self.calls = "", {}
            self._written, self._block = {}, None
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

    def end(self) -> None:
        """The answer is complete: show what was held back (redacted). Called by the harness."""
        if self._ended:
            return
        self._ended = True
        if self.mode == "text":
            self._write_block("text", self.text, final=True)
            for i in sorted(self.calls):
                self._write_block(i, self.calls[i]["arguments"], final=True)
        elif self.mode == "notebook" and self._handle is not None:
            self._show(StreamDelta(kind="text"))

    def shown(self, raw: str) -> str:
        """What the display shows of `raw` now: redacted, without a tail still being written.

        Args:
            raw: a block's exact text so far (the answer, or a call's arguments).

        Returns:
            The redacted text up to the start of the last line when it holds a secret's
            trigger (or an unclosed private key), else up to the last word; all of it once the
            answer has ended.
        """
        return _settled(self.redactor, raw, final=self._ended)

    def _write_block(self, block: object, raw: str, *, final: bool = False) -> None:
        shown = _settled(self.redactor, raw, final=final)
        before = self._written.get(block, "")
        if shown.startswith(before):
            new = shown[len(before) :]
        else:  # a rewrite reached back into what was shown (a key's BEGIN line): go on after it
            common = len(_common_prefix(before, shown))
            new = shown[common:] if len(shown) > len(before) else ""
        if new:
            out = self.stream or sys.stdout
            out.write(new)
            out.flush()
            self._written[block] = shown

    def _raw(self, block: object) -> str:
        """A block's exact text: the answer (`"text"`) or call `block`'s arguments."""
        if isinstance(block, int):
            return self.calls[block]["arguments"]
        return self.text

    def _show(self, delta: StreamDelta) -> None:
        if self.mode == "none":
            return
        self.updates += 1
        if self.mode == "text":
            block: object = "text" if delta.kind == "text" else delta.index
            if delta.kind in ("text", "tool_call") and delta.text:
                previous = self._block
                if previous is not None and previous != block:  # that block is complete
                    self._write_block(previous, self._raw(previous), final=True)
                self._block = block
                self._write_block(block, self._raw(block))
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
            shown = html.escape(self.shown(self.text)[-self.max_chars :])
            parts.append(f"<div style='white-space:pre-wrap'>{shown}</div>")
        for i in sorted(self.calls):
            c = self.calls[i]
            args = html.escape(self.shown(c["arguments"])[-self.max_chars :])
            parts.append(f"<div><code>{html.escape(c['name'])}({args}</code></div>")
        return "".join(parts) or "<div><em>waiting for the model…</em></div>"


def _settled(redactor: Redactor | None, raw: str, *, final: bool) -> str:
    """`raw` redacted, without the tail that may still grow into (or hold) a secret."""
    if redactor is None:
        return raw
    if not final:
        line = raw.rfind("\n") + 1
        begin = raw.rfind("-----BEGIN")
        end = raw.find("-----END", begin) if begin >= 0 else -1
        if begin >= 0 and (end < 0 or raw.find("-----", end + 8) < 0):  # a key still arriving
            cut = raw.rfind("\n", 0, begin) + 1
        elif redactor.needs(raw[line:]):
            cut = line
        else:
            cut = max(line, *(raw.rfind(c) + 1 for c in " \t"))
        raw = raw[:cut]
    return redactor.redact(raw)[0] if redactor.needs(raw) else raw


def _common_prefix(a: str, b: str) -> str:
    import os.path

    return os.path.commonprefix([a, b])


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
