"""The values a tool returned, indexed so that no id or value is lost to compression (R-C9).

Private: the context builder's `facts_index` block and the id index of artifact summaries. A
*value* is what a model types into a later call:
a JSON string without white space, 3 to 64 characters, holding a digit or all upper case (ids,
dates, codes, flight numbers) but not a clock time (`06:00:00`); a dict key holding 3 or more
digits or all upper case (an id or code used as a key); a number under an amount-like key at
any depth (`amount`, `price`, `balance`, ...) or standing alone (a calculator's `957.0`).
Free text (names, addresses, prose) is never indexed, so an index line cannot carry an
instruction.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harnesskit._lazy import lazy_pattern

__all__ = ["index_line", "tool_values"]

_TOKEN = lazy_pattern(r"[A-Za-z0-9][A-Za-z0-9_.:+@/-]{1,62}[A-Za-z0-9]")
_FREE_TOKEN = lazy_pattern(r"(?<![\w-])[A-Za-z0-9][A-Za-z0-9_-]{2,62}(?![\w-])")
_CLOCK = lazy_pattern(r"\d{1,2}:\d{2}(?::\d{2})?(?:[+-]\d)?")
_ID_KEY = lazy_pattern(r".*\d{3,}.*|[A-Z]{3,}")
_AMOUNT = lazy_pattern(r"amount|price|balance|cost|fee|refund", re.IGNORECASE)


def is_value(text: str) -> bool:
    """True when `text` looks like a typed value: one token with a digit, or all upper case."""
    if not 3 <= len(text) <= 64 or not _TOKEN.fullmatch(text) or _CLOCK.fullmatch(text):
        return False
    return any(c.isdigit() for c in text) or (text.isupper() and text.isalpha())


def _free_values(text: str, key: str, out: dict[str, str]) -> None:
    """Add the id-like tokens of prose `text` to `out` (value -> key)."""
    for m in _FREE_TOKEN.finditer(text):
        if is_value(m.group()) and any(c.isdigit() for c in m.group()):
            out.setdefault(m.group(), key)


def _is_summary(data: dict[str, Any]) -> bool:
    """True for the summary that replaces an externalized result (`artifacts.summarize`)."""
    return data.get("form") == "summary" and isinstance(data.get("artifact_ref"), str)


def _summary_values(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The values of an artifact summary: its ref, its id index and its preview's tokens.

    The rest (sha256, sizes, the example inspection calls, the shape) describes the stored
    artifact, not the tool's answer: a model never types it into a call, so it is not indexed
    (an index of many results' summaries would repeat each sha256 for nothing).
    """
    out: dict[str, str] = {data["artifact_ref"]: "artifact_ref"}
    for v in data.get("ids") or ():
        if isinstance(v, str) and is_value(v):
            out.setdefault(v, "ids")
    preview = data.get("preview")
    if isinstance(preview, dict) and isinstance(preview.get("text"), str):
        _free_values(preview["text"], "preview", out)
    return [(k, v) for v, k in out.items()]


def _number(value: int | float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def tool_values(content: str) -> list[tuple[str, str]]:
    """`(key, value)` pairs of the values in a tool result's text, in order, without repeats.

    Args:
        content: the result's JSON text (or plain text: then id-like tokens are taken).

    Returns:
        Pairs; `key` is the nearest object key (`""` at the top level).
    """
    out: dict[str, str] = {}
    try:
        data = json.loads(content)
    except (ValueError, TypeError):
        data = content or ""
    if isinstance(data, dict) and _is_summary(data):  # an artifact's summary (R-A1)
        return _summary_values(data)
    if isinstance(data, str):  # prose (plain or a JSON string): its id-like tokens
        _free_values(data, "", out)
        return [(k, v) for v, k in out.items()]

    def walk(node: Any, key: str, money: bool) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                k = str(k)
                if is_value(k) and _ID_KEY.fullmatch(k):  # ids as keys, not `address1`
                    out.setdefault(k, key)
                walk(v, k, money or bool(_AMOUNT.search(k)))
        elif isinstance(node, list):
            for v in node:
                walk(v, key, money)
        elif isinstance(node, bool) or node is None:
            return
        elif isinstance(node, int | float):
            if money:  # under an amount-like key at any depth: prices.economy = 299
                out.setdefault(_number(node), key)
        elif isinstance(node, str) and is_value(node):
            out.setdefault(node, key)

    walk(data, "", not isinstance(data, dict | list))  # a bare number (a sum) is a value
    return [(k, v) for v, k in out.items()]


def index_line(label: str, tool: str, pairs: list[tuple[str, str]]) -> str:
    """One line of the values block: `- [TOOL-31] get_user_details: key=v1,v2 other=v3`."""
    grouped: dict[str, list[str]] = {}
    for key, value in pairs:
        grouped.setdefault(key, []).append(value)
    body = " ".join(f"{k}={','.join(vs)}" if k else ",".join(vs) for k, vs in grouped.items())
    return f"- [{label}] {tool}: {body}"
