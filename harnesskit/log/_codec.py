"""The line codec: events to JSONL lines and back, and the schema migrations (R-V1, R-V9).

The JSON layout on disk is fixed: `{"v", "event_id", "parent_id", "branch_id", "type",
"source", "created_at", "workspace_revision", "input_hash", "status", "summary", "supersedes",
"data_class", "payload": {...}}`. `type` names the event class (`_types.EVENT_CLASSES`); the
payload is the class's typed fields and its `extra` keys. Older versions are brought to
`SCHEMA_VERSION` through the explicit `MIGRATIONS`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any

from harnesskit.errors import CorruptLogError, SchemaVersionError
from harnesskit.log._types import SCHEMA_VERSION, AnyEvent, Event

__all__ = [
    "MIGRATIONS",
    "decode",
    "encode",
    "event_seconds",
    "hash_json",
    "iter_jsonl",
    "line_parts",
    "message_of",
    "migrate_line",
    "schema_version",
]


def hash_json(value: Any) -> str:
    """sha256 (first 16 hex) of `value`'s canonical JSON (sorted keys, no spaces)."""
    blob = _encode_sorted(value)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_iso_second: tuple[float, str] = (math.nan, "")
_ISO_MS = tuple(f".{ms:03d}+00:00" for ms in range(1000))


def _utc_iso(t: float) -> str:
    """`datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")`, several times faster.

    Rounds to microseconds half-even exactly as `fromtimestamp` does, then reuses the
    formatted second (a run writes many events per second).
    """
    global _iso_second
    frac, whole = math.modf(t)
    us = round(frac * 1e6)
    if us >= 1_000_000:
        whole, us = whole + 1.0, us - 1_000_000
    elif us < 0:
        whole, us = whole - 1.0, us + 1_000_000
    cached = _iso_second
    if cached[0] != whole:
        text = dt.datetime.fromtimestamp(whole, dt.UTC).isoformat(timespec="seconds")
        cached = _iso_second = (whole, text.removesuffix("+00:00"))
    return cached[1] + _ISO_MS[us // 1000]


def event_seconds(event: Event, where: object = None) -> float:
    """The epoch seconds of a read event's `created_at` (an ISO 8601 time; UTC when no zone).

    Args:
        event: an event, read from a log or appended.
        where: the log's path (or name), for the error.

    Returns:
        Seconds since the epoch; 0.0 when `created_at` is empty or null.

    Raises:
        CorruptLogError: `created_at` is not text or not a time (`"other"`, `10**24`), naming
            the log, the event and the field.
    """
    value = event.created_at
    if value is None or value == "":
        return 0.0
    if value.__class__ is str:
        try:
            moment = dt.datetime.fromisoformat(value)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.UTC)
            return moment.timestamp()
        except (ValueError, OverflowError):
            pass
    shown = json.dumps(value, default=str)
    raise CorruptLogError(
        f"{where or 'the log'}: event {event.event_id!r:.40} ({event.type}): field 'created_at' "
        f"is {shown:.40}, not an ISO 8601 time (2026-01-31T12:00:00.000+00:00); the log is corrupt"
    )


_quote = json.encoder.encode_basestring  # the C escaper json.dumps uses with ensure_ascii=False


