"""Events and the append-only event log (R-V1).

One JSONL file per run, one event per line, flushed after every step so a killed run loses at
most the step in flight. The log is the trace: every request sent to the model (exact messages
and tool list), every response, tool call, tool result, brake and error is an event.

Event types share one namespace (DESIGN.md "Event vocabulary"). Fact kinds (tool results, human
decisions, checks) are distinct from interpretation kinds (model responses): see `FACT_TYPES`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import math
import operator
import os
import pathlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from harnesskit.errors import CorruptLogError, SchemaVersionError, UsageError
from harnesskit.log.redact import Redactor

__all__ = [
    "EVENT_TYPES",
    "FACT_TYPES",
    "INTERPRETATION_TYPES",
    "SCHEMA_VERSION",
    "Event",
    "EventLog",
]

#: Version written on every line; older versions are read through `MIGRATIONS`.
SCHEMA_VERSION = 2

EVENT_TYPES = frozenset(
    {
        "task.contract", "user.message", "human.decision", "model.request", "model.response",
        "model.retry", "model.switch", "tool.call", "tool.result",
        "artifact.created", "context.injected", "alert.mismatch", "alert.representation",
        "alert.conflict", "brake", "checkpoint", "status.supersede", "status.reject",
        "status.expire", "branch.fork", "branch.merge", "run.resume", "run.restart",
        "run.finished", "tombstone",
    }
)  # fmt: skip
FACT_TYPES = frozenset(
    {"tool.result", "human.decision", "checkpoint", "user.message", "task.contract"}
)
INTERPRETATION_TYPES = frozenset({"model.response"})
_DEFAULT_REDACTOR = Redactor()
# Lines built only from text already in the log (and so already redacted) are not rescanned.
_BUILT_FROM_LOG = frozenset({"model.request", "context.injected", "brake"})
DATA_CLASSES = ("public", "internal", "restricted", "secret")


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One line of the log. Never modified once written; statuses are derived by later events."""

    event_id: int
    """1-based position in the run's log."""
    type: str
    """One of `EVENT_TYPES` (e.g. `"tool.result"`)."""
    payload: dict[str, Any] = field(default_factory=dict)
    """Type-specific data (JSON-ready)."""
    parent_id: int | None = None
    """The event this one follows causally (R-V4); `None` for a root."""
    branch_id: str = "main"
    """The trajectory branch (R-V5)."""
    source: str = "system"
    """Who produced it: `user`, `model`, `tool`, `human`, `system`."""
    created_at: str = ""
    """ISO 8601 UTC timestamp (informational: order is causal, not by time)."""
    workspace_revision: str | None = None
    """The workspace revision the event was produced against, if known."""
    input_hash: str | None = None
    """sha256 (16 hex) of what produced it (e.g. a tool call's arguments)."""
    status: str = "active"
    """Status as written (`active` or `audit-only`); later events may change the derived one."""
    summary: str = ""
    """One line for humans and tables."""
    supersedes: int | None = None
    """The event this one replaces, if any."""
    data_class: str = "internal"
    """`public`, `internal`, `restricted` or `secret` (R-S2)."""
    v: int = SCHEMA_VERSION
    """Schema version of this line."""

    @property
    def step(self) -> int | None:
        """The loop step recorded in the payload, if any."""
        return self.payload.get("step")

    @property
    def is_fact(self) -> bool:
        """True for fact kinds (tool results, human decisions, checks), R-V3."""
        return self.type in FACT_TYPES

    @property
    def label(self) -> str:
        """Short citation label such as `TOOL-31` or `HUMAN-12` (R-C7)."""
        prefix = {
            "tool.result": "TOOL",
            "human.decision": "HUMAN",
            "user.message": "USER",
            "model.response": "MODEL",
            "task.contract": "TASK",
        }.get(self.type, "EV")
        return f"{prefix}-{self.event_id}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict written as one log line."""
        return {
            "v": self.v,
            "event_id": self.event_id,
            "parent_id": self.parent_id,
            "branch_id": self.branch_id,
            "type": self.type,
            "source": self.source,
            "created_at": self.created_at,
            "workspace_revision": self.workspace_revision,
            "input_hash": self.input_hash,
            "status": self.status,
            "summary": self.summary,
            "supersedes": self.supersedes,
            "data_class": self.data_class,
            "payload": self.payload,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        """Inverse of `to_dict()` for a current-version line.

        Raises:
            CorruptLogError: a required field is missing.
        """
        try:
            return cls(
                v=data["v"],
                event_id=data["event_id"],
                parent_id=data.get("parent_id"),
                branch_id=data.get("branch_id", "main"),
                type=data["type"],
                source=data.get("source", "system"),
                created_at=data.get("created_at", ""),
                workspace_revision=data.get("workspace_revision"),
                input_hash=data.get("input_hash"),
                status=data.get("status", "active"),
                summary=data.get("summary", ""),
                supersedes=data.get("supersedes"),
                data_class=data.get("data_class", "internal"),
                payload=data.get("payload") or {},
            )
        except KeyError as exc:
            raise CorruptLogError(
                f"event line lacks required field {exc.args[0]!r}: {data!r:.200}"
            ) from exc

    def __repr__(self) -> str:
        return f"<Event {self.event_id} {self.type} {self.summary[:60]!r}>"

    def _repr_html_(self) -> str | None:
        from harnesskit.notebook import display

        return display.render_html(self)


class _Auto:
    """Sentinel: take the default parent (the branch's last event)."""


_AUTO = _Auto()


def hash_json(value: Any) -> str:
    """sha256 (first 16 hex) of `value`'s canonical JSON (sorted keys, no spaces)."""
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


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


def _event_constructor() -> Callable[..., Event]:
    """`Event(...)` from positional fields in declaration order (without `v`), faster.

    A frozen dataclass sets each field through `object.__setattr__`; this sets the slots
    through their descriptors, the same values at about 2.5x the speed. Used only while
    `Event` has exactly these fields and no `__post_init__`, else it is the class itself.
    """
    names = tuple(f.name for f in dataclasses.fields(Event))
    expected = (
        "event_id", "type", "payload", "parent_id", "branch_id", "source", "created_at",
        "workspace_revision", "input_hash", "status", "summary", "supersedes", "data_class", "v",
    )  # fmt: skip
    if names != expected or hasattr(Event, "__post_init__"):
        return lambda *values: Event(**dict(zip(names, values, strict=False)))
    setters = [getattr(Event, name).__set__ for name in names]
    (s_id, s_type, s_payload, s_parent, s_branch, s_source, s_created, s_revision, s_hash,
     s_status, s_summary, s_supersedes, s_class, s_v) = setters  # fmt: skip
    new = object.__new__

    def make(
        event_id: int, type: str, payload: dict[str, Any], parent_id: int | None, branch_id: str,
        source: str, created_at: str, workspace_revision: str | None, input_hash: str | None,
        status: str, summary: str, supersedes: int | None, data_class: str,
    ) -> Event:  # fmt: skip
        event = new(Event)
        s_id(event, event_id)
        s_type(event, type)
        s_payload(event, payload)
        s_parent(event, parent_id)
        s_branch(event, branch_id)
        s_source(event, source)
        s_created(event, created_at)
        s_revision(event, workspace_revision)
        s_hash(event, input_hash)
        s_status(event, status)
        s_summary(event, summary)
        s_supersedes(event, supersedes)
        s_class(event, data_class)
        s_v(event, SCHEMA_VERSION)
        return event

    return make


_new_event = _event_constructor()


_quote = json.encoder.encode_basestring  # the C escaper json.dumps uses with ensure_ascii=False


class _PayloadEncoder:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)`, faster.

    It reuses one C encoder, where `json.dumps` builds a new one per call.
    """

    __slots__ = ("_encode",)
    _encode: Callable[[Any], str]

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        make = getattr(json.encoder, "c_make_encoder", None)
        if make is None:  # no C accelerator: fall back to the pure-Python encoder
            encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
            self._encode = encoder.encode
            return
        c_encode = make({}, str, _quote, None, ":", ",", False, False, True)
        self._encode = lambda value: "".join(c_encode(value, 0))

    def __call__(self, value: Any) -> str:
        if isinstance(value, str):
            return _quote(value)
        try:
            return self._encode(value)
        except BaseException:
            self._reset()  # an error leaves entries in the circular-reference markers
            raise


_encode_json = _PayloadEncoder()


def _event_line(e: Event) -> str:
    """One log line (without its newline).

    The text is that of `json.dumps(e.to_dict(), ensure_ascii=False, separators=(",", ":"),
    default=str)`, written field by field (about twice as fast); a field of an unexpected
    type takes the `json.dumps` path.
    """
    parent, supersedes = e.parent_id, e.supersedes
    if (
        type(e.v) is int
        and type(e.event_id) is int
        and (parent is None or type(parent) is int)
        and (supersedes is None or type(supersedes) is int)
    ):
        revision, input_hash = e.workspace_revision, e.input_hash
        try:
            return (
                f'{{"v":{e.v},"event_id":{e.event_id},'
                f'"parent_id":{"null" if parent is None else parent},'
                f'"branch_id":{_quote(e.branch_id)},"type":{_quote(e.type)},'
                f'"source":{_quote(e.source)},"created_at":{_quote(e.created_at)},'
                f'"workspace_revision":{"null" if revision is None else _quote(revision)},'
                f'"input_hash":{"null" if input_hash is None else _quote(input_hash)},'
                f'"status":{_quote(e.status)},"summary":{_quote(e.summary)},'
                f'"supersedes":{"null" if supersedes is None else supersedes},'
                f'"data_class":{_quote(e.data_class)},"payload":{_encode_json(e.payload)}}}'
            )
        except TypeError:  # a text field holding something else: let json.dumps decide
            pass
    return json.dumps(e.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str)


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


def migrate_line(line: dict[str, Any]) -> dict[str, Any]:
    """Bring one decoded line to `SCHEMA_VERSION` through the explicit migrations (R-V9).

    Raises:
        SchemaVersionError: the version is newer than this harnesskit or has no migration.
    """
    version = line.get("v", 1)
    if not isinstance(version, int):
        raise SchemaVersionError(f"schema version {version!r} is not an integer")
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


class EventLog:
    """An append-only event log, in memory and (optionally) as a JSONL file on disk.

    Appending writes the line to a buffered file; `flush()` (called by the loop after every
    step) hands it to the OS, so a killed process loses at most the step in flight. With
    `durable=True` each flush also calls `os.fsync` (survives power loss; slower).
    """

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
                `EventLog.read` to load one).
        """
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
        self._revoked: set[str] = set()
        if self.path is not None:
            if self.path.exists() and self.path.stat().st_size > 0:
                raise UsageError(
                    f"event log {self.path} already exists; logs are append-only and never "
                    "reused: pick a new path, or EventLog.read(path) to load it"
                )
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

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
            UsageError: unknown type or data class, or the log is closed.
        """
        if type not in EVENT_TYPES:
            raise UsageError(f"unknown event type {type!r}; use one of {sorted(EVENT_TYPES)}")
        if data_class not in DATA_CLASSES:
            raise UsageError(f"unknown data_class {data_class!r}; use one of {DATA_CLASSES}")
        if isinstance(parent_id, _Auto):
            parent_id = self._last_by_branch.get(branch_id)
        event = _new_event(
            len(self.events) + 1,
            type,
            payload or {},
            parent_id,
            branch_id,
            source,
            _utc_iso(self.clock()),
            workspace_revision,
            input_hash,
            status,
            summary,
            supersedes,
            data_class,
        )
        self._write(event)
        return event

    def _write(self, event: Event) -> Event:
        if self._readonly:
            raise UsageError(
                f"event log {self.path} was loaded with EventLog.read and is read-only"
            )
        line = _event_line(event)
        if (
            self.redactor is not None
            and event.type not in _BUILT_FROM_LOG
            and self.redactor.needs(line)
        ):
            line, counts = self.redactor.redact(line)
            if counts:  # R-S1: the clear text never exists in the log, on disk or in prompts
                event = Event.from_dict(json.loads(line))
        if self._file is not None:
            if self._file.closed:  # closed between turns (run finished): appending reopens it
                self._file = open(self.path, "a", encoding="utf-8")  # type: ignore[arg-type]  # noqa: SIM115
            if self._needs_newline:  # end a line cut off by a killed writer; `read` skips it
                self._file.write("\n")
                self._needs_newline = False
            self._file.write(line)
            self._file.write("\n")
        self._add(event)
        for listener in self._listeners:
            listener(event)
        return event

    def _add(self, event: Event) -> None:
        """Put a written or read event in memory, folding tombstones (R-S3)."""
        if self._revoked and event.type in _REDACTABLE:
            event = _redact_copies(event, self._revoked)
        self.events.append(event)
        self._last_by_branch[event.branch_id] = event.event_id
        if event.type == "tombstone":
            self._apply_tombstone(event)

    def _apply_tombstone(self, tomb: Event) -> None:
        """Replace the revoked content in memory: the target, its copies in requests, its calls.

        The bytes on disk are never rewritten; every reader of this log (events, frames,
        `request_messages`, context building, search) sees the redacted copies only.
        """
        target = tomb.payload.get("target")
        marker = f"[tombstoned by EV-{tomb.event_id}]"
        if isinstance(target, int) and 1 <= target < tomb.event_id:
            original = self.events[target - 1]
            self._revoked |= revoked_hashes(original)
            self.events[target - 1] = _tombstoned(original, marker)
        gone = set(tomb.payload.get("artifacts") or ())
        for i, e in enumerate(self.events[: tomb.event_id - 1]):
            if e.type == "artifact.created" and _artifact_id(e.payload) in gone:
                self.events[i] = _tombstoned(e, marker)
            elif e.type in _REDACTABLE and self._revoked:
                self.events[i] = _redact_copies(e, self._revoked)
        self.tombstones += 1

    def append_request(
        self,
        messages: tuple[Any, ...],
        tools: tuple[dict[str, Any], ...],
        *,
        branch_id: str = "main",
        **fields: Any,
    ) -> Event:
        """Append a `model.request` holding exactly `messages` (`Message`s) and `tools`.

        When the previous request of the branch is a prefix of `messages` (the same objects),
        only the new messages are written (`prefix_of`, `prefix_len`, `new_messages`); the tool
        list is written only when it changed (`tools_sha`, else `tools_from`). This keeps the
        cost per step flat as history grows; `request_messages()` rebuilds the full list.

        Args:
            messages: the prompt as sent.
            tools: the tool specs as sent.
            branch_id: the branch.
            **fields: more payload (step, settings, token_estimate, model) and `summary`.
        """
        summary = fields.pop("summary", "")
        prev = self._last_request.get(branch_id)
        payload: dict[str, Any] = dict(fields)
        if (
            prev is not None
            and len(prev[1]) <= len(messages)
            and all(map(operator.is_, prev[1], messages))
        ):
            payload["prefix_of"] = prev[0]
            payload["prefix_len"] = len(prev[1])
            payload["new_messages"] = [m.to_openai() for m in messages[len(prev[1]) :]]
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
            "model.request", payload, branch_id=branch_id, source="system", summary=summary
        )
        self._last_request[branch_id] = (
            event.event_id,
            messages,
            tools,
            tools_event or event.event_id,
        )
        return event

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        """Call `listener(event)` after every append (progress bars, live widgets)."""
        self._listeners.append(listener)

    def flush(self) -> None:
        """Hand buffered lines to the OS (and fsync when `durable`)."""
        if self._file is not None and not self._file.closed:
            self._file.flush()
            if self.durable:
                os.fsync(self._file.fileno())

    def close(self) -> None:
        """Flush and close the file; the in-memory events stay readable.

        A later `append` reopens the file in append mode (a finished run that gets a new user
        turn goes on in the same log).
        """
        if self._file is not None and not self._file.closed:
            self.flush()
            self._file.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> EventLog:
        """Load a log from disk (read-only: appending raises).

        A last line cut off mid-write (a killed run) is kept aside in `incomplete_tail` rather
        than failing. A cut-off line that a resumed run wrote past (the next event reuses its
        id) is listed in `torn_lines`; any other bad line is corruption. Older schema versions
        are migrated (`source_versions` counts the lines per version read). Tombstones are
        folded: revoked content is never returned (R-S3).

        Raises:
            UsageError: the file does not exist.
            CorruptLogError: a line other than the last is not valid JSON or lacks fields.
            SchemaVersionError: a line has an unknown schema version.
        """
        p = pathlib.Path(path)
        if not p.is_file():
            raise UsageError(f"no event log at {p}")
        log = cls(None)
        log.path = p
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptLogError(
                f"{p} is not UTF-8 text (byte {exc.start}); not an event log"
            ) from exc
        lines = text.split("\n")
        bad: tuple[int, str, str] | None = None  # (line number, text, error) of an unparsed line
        for i, raw in enumerate(lines):
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                if bad is not None:
                    raise CorruptLogError(
                        f"{p}:{bad[0]}: not valid JSON ({bad[2]}); the log is corrupt"
                    ) from exc
                bad = (i + 1, raw, exc.msg)
                continue
            if not isinstance(data, dict):
                raise CorruptLogError(f"{p}:{i + 1}: a JSON {type(data).__name__}, not an event")
            version = data.get("v", 1)
            log.source_versions[version] = log.source_versions.get(version, 0) + 1
            try:
                event = Event.from_dict(migrate_line(data))
            except (KeyError, TypeError, AttributeError) as exc:
                raise CorruptLogError(
                    f"{p}:{i + 1}: not an event line ({type(exc).__name__}: {exc}); "
                    "the log is corrupt"
                ) from exc
            if bad is not None:  # a torn line: the start of an event whose id the next one took
                if event.event_id != len(log.events) + 1 or not bad[1].lstrip().startswith("{"):
                    raise CorruptLogError(
                        f"{p}:{bad[0]}: not valid JSON ({bad[2]}); the log is corrupt"
                    )
                log.torn_lines.append(bad[0])
                bad = None
            elif event.event_id != len(log.events) + 1:  # ids are positions: a gap is a loss
                raise CorruptLogError(
                    f"{p}:{i + 1}: event id {event.event_id} where {len(log.events) + 1} was "
                    "expected; a line is missing or out of order, so the log is corrupt"
                )
            log._add(event)
            if not log.run_id and event.type == "task.contract":
                log.run_id = event.payload.get("run_id", "")
        if bad is not None:  # the line in flight when the run died
            log.incomplete_tail = bad[1]
        log._readonly = True
        return log

    @classmethod
    def open_existing(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        durable: bool = False,
        redactor: Redactor | None = _DEFAULT_REDACTOR,
    ) -> EventLog:
        """Read a log from disk, then append to it (resume; never rewrites a byte).

        A last line cut off mid-write is left in place and ended with a newline before the
        next event, which reuses the cut line's id; `read` later lists it in `torn_lines`.

        Args:
            path: an existing JSONL log.
            clock: wall clock for the new events' timestamps.
            durable: fsync on every flush.
            redactor: secret scanner for the new lines (R-S1), as for `EventLog(...)`.

        Raises:
            UsageError: the file does not exist.
            CorruptLogError: a line other than the last is corrupt.
            SchemaVersionError: a line has an unknown schema version.
        """
        log = cls.read(path)
        log._readonly = False
        log.clock = clock
        log.durable = durable
        log.redactor = redactor
        log._needs_newline = log.path is not None and not _ends_with_newline(log.path)
        log._file = open(log.path, "a", encoding="utf-8")  # type: ignore[arg-type]  # noqa: SIM115
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

    def of_type(self, *types: str, branch_id: str | None = None) -> list[Event]:
        """Events whose type is one of `types` (all types when none), optionally on one branch."""
        return [
            e
            for e in self.events
            if (not types or e.type in types) and (branch_id is None or e.branch_id == branch_id)
        ]

    def last(self, type: str, *, branch_id: str | None = None) -> Event | None:
        """The most recent event of `type`, or `None`."""
        for e in reversed(self.events):
            if e.type == type and (branch_id is None or e.branch_id == branch_id):
                return e
        return None

    def request_messages(self, event_id: int) -> list[dict[str, Any]]:
        """The exact chat-completions messages sent by the `model.request` event `event_id`.

        Requests are stored as a delta when they extend the previous request (see AGENTS.md);
        this rebuilds the full list.

        Raises:
            UsageError: the event is not a `model.request`.
        """
        chain: list[Event] = []
        event = self[event_id]
        if event.type != "model.request":
            raise UsageError(f"event {event_id} is a {event.type}, not a model.request")
        while True:
            chain.append(event)
            prefix = event.payload.get("prefix_of")
            if prefix is None:
                break
            event = self[prefix]
        messages: list[dict[str, Any]] = list(chain[-1].payload.get("messages", []))
        for ev in reversed(chain[:-1]):
            messages = messages[: ev.payload["prefix_len"]] + list(ev.payload["new_messages"])
        return messages

    def request_tools(self, event_id: int) -> list[dict[str, Any]]:
        """The exact tool list sent by the `model.request` event `event_id`."""
        event = self[event_id]
        while "tools" not in event.payload:
            source = event.payload.get("tools_from")
            if source is None:
                return []
            event = self[source]
        return list(event.payload["tools"])

    def request_text(self, event_id: int) -> str:
        """The JSON text of the messages and tools sent by a request (for byte searches)."""
        body = {"messages": self.request_messages(event_id), "tools": self.request_tools(event_id)}
        return json.dumps(body, ensure_ascii=False)

    def frame(self) -> Any:
        """A pandas DataFrame, one row per event.

        Columns: event_id, parent_id, branch_id, type, source, created_at, step, status,
        summary, data_class, tool, tool_call_id, ok, error_type, prompt_tokens,
        completion_tokens, payload (the dict).
        """
        import pandas as pd

        events = self.events
        payloads = [e.payload for e in events]
        usages = [p.get("usage") or {} for p in payloads]
        columns = {  # built column by column: faster for pandas than one tuple per row
            "event_id": [e.event_id for e in events],
            "parent_id": [e.parent_id for e in events],
            "branch_id": [e.branch_id for e in events],
            "type": [e.type for e in events],
            "source": [e.source for e in events],
            "created_at": [e.created_at for e in events],
            "step": [p.get("step") for p in payloads],
            "status": [e.status for e in events],
            "summary": [e.summary for e in events],
            "data_class": [e.data_class for e in events],
            "tool": [p.get("tool") for p in payloads],
            "tool_call_id": [p.get("tool_call_id") for p in payloads],
            "ok": [p.get("ok") for p in payloads],
            "error_type": [p.get("error_type") for p in payloads],
            "prompt_tokens": [u.get("prompt_tokens") for u in usages],
            "completion_tokens": [u.get("completion_tokens") for u in usages],
            "payload": payloads,
        }
        if events:
            df = pd.DataFrame(columns, columns=list(columns))
        else:  # no rows: object columns, as from_records gives
            df = pd.DataFrame.from_records([], columns=list(columns))
        ints = ["parent_id", "step", "prompt_tokens", "completion_tokens"]
        return df.astype(dict.fromkeys(ints, "Int64"))  # missing values stay <NA>, not 1.0

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "memory"
        return f"<EventLog {len(self.events)} events at {where}>"

    def _repr_html_(self) -> str | None:
        from harnesskit.notebook import display

        return display.render_html(self)


def iter_jsonl(path: str | os.PathLike[str]) -> Iterable[dict[str, Any]]:
    """Yield decoded lines of a JSONL file, skipping blank ones (helper for tools and scripts)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def _ends_with_newline(path: pathlib.Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


# -- tombstones (R-S3) --------------------------------------------------------------------

_REDACTABLE = frozenset({"model.request", "model.response", "tool.call"})
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


def _artifact_id(payload: dict[str, Any]) -> Any:
    ref = payload.get("artifact") or payload.get("ref")
    if isinstance(ref, dict):
        return ref.get("id")
    return payload.get("artifact_id") or payload.get("id") or ref


def _tombstoned(event: Event, marker: str) -> Event:
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
    return dataclasses.replace(event, payload=payload, summary=marker)


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


def _redact_copies(event: Event, revoked: set[str]) -> Event:
    """Redact revoked content copied into requests, responses and tool calls."""
    p = event.payload
    marker = "[tombstoned]"
    changed = False
    payload = dict(p)
    for key in ("messages", "new_messages"):
        if key in p:
            new = [_redact_message(m, revoked, marker) for m in p[key]]
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
    return dataclasses.replace(event, payload=payload, summary=marker)
