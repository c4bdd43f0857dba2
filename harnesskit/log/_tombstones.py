"""Tombstones (R-S3): revoked content folded out of every copy of it in memory.

The bytes on disk are never rewritten; `EventLog` applies these when it reads or appends a
`tombstone`, so every reader (events, frames, request rebuilding, context, search) sees only
the redacted copies.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any

from harnesskit.log._types import Event, with_payload

__all__ = [
    "REDACTABLE",
    "artifact_id",
    "content_hash",
    "redact_copies",
    "revoked_hashes",
    "tombstoned",
]

REDACTABLE = frozenset({"model.request", "model.response", "tool.call"})
_STRUCTURAL = ("step", "tool", "tool_call_id", "ok", "error_type", "final", "role")


def content_hash(text: str) -> str:
    """sha256 (first 16 hex) of a content string; tombstones revoke content by this hash."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def revoked_hashes(event: Event) -> set[str]:
    """Hashes of every content string of `event` that a tombstone on it revokes."""
    p = event.payload
    texts: list[Any] = [p.get("content")]
    message = p.get("message")
    if isinstance(message, dict):
        texts.append(message.get("content"))
        for call in message.get("tool_calls") or ():
            raw = call.get("function", {}).get("arguments")
            texts.append(raw)
            with contextlib.suppress(TypeError, ValueError):
                texts.append(json.dumps(json.loads(raw)))
    if "arguments" in p:
        texts.append(json.dumps(p["arguments"]))
    return {content_hash(t) for t in texts if isinstance(t, str) and t}


def artifact_id(payload: dict[str, Any]) -> Any:
    """The artifact id an `artifact.created` payload (or a ref in one) names, else `None`."""
    ref = payload.get("artifact") or payload.get("ref")
    if isinstance(ref, dict):
        return ref.get("id")
    return payload.get("artifact_id") or payload.get("id") or ref


def tombstoned(event: Event, marker: str) -> Event:
    """A copy of `event` keeping only structural payload keys (ids, tool, step)."""
    payload: dict[str, Any] = {k: event.payload[k] for k in _STRUCTURAL if k in event.payload}
    payload["tombstoned"] = marker
    if event.type in ("user.message", "tool.result"):
        payload["content"] = marker
    message = event.payload.get("message")
    if isinstance(message, dict):
        payload["message"] = _redact_message(message, None, marker)
    if "arguments" in event.payload:
        payload["arguments"] = {}
    return with_payload(event, payload, summary=marker)


def _redact_message(
    message: dict[str, Any], revoked: set[str] | None, marker: str
) -> dict[str, Any]:
    out = dict(message)
    content = out.get("content")
    if isinstance(content, str) and (revoked is None or content_hash(content) in revoked):
        out["content"] = marker
    calls = []
    for c in out.get("tool_calls") or ():
        args = c.get("function", {}).get("arguments")
        if isinstance(args, str) and (revoked is None or content_hash(args) in revoked):
            c = {**c, "function": {**c["function"], "arguments": "{}"}}
        calls.append(c)
    if calls:
        out["tool_calls"] = calls
    return out


def redact_copies(event: Event, revoked: set[str]) -> Event:
    """Redact revoked content copied into requests, responses and tool calls."""
    p = event.payload
    marker = "[tombstoned]"
    changed = False
    payload = dict(p)
    for key in ("messages", "new_messages"):
        if key in p:
            new = [  # an event id (a reference) is redacted where its event is
                m if isinstance(m, int) else _redact_message(m, revoked, marker) for m in p[key]
            ]
            if new != p[key]:
                payload[key], changed = new, True
    if isinstance(p.get("message"), dict):
        new_msg = _redact_message(p["message"], revoked, marker)
        if new_msg != p["message"]:
            payload["message"], changed = new_msg, True
    if "arguments" in p and content_hash(json.dumps(p["arguments"])) in revoked:
        payload["arguments"], changed = {}, True
    if not changed:
        return event
    return with_payload(event, payload, summary=marker)
