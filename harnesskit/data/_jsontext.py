"""JSON text helpers for artifacts: pointers, exact spans, shapes (private).

Spans are `(start, end)` character offsets into the exact stored text, found with the C JSON
scanner (`JSONDecoder.raw_decode`), so a value's span is byte-exact whatever the text's
formatting. Offsets count Python characters (code points), not UTF-8 bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

_WS = " \t\n\r"
_DECODER = json.JSONDecoder()
_INDEX = re.compile(r"0|[1-9][0-9]*")


class PointerError(ValueError):
    """A JSON pointer does not resolve. `at` is the deepest valid prefix, `found` describes it."""

    def __init__(self, pointer: str, *, at: str, found: str, problem: str) -> None:
        super().__init__(f"pointer {pointer!r}: {problem}; at {at or '(root)'} there is {found}")
        self.pointer = pointer
        self.at = at
        self.found = found
        self.problem = problem


def parse_pointer(pointer: str) -> list[str]:
    """Split an RFC 6901 JSON pointer (`""`, `"/a/0"`, or a `#/a/0` URI fragment) into tokens.

    Raises:
        PointerError: the pointer is neither empty nor starts with `/`.
    """
    if pointer.startswith("#"):
        pointer = unquote(pointer[1:])
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PointerError(
            pointer, at="", found="the whole value", problem="a JSON pointer starts with '/'"
        )
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def format_pointer(tokens: list[str] | tuple[str, ...]) -> str:
    """Join tokens into a JSON pointer (escaping `~` and `/`)."""
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def describe(value: Any, *, max_keys: int = 12) -> str:
    """A short description of a JSON value for error messages ("an array of 30 items ...")."""
    if isinstance(value, dict):
        keys = list(value)
        shown = ", ".join(keys[:max_keys]) + (
            f", … ({len(keys)} keys)" if len(keys) > max_keys else ""
        )
        return f"an object with keys [{shown}]"
    if isinstance(value, list):
        last = f" (indexes 0–{len(value) - 1})" if value else ""
        return f"an array of {len(value)} items{last}"
    text = json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= 60 else text[:57] + "…"
    kind = {str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "null"
    )
    return f"{kind} ({text})" if value is not None else "null"


def resolve(value: Any, pointer: str) -> Any:
    """The value at `pointer` inside a decoded JSON value.

    Raises:
        PointerError: a token names a missing key, an index out of range, or a scalar's child.
    """
    tokens = parse_pointer(pointer)
    for depth, tok in enumerate(tokens):
        value = _child(value, tok, pointer, tokens[:depth])
    return value


def _child(value: Any, tok: str, pointer: str, prefix: list[str]) -> Any:
    at = format_pointer(prefix)
    if isinstance(value, dict):
        if tok not in value:
            raise PointerError(pointer, at=at, found=describe(value), problem=f"no key {tok!r}")
        return value[tok]
    if isinstance(value, list):
        if not _INDEX.fullmatch(tok) or int(tok) >= len(value):
            raise PointerError(
                pointer, at=at, found=describe(value), problem=f"{tok!r} is not a valid index"
            )
        return value[int(tok)]
    raise PointerError(
        pointer, at=at, found=describe(value), problem=f"cannot step into it with {tok!r}"
    )


def skip_ws(text: str, i: int) -> int:
    """The first index at or after `i` that is not JSON whitespace."""
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def value_span(text: str, start: int) -> tuple[int, int]:
    """`(start, end)` of the JSON value beginning at `start` (after whitespace).

    Raises:
        ValueError: no JSON value starts there.
    """
    start = skip_ws(text, start)
    try:
        _, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ValueError(f"no JSON value at char {start}: {exc.msg}") from exc
    return start, end


def array_spans(text: str, start: int) -> list[tuple[int, int]]:
    """Spans of the items of the array whose `[` is at `start`."""
    spans: list[tuple[int, int]] = []
    i = skip_ws(text, start + 1)
    if text[i] == "]":
        return spans
    while True:
        s, e = value_span(text, i)
        spans.append((s, e))
        i = skip_ws(text, e)
        if text[i] == ",":
            i += 1
            continue
        return spans


def object_spans(text: str, start: int) -> dict[str, tuple[int, int]]:
    """`{key: value span}` of the object whose `{` is at `start` (a repeated key: last wins)."""
    out: dict[str, tuple[int, int]] = {}
    i = skip_ws(text, start + 1)
    if text[i] == "}":
        return out
    while True:
        i = skip_ws(text, i)
        key, i = _DECODER.raw_decode(text, i)
        i = skip_ws(text, i) + 1  # the ':'
        s, e = value_span(text, i)
        out[key] = (s, e)
        i = skip_ws(text, e)
        if text[i] == ",":
            i += 1
            continue
        return out


def span_of(text: str, pointer: str) -> tuple[int, int]:
    """`(start, end)` of the value at `pointer` in the JSON `text`: `text[start:end]` is exact.

    Raises:
        PointerError: the pointer does not resolve (the message says what exists there).
        ValueError: `text` is not JSON.
    """
    tokens = parse_pointer(pointer)
    start, end = value_span(text, 0)
    for depth, tok in enumerate(tokens):
        ch = text[start]
        if ch == "[":
            spans = array_spans(text, start)
            if not _INDEX.fullmatch(tok) or int(tok) >= len(spans):
                found = describe(json.loads(text[start:end]))
                at = format_pointer(tokens[:depth])
                raise PointerError(
                    pointer, at=at, found=found, problem=f"{tok!r} is not a valid index"
                )
            start, end = spans[int(tok)]
        elif ch == "{":
            members = object_spans(text, start)
            if tok not in members:
                found = describe(json.loads(text[start:end]))
                at = format_pointer(tokens[:depth])
                raise PointerError(pointer, at=at, found=found, problem=f"no key {tok!r}")
            start, end = members[tok]
        else:
            found = describe(json.loads(text[start:end]))
            raise PointerError(
                pointer,
                at=format_pointer(tokens[:depth]),
                found=found,
                problem=f"cannot step into it with {tok!r}",
            )
    return start, end


def largest_arrays(value: Any, *, limit: int = 10) -> list[tuple[str, int]]:
    """`(pointer, length)` of the longest arrays in `value`, longest first (ties: doc order)."""
    found: list[tuple[str, int]] = []
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        v, path = stack.pop()
        if isinstance(v, list):
            found.append((format_pointer(path), len(v)))
            stack.extend((item, (*path, str(i))) for i, item in reversed(list(enumerate(v))))
        elif isinstance(v, dict):
            stack.extend((item, (*path, k)) for k, item in reversed(list(v.items())))
    found.sort(key=lambda pl: -pl[1])
    return found[:limit]


def shape(value: Any, *, max_depth: int = 4, max_keys: int = 25) -> dict[str, Any]:
    """The inferred shape (a small schema) of a JSON value: types, keys and item counts.

    Arrays give `items` (their length) and `item` (the merged shape of all their elements,
    keys present in only some elements listed under `optional`). Objects give `keys` (first
    `max_keys`, with `more_keys` when cut). Below `max_depth` only the type is kept.
    """
    return _shape(value, max_depth, max_keys)


def _shape(value: Any, depth: int, max_keys: int) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {"type": "object"}
        if depth <= 0:
            out["n_keys"] = len(value)
            return out
        keys = list(value)[:max_keys]
        out["keys"] = {k: _shape(value[k], depth - 1, max_keys) for k in keys}
        if len(value) > max_keys:
            out["more_keys"] = len(value) - max_keys
        return out
    if isinstance(value, list):
        out = {"type": "array", "items": len(value)}
        if value and depth > 0:
            merged = _shape(value[0], depth - 1, max_keys)
            for item in value[1:]:
                merged = _merge(merged, _shape(item, depth - 1, max_keys))
            out["item"] = merged
        return out
    return {"type": _scalar_type(value)}


def _scalar_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    if a["type"] != b["type"]:
        types = sorted({*_types(a), *_types(b)})
        return {"type": types}
    if a["type"] == "object" and "keys" in a and "keys" in b:
        keys = dict(a["keys"])
        for k, v in b["keys"].items():
            keys[k] = _merge(keys[k], v) if k in keys else v
        optional = set(a.get("optional", ())) | set(b.get("optional", ()))
        optional |= set(a["keys"]) ^ set(b["keys"])
        out: dict[str, Any] = {"type": "object", "keys": keys}
        if optional:
            out["optional"] = sorted(optional)
        more = max(a.get("more_keys", 0), b.get("more_keys", 0))
        if more:
            out["more_keys"] = more
        return out
    if a["type"] == "array":
        lo = min(_bounds(a)[0], _bounds(b)[0])
        hi = max(_bounds(a)[1], _bounds(b)[1])
        out = {"type": "array", "items": lo if lo == hi else f"{lo}–{hi}"}
        if "item" in a and "item" in b:
            out["item"] = _merge(a["item"], b["item"])
        elif "item" in a or "item" in b:
            out["item"] = a.get("item") or b.get("item")
        return out
    return a


def _types(s: dict[str, Any]) -> list[str]:
    t = s["type"]
    return list(t) if isinstance(t, list) else [t]


def _bounds(s: dict[str, Any]) -> tuple[int, int]:
    items = s["items"]
    if isinstance(items, int):
        return items, items
    lo, hi = str(items).split("–")
    return int(lo), int(hi)


def pointer_at(text: str, offset: int) -> str:
    """Pointer of the innermost array item or object member whose span holds `offset`."""
    tokens: list[str] = []
    start, _ = value_span(text, 0)
    while text[start] in "[{":
        children: Iterable[tuple[str, tuple[int, int]]]
        if text[start] == "[":
            children = ((str(i), sp) for i, sp in enumerate(array_spans(text, start)))
        else:
            children = object_spans(text, start).items()
        for tok, (s, e) in children:
            if s <= offset < e:
                tokens.append(tok)
                start = s
                break
        else:
            break
    return format_pointer(tokens)
