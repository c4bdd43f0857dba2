"""The append-only event log (R-V1): storage, appending, reading, request deltas, frames.

One JSONL file per run, one event per line, flushed after every step so a killed run loses at
most the step in flight. The log is the trace: every request sent to the model (exact messages
and tool list), every response, tool call, tool result, brake and error is an event.

Event types share one namespace (DESIGN.md "Event vocabulary"), one class each (`_types`); the
line codec and the schema migrations are `_codec`; tombstone folding is `_tombstones`.
"""

from __future__ import annotations

import contextlib
import json
import operator
import os
import pathlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from harnesskit import _json, _repr
from harnesskit.errors import (
    CorruptLogError,
    EventLogError,
    SchemaVersionError,
    UsageError,
    checked_call,
    checked_path,
    json_problem,
    refuse_type,
)
from harnesskit.log._codec import (
    MIGRATIONS,
    _utc_iso,
    decode,
    encode,
    hash_json,
    iter_jsonl,
    line_parts,
    message_of,
    migrate_line,
    schema_version,
)
from harnesskit.log._fold import FOLDING_TYPES, folds
from harnesskit.log._frame import FRAME_COLUMNS as FRAME_COLUMNS  # the frame's columns, in order
from harnesskit.log._frame import build_frame
from harnesskit.log._tombstones import (
    REDACTABLE,
    artifact_id,
    content_hash,
    redact_copies,
    revoked_hashes,
    tombstoned,
)
from harnesskit.log._types import (
    _MAKERS,
    EVENT_CLASSES,
    EVENT_TYPES,
    FACT_TYPES,
    INTERPRETATION_TYPES,
    SCHEMA_VERSION,
    AnyEvent,
    Event,
    ModelRequestEvent,
    TaskContractEvent,
    TombstoneEvent,
    check_shape,
    event_class,
)
from harnesskit.log.redact import Redactor
from harnesskit.messages import Message, known_prefix

__all__ = [
    "EVENT_TYPES",
    "FACT_TYPES",
    "INTERPRETATION_TYPES",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Event",
    "EventLog",
    "content_hash",
    "hash_json",
    "iter_jsonl",
    "migrate_line",
    "revoked_hashes",
]

_DEFAULT_REDACTOR = Redactor()
_PATH_TAKES = "the path of a .jsonl log (str or Path)"
#: What to do about a line that is no event of ours, in a `CorruptLogError`.
_MEND = "restore the log from a copy, or mend or delete the line in a copy and read that"
_NOT_OURS = (
    "check that the path names a run's event log (<log_dir>/<run_id>.jsonl); if it does, the "
    f"line was added or edited by hand: {_MEND}"
)
_BOM_TEXT = "\ufeff"
_JSON_KINDS = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}


def _not_an_event(path: pathlib.Path, line: int, data: Any) -> CorruptLogError:
    """The error for a line that is JSON but no event: what it is, and what to do.

    An event line is an object with a `type` (`kind` in schema version 1).
    """
    if not isinstance(data, dict):
        kind = "null" if data is None else _JSON_KINDS.get(type(data), type(data).__name__)
        what = f"a JSON {kind}, not an event (an object with v, event_id, type, payload)"
    else:
        keys = ", ".join(repr(k)[:40] for k in list(data)[:6]) or "none"
        what = f"not an event line: a JSON object with no 'type' field (its keys: {keys})"
    return CorruptLogError(f"{path}:{line}: {what}; {_NOT_OURS}")


_PATH_OR_NONE = f"{_PATH_TAKES}, or None for a log kept in memory"
_PATH_FIX = "pass the path of a .jsonl log, e.g. 'runs/<run_id>.jsonl'"
DATA_CLASSES = ("public", "internal", "restricted", "secret")
_CLASS_SET = frozenset(DATA_CLASSES)


#: Envelope fields a line holds as text, and those it holds as text or null: resume, the
#: trajectory and `frame()` read them back (`read` refuses another type, `append` too).
_TEXT_FIELDS = ("branch_id", "source", "created_at", "status", "summary")
_OPTIONAL_TEXT_FIELDS = ("workspace_revision", "input_hash")
#: Event ids, and the parent ids naming them, fit the frame's 64-bit integer column.
_ID_LIMIT = 2**63


def _is_parent(parent: object) -> bool:
    """True when `parent` can be a read event's parent id: null, or an int from 1 to 2**63 - 1.

    A parent id need not be an earlier event (a missing or later parent is a gap the
    trajectory reports, R-V4), but it must be an id at all: `10**30` made `frame()` raise a raw
    `OverflowError`, `0` or `-1` name no event that can ever exist.
    """
    return parent is None or (parent.__class__ is int and 0 < parent < _ID_LIMIT)


def _shown(value: Any) -> str:
    """`value` as it would stand in a JSON line, cut to 40 characters."""
    return f"{json.dumps(value, default=str):.40}"


def _bad_envelope(event: Event) -> str:
    """What is wrong with a read event's envelope: a field of the wrong type or `data_class`."""
    eid = event.event_id
    if eid.__class__ is not int:
        kind = {str: "a string", bool: "a boolean", float: "a number", type(None): "null"}
        return (
            f"field 'event_id': event id {_shown(eid)} is "
            f"{kind.get(type(eid), 'a ' + type(eid).__name__)}, not an integer"
        )
    for name in ("parent_id", "supersedes"):
        value = getattr(event, name)
        if value is not None and value.__class__ is not int:
            return (
                f"event {eid}: field {name!r} is {_shown(value)}, not an integer (an earlier "
                "event's id) or null"
            )
        if not _is_parent(value):
            return (
                f"event {eid}: field {name!r} is {_shown(value)}, not an event id (an integer "
                "from 1 to 2**63 - 1) or null"
            )
    for name in _TEXT_FIELDS:
        value = getattr(event, name)
        if value.__class__ is not str:
            return f"event {eid}: field {name!r} is {_shown(value)}, not a string"
    for name in _OPTIONAL_TEXT_FIELDS:
        value = getattr(event, name)
        if value is not None and value.__class__ is not str:
            return f"event {eid}: field {name!r} is {_shown(value)}, not a string or null"
    return (
        f"event {eid}: field 'data_class' is {_shown(event.data_class)}, "
        f"not one of {', '.join(DATA_CLASSES)} (exactly, in lower case)"
    )


def _an_id(value: Any, last: int) -> bool:
    """True for the id of an event already in a log of `last` events (1..last, not a bool)."""
    return value.__class__ is int and 0 < value <= last


