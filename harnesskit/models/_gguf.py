"""Private: read a GGUF file's chat template, and derive the fenced tool-call variant of Qwen's.

Only the metadata header is read (GGUF v2/v3, little-endian): the tensors are never touched,
and the tokenizer's large string arrays are skipped by their lengths, so a 1 GB file answers in
a fraction of a second (the `gguf` package parses every array first: ~9 s for the 1.5B).
Format reference: ggml's `docs/gguf.md` (the key/value section after the header).
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

from harnesskit.errors import UsageError

__all__ = ["FENCED_CALL", "TEMPLATE_CALL", "chat_template", "fenced_call_template"]

#: GGUF value types with a fixed size: type id -> bytes.
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
_KEY = "tokenizer.chat_template"

#: How Qwen2.5's template renders an earlier tool call (opening and closing pieces).
TEMPLATE_CALL = ('\'\\n<tool_call>\\n{"name": "\'', "'}\\n</tool_call>'")
#: The same call as these small models write it: a fenced JSON block.
FENCED_CALL = ('\'\\n```json\\n{"name": "\'', "'}\\n```'")


def chat_template(path: str | Path) -> str | None:
    """Return the chat template stored in a GGUF file's metadata.

    Args:
        path: the `.gguf` file.

    Returns:
        The Jinja template text, or `None` when the file has no `tokenizer.chat_template`.

    Raises:
        UsageError: the file is not a GGUF file, or its header is cut or malformed (the message
            names the file).
    """
    path = Path(path)
    try:
        with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return _read(buf)
    except (OSError, ValueError, struct.error, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not a readable GGUF file ({exc})") from None


def _read(buf: mmap.mmap) -> str | None:
    if buf[:4] != b"GGUF":
        raise ValueError("no GGUF magic at the start")
    (version,) = struct.unpack_from("<I", buf, 4)
    if version < 2:
        raise ValueError(f"GGUF version {version} is not supported (2 or 3)")
    _tensors, count = struct.unpack_from("<QQ", buf, 8)
    pos = 24
    for _ in range(count):
        (n,) = struct.unpack_from("<Q", buf, pos)
        key = buf[pos + 8 : pos + 8 + n].decode()
        pos += 8 + n
        (kind,) = struct.unpack_from("<I", buf, pos)
        pos += 4
        if key == _KEY and kind == _STRING:
            (n,) = struct.unpack_from("<Q", buf, pos)
            return buf[pos + 8 : pos + 8 + n].decode()
        pos = _skip(buf, pos, kind)
    return None


#: Arrays of arrays deeper than this are refused (real files nest at most one level).
_MAX_DEPTH = 8


def _skip(buf: mmap.mmap, pos: int, kind: int, depth: int = 0) -> int:
    """Return the position after one value of type `kind` starting at `pos`."""
    if depth > _MAX_DEPTH:
        raise ValueError(f"arrays nested deeper than {_MAX_DEPTH} at byte {pos}")
    if kind in _FIXED:
        return pos + _FIXED[kind]
    if kind == _STRING:
        n = int(struct.unpack_from("<Q", buf, pos)[0])
        return pos + 8 + n
    if kind == _ARRAY:
        item, n = (int(v) for v in struct.unpack_from("<IQ", buf, pos))
        pos += 12
        if item in _FIXED:
            return pos + n * _FIXED[item]
        for _ in range(n):
            pos = _skip(buf, pos, item, depth + 1)
        return pos
    raise ValueError(f"unknown GGUF value type {kind} at byte {pos}")


def fenced_call_template(template: str) -> str | None:
    """Derive the variant of a Qwen2.5-style template that renders tool calls as fenced JSON.

    Only the rendering of earlier assistant tool calls changes (`<tool_call>` tags become a
    ```` ```json ```` fence); the system block that describes the tools, the tool results and
    everything else stay the model's own. llama-server derives its tool-call parser from the
    template, so with this variant it turns a fenced call, the form Qwen2.5-Coder 0.5B/1.5B
    write, into structured `tool_calls`.

    Args:
        template: the model's own chat template.

    Returns:
        The variant, or `None` when the template does not render calls the way Qwen2.5's does.
    """
    start, end = TEMPLATE_CALL
    if template.count(start) != 1 or template.count(end) != 1:
        return None
    return template.replace(start, FENCED_CALL[0]).replace(end, FENCED_CALL[1])
