"""Helpers for the HTTP model-client edge tests: a fast client on a loopback server, one tool."""

from __future__ import annotations

from typing import Any

import harnesskit as hk
from harnesskit.messages import Message, ModelRequest
from harnesskit.models import get_model
from harnesskit.models._retry import RetryPolicy
from harnesskit.models.openai_compat import OpenAICompatModel
from tests.support.loopback import LoopbackServer, Reply, completion

FAST = RetryPolicy(max_retries=1, initial_backoff_seconds=0.01, max_backoff_seconds=0.02)


@hk.tool
def lookup_order(order_id: str) -> dict:
    """Look up one order by id.

    Args:
        order_id: the order's id.

    Returns:
        The order.
    """
    return {"order_id": order_id, "status": "shipped"}


def make(srv: LoopbackServer, **kw: Any) -> OpenAICompatModel:
    """A client of `srv` with fast retries and a 2 s timeout unless `kw` says otherwise."""
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout_seconds", 2.0)
    model = get_model("openai-compat:edge", base_url=srv.url, **kw)
    assert isinstance(model, OpenAICompatModel)
    return model


def ask(**settings: Any) -> ModelRequest:
    """A one-message request with `settings`."""
    return ModelRequest(messages=(Message(role="user", content="hi"),), settings=settings)


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    """A chat.completion.chunk; `delta=None` gives `choices: []` (a usage-only chunk)."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"object": "chat.completion.chunk", "model": "m", "choices": choices}


def run_once(server: LoopbackServer, first: dict[str, Any], tmp_path: Any, **kw: Any) -> hk.Run:
    """Run a harness whose model answers `first`, then "done"."""
    server.script(Reply(json=first), Reply(json=completion("done")))
    h = hk.Harness(
        [lookup_order], make(server, **kw), log_dir=tmp_path, limits=hk.Limits(max_seconds=30)
    )
    return h.run("Where is order A?")