def _check_append_envelope(last: int, type: str, **fields: Any) -> None:
    """Refuse an `append` envelope argument of the wrong type, or an id not yet in the log.

    Reached only when the cheap class tests in `append` failed: text given as a `str`
    subclass passes here; anything `read` would refuse raises.

    Raises:
        UsageError: naming the argument, what it was and what it takes.
    """
    ids = f"1..{last}" if last else "none yet: pass None"
    for name in ("parent_id", "supersedes"):
        value = fields[name]
        if value is None or value is _AUTO or _an_id(value, last):
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            if 0 < value <= last:  # an int subclass (an IntEnum): the id itself
                continue
            what = f"{value}, not the id of an event in the log ({ids})"
        else:
            what = f"a {value.__class__.__name__} {value!r:.40}, not an event id ({ids}) or None"
        raise UsageError(
            f"append({type!r}, {name}=...) is {what}; an event can only follow or replace an "
            "event written before it (nothing written)"
        )
    for name in _TEXT_FIELDS + _OPTIONAL_TEXT_FIELDS:
        value = fields.get(name, "")
        if isinstance(value, str) or (value is None and name in _OPTIONAL_TEXT_FIELDS):
            continue
        takes = "a string" + (" or None" if name in _OPTIONAL_TEXT_FIELDS else "")
        raise UsageError(
            f"append({type!r}, {name}=...) takes {takes}, got a {value.__class__.__name__} "
            f"{value!r:.40} (nothing written)"
        )


_TEXT_OR_NONE = (str, type(None))


def _stored_messages(
    request: Event, messages: list[Any] | None, field: str, *, refs: bool = False
) -> list[Any]:
    """A request's stored `messages` (or `new_messages`), each checked as the log-read checks do.

    A message is an object whose `content` is text or null (as `Message.to_openai` writes
    it); in `new_messages` any other entry is an event id (`refs`), resolved later.

    Raises:
        CorruptLogError: an entry is something else, or its `content` is not text (`true`,
            `-1`): naming the request, the field and the entry.
    """
    for i, m in enumerate(messages or ()):
        if m.__class__ is dict:
            if m.get("content").__class__ in _TEXT_OR_NONE:
                continue
            what = f"content {json.dumps(m.get('content'), default=str):.40}, not text or null"
        elif refs:  # an event id, resolved (or refused) by `_referenced`
            continue
        else:
            what = f"{json.dumps(m, default=str):.40}, not a message object"
        raise CorruptLogError(
            f"model.request EV-{request.event_id}: {field}[{i}] holds {what}; the log was "
            "edited or damaged"
        )
    return list(messages or ())


class _Auto:
    """Sentinel: take the default parent (the branch's last event)."""


_AUTO = _Auto()


#: Payload fields written exactly, never redacted: the harness's runtime configuration that
#: resume compares with the harness going on (R-V6): the contract's tool versions, gate,
#: context policy and limits, and the frozen start of a fork, resume or restart. Tool names
#: such as `reset_password` or `get_token` look like credential names to the redactor; a
#: placeholder there would hide a real change and refuse an unchanged harness. These fields
#: hold names, versions, decisions and numbers a harness is configured with, not run data.
EXACT_FIELDS: dict[str, tuple[str, ...]] = {
    "task.contract": ("tools", "gate", "policy", "limits"),
    "branch.fork": ("frozen",),
    "run.resume": ("frozen",),
    "run.restart": ("frozen",),
}


def _renamed(data: dict[str, Any], event: Event) -> bool:
    """True when redaction changed a name of the line or of its payload's top level.

    Or one of the log's own values after `summary` (`supersedes`, `data_class`): an `extra`
    pattern may match them too, and the line must keep them to read back.
    """
    payload = data.get("payload")
    return (
        "summary" not in data
        or not isinstance(payload, dict)
        or payload.keys() != event.payload.keys()
        or data.get("data_class") != event.data_class
        or data.get("supersedes") != event.supersedes
    )


def _redact_by_field(redactor: Redactor, event: Event) -> dict[str, Any]:
    """The event's line dict with its summary and each payload value redacted alone.

    The names the log and the loop read (`type`, `tool_call_id`, ...) stay as they are, whatever
    an `extra` pattern matches; the values under them are redacted (keys nested in them too).
    """
    data = event.to_dict()
    payload = dict(data["payload"])
    for name, value in payload.items():
        if not isinstance(value, (str, dict, list)):  # numbers, booleans, null: kept
            continue
        text = json.dumps(value, ensure_ascii=False, default=str)
        redacted, counts = redactor.redact(text)
        if counts:
            payload[name] = json.loads(redacted)
    data["payload"] = payload
    data["summary"] = redactor.redact(event.summary)[0]
    return data