class _PayloadEncoder:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)`, faster.

    It reuses one C encoder, where `json.dumps` builds a new one per call, and first tries one
    without the circular-reference check (which records and forgets every container of the
    value in a dict as it goes); only when that one gives up (`RecursionError`: a value that
    holds itself, or nests past the recursion limit) the checking one decides, so the result
    and the error are those of `json.dumps`. `sort_keys` and `separators` are those of
    `json.dumps`.
    """

    __slots__ = ("_encode", "_fast", "_separators", "_sort_keys", "_strict")
    _encode: Callable[[Any], str]
    _fast: Callable[[Any, int], Any] | None

    def __init__(
        self,
        *,
        sort_keys: bool = False,
        separators: tuple[str, str] = (",", ":"),
        strict: bool = False,
    ) -> None:
        self._sort_keys = sort_keys
        self._separators = separators
        self._strict = strict
        self._reset()

    def _reset(self) -> None:
        make = getattr(json.encoder, "c_make_encoder", None)
        item, key = self._separators
        # strict: NaN and infinities, and values with no JSON form, raise `NotJSON`
        default, allow_nan = (_strict_default, False) if self._strict else (str, True)
        if make is None:  # no C accelerator: fall back to the pure-Python encoder
            encoder = json.JSONEncoder(
                ensure_ascii=False,
                separators=self._separators,
                default=default,
                sort_keys=self._sort_keys,
                allow_nan=allow_nan,
            )
            self._encode = encoder.encode
            self._fast = None
            return
        c_encode = make({}, default, _quote, None, key, item, self._sort_keys, False, allow_nan)
        self._encode = lambda value: "".join(c_encode(value, 0))
        # no markers dict: nothing is left behind by an error, so it is never rebuilt
        self._fast = make(None, default, _quote, None, key, item, self._sort_keys, False, allow_nan)

    def __call__(self, value: Any) -> str:
        if value.__class__ is str:  # a str subclass takes the encoder, which writes the same
            return _quote(value)
        fast = self._fast
        if fast is not None:
            try:
                return "".join(fast(value, 0))
            except RecursionError:  # a cycle, or too deep: the checking encoder says which
                pass
        try:
            return self._encode(value)
        except BaseException:
            self._reset()  # an error leaves entries in the circular-reference markers
            raise


class NotJSON(ValueError):
    """A payload value with no JSON form (`object()`, a set, a NaN): refused, not stringified."""


def _strict_default(value: Any) -> Any:
    """`str(value)` for dates, paths, enums, UUIDs and decimals (as before); else `NotJSON`."""
    if isinstance(value, dt.date | dt.time | os.PathLike | Enum):
        return str(value)
    for module, name in (("uuid", "UUID"), ("decimal", "Decimal")):  # loaded if one exists
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(value, getattr(loaded, name)):
            return str(value)
    raise NotJSON(f"a {type(value).__name__} ({value!r:.60}) has no JSON form")


_encode_json = _PayloadEncoder()
#: As `_encode_json`, but NaN, infinities and values with no JSON form raise (`append`).
_encode_strict = _PayloadEncoder(strict=True)
_encode_sorted = _PayloadEncoder(sort_keys=True)
#: `json.dumps(value, ensure_ascii=False, default=str)` (spaces after `,` and `:`), faster.
json_text = _PayloadEncoder(separators=(", ", ": "))


def encode(e: Event) -> str:
    """One log line (without its newline) for `e`.

    The text is that of `json.dumps(e.to_dict(), ensure_ascii=False, separators=(",", ":"),
    default=str)`, written field by field (`line_parts`, about twice as fast); a field of an
    unexpected type takes the `json.dumps` path.
    """
    parts = line_parts(
        e.payload, e.event_id, e.parent_id, e.branch_id, e.type, e.source, e.created_at,
        e.workspace_revision, e.input_hash, e.status, e.summary, e.supersedes, e.data_class, e.v,
    )  # fmt: skip
    if parts is not None:
        return parts[0] + parts[1]
    return json.dumps(e.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str)


def line_parts(
    payload: Any, event_id: Any, parent_id: Any, branch_id: Any, type: Any, source: Any,
    created_at: Any, workspace_revision: Any, input_hash: Any, status: Any, summary: Any,
    supersedes: Any, data_class: Any, v: Any = SCHEMA_VERSION, *, strict: bool = False,
) -> tuple[str, str] | None:  # fmt: skip
    """An event's log line from its values, in two parts: before `"summary":`, and from it on.

    `head + tail` is the text of `json.dumps(line_dict, ensure_ascii=False, separators=(",",
    ":"), default=str)` of the event these values make; `tail` is what the secret scan reads
    (the fields before it are the log's own and the branch name). Built straight from the
    values (no line dict), with one reused C encoder for the payload.

    Args:
        payload: the payload (a JSON-ready dict).
        event_id: the event's id.
        parent_id: its parent's id, or `None`.
        branch_id: the branch name.
        type: the event type tag.
        source: who produced it.
        created_at: the ISO timestamp.
        workspace_revision: the revision, or `None`.
        input_hash: the input hash, or `None`.
        status: the status as written.
        summary: the one-line summary.
        supersedes: the replaced event's id, or `None`.
        data_class: the data class.
        v: the schema version.
        strict: refuse a payload holding NaN, an infinity or a value with no JSON form
            (`object()`, a set) instead of writing it as `NaN` or its `str()`; dates, paths,
            UUIDs, decimals and enums are still written as their `str()`.

    Returns:
        `(head, tail)`, or `None` when a field has a type the fast path does not write (an id
        that is not an exact `int`, a text field that is not a `str`): `json.dumps` decides.
        A circular payload raises what `json.dumps` raises.

    Raises:
        ValueError: `strict` and the payload holds NaN or an infinity, or (`NotJSON`) a value
            with no JSON form.
    """
    if not (
        v.__class__ is int
        and event_id.__class__ is int
        and (parent_id is None or parent_id.__class__ is int)
        and (supersedes is None or supersedes.__class__ is int)
    ):
        return None
    try:
        head = (
            f'{{"v":{v},"event_id":{event_id},'
            f'"parent_id":{"null" if parent_id is None else parent_id},'
            f'"branch_id":{_quote(branch_id)},"type":{_quote(type)},'
            f'"source":{_quote(source)},"created_at":{_quote(created_at)},'
            f'"workspace_revision":'
            f"{'null' if workspace_revision is None else _quote(workspace_revision)},"
            f'"input_hash":{"null" if input_hash is None else _quote(input_hash)},'
            f'"status":{_quote(status)},'
        )
        tail = (
            f'"summary":{_quote(summary)},'
            f'"supersedes":{"null" if supersedes is None else supersedes},'
            f'"data_class":{_quote(data_class)},'
            f'"payload":{(_encode_strict if strict else _encode_json)(payload)}}}'
        )
    except TypeError:  # a text field holding something else: let json.dumps decide
        return None
    return head, tail


def message_of(event: Event) -> dict[str, Any] | None:
    """The chat message that a reference to `event` in a request's `new_messages` stands for.

    Schema v3 writes a message of a `model.request` that is already in the log as the id of
    its event: an assistant message as its `model.response` logged it (`message`), a tool
    message as `{"role": "tool", "content", "tool_call_id"}` of its `tool.result`.

    Args:
        event: the referenced event.

    Returns:
        The message dict, or `None` when events of this type hold no message.
    """
    p = event.payload
    if event.type == "model.response":
        return p.get("message")
    if event.type == "tool.result":
        return {"role": "tool", "content": p.get("content"), "tool_call_id": p.get("tool_call_id")}
    return None


#: Migrations from older schema versions: `{old_version: fn(line_dict) -> line_dict of old+1}`.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def _migrate_v1(line: dict[str, Any]) -> dict[str, Any]:
    """v1 → v2: `id`/`parent`/`branch`/`kind`/`ts` were renamed; `data_class` added."""
    out = dict(line)
    out["event_id"] = out.pop("id")
    out["parent_id"] = out.pop("parent", None)
    out["branch_id"] = out.pop("branch", "main")
    out["type"] = out.pop("kind")
    ts = out.pop("ts", None)
    out["created_at"] = _utc_iso(ts) if isinstance(ts, int | float) else (ts or "")
    out.setdefault("data_class", "internal")
    out["v"] = 2
    return out


MIGRATIONS[1] = _migrate_v1


def _migrate_v2(line: dict[str, Any]) -> dict[str, Any]:
    """v2 → v3: the version number only; a v2 line reads unchanged.

    v3 lines may hold references where v2 repeated content: a `context.injected` `selected`
    list as a delta against the previous record, `model.request` messages as event ids.
    """
    out = dict(line)
    out["v"] = 3
    return out


MIGRATIONS[2] = _migrate_v2


def schema_version(line: dict[str, Any]) -> int:
    """The schema version a decoded line states in `v` (1 when it has none).

    Checked before the version is used at all (counted, compared, looked up): a hand-edited
    `"v": [3]` is refused here, naming the field, not as a raw `TypeError` later.

    Args:
        line: one decoded log line.

    Returns:
        The version, an integer.

    Raises:
        SchemaVersionError: `v` is not an integer (a bool, a string, a list, a float).
    """
    version = line.get("v", 1)
    if version.__class__ is not int:
        shown = json.dumps(version) if isinstance(version, bool) else repr(version)
        raise SchemaVersionError(
            f"field 'v' (the schema version) is {type(version).__name__} {shown:.40}, not an "
            f"integer (this harnesskit writes {SCHEMA_VERSION})"
        )
    return version


def migrate_line(line: dict[str, Any]) -> dict[str, Any]:
    """Bring one decoded line to `SCHEMA_VERSION` through the explicit migrations (R-V9).

    Raises:
        SchemaVersionError: the version is newer than this harnesskit or has no migration.
    """
    version = schema_version(line)
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"log line has schema version {version}, newer than this harnesskit's "
            f"{SCHEMA_VERSION}; upgrade harnesskit to read it"
        )
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise SchemaVersionError(f"no migration from schema version {version}")
        line = step(line)
        version = line["v"]
    return line


def decode(data: dict[str, Any]) -> AnyEvent:
    """The event of one decoded line, migrated first when it is an older schema version.

    Args:
        data: the line's JSON object.

    Returns:
        The event, an instance of the class its `type` names.

    Raises:
        SchemaVersionError: the version is newer than this harnesskit or has no migration.
        CorruptLogError: a required field is missing or the type is unknown.
    """
    if data.get("v") != SCHEMA_VERSION:
        data = migrate_line(data)
    return Event.from_dict(data)


def iter_jsonl(path: str | os.PathLike[str]) -> Iterable[dict[str, Any]]:
    """Yield decoded lines of a JSONL file, skipping blank ones (helper for tools and scripts)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)
