"""Context snapshots: a cold build's state, kept beside the log, so the next cold build is quick.

A `ContextBuilder` that builds a large log loaded from disk (`EventLog.read`) from scratch writes
what it read and decided (ids, statuses, reasons, the facts index; never a message) to
`<log>.ctx-<key>` beside the log, where the key names the policy, the branch and this code. A
later cold builder of the same log starts from it and reads only the events after it.

The snapshot is a cache, never needed for correctness: it is used only when the log's file
still starts with the bytes it was made from (the length, and a hash of 64 blocks spread over
them plus the last 4 KiB), the events in memory match it at sampled ids, and the log has applied
no tombstone since (a tombstone makes the builder read everything again, R-S3), and the saved
state's own bytes match the CRC-32 written beside them (a snapshot damaged on disk or edited by
hand is refused rather than trusted), and the state has the types and shape the builder writes
(checked by `_View.from_state`: a forged snapshot whose CRC-32 matches). Anything else -
a log that was replaced, truncated or rewritten, a snapshot of another log, of another policy or
version, a corrupt or unreadable file, JSON nested too deep to decode - is ignored, and the build
reads the log as if it were absent; so is one the builder finds unsound only while building from
it. It is written atomically (a temporary file, then a rename) and a failure to write it (a
read-only folder) is ignored.

Layout: a header line (JSON: format, code hash, log fingerprint, samples, and the length and
CRC-32 of the rest), a line of the state's JSON, then a block of 4-byte ints (`Ints`) that the
state's lists of ids refer to by `[start, count]`: read back as arrays, without base64 or JSON.
"""

from __future__ import annotations

import array
import contextlib
import functools
import hashlib
import json
import os
import pathlib
import sys
import tempfile
import zlib
from collections.abc import Iterable
from typing import Any

from harnesskit.log.events import EventLog

__all__ = ["MIN_EVENTS", "Ints", "load", "save", "snapshot_path", "unsigned"]

#: Only a cold build that read at least this many events writes a snapshot.
MIN_EVENTS = 10_000
FORMAT = 3  # a header line (with the CRC-32 of the rest), the state's JSON line, its ints
_INTS = f"{sys.byteorder}-4"  # the block's byte order and int size (another machine's: ignored)
_BLOCKS = 64
_BLOCK = 256
_TAIL = 4096
_SAMPLES = 64
_INT = "i" if array.array("i").itemsize == 4 else "l"  # 4-byte signed ints
_UINT = "I" if array.array("I").itemsize == 4 else "L"  # the same bytes, unsigned


class Ints:
    """Lists of ints packed into one block of 4-byte ints, written after the state's JSON.

    The state names each list by its reference `[start, count]` into the block; reading one
    back is a copy of its bytes (no base64, no JSON, no Python int until `tolist`).
    """

    def __init__(self, data: bytes = b"") -> None:
        """Start an empty block, or read the block `tobytes` wrote.

        Args:
            data: the block's bytes (a whole number of 4-byte ints).

        Raises:
            ValueError: `data` is not a whole number of 4-byte ints (the snapshot is ignored).
        """
        self.array = array.array(_INT)
        if len(data) % self.array.itemsize:
            raise ValueError("not a block of 4-byte ints")
        self.array.frombytes(data)

    def add(self, values: Iterable[int]) -> list[int]:
        """Pack `values` (each in -2**31..2**31 - 1: ids, indexes, counts).

        Returns:
            The reference `[start, count]` that `get` reads back.

        Raises:
            OverflowError: an int does not fit (`save` then writes no snapshot).
        """
        start = len(self.array)
        self.array.extend(values)
        return [start, len(self.array) - start]

    def get(self, ref: Any) -> array.array[int]:
        """The ints `add` packed under `ref`, as an array (`tolist` makes Python ints).

        Raises:
            ValueError: `ref` is not a reference into this block (the snapshot is ignored).
        """
        if type(ref) is not list or len(ref) != 2:
            raise ValueError("not a reference into the block of ints")
        start, count = ref
        if type(start) is not int or type(count) is not int or count < 0:
            raise ValueError("not a reference into the block of ints")
        if not 0 <= start <= start + count <= len(self.array):
            raise ValueError("a reference past the block of ints")
        return self.array[start : start + count]

    def tobytes(self) -> bytes:
        """The block's bytes."""
        return self.array.tobytes()


def unsigned(ints: array.array[int]) -> array.array[int]:
    """`ints` read as unsigned (a copy of the bytes).

    A negative index then lies past the end of any list, so that indexing with it fails
    instead of counting from the end.
    """
    return array.array(_UINT, ints.tobytes())


@functools.cache
def _code_hash() -> str:
    """A hash of the code whose decisions a snapshot holds: another version never reads it."""
    from harnesskit.context import _rules, builder
    from harnesskit.data import _values
    from harnesskit.log import _fold, _types

    h = hashlib.sha256(str(FORMAT).encode())
    for module in (builder, _rules, _values, _fold, _types):
        h.update(pathlib.Path(str(module.__file__)).read_bytes())
    return h.hexdigest()[:16]


