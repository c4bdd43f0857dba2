"""Helpers for tests and notebooks: reply builders for the offline models.

The guard against real providers is `harnesskit.models.block_real_models` (it belongs to the
models floor; this module is at the value floor and imports nothing above it).

```python
from harnesskit.testing import reply
model = hk.ScriptedModel([reply.tool_call("get_user", user_id="u1"), reply.text("done")])
```
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from harnesskit.messages import Message, ModelResponse, ToolCall

__all__ = ["reply"]

_ids = itertools.count(1)


class _Reply:
    """Builders for scripted model turns."""

    def text(self, content: str) -> ModelResponse:
        """A plain assistant answer with no tool calls."""
        return ModelResponse(
            message=Message(role="assistant", content=content), finish_reason="stop"
        )

    def call(self, name: str, /, *, id: str | None = None, **arguments: Any) -> ToolCall:
        """One `ToolCall` (for `tool_calls(...)`); `id` defaults to a fresh `tc_N`."""
        return ToolCall(
            id=id or f"tc_{next(_ids)}",
            name=name,
            arguments=arguments,
            raw_arguments=json.dumps(arguments),
        )

    def tool_call(self, name: str, /, *, id: str | None = None, **arguments: Any) -> ModelResponse:
        """An assistant turn calling one tool with `arguments`."""
        return self.tool_calls(self.call(name, id=id, **arguments))

    def tool_calls(self, *calls: ToolCall, content: str | None = None) -> ModelResponse:
        """An assistant turn calling several tools at once (parallel calls)."""
        message = Message(role="assistant", content=content, tool_calls=tuple(calls))
        return ModelResponse(message=message, finish_reason="tool_calls")

    def raw_call(self, name: str, raw_arguments: str, /, *, id: str | None = None) -> ModelResponse:
        """A tool call whose argument text is given verbatim (e.g. malformed JSON)."""
        call = ToolCall.from_openai(
            {"id": id or f"tc_{next(_ids)}", "function": {"name": name, "arguments": raw_arguments}}
        )
        return self.tool_calls(call)


reply = _Reply()