class EventLog:
    """An append-only event log, in memory and (optionally) as a JSONL file on disk.

    Appending writes the line to a buffered file; `flush()` (called by the loop after every
    step) hands it to the OS, so a killed process loses at most the step in flight. With
    `durable=True` each flush also calls `os.fsync` (survives power loss; slower).

    One writer per file: while a log has its file open to append it holds an exclusive lock,
    and a closed log that reopens its file checks that no one appended in between; a second
    writer (another `Run` on the same log, `h.resume(path)` twice) is a `UsageError`.
    """

    @checked_call("call it as hk.EventLog('runs/<run_id>.jsonl', run_id=...) (or None: memory)")
    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        run_id: str = "",
        clock: Callable[[], float] = time.time,
        durable: bool = False,
        redactor: Redactor | None = _DEFAULT_REDACTOR,
    ) -> None:
        """Open a log.

        Args:
            path: the JSONL file to append to (created with its folder); `None` keeps the log
                in memory only.
            run_id: the run's id, recorded by the loop in `task.contract`.
            clock: wall clock in seconds since the epoch (inject for deterministic logs).
            durable: fsync on every flush.
            redactor: secret scanner applied to every line before it exists (R-S1); `None`
                turns redaction off (only for data known to be clean).

        Raises:
            UsageError: `path` exists and is not empty (logs are never rewritten; use
                `EventLog.read` to load one; a file that is no log is never appended to),
                another writer has it open, `path` is a symbolic link (even a dangling one:
                a log is never written through a link), `path` is not a path (str or Path) or
                None, not a usable one (a NUL byte, a name too long: `errors.checked_path`),
                `path` is a folder or cannot be created and opened for writing (its
                folder is a file, read-only, not writable: refused here, not at the first
                append), or `redactor` is not a `Redactor` (or `None`).
        """
        refuse_type(path, (str, os.PathLike, type(None)), "EventLog(path)", _PATH_OR_NONE)
        if path is not None:
            checked_path(path, "EventLog(path)", fix=f"{_PATH_FIX}, or None for a log in memory")
        if redactor is not None and not isinstance(redactor, Redactor):
            raise UsageError(
                f"EventLog(redactor=...) takes a harnesskit.log.Redactor or None, got "
                f"{redactor!r:.60}"
            )
        self.path = pathlib.Path(path) if path is not None else None
        self.run_id = run_id
        self.clock = clock
        self.durable = durable
        self.redactor = redactor
        self.events: list[Event] = []
        self.incomplete_tail: str | None = None
        self._last_by_branch: dict[str, int] = {}
        self._last_request: dict[str, tuple[int, tuple[Any, ...], Any, int]] = {}
        self._file: Any = None
        self._listeners: list[Callable[[Event], None]] = []
        self._readonly = False
        self._needs_newline = False
        self.torn_lines: list[int] = []
        """1-based line numbers of lines cut off mid-write by a killed run, then resumed past."""
        self.source_versions: dict[int, int] = {}
        """`{schema_version: lines}` as read from disk, before migration (R-V9)."""
        self.tombstones = 0
        """How many tombstones have been applied (readers rebuild caches when it changes)."""
        self._frame_cache: tuple[list[Event], int, Event, int, Any] | None = None
        self._revoked: set[str] = set()
        self._exact: dict[int, Event] = {}
        self._read_size: int | None = None  # bytes `read` parsed (context snapshots key on them)
        self._folding: list[int] = []  # ids of the events that can change a status (`folds`)
        self._folding_seen = 0  # len(events) when `_folding` was last brought up to date
        self.write_error: EventLogError | None = None
        """Set once writing the file failed (disk full, ...); events are then kept in memory."""
        self._disk_size = 0  # bytes on disk when the file was last closed (`_open_append`)
        if self.path is not None:
            if self.path.is_symlink():  # even a dangling one: it would be created where it points
                raise UsageError(_link_message(self.path, "a new event log is never created"))
            if self.path.is_dir():
                raise UsageError(
                    f"EventLog(path): {self.path} is a folder, not a file; pass the path of a "
                    "new .jsonl file (e.g. <folder>/<run_id>.jsonl)"
                )
            if self.path.exists() and self.path.stat().st_size > 0:
                kind = _existing_kind(self.path)
                if kind == "other":
                    raise UsageError(
                        f"{self.path} exists and is not a harnesskit event log; nothing was "
                        "written to it: pick another path (another run_id), or move the file"
                    )
                if kind == "log":
                    raise UsageError(
                        f"event log {self.path} already exists; logs are append-only and never "
                        "reused: pick a new path, or EventLog.read(path) to load it"
                    )
                # only a line cut off by a killed writer (no event): the run never started, so
                # it starts again here, after that line, which `read` skips (never rewritten)
                self._needs_newline = not _ends_with_newline(self.path)
                self.torn_lines = [1]
                self._disk_size = self.path.stat().st_size
            try:  # refused now, when the run is created, not at its first append
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = _open_append(self.path, self._disk_size)
            except OSError as exc:
                raise UsageError(
                    f"cannot create the event log {self.path}: {exc.strerror or exc} (errno "
                    f"{exc.errno}); the folder {self.path.parent} must be a writable folder. "
                    "Pass another log_dir (or path), fix its permissions, or None to keep the "
                    "log in memory"
                ) from exc

    # -- writing ---------------------------------------------------------------------------

    def append(
        self,
        type: str,
        payload: dict[str, Any] | None = None,
        *,
        parent_id: int | None | _Auto = _AUTO,
        branch_id: str = "main",
        source: str = "system",
        summary: str = "",
        status: str = "active",
        supersedes: int | None = None,
        data_class: str = "internal",
        input_hash: str | None = None,
        workspace_revision: str | None = None,
    ) -> Event:
        """Append one event and return it.

        Args:
            type: one of `EVENT_TYPES`.
            payload: JSON-ready data.
            parent_id: the causal parent; default: the last event of `branch_id`.
            branch_id: the branch it belongs to.
            source: who produced it.
            summary: one line for tables.
            status: as written (`active` or `audit-only`).
            supersedes: an event it replaces.
            data_class: `public`, `internal`, `restricted` or `secret`.
            input_hash: hash of the producing input.
            workspace_revision: the workspace revision, if tracked.

        Raises:
            UsageError: unknown type or data class; `parent_id` or `supersedes` is not the id
                of an event already in the log (1..last id, not a bool) or None; `branch_id`,
                `source`, `summary` or `status` is not a string, `input_hash` or
                `workspace_revision` not a string or None; the log is closed, the payload is not a
                dict, or it cannot be written as JSON (it holds itself, nests past the recursion
                limit, holds NaN or an infinity, or a value with no JSON form such as
                `object()` or a set; dates, paths, enums, UUIDs and decimals are written as
                their `str()`). Nothing is written then.
        """
        make = _MAKERS.get(type) if isinstance(type, str) else None
        if make is None:
            raise UsageError(f"unknown event type {type!r:.60}; use one of {sorted(EVENT_TYPES)}")
        if data_class not in DATA_CLASSES:
            raise UsageError(f"unknown data_class {data_class!r:.60}; use one of {DATA_CLASSES}")
        last = len(self.events)
        # one class test per envelope argument: `read` refuses a line holding anything else
        if (
            branch_id.__class__ is not str
            or source.__class__ is not str
            or summary.__class__ is not str
            or status.__class__ is not str
            or (parent_id is not None and parent_id is not _AUTO and not _an_id(parent_id, last))
            or (supersedes is not None and not _an_id(supersedes, last))
            or (input_hash is not None and input_hash.__class__ is not str)
            or (workspace_revision is not None and workspace_revision.__class__ is not str)
        ):
            _check_append_envelope(
                last, type, parent_id=parent_id, supersedes=supersedes, branch_id=branch_id,
                source=source, summary=summary, status=status, input_hash=input_hash,
                workspace_revision=workspace_revision,
            )  # fmt: skip
        if parent_id is _AUTO:
            parent_id = self._last_by_branch.get(branch_id)
        if payload is None:
            payload = {}
        elif payload.__class__ is not dict and not isinstance(payload, dict):
            raise UsageError(
                f"the {type} event's payload is a {payload.__class__.__name__} "
                f"({payload!r:.60}), not a dict; pass a dict of JSON-ready data (nothing written)"
            )
        event_id = last + 1
        created_at = _utc_iso(self.clock())
        event = make(
            payload,
            event_id,
            parent_id,
            branch_id,
            source,
            created_at,
            workspace_revision,
            input_hash,
            status,
            summary,
            supersedes,
            data_class,
        )
        # the line straight from the values (no line dict, no reading them back off the event)
        try:
            parts = line_parts(
                payload, event_id, parent_id, branch_id, type, source, created_at,
                workspace_revision, input_hash, status, summary, supersedes, data_class,
                strict=True,
            )  # fmt: skip
        except (ValueError, RecursionError) as exc:  # itself, too deep, NaN, an object()
            raise UsageError(
                f"the {type} event's payload cannot be written as JSON ({exc}); pass JSON-ready "
                "data (dicts, lists, strings, finite numbers) without cycles (nothing written)"
            ) from None
        self._write(event, parts)
        return event

    def _write(self, event: Event, parts: tuple[str, str] | None) -> Event:
        """Write `event` (its line is `parts`, from `line_parts`; `None`: `encode` it)."""
        if self._readonly:
            raise UsageError(
                f"event log {self.path} was loaded with EventLog.read and is read-only"
            )
        if parts is not None:
            line = parts[0] + parts[1]
            tail = parts[1]
        else:
            line = encode(event)
            tail = line[line.find('"summary":') :]
        if not line.isascii():
            cleaned = _json.clean_text(line, escape=False)
            if cleaned is not line:  # a lone surrogate got this far
                line = cleaned
                event = Event.from_dict(json.loads(line))
                tail = line[line.find('"summary":') :]
        # R-S1: every event is scanned, model.request included (its line holds only what is new
        # since the previous request: new messages, changed tools, settings), once. The cheap
        # pre-check reads the line from `summary` on (summary, payload): the fields before it
        # are the log's own (ids, type, source, timestamp, hashes, status) and the branch name.
        redactor = self.redactor
        if redactor is not None and (
            redactor.needs(tail)
            if redactor._quoted_clean is None
            else redactor.needs_except(tail, _content(event))
        ):
            exact = event
            # the tail alone, as a JSON object: its strings may change, never the log's own
            # fields before it (ids, type, timestamps) nor the line's structure
            head = line[: len(line) - len(tail)]
            redacted, counts = redactor.redact("{" + tail)
            if counts:
                line = head + redacted[1:]
            personal = redactor.personal(line)
            if counts or personal:  # the clear text never reaches the log's file or what it shows
                data = json.loads(line)
                if counts and _renamed(data, exact):  # an `extra` pattern hit the log's names
                    data = _redact_by_field(redactor, exact)
                for name in EXACT_FIELDS.get(exact.type, ()) if counts else ():
                    if name in exact.payload:  # configuration, compared on resume: as given
                        data["payload"][name] = exact.payload[name]
                if personal:  # R-S1/R-S2: personal data is kept exact and marked, not rewritten
                    data["payload"]["personal_data"] = list(personal)
                event = Event.from_dict(data)  # same class, redacted payload
                line = encode(event)
                if counts:
                    self._exact[event.event_id] = exact  # for `$bind` and tools only
        failed = None
        file = self._file
        if file is not None and self.write_error is None:
            try:
                if file.closed:  # closed between turns (run finished): appending reopens
                    file = self._file = _open_append(self.path, self._disk_size)  # type: ignore[arg-type]
                if self._needs_newline:  # end a line cut off by a killed writer; `read` skips it
                    file.write("\n")
                    self._needs_newline = False
                file.write(line)
                file.write("\n")
            except OSError as exc:
                failed = self._failed(exc)
        # `_add(event)`, with `folds(event)` from the envelope (an appended event is of the
        # class its type names, so `isinstance(event, BranchMergeEvent)` is its type's test)
        tag = event.type
        if self._revoked and tag in REDACTABLE:
            event = redact_copies(event, self._revoked)
        events = self.events
        events.append(event)
        event_id = event.event_id
        self._last_by_branch[event.branch_id] = event_id
        if event.status != "active" or event.supersedes is not None or tag in FOLDING_TYPES:
            self._folding.append(event_id)  # the status fold's index (`_add`)
        self._folding_seen = len(events)
        if tag == "tombstone":
            self._apply_tombstone(event)  # type: ignore[arg-type]
        for listener in self._listeners:
            listener(event)
        if failed is not None:
            raise failed
        return event

    def _failed(self, exc: OSError) -> EventLogError:
        """Stop writing after an OS error: the events stay in memory; the file keeps its bytes."""
        what = exc.strerror or str(exc)
        self.write_error = EventLogError(
            f"could not write the event log {self.path}: {what} (errno {exc.errno}); the run "
            "stopped and its events are kept in memory (run.log.events); the file ends at the "
            "last line written (a cut-off last line is skipped by EventLog.read and resume)"
        )
        with contextlib.suppress(OSError, ValueError):
            self._file.close()  # the buffered rest is lost with the disk; the handle is closed
        return self.write_error

    def _add(self, event: Event) -> None:
        """Put a written or read event in memory, folding tombstones (R-S3)."""
        if self._revoked and event.type in REDACTABLE:
            event = redact_copies(event, self._revoked)
        self.events.append(event)
        self._last_by_branch[event.branch_id] = event.event_id
        if folds(event):  # the status fold's index: `Trajectory` feeds it only these
            self._folding.append(event.event_id)
        self._folding_seen = len(self.events)
        if isinstance(event, TombstoneEvent):
            self._apply_tombstone(event)

    def _apply_tombstone(self, tomb: TombstoneEvent) -> None:
        """Replace the revoked content in memory: the target, its copies in requests, its calls.

        The bytes on disk are never rewritten; every reader of this log (events, frames,
        `request_messages`, context building, search) sees the redacted copies only.
        """
        target = tomb.target
        marker = f"[tombstoned by EV-{tomb.event_id}]"
        if isinstance(target, int) and 1 <= target < tomb.event_id:
            original = self.events[target - 1]
            self._revoked |= revoked_hashes(original)
            self.events[target - 1] = tombstoned(original, marker)
        gone = set(tomb.artifacts or ())
        for i, e in enumerate(self.events[: tomb.event_id - 1]):
            if e.type == "artifact.created" and artifact_id(e.payload) in gone:
                self.events[i] = tombstoned(e, marker)
            elif e.type in REDACTABLE and self._revoked:
                self.events[i] = redact_copies(e, self._revoked)
        self.tombstones += 1

    def append_request(
        self,
        messages: tuple[Any, ...],
        tools: tuple[dict[str, Any], ...],
        *,
        branch_id: str = "main",
        data_class: str | None = None,
        **fields: Any,
    ) -> Event:
        """Append a `model.request` holding exactly `messages` (`Message`s) and `tools`.

        When the previous request of the branch is a prefix of `messages` (the same objects),
        only the new messages are written (`prefix_of`, `prefix_len`, `new_messages`), each one
        already in the log since that request (the model's reply, a tool's result, unchanged)
        as the id of its event (schema v3), not repeated; the tool
        list is written only when it changed (`tools_sha`, else `tools_from`). This keeps the
        cost per step flat as history grows; `request_messages()` rebuilds the full list.

        Args:
            messages: the prompt as sent.
            tools: the tool specs as sent.
            branch_id: the branch.
            data_class: the request's data class (the highest among the events it carries,
                R-S2); `None` = the default, `internal`.
            **fields: more payload (step, settings, token_estimate, model) and `summary`.
        """
        summary = fields.pop("summary", "")
        prev = self._last_request.get(branch_id)
        payload: dict[str, Any] = fields  # this call's own keyword dict: no copy
        if prev is not None and (
            known_prefix(prev[1], messages)  # O(1) for the builder's growing prompts
            or (len(prev[1]) <= len(messages) and all(map(operator.is_, prev[1], messages)))
        ):
            payload["prefix_of"] = prev[0]
            payload["prefix_len"] = len(prev[1])
            payload["new_messages"] = self._as_refs(messages[len(prev[1]) :], prev[0])
        else:
            payload["messages"] = [m.to_openai() for m in messages]
        payload["n_messages"] = len(messages)
        if prev is not None and prev[2] is tools:
            payload["tools_from"] = prev[3]
            tools_event = prev[3]
        else:
            payload["tools_sha"] = hash_json(tools)
            payload["tools"] = list(tools)
            tools_event = None
        event = self.append(
            "model.request",
            payload,
            branch_id=branch_id,
            source="system",
            summary=summary,
            data_class=data_class or "internal",
        )
        self._last_request[branch_id] = (
            event.event_id,
            messages,
            tools,
            tools_event or event.event_id,
        )
        return event

    def exact(self, event: Event) -> Event:
        """The event as it was before redaction, for the runtime only (`$bind`, tools; R-S1).

        What the log writes and shows is redacted; the clear values a redacted event held are
        kept in memory (never on disk, so not after a resume) for the runtime to act on.

        Args:
            event: an event of this log.

        Returns:
            Its exact version, or `event` itself when nothing in it was redacted.
        """
        exact = self._exact.get(event.event_id)
        return exact if exact is not None and exact.type == event.type else event

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        """Call `listener(event)` after every append (progress bars, live widgets)."""
        self._listeners.append(listener)

    def flush(self) -> None:
        """Hand buffered lines to the OS (and fsync when `durable`).

        Raises:
            EventLogError: the write failed (disk full, I/O error); raised once, after which the
                log keeps events in memory only (`write_error`).
        """
        if self._file is not None and not self._file.closed and self.write_error is None:
            try:
                self._file.flush()
                if self.durable:
                    os.fsync(self._file.fileno())
            except OSError as exc:
                raise self._failed(exc) from exc

    def close(self) -> None:
        """Flush and close the file; the in-memory events stay readable.

        A later `append` reopens the file in append mode (a finished run that gets a new user
        turn goes on in the same log), unless another writer appended to it in between.
        """
        if self._file is not None and not self._file.closed:
            self.flush()
            with contextlib.suppress(OSError, ValueError):
                self._disk_size = os.fstat(self._file.fileno()).st_size
            self._file.close()  # releases the writer's lock

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------

    @classmethod
    @checked_call("call it as hk.EventLog.read('runs/<run_id>.jsonl')")
    def read(cls, path: str | os.PathLike[str]) -> EventLog:
        """Load a log from disk (read-only: appending raises).

        A last line torn by a killed run or a power loss (`torn_line`: the start of an event
        line, or only NUL bytes) is kept aside in `incomplete_tail` rather than failing. A torn
        line that a resumed run wrote past (the next event reuses its id) is listed in
        `torn_lines`; any other bad line, the last one included, is corruption. Older schema
        versions are migrated (`source_versions` counts the lines per version read). Tombstones
        are folded: revoked content is never returned (R-S3).

        Raises:
            UsageError: `path` is not a path (str or PathLike) or not a usable one (a NUL
                byte, a name too long, a folder, a file in the way: `errors.checked_path`),
                the file does not exist, or the arguments do not fit (no path, a second one).
            CorruptLogError: a line starts with a byte-order mark, is JSON but no event (not
                an object, or an object with no `type`), is neither an event nor torn
                (`torn_line`; the message names the line and what to do), a line other than
                the last is not valid JSON, lacks fields, or holds an envelope field of another
                type (`created_at`, `status`, `source`, `summary`, `branch_id` not text;
                `parent_id`, `supersedes` not an id or null; ...), or a payload field the run
                reads back (`check_shape`); the message names the file, line and field.
            SchemaVersionError: a line has an unknown schema version.
        """
        p = checked_path(path, "EventLog.read(path)", kind="file", fix=_PATH_FIX, takes=_PATH_TAKES)
        if not p.is_file():
            raise UsageError(f"no event log at {p}")
        log = cls(None)
        log.path = p
        data = p.read_bytes()
        log._read_size = len(data)
        lines = data.split(b"\n")
        del data
        bad: tuple[int, str, str] | None = None  # (line number, text, error) of an unparsed line
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:  # a line cut inside a multi-byte character is torn like one cut between bytes
                raw = line.decode("utf-8")
                data = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                if isinstance(exc, UnicodeDecodeError):
                    raw, msg = line.decode("utf-8", errors="replace"), f"not UTF-8: {exc.reason}"
                else:
                    msg = f"not valid JSON ({exc.msg})"
                if raw.startswith(_BOM_TEXT):  # an editor's byte-order mark: never torn
                    raise CorruptLogError(
                        f"{p}:{i + 1}: the line starts with a UTF-8 byte-order mark (U+FEFF), "
                        "which harnesskit never writes (an editor or a tool such as PowerShell's "
                        "Out-File added it); save the file as UTF-8 without a BOM (or delete "
                        "the first 3 bytes of the line) and read it again"
                    ) from exc
                if bad is not None:  # two cut lines in a row: both must be torn (`torn_line`)
                    if not torn_line(bad[1]):
                        raise CorruptLogError(_damaged_line(p, *bad)) from exc
                    log.torn_lines.append(bad[0])  # killed again while writing the same event
                bad = (i + 1, raw, msg)
                continue
            except (RecursionError, ValueError) as exc:  # nested too deep, an int too long
                raise CorruptLogError(
                    f"{p}:{i + 1}: a JSON line no event can be: {json_problem(exc)}; the log is "
                    "corrupt"
                ) from exc
            if not isinstance(data, dict) or ("type" not in data and "kind" not in data):
                if not isinstance(data, dict) and not any(rest.strip() for rest in lines[i + 1 :]):
                    kind = "null" if data is None else _JSON_KINDS.get(type(data), "value")
                    raise CorruptLogError(  # the last line: what to do, as for any damaged one
                        _damaged_line(p, i + 1, raw, f"a JSON {kind}, not an event", last=True)
                    )
                raise _not_an_event(p, i + 1, data)
            try:
                version = schema_version(data)  # an int before it is counted or compared
                log.source_versions[version] = log.source_versions.get(version, 0) + 1
                if version == SCHEMA_VERSION:  # cheap type checks: a hand-edited payload fails
                    check_shape(data)  # here, naming its line, not later in resume or replay
                event = decode(data)
            except CorruptLogError as exc:  # a payload of the wrong shape: name the line too
                raise CorruptLogError(f"{p}:{i + 1}: {exc}; the log is corrupt ({_MEND})") from exc
            except SchemaVersionError as exc:  # name the line too
                raise SchemaVersionError(f"{p}:{i + 1}: {exc}") from exc
            except KeyError as exc:  # a field every event line of its version has
                raise CorruptLogError(
                    f"{p}:{i + 1}: not an event line: it lacks the field {exc.args[0]!r:.40} "
                    f"(schema version {data.get('v', 1)!r:.10}); {_NOT_OURS}"
                ) from exc
            except (TypeError, AttributeError) as exc:  # a field of another type
                raise CorruptLogError(
                    f"{p}:{i + 1}: not an event line: a field has the wrong type "
                    f"({str(exc)[:200]}); {_NOT_OURS}"
                ) from exc
            # one class test per envelope field (a hand edit fails here, not in resume/frame)
            parent = event.parent_id
            supersedes = event.supersedes
            revision = event.workspace_revision
            input_hash = event.input_hash
            data_class = event.data_class
            if (
                event.event_id.__class__ is not int
                or data_class.__class__ is not str
                or data_class not in _CLASS_SET
                or not (parent is None or (parent.__class__ is int and 0 < parent < _ID_LIMIT))
                or not (
                    supersedes is None
                    or (supersedes.__class__ is int and 0 < supersedes < _ID_LIMIT)
                )
                or event.branch_id.__class__ is not str
                or event.source.__class__ is not str
                or event.created_at.__class__ is not str
                or event.status.__class__ is not str
                or event.summary.__class__ is not str
                or (revision is not None and revision.__class__ is not str)
                or (input_hash is not None and input_hash.__class__ is not str)
            ):
                raise CorruptLogError(f"{p}:{i + 1}: {_bad_envelope(event)}; the log is corrupt")
            if bad is not None:  # a torn line: the start of an event whose id the next one took
                if not torn_line(bad[1]):
                    raise CorruptLogError(_damaged_line(p, *bad))
                if event.event_id != len(log.events) + 1:
                    raise CorruptLogError(
                        f"{p}:{bad[0]}: {bad[2]}, and the next event does not take its id; "
                        "the log is corrupt"
                    )
                log.torn_lines.append(bad[0])
                bad = None
            elif event.event_id != len(log.events) + 1:  # ids are positions: a gap is a loss
                raise CorruptLogError(
                    f"{p}:{i + 1}: event id {event.event_id} where {len(log.events) + 1} was "
                    "expected; a line is missing or out of order, so the log is corrupt"
                )
            log._add(event)
            if not log.run_id and isinstance(event, TaskContractEvent):
                log.run_id = event.run_id or ""
        if bad is not None:  # the line in flight when the run died, or damage (`torn_line`)
            if not torn_line(bad[1]):
                raise CorruptLogError(_damaged_line(p, *bad, last=True))
            log.incomplete_tail = bad[1]
        log._readonly = True
        return log

    @classmethod
    @checked_call("call it as hk.EventLog.open_existing('runs/<run_id>.jsonl', durable=...)")
    def open_existing(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        durable: bool = False,
        redactor: Redactor | None = _DEFAULT_REDACTOR,
    ) -> EventLog:
        """Read a log from disk, then append to it (resume; never rewrites a byte).

        A torn last line (`torn_line`: the start of an event line cut off mid-write, or only
        NUL bytes) is left in place and ended with a newline before the next event, which
        reuses its id; `read` later lists it in `torn_lines`. Any other last line is refused
        before anything is written.

        Args:
            path: an existing JSONL log.
            clock: wall clock for the new events' timestamps.
            durable: fsync on every flush.
            redactor: secret scanner for the new lines (R-S1), as for `EventLog(...)`.

        Raises:
            UsageError: the file does not exist or `path` is not a usable file path
                (`errors.checked_path`), another writer has it open, or the arguments do not
                fit (`path` missing or not a str or Path, an unknown keyword).
            CorruptLogError: a line is corrupt, the last one included unless it is torn
                (`torn_line`); the message names the line and what to do. Nothing is written.
            SchemaVersionError: a line has an unknown schema version.
        """
        checked_path(
            path, "EventLog.open_existing(path)", kind="file", fix=_PATH_FIX, takes=_PATH_TAKES
        )
        if not pathlib.Path(path).is_file():
            cls.read(path)  # raises the UsageError naming what is wrong
        # the writer's lock before reading: no one appends between the read and our first line
        file = _open_append(pathlib.Path(path), None)
        try:
            log = cls.read(path)
        except BaseException:
            file.close()
            raise
        log._readonly = False
        log.clock = clock
        log.durable = durable
        log.redactor = redactor
        log._needs_newline = log.path is not None and not _ends_with_newline(log.path)
        log._disk_size = log._read_size or 0
        log._file = file
        return log

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, event_id: int) -> Event:
        """The event with this 1-based id; negative numbers count from the end (`log[-1]`).

        Raises:
            UsageError: no such event.
        """
        if -len(self.events) <= event_id < 0:
            return self.events[event_id]
        if not 1 <= event_id <= len(self.events):
            raise UsageError(f"no event {event_id}: the log has events 1..{len(self.events)}")
        return self.events[event_id - 1]

    def of_type(self, *types: str | type[Event], branch_id: str | None = None) -> list[AnyEvent]:
        """Events of the given types (all when none), optionally on one branch, in log order.

        Args:
            *types: event classes (`ToolResultEvent`) or type tags (`"tool.result"`); `Event`
                itself means every type.
            branch_id: only events on this branch; `None` = every branch.

        Returns:
            The matching events, in append order.

        Raises:
            UsageError: an unknown type tag (the message lists the valid ones), something
                that is neither a tag nor an event class, or a `branch_id` no event is on
                (`check_branch`, looked up only when nothing matched).
        """
        tags = _tags(types)
        found = [
            e
            for e in self.events
            if (tags is None or e.type in tags) and (branch_id is None or e.branch_id == branch_id)
        ]
        if not found and branch_id is not None:  # checked only when nothing matched: free
            self.check_branch(branch_id, where="of_type(branch_id=...)")
        return found  # type: ignore[return-value]

    def last(self, type: str | type[Event], *, branch_id: str | None = None) -> AnyEvent | None:
        """The most recent event of `type` (a class or a tag), optionally on one branch.

        Args:
            type: an event class or type tag; `Event` means any type.
            branch_id: only events on this branch; `None` = every branch.

        Returns:
            The event, or `None` when there is none.

        Raises:
            UsageError: an unknown type tag (the message lists the valid ones), or a
                `branch_id` no event is on (`check_branch`, looked up only when none matched).
        """
        tags = _tags((type,))
        for e in reversed(self.events):
            if (tags is None or e.type in tags) and (branch_id is None or e.branch_id == branch_id):
                return e  # type: ignore[return-value]
        if branch_id is not None:
            self.check_branch(branch_id, where="last(branch_id=...)")
        return None

    @property
    def branch_ids(self) -> list[str]:
        """The branches events are on, sorted (`main` too while the log is empty)."""
        known = set(self._last_by_branch)
        if len(self._last_by_branch) < len(self.events):  # events put in without `_add`
            known.update(e.branch_id for e in self.events)
        return sorted(known) if known else ["main"]

    def check_branch(self, branch_id: Any, *, where: str) -> None:
        """Refuse a branch this log does not have: the one check every branch argument uses.

        A branch exists once an event is on it (a fork's `branch.fork` is its first); `main`
        is taken while the log is still empty. O(1) for a branch the log appended or read.

        Args:
            branch_id: the branch name given.
            where: the call and argument, for the message (e.g. `"visible_events(branch_id)"`).

        Raises:
            UsageError: `branch_id` is not a string, or no event is on that branch; the message
                says "did you mean" the closest known branch and lists the known ones.
        """
        if branch_id.__class__ is str and (
            branch_id in self._last_by_branch or (branch_id == "main" and not self.events)
        ):
            return
        if isinstance(branch_id, str) and any(e.branch_id == branch_id for e in self.events):
            return  # a str subclass, or events put in without `_add` (a replay's view)
        known = self.branch_ids
        if not isinstance(branch_id, str):
            raise UsageError(
                f"{where} takes a branch name (str), got {type(branch_id).__name__} "
                f"{branch_id!r:.60}; branches: {known}"
            )
        import difflib

        near = difflib.get_close_matches(branch_id, known, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise UsageError(
            f"{where}: no branch {branch_id!r} in this log; {hint}branches: {known} "
            "(a branch exists once it has an event: fork one with run.fork(event_id, name))"
        )

    def _request(self, event_id: int) -> ModelRequestEvent:
        event = self[event_id]
        if not isinstance(event, ModelRequestEvent):
            raise UsageError(f"event {event_id} is a {event.type}, not a model.request")
        return event

    def _as_refs(self, new: tuple[Any, ...], since: int) -> list[dict[str, Any] | int]:
        """`new` (`Message`s) as sent, each one already in the log since event `since` as its id.

        A message is a reference only when its chat-completions dict (`to_openai()`) equals
        what `message_of` rebuilds from the event (the assistant message as its
        `model.response` logged it, a tool message from its `tool.result`), so
        `request_messages` gives back exactly what was sent; anything else (a cut or redacted
        result, a stub, a rewritten call) is written in full. A plain tool `Message` is
        compared field by field (`_tool_ref`), without building either dict.
        """
        events = self.events
        out: list[dict[str, Any] | int] = []
        for m in new:
            if m.__class__ is Message and m.role == "tool":
                ref = self._tool_ref(m, since)
                out.append(m.to_openai() if ref is None else ref)
                continue
            d = m.to_openai()
            ref = None
            role = d.get("role")
            if role == "tool" or role == "assistant":
                want = "tool.result" if role == "tool" else "model.response"
                for i in range(len(events) - 1, since - 1, -1):
                    e = events[i]
                    if e.type == want and message_of(e) == d:
                        ref = e.event_id
                        break
            out.append(d if ref is None else ref)
        return out

    def _tool_ref(self, m: Message, since: int) -> int | None:
        """The id of the latest `tool.result` after event `since` that tool message `m` repeats.

        Exactly the event `_as_refs` finds by `message_of(e) == m.to_openai()`: that dict is
        `{"role": "tool", "content", "tool_call_id"}` when `m` has no calls, no name and a call
        id, and its values compare as a dict's do (identity, then `==`).
        """
        if m.tool_calls or m.name is not None or m.tool_call_id is None:
            return None  # its dict has other keys than the three `message_of` rebuilds
        content, call_id = m.content, m.tool_call_id
        events = self.events
        for i in range(len(events) - 1, since - 1, -1):
            e = events[i]
            if e.type == "tool.result":
                p = e.payload
                c, t = p.get("content"), p.get("tool_call_id")
                if (c is content or c == content) and (t is call_id or t == call_id):
                    return e.event_id
        return None

    def request_messages(self, event_id: int) -> list[dict[str, Any]]:
        """The exact chat-completions messages sent by the `model.request` event `event_id`.

        Requests are stored as a delta when they extend the previous request (see AGENTS.md);
        this rebuilds the full list.

        Args:
            event_id: a `model.request` event's id.

        Returns:
            The messages as sent (chat-completions dicts), in order.

        Raises:
            UsageError: the event is not a `model.request`.
            CorruptLogError: a link of the stored delta (`prefix_of`, `prefix_len`, an event id
                in `new_messages`) does not hold; the file was edited or damaged.
        """
        chain: list[ModelRequestEvent] = []
        event = self._request(event_id)
        while True:
            chain.append(event)
            if event.prefix_of is None:
                break
            event = self._linked(event, "prefix_of", event.prefix_of)
        first = chain[-1]
        messages: list[dict[str, Any]] = _stored_messages(first, first.messages, "messages")
        for ev in reversed(chain[:-1]):
            n = ev.prefix_len
            if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= len(messages):
                raise CorruptLogError(
                    f"model.request EV-{ev.event_id} keeps prefix_len={n!r} messages of a "
                    f"request that had {len(messages)}; the log was edited or damaged"
                )
            messages = messages[:n] + [
                m if isinstance(m, dict) else self._referenced(m, ev.event_id)
                for m in _stored_messages(ev, ev.new_messages, "new_messages", refs=True)
            ]
        return messages

    def _referenced(self, ref: Any, request_id: int) -> dict[str, Any]:
        """The message an event id in a request's `new_messages` stands for."""
        message = None
        if isinstance(ref, int) and 1 <= ref < request_id:
            message = message_of(self.events[ref - 1])
        if message is None:
            raise CorruptLogError(
                f"model.request EV-{request_id} refers to {ref!r}, which holds no message"
            )
        return message

    def request_tools(self, event_id: int) -> list[dict[str, Any]]:
        """The exact tool list sent by the `model.request` event `event_id`.

        Args:
            event_id: a `model.request` event's id.

        Returns:
            The tool specs as sent (JSON-ready dicts), in order; `[]` when none were.

        Raises:
            UsageError: the event is not a `model.request`.
            CorruptLogError: `tools_from` does not name an earlier `model.request`.
        """
        event = self._request(event_id)
        while event.tools is None:
            if event.tools_from is None:
                return []
            event = self._linked(event, "tools_from", event.tools_from)
        return list(event.tools)

    def _linked(self, event: ModelRequestEvent, field: str, ref: Any) -> ModelRequestEvent:
        """The earlier `model.request` a request's `prefix_of` / `tools_from` names.

        Raises:
            CorruptLogError: the link does not name an earlier `model.request` of this log
                (a loop, a later event, another type, a missing id): the file was damaged.
        """
        target = None
        if isinstance(ref, int) and not isinstance(ref, bool) and 1 <= ref < event.event_id:
            found = self.events[ref - 1]
            target = found if isinstance(found, ModelRequestEvent) else None
        if target is None:
            raise CorruptLogError(
                f"model.request EV-{event.event_id} has {field}={ref!r}, which is not an earlier "
                "model.request of this log; the log was edited or damaged"
            )
        return target

    def request_text(self, event_id: int) -> str:
        """The JSON text of the messages and tools sent by a request (for byte searches).

        Args:
            event_id: a `model.request` event's id.

        Returns:
            `{"messages": [...], "tools": [...]}` as JSON text.

        Raises:
            UsageError: the event is not a `model.request`.
        """
        body = {"messages": self.request_messages(event_id), "tools": self.request_tools(event_id)}
        return json.dumps(body, ensure_ascii=False)

    def frame(self) -> Any:
        """A pandas DataFrame, one row per event (a new frame on every call: yours to change).

        Columns: event_id, parent_id, branch_id, type, source, created_at, step, status,
        summary, data_class, tool, tool_call_id, ok, error_type, prompt_tokens,
        completion_tokens, payload (the dict).

        The frame's cells are yours; the `payload` dicts in them are the events' own (not
        copied, to keep a frame of 100k events cheap): read them, never change them, as with
        `Event.payload`. The log is append-only: events replaced in `log.events` by hand are
        not seen by the kept frame (`EventLog.read` the file again for a fresh one).

        The log keeps the last frame it built: a later call copies it, and after more events
        builds rows for the new events only and appends them (when their column types agree;
        otherwise, and after a tombstone, it builds the whole frame again).

        `parent_id`, `step`, `prompt_tokens` and `completion_tokens` are pandas' nullable
        `Int64`, exact (never through float64: counts above 2**53 keep every unit), `<NA>`
        where an event has none; `event_id` is `int64`.

        Raises:
            UsageError: an event appended in memory holds a `step` or token count that is not
                a whole number from -2**63 to 2**63 - 1 (a str, a fraction), or a `usage` that
                is not an object; the message names the event and the field.
        """
        import pandas as pd

        events = self.events
        n = len(events)
        cache = self._frame_cache
        if (
            cache is not None
            and cache[0] is events
            and 0 < cache[1] <= n
            and events[cache[1] - 1] is cache[2]
            and cache[3] == self.tombstones
        ):
            df = cache[4]
            if cache[1] < n:
                tail = build_frame(pd, events[cache[1] : n])
                if not tail.dtypes.equals(df.dtypes):  # a type appears: infer over every row
                    df = build_frame(pd, events[:n])
                else:
                    df = pd.concat([df, tail], ignore_index=True)
        else:  # the first `n` events, even if another thread appends meanwhile
            df = build_frame(pd, events[:n])
        if n:
            self._frame_cache = (events, n, events[n - 1], self.tombstones, df)
        # under copy-on-write (always from pandas 3) a shallow copy is as much yours as a deep
        # one: writing to it copies the columns written, never the kept frame
        return df.copy(deep=not _copy_on_write(pd))

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "memory"
        return f"<EventLog {len(self.events)} events at {where}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def _copy_on_write(pd: Any) -> bool:
    """Whether pandas copies on write (always from 3.0; an option, off by default, in 2.x)."""
    if int(pd.__version__.split(".", 1)[0]) >= 3:
        return True
    return pd.get_option("mode.copy_on_write") is True


def _tags(types: tuple[str | type[Event], ...]) -> frozenset[str] | None:
    """The type tags `types` name (`None` = every type), checking each one."""
    if len(types) == 1 and types[0].__class__ is str:  # one known tag (`last("model.response")`)
        one = _ONE_TAG.get(types[0])
        if one is not None:
            return one
    if not types:
        return None
    tags = set()
    for t in types:
        cls = event_class(t)
        if cls is Event:
            return None
        tags.add(cls.type)
    return frozenset(tags)


_ONE_TAG = {t: frozenset((c.type,)) for t, c in EVENT_CLASSES.items() if c is not Event}


def _content(event: Event) -> Any:
    """The payload's `content` (a tool's result text, already scanned by the transport), or None."""
    payload = event.payload
    return payload.get("content") if isinstance(payload, dict) else None


def _open_append(path: pathlib.Path, expected_size: int | None) -> Any:
    """Open `path` to append as its only writer, checking no one appended since `expected_size`.

    One writer per log: two `EventLog`s appending to one file would both number their next
    event `len(events) + 1` and the file would be corrupt for good. The open file holds an
    exclusive advisory lock (`fcntl.flock`, non-blocking; released when it is closed; skipped
    where there is no `fcntl` or the file system refuses locks), and a file whose size is not
    the size this log last saw was written by someone else: refused (`None`: not checked).
    Checked at open and reopen only; appending a line costs the same. A lock held by a `Run`
    no longer reachable (`del run`, in a reference cycle) is freed by one `gc.collect()`.

    Raises:
        UsageError: another writer has the file open, or wrote to it since `expected_size`;
            the file is left as it was.
    """
    # never through a symbolic link at the log's own path (planted, it would send the log
    # elsewhere): O_NOFOLLOW refuses it even if it appeared after the caller looked
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if path.is_symlink():
            raise UsageError(_link_message(path, "an event log is never written")) from exc
        raise
    fh = open(fd, "a", encoding="utf-8")  # noqa: SIM115
    try:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: the size check below still holds
            fcntl = None  # type: ignore[assignment]
        if fcntl is not None:
            try:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:  # maybe a log no one can reach: collected, it closes
                    import gc

                    gc.collect()
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise UsageError(
                    f"event log {path} is already open for writing by another Run (in this "
                    "process or another); a second writer would reuse its event ids and corrupt "
                    "it. Go on with that Run, or let it finish (or close it: run.log.close()) "
                    "and then h.resume(path) for a fresh Run; EventLog.read(path) reads it now"
                ) from None
            except OSError:  # no locks on this file system (some network mounts)
                pass
        size = os.fstat(fh.fileno()).st_size
        if expected_size is not None and size != expected_size:
            raise UsageError(
                f"event log {path} was written by another Run since this one last wrote to it "
                f"({size} bytes on disk, {expected_size} expected); appending from this stale "
                "Run would reuse event ids and corrupt the log, so nothing was written. Load "
                "it again with h.resume(path) for a fresh Run (EventLog.read(path) to read it)"
            )
    except BaseException:
        fh.close()
        raise
    return fh


def _link_message(path: pathlib.Path, what: str) -> str:
    """The `UsageError` text for a symbolic link found where a log is written."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return (
        f"{path} is a symbolic link (to {target}); {what} through a link, which could put it "
        "outside the log folder: nothing was written. Remove the link (or resume the log at its "
        "real path), or pick another run_id"
    )


def _existing_kind(path: pathlib.Path) -> str:
    """What the non-empty file at `path` is: `log`, `torn` or `other`.

    `torn`: a log whose run never started: no event, only a first line cut off while it was
    written (the start of an event line, `{"v":`). `log`: a log with events (or of a newer
    schema). `other`: anything else (notes, another program's JSON, a corrupt file).
    """
    try:
        log = EventLog.read(path)
    except SchemaVersionError:
        return "log"
    except EventLogError:
        return "other"
    if log.events:
        return "log"
    tail = log.incomplete_tail  # torn (`torn_line`): NUL bytes, or the start of an event line
    if tail is not None and (not tail.strip().strip("\x00") or '{"v":'.startswith(tail[:5])):
        return "torn"
    return "other"


def torn_line(text: str) -> bool:
    """Whether a log line that is not an event is what a killed writer leaves behind.

    The one rule for the end of a log, shared by the reader (`EventLog.read` skips such a
    line) and the writer (`EventLog.open_existing`, resume: the line is ended with a newline
    and the next event appended after it, so it stays a skipped line, never an unreadable one):
    the start of an event line cut off mid-write (`{` first, after blanks; the rest may be
    NUL bytes), or only NUL bytes (a power loss: the file grew, its data never reached the
    disk). Any other line (text, NUL bytes before a `{`, a JSON value that is not an object) is
    damage, refused by both.

    Args:
        text: the line as decoded (undecodable bytes replaced), without its newline.

    Returns:
        True for a torn line, False for damage.
    """
    text = text.strip()
    return text.startswith("{") or not text.strip("\x00")


def _damaged_line(path: pathlib.Path, line: int, text: str, why: str, *, last: bool = False) -> str:
    """The CorruptLogError message for a line that is neither an event nor torn (`torn_line`)."""
    where = "the last line" if last else "a line before the last"
    return (
        f"{path}:{line}: {why}; {where} is neither an event nor the start of one cut off by a "
        f"killed run or a power loss (it begins {text[:40]!r}); the log is corrupt and nothing "
        f"was written to it. Look at line {line}: if something other than harnesskit wrote it, "
        "move it out (keep a copy of the file) and read or resume the log again; otherwise "
        "restore the log from a copy"
    )


def _ends_with_newline(path: pathlib.Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


# -- tombstones (R-S3) --------------------------------------------------------------------