def snapshot_path(log_path: pathlib.Path, spec: dict[str, Any], branch_id: str) -> pathlib.Path:
    """Where the snapshot of `branch_id` under the policy `spec` of the log at `log_path` lives.

    Args:
        log_path: the log's file.
        spec: the policy document.
        branch_id: the branch built.

    Returns:
        `<log name>.ctx-<16 hex>` beside the log.
    """
    key = json.dumps([spec, branch_id, _code_hash()], sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return log_path.with_name(f"{log_path.name}.ctx-{digest}")


def _fingerprint(path: pathlib.Path, size: int) -> str | None:
    """sha256 of 64 blocks spread over the first `size` bytes and of their last 4 KiB."""
    h = hashlib.sha256(str(size).encode())
    try:
        with open(path, "rb") as f:
            for j in range(_BLOCKS):
                f.seek(size * j // _BLOCKS)
                h.update(f.read(min(_BLOCK, size - size * j // _BLOCKS)))
            f.seek(max(0, size - _TAIL))
            tail = f.read(min(_TAIL, size))
    except OSError:
        return None
    if len(tail) != min(_TAIL, size):  # the file is shorter than `size`: truncated
        return None
    h.update(tail)
    return h.hexdigest()


def _samples(log: EventLog, n: int) -> list[list[Any]]:
    """(id, type, branch, timestamp) of `_SAMPLES` events spread over the first `n`."""
    ids = sorted({1 + (n - 1) * j // (_SAMPLES - 1) for j in range(_SAMPLES)}) if n else []
    return [[i, (e := log.events[i - 1]).type, e.branch_id, e.created_at, e.status] for i in ids]


def save(log: EventLog, path: pathlib.Path, state: dict[str, Any], ints: Ints) -> bool:
    """Write `state` (the view of the log's first `state["index"]` events) beside the log.

    Only for a log loaded with `EventLog.read` and not appended to since: its events are
    then exactly the file's first bytes, as read.

    Args:
        log: the log the state was read from.
        path: from `snapshot_path`.
        state: JSON-ready state; its `index` is how many events it covers.
        ints: the block of ints its references point into.

    Returns:
        True when the snapshot was written; False when the log does not qualify or the
        folder cannot be written (never an error: a snapshot is only a cache).
    """
    size = getattr(log, "_read_size", None)
    n = state["index"]
    if (
        size is None
        or log.path is None
        or n != len(log.events)
        or not getattr(log, "_readonly", False)
    ):
        return False
    fingerprint = _fingerprint(log.path, size)
    if fingerprint is None:
        return False
    try:
        # (compact JSON holds no newline: the block starts after the first one)
        body = json.dumps(state, separators=(",", ":")).encode() + b"\n" + ints.tobytes()
    except (TypeError, ValueError, OverflowError):
        return False
    doc = {
        "format": FORMAT,
        "ints": _INTS,
        "code": _code_hash(),
        "size": size,
        "fingerprint": fingerprint,
        "tombstones": log.tombstones,
        "samples": _samples(log, n),
        "state_bytes": len(body),
        "state_crc32": zlib.crc32(body),
    }
    tmp = None
    try:
        header = json.dumps(doc, separators=(",", ":")).encode()
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(header + b"\n" + body)
        os.replace(tmp, path)
        return True
    except (OSError, TypeError, ValueError, OverflowError):
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False


def load(log: EventLog, path: pathlib.Path) -> tuple[dict[str, Any], Ints] | None:
    """The state saved at `path` if it describes the first events of `log`, else `None`.

    Args:
        log: the log about to be built (read, or reopened and appended to since).
        path: from `snapshot_path`.

    Returns:
        `(state, ints)`: the state and the block of ints it refers to; `None` for a missing,
        corrupt, foreign or stale snapshot (the state's shape is checked by the builder,
        `_View.from_state`).
    """
    if log.path is None:
        return None
    try:
        with open(path, "rb") as f:
            header, _, body = f.read().partition(b"\n")
        doc = json.loads(header)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("ints") != _INTS:
            return None
        if doc.get("code") != _code_hash() or doc.get("tombstones") != log.tombstones:
            return None
        if doc["state_bytes"] != len(body) or doc["state_crc32"] != zlib.crc32(body):
            return None  # damaged or edited: never trusted
        text, _, data = body.partition(b"\n")
        state, ints = json.loads(text), Ints(data)
        if not isinstance(state, dict):
            return None
        n = state["index"]
        if not isinstance(n, int) or not 0 < n <= len(log.events):
            return None
        if doc["samples"] != _samples(log, n):
            return None
        size = doc["size"]
        if not isinstance(size, int) or _fingerprint(log.path, size) != doc["fingerprint"]:
            return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError):
        return None  # (RecursionError: a line of JSON nested too deep to decode)
    return state, ints
