"""Idempotent writes (R-E5): a ledger of write-tool calls so that no write acts twice.

Every call of a `write` or `destructive` tool carries an idempotency key derived from the run,
branch, step, tool and arguments (`key_for`). A tool may also declare `idempotency_fields`, a
natural key (a payment reference): a call whose fields match an earlier *completed* write of the
same run is a duplicate at any step and on any branch. The ledger is an append-only JSONL file
beside the event log (`<run>.jsonl.idem`), flushed before and after every write, so that after a
crash each write is known to be done (its recorded result), failed, never started, or unknown:

```
started ──► done      the tool returned; the result is recorded
        ├─► failed    the tool raised ToolError (no effect); the failure is recorded
        └─► unknown   it timed out, or the process died mid-call: never retried automatically
unknown ──► done | absent   settled by a confirmer (`EffectCheck`) or by a human (`settle`)
        └─► done | failed   the timed-out call finished after all (`late`)
```

A repeated call returns the recorded result (`meta["duplicate"]`) instead of acting again; a
call matching a write whose outcome is unknown is refused with that reason, not retried. A
repeat is a new write once a later done write of the run acted on an id the first one made
(`IdempotencyLedger._superseded`): a booking cancelled and then asked for again books anew.

A ledger line that cannot be written (disk full) raises `EventLogError` naming the file and
what to do, and the ledger writes nothing more (`write_error`): a write whose `started` line
failed never runs, nor does any call of its turn (the turn's other `started` lines may be on
disk: resume settles them like any unknown write); one whose outcome line failed stays
`started` on disk, which resume reads as unknown and settles through the confirmers before
anything is retried.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
from collections.abc import Callable, Mapping
from dataclasses import field, replace
from typing import Any

from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import (
    CorruptLogError,
    EventLogError,
    SchemaVersionError,
    ToolError,
    UsageError,
    checked_path,
    json_problem,
)
from harnesskit.messages import ToolCall, ToolResult
from harnesskit.tools.spec import Tool, ToolContext

__all__ = [
    "EffectCheck",
    "IdempotencyLedger",
    "WriteRecord",
    "acted_on",
    "canonical_arguments",
    "key_for",
    "ledger_path",
    "natural_key_for",
]

LEDGER_VERSION = 1
_STATES = ("started", "done", "failed", "unknown", "absent")


#: The fields of a ledger record that hold a call's data (the redactor may rewrite them).
_CALL_FIELDS = (
    "tool",
    "arguments",
    "run_id",
    "branch_id",
    "tool_call_id",
    "natural",
    "result",
    "note",
)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


_MISSING = object()


def _normal(value: Any) -> Any:
    """`value` with every whole finite float as an int (`100.0` is `100`), at any depth.

    A bool stays a bool and a string stays a string (`"100"` is not `100`).
    """
    if type(value) is float:
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    return value


def canonical_arguments(
    arguments: Mapping[str, Any], parameters: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The arguments of a write as its key sees them: numbers by value, defaults left out.

    An argument equal to its schema default (`parameters["properties"][name]["default"]`) is
    dropped, so passing the default explicitly is the same write as leaving it out; so is a
    `None` for an optional parameter whose schema states no default (`meta: dict | None =
    None` derives none: the same write, and a duplicate is the safe side to err on); whole floats
    become ints at any depth (`100.0` is `100`; `"100"` stays a string). Arguments already in
    this form come back unchanged, so their keys are the ones earlier versions derived.

    Args:
        arguments: the validated arguments of the call.
        parameters: the tool's JSON schema (`Tool.parameters`); `None` drops no default.

    Returns:
        A new dict.
    """
    props = (parameters or {}).get("properties") or {}
    required = (parameters or {}).get("required") or ()
    out = {}
    for name, value in arguments.items():
        spec = props.get(name)
        if isinstance(spec, dict):
            if "default" in spec:
                if _same(value, spec["default"]):
                    continue
            elif value is None and name not in required:
                continue  # an optional parameter without a JSON default: `None` (`= None`)
        out[name] = _normal(value)
    return out


def key_for(
    run_id: str,
    branch_id: str,
    tool: str,
    arguments: Mapping[str, Any],
    parameters: Mapping[str, Any] | None = None,
) -> str:
    """The idempotency key of one write call: sha256 (24 hex) of run, branch, tool, arguments.

    The step is not part of it: the same write re-issued one or ten steps later (after a
    retried model call, a resume, a model that forgot) is the same write. The arguments count
    as `canonical_arguments` gives them: `amount=100` and `amount=100.0` are one write, and so
    are a default left out and the same default passed explicitly (when `parameters` is given).

    Args:
        run_id: the run.
        branch_id: the branch.
        tool: the tool's name.
        arguments: the validated arguments.
        parameters: the tool's JSON schema (`Tool.parameters`), for its defaults.

    Returns:
        24 lowercase hex characters.
    """
    blob = _canonical([run_id, branch_id, tool, canonical_arguments(arguments, parameters)])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _same(a: Any, b: Any) -> bool:
    """Equal as arguments: numbers by value (a bool only equals a bool), the rest as JSON."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if a is _MISSING or b is _MISSING:
        return a is b
    return _canonical(_normal(a)) == _canonical(_normal(b))


def _earlier_outcome(
    tool: Tool,
    call: ToolCall,
    arguments: Mapping[str, Any],
    record: WriteRecord,
    differ: list[str],
) -> str:
    """The result text of a call matched by natural key to an earlier write with other arguments.

    It says that this call was not run, that the outcome given is the earlier call's, and which
    arguments differed (with both values), so the model cannot take it for its own result.
    """
    key = ", ".join(f"{f}={_canonical(arguments.get(f))}" for f in tool.idempotency_fields)

    def shown(args: Mapping[str, Any], name: str) -> str:
        return _canonical(args[name]) if name in args else "(not given)"

    changes = "; ".join(
        f"{n}: {shown(arguments, n)} now, {shown(record.arguments, n)} then" for n in differ
    )
    result = record.result or {}
    text = result.get("content", "")
    try:
        earlier: Any = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        earlier = text
    body = {
        "ok": bool(result.get("ok")),
        "duplicate": True,
        "duplicate_of": record.tool_call_id,
        "not_run": True,
        "message": f"this {tool.name} call was NOT run: a {tool.name} write with the same "
        f"{key} was already done by call {record.tool_call_id} (step {record.step}), and "
        f"earlier_result is that call's outcome, not this one's. The arguments differed "
        f"({changes}). If a second, different write is meant, it needs its own "
        f"{', '.join(tool.idempotency_fields)}; otherwise tell the user what was done",
        "differing_arguments": differ,
        "earlier_result": earlier,
    }
    return json.dumps(body, ensure_ascii=False, default=str)


def _strings(value: Any) -> set[str]:
    """Every string leaf of a JSON-like value, at any depth."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return out


def _id_like(key: str) -> bool:
    k = key.lower()
    return (
        k in ("id", "ref", "reference")
        or k.endswith(("_id", "_ref", "_reference"))
        or (key.endswith(("Id", "ID")) and len(key) > 2)
    )


def _created_ids(record: WriteRecord) -> set[str]:
    """The ids a done write made: id-like keys' string values in its result, not in its arguments.

    The result's content is read as JSON; content that is not JSON (plain text) makes none.
    """
    content = (record.result or {}).get("content")
    if not isinstance(content, str) or not content.startswith(("{", "[")):
        return set()
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):
        return set()
    found: set[str] = set()
    stack = [body]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, item in v.items():
                if isinstance(item, str) and item and isinstance(k, str) and _id_like(k):
                    found.add(item)
                elif isinstance(item, dict | list):
                    stack.append(item)
        elif isinstance(v, list):
            stack.extend(v)
    return found - _strings(record.arguments)


def acted_on(earlier: WriteRecord, later: WriteRecord) -> bool:
    """Whether the done write `later` acted on an id the done write `earlier` made.

    The ids a write made are the string values under id-like keys (`id`, `*_id`, `*Id`,
    `ref`, `reference`) in its result's JSON that its own arguments do not hold (a booking's
    `reservation_id`, not the `user_id` it was given); `later` acted on one when its
    arguments hold it at any depth (a cancel of that reservation). Both must be of the same
    run and branch. A result that is not JSON makes no id. Order is the caller's to check.

    Args:
        earlier: the ledger record of the first write.
        later: the ledger record of a write done after it.

    Returns:
        True when both are `done` and `later` names an id `earlier` made.
    """
    if earlier.state != "done" or later.state != "done":
        return False
    if (earlier.run_id, earlier.branch_id) != (later.run_id, later.branch_id):
        return False
    made = _created_ids(earlier)
    return bool(made) and not made.isdisjoint(_strings(later.arguments))


def natural_key_for(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """The natural key from `tool.idempotency_fields` (e.g. a payment reference), or `None`.

    `None` when the tool declares no fields or none of them is present in `arguments`. Values
    are taken by value as `canonical_arguments` takes them (`100.0` is `100` at any depth), so
    a reference sent once as a whole float and once as an int is one write; values already
    in that form give the keys earlier versions derived.

    Args:
        tool: the write tool (its `name` and `idempotency_fields`).
        arguments: the call's arguments.

    Returns:
        24 hex characters, or `None`.
    """
    if not tool.idempotency_fields:
        return None
    values = {f: _normal(arguments.get(f)) for f in tool.idempotency_fields}
    if all(v is None for v in values.values()):
        return None
    return hashlib.sha256(_canonical([tool.name, values]).encode()).hexdigest()[:24]


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "state": (str,),
    "tool": (str,),
    "arguments": (dict,),
    "run_id": (str,),
    "branch_id": (str,),
    "step": (int,),
    "tool_call_id": (str,),
    "natural": (str, type(None)),
    "result": (dict, type(None)),
    "note": (str,),
}
_REQUIRED = ("key", "state", "tool")


def _read_records(p: pathlib.Path) -> list[WriteRecord]:
    """Every record of the ledger file `p`, in order; a cut-off last line is cut off the file.

    Raises:
        CorruptLogError: a line other than a cut-off last one is not a write record.
        SchemaVersionError: a line has a newer ledger version.
        EventLogError: the file cannot be read or its cut-off last line cannot be removed.
    """
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise EventLogError(
            f"could not read the idempotency ledger {p}: {exc.strerror or exc}"
        ) from exc
    lines = data.split(b"\n")
    # a line the writer was killed in (no newline yet): only ever the last, and removed below
    torn = lines.pop() if lines and lines[-1] else b""
    records = []
    for i, line in enumerate(lines):
        if line.strip():
            records.append(_parse_line(p, i + 1, line))
    if torn.strip():
        try:
            json.loads(torn.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):  # cut off mid-line: ignored
            _end_cleanly(p, len(data) - len(torn), torn=True)
            return records
        except (RecursionError, ValueError):
            pass  # whole but undecodable (too deep, an int too long): `_parse_line` says so
        records.append(_parse_line(p, len(lines) + 1, torn))  # whole, only lacks its newline
    if data and not data.endswith(b"\n"):
        _end_cleanly(p, len(data), torn=False)
    return records


def _parse_line(p: pathlib.Path, number: int, line: bytes) -> WriteRecord:
    def corrupt(what: str) -> CorruptLogError:
        return CorruptLogError(
            f"{p}:{number}: {what}, not a write record; the idempotency ledger is corrupt. "
            "Reading past the line could forget a write that started and let it act twice, so "
            "the ledger was not opened (nothing resumed). Restore the ledger from a backup, or "
            "repair that line (one JSON object per line, the fields of "
            "harnesskit.tools.WriteRecord) after checking the write it described in the "
            "outside world; or run the task again as a new run"
        )

    try:
        data = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise corrupt(f"not UTF-8 ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise corrupt(f"not valid JSON ({exc.msg})") from exc
    except (RecursionError, ValueError) as exc:  # nested too deep, an int too long
        raise corrupt(f"undecodable JSON: {json_problem(exc)}") from exc
    if not isinstance(data, dict):
        raise corrupt(f"a JSON {type(data).__name__}")
    version = data.pop("v", LEDGER_VERSION)
    if version != LEDGER_VERSION:
        raise SchemaVersionError(
            f"{p}:{number}: ledger version {version!r}; this harnesskit reads version "
            f"{LEDGER_VERSION}: resume with the harnesskit version that wrote the run"
        )
    unknown = sorted(set(data) - set(_FIELD_TYPES))
    if unknown:
        raise corrupt(f"unknown field(s) {', '.join(map(repr, unknown))}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise corrupt(f"no {', '.join(map(repr, missing))}")
    for k, v in data.items():
        types = _FIELD_TYPES[k]
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
            raise corrupt(f"field {k!r} is {type(v).__name__} {str(v)[:40]!r}")
    if data["state"] not in _STATES:
        raise corrupt(f"state {data['state']!r} (one of {', '.join(_STATES)} expected)")
    result = data.get("result")
    if data["state"] in ("done", "failed") and not _is_result(result):
        # a `done` line without its result would let resume run the write again
        raise corrupt(
            f"a {data['state']} write without its result ({str(result)[:40]!r}; an object with "
            "'ok' (bool) and 'content' (str) expected)"
        )
    return WriteRecord(**data)


def _is_result(result: Any) -> bool:
    """Whether `result` is a recorded tool result: `{"ok": bool, "content": str, ...}`."""
    return (
        isinstance(result, dict)
        and isinstance(result.get("ok"), bool)
        and isinstance(result.get("content"), str)
        and isinstance(result.get("error_type"), str | None)
    )


def _end_cleanly(p: pathlib.Path, size: int, *, torn: bool) -> None:
    """Cut a torn last line off the ledger (or end a whole last one with its newline)."""
    try:
        if torn:
            os.truncate(p, size)
        else:
            with p.open("ab") as fh:
                fh.write(b"\n")
    except OSError as exc:
        raise EventLogError(
            f"could not repair the end of the idempotency ledger {p} (a line cut off by a "
            f"killed run): {exc.strerror or exc} (errno {exc.errno}); make the file writable "
            "and resume again"
        ) from exc


def _dangling(path: pathlib.Path) -> str:
    """The error text for a dangling symbolic link where a ledger would be created."""
    return (
        f"idempotency ledger {path} is a symbolic link to {os.readlink(path)}, which does not "
        "exist; a ledger is never created through a link (it could be put outside the log "
        "folder): nothing was written. Remove the link, or pick another run_id"
    )


def ledger_path(log_path: str | os.PathLike[str]) -> pathlib.Path:
    """Where the ledger of the run logged at `log_path` lives: `<log name>.idem` beside it.

    Not `*.jsonl`, so that tools listing the logs of a folder do not take it for one.
    """
    p = pathlib.Path(log_path)
    return p.with_name(f"{p.name}.idem")


@frozen_dataclass(kw_only=True)
class EffectCheck:
    """A confirmer's answer about one write whose outcome the ledger does not know."""

    applied: bool | None
    """True: the effect happened; False: it did not (safe to run); None: cannot tell."""
    value: Any = None
    """When applied: the result the tool returned (or would have), JSON-ready."""
    evidence: str = ""
    """How it was established (e.g. "payments table has reference P-7"), for the log."""


#: `confirm(record) -> EffectCheck`: looks at the outside world for one write's effect.
Confirmer = Callable[["WriteRecord"], EffectCheck]


@frozen_dataclass(kw_only=True)
class WriteRecord:
    """The ledger's latest line for one idempotency key."""

    key: str
    """The idempotency key (`key_for`)."""
    state: str
    """`started`, `done`, `failed`, `unknown` or `absent`."""
    tool: str
    """The tool's name."""
    arguments: dict[str, Any] = field(default_factory=dict)
    """The validated arguments."""
    run_id: str = ""
    """The run."""
    branch_id: str = "main"
    """The branch."""
    step: int = 0
    """The loop step of the call."""
    tool_call_id: str = ""
    """The call that first used this key."""
    natural: str | None = None
    """The natural key (`natural_key_for`), if the tool declares one."""
    result: dict[str, Any] | None = None
    """For `done`/`failed`: `{"ok", "content", "error_type"}` as the model saw it."""
    note: str = ""
    """Why the state changed (timeout, evidence of a confirmer, who settled it)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready line written to the ledger."""
        return {
            "v": LEDGER_VERSION,
            "key": self.key,
            "state": self.state,
            "tool": self.tool,
            "arguments": self.arguments,
            "run_id": self.run_id,
            "branch_id": self.branch_id,
            "step": self.step,
            "tool_call_id": self.tool_call_id,
            "natural": self.natural,
            "result": self.result,
            "note": self.note,
        }

    @property
    def settled(self) -> bool:
        """True when the outcome is known (`done`, `failed` or `absent`)."""
        return self.state in ("done", "failed", "absent")


#: What to do about an unusable ledger path.
_LEDGER_FIX = "pass the ledger file path, ledger_path('<log>.jsonl')"


class IdempotencyLedger:
    """The append-only record of write calls of one run (in memory, or a JSONL file).

    The executor asks `admit()` before a write, `begin()` right before calling the tool and
    `finish()` with its result. Each line is written and flushed at once (`durable=True` also
    fsyncs), so a killed process leaves every write it started on disk.

    Args:
        path: the JSONL file (created on the first write); `None` keeps records in memory.
        confirmers: `{tool_name: confirm(record) -> EffectCheck}` used to settle writes whose
            outcome is unknown (`check`).
        durable: fsync after every line.
        redactor: secret scanner applied to every line before it is written (R-S1), e.g. the
            harness's `Redactor`; `None` writes lines as they are.

    Raises:
        UsageError: `path` exists and is not empty (use `IdempotencyLedger.open`), is a
            dangling symbolic link (a ledger is never created through a link), or is not a
            usable file path (a NUL byte, a name too long, a folder: `errors.checked_path`).

    A line that cannot be written raises `EventLogError` from the method that wrote it
    (`begin`, `finish`, `settle`, ...) and is kept as `write_error`: every later write raises it
    again, so nothing runs on a ledger that no longer records.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        confirmers: Mapping[str, Confirmer] | None = None,
        durable: bool = False,
        redactor: Any = None,
    ) -> None:
        self.path = (
            checked_path(path, "IdempotencyLedger(path)", kind="file", fix=_LEDGER_FIX)
            if path is not None
            else None
        )
        if self.path is not None and self.path.is_symlink() and not self.path.exists():
            raise UsageError(_dangling(self.path))
        if self.path is not None and self.path.exists() and self.path.stat().st_size > 0:
            raise UsageError(
                f"idempotency ledger {self.path} already exists; IdempotencyLedger.open(path) "
                "reads it and appends"
            )
        self.confirmers: dict[str, Confirmer] = dict(confirmers or {})
        self.durable = durable
        self.redactor = redactor
        self.records: dict[str, WriteRecord] = {}
        self._natural_done: dict[str, str] = {}
        self._reserved: dict[str, str] = {}
        self._canon: dict[str, tuple[WriteRecord, str]] = {}
        self._done_order: dict[str, int] = {}
        self._clock = 0
        self.write_error: EventLogError | None = None

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        confirmers: Mapping[str, Confirmer] | None = None,
        durable: bool = False,
        redactor: Any = None,
    ) -> IdempotencyLedger:
        """Read an existing ledger (if any) and append to it (resume, restart).

        A last line cut off by a kill is ignored and removed from the file, so that lines
        appended later never follow it: the write it described is then `started` (or never
        started), which is the conservative reading. Any other line that is not a ledger
        record is corruption: skipping it could forget a write that started and let it act
        twice.

        Args:
            path: the ledger file (`ledger_path(<log>)`); missing means no write was recorded.
            confirmers: as for `IdempotencyLedger`.
            durable: as for `IdempotencyLedger`.
            redactor: as for `IdempotencyLedger`.

        Returns:
            The ledger, holding the latest record of every key.

        Raises:
            CorruptLogError: a line other than a cut-off last one is not UTF-8, not JSON, or not
                a write record; the message names the file and line and what to do.
            SchemaVersionError: a line was written by a newer ledger format.
            EventLogError: the file cannot be read, or its cut-off last line cannot be removed.
            UsageError: `path` is not a usable file path (a NUL byte, a name too long, a
                folder: `errors.checked_path`).
        """
        p = checked_path(path, "IdempotencyLedger.open(path)", kind="file", fix=_LEDGER_FIX)
        ledger = cls(None, confirmers=confirmers, durable=durable, redactor=redactor)
        ledger.path = p
        if p.is_file():
            for number, record in enumerate(_read_records(p), 1):
                had = ledger.records.get(record.key)
                if (
                    had is not None
                    and had.state == "done"
                    and record.state == "done"
                    and had.result != record.result
                ):  # which one happened? resuming on either could repeat or hide a write
                    raise CorruptLogError(
                        f"{p}: write record {number} ({record.tool}, key {record.key[:16]}...) "
                        "is done a second time with a different result; the idempotency "
                        "ledger is corrupt. Check the write in the outside world, keep the "
                        "line that describes it and remove the other, or run the task again "
                        "as a new run"
                    )
                ledger._remember(record)
        return ledger

    # -- the executor's protocol ----------------------------------------------------------------

    def admit(
        self, tool: Tool, call: ToolCall, arguments: dict[str, Any], ctx: ToolContext
    ) -> ToolResult | None:
        """Decide whether a write call may run; set `ctx.idempotency_key`.

        A done write with the same arguments is not a repeat when a later done write of the
        same run and branch holds, in its arguments, an id the first one's result made (a
        cancel of the booking it returned): the call runs as a new write and its record
        replaces the first.

        Returns:
            `None` when the call may run (its key is reserved for this turn), else the result
            to give the model instead: the recorded result of the same write (`meta["duplicate"]`),
            or a failure when an identical write's outcome is unknown (never retried).
        """
        key = key_for(ctx.run_id, ctx.branch_id, tool.name, arguments, tool.parameters)
        natural = natural_key_for(tool, arguments)
        ctx.idempotency_key = key
        meta: dict[str, Any] = {"idempotency_key": key}
        record = self.records.get(key)
        if record is None:  # a line an earlier version keyed on arguments not in canonical form
            record = self._same_write(tool, ctx.run_id, ctx.branch_id, arguments)
            if record is not None:
                key = ctx.idempotency_key = meta["idempotency_key"] = record.key
        if record is not None and record.state == "done" and self._superseded(record):
            record = None  # a later write acted on what this one made: a new write, not a repeat
        if record is None and natural is not None and natural in self._natural_done:
            record = self.records[self._natural_done[natural]]
            meta["natural_key"] = natural
        # a failed write (a ToolError: known to have had no effect) may be tried again
        if record is not None and record.state == "done" and record.result:
            r = record.result
            content = r.get("content", "")
            differ = self._differing(tool, arguments, record) if record.key != key else []
            if differ:  # the same natural key, other arguments: say so, never silently
                meta["differing_arguments"] = differ
                content = _earlier_outcome(tool, call, arguments, record, differ)
            return ToolResult(
                tool_call_id=call.id,
                name=call.name,
                ok=bool(r.get("ok")),
                content=content,
                error_type=r.get("error_type"),
                meta={**meta, "duplicate": True, "duplicate_of": record.tool_call_id},
            )
        if key in self._reserved:
            body = {
                "ok": True,
                "duplicate": True,
                "duplicate_of": self._reserved[key],
                "message": f"the same write was already requested in this turn by call "
                f"{self._reserved[key]}; it runs once, see that call's result",
            }
            return ToolResult(
                tool_call_id=call.id,
                name=call.name,
                ok=True,
                content=json.dumps(body),
                meta={**meta, "duplicate": True, "duplicate_of": self._reserved[key]},
            )
        blocking = self._unknown_match(tool, arguments, natural, record)
        if blocking is not None:
            return ToolResult.failure(
                call,
                "tool_error",
                f"an identical {tool.name} write (call {blocking.tool_call_id}, step "
                f"{blocking.step}) has an unknown outcome; it is not retried",
                "do not repeat this write; tell the user its outcome is being checked, or "
                "check its effect with a read tool",
                outcome_unknown=True,
                idempotency_key=key,
                blocked_by=blocking.key,
            )
        self._reserved[key] = call.id
        return None

    def _differing(
        self, tool: Tool, arguments: Mapping[str, Any], record: WriteRecord
    ) -> list[str]:
        """Names of the arguments whose values differ from the recorded write's, in order.

        A missing argument counts as its schema default; numbers compare by value (`100` is
        `100.0`, a bool is not a number); a value holding a secret is not compared (the ledger
        keeps it redacted).
        """
        props = tool.parameters.get("properties") or {}
        out = []
        for name in dict.fromkeys([*arguments, *record.arguments]):
            default = (props.get(name) or {}).get("default", _MISSING)
            now = arguments.get(name, default)
            then = record.arguments.get(name, default)
            if _same(now, then):
                continue
            if self.redactor is not None and self.redactor.needs(_canonical(now)):
                continue
            out.append(name)
        return out

    def begin(
        self, tool: Tool, call: ToolCall, arguments: dict[str, Any], ctx: ToolContext
    ) -> None:
        """Record `started` for the admitted call, durably, right before the tool runs.

        Raises:
            EventLogError: the line could not be written (disk full): the tool must not run.
        """
        key = ctx.idempotency_key or key_for(
            ctx.run_id, ctx.branch_id, tool.name, arguments, tool.parameters
        )
        self._append(
            WriteRecord(
                key=key,
                state="started",
                tool=tool.name,
                arguments=dict(arguments),
                run_id=ctx.run_id,
                branch_id=ctx.branch_id,
                step=ctx.step,
                tool_call_id=call.id,
                natural=natural_key_for(tool, arguments),
            )
        )

    def finish(self, key: str, result: ToolResult) -> WriteRecord | None:
        """Record the outcome of a started write: `done`, `failed`, or `unknown` on timeout.

        Raises:
            EventLogError: the line could not be written (disk full); the write stays
                `started` on disk (resume settles it) and in memory.
        """
        self._reserved.pop(key, None)
        record = self.records.get(key)
        if record is None or record.state != "started":
            return record
        if result.meta.get("outcome_unknown") or result.error_type == "timeout":
            state, note = "unknown", "timed out: the call may still complete"
        else:
            state, note = ("done" if result.ok else "failed"), ""
        body = {"ok": result.ok, "content": result.content, "error_type": result.error_type}
        return self._append(replace(record, state=state, result=body, note=note))

    def late(self, key: str, future: Any) -> WriteRecord | None:
        """Settle a timed-out write when its call finally ends (a `Future`'s done callback).

        A return value makes it `done` with that result (the effect happened after all); a
        `ToolError` makes it `failed`; anything else leaves it `unknown`. It runs on a worker
        thread, so a line that cannot be written raises nothing here: it is kept as
        `write_error` (the next write raises it) and the write stays as it was on disk.
        """
        record = self.records.get(key)  # still `started` if it ended before `finish` ran
        if record is None or record.state not in ("started", "unknown") or future.cancelled():
            return record
        error = future.exception()
        if error is None:
            value, _ = future.result()
            content = value if isinstance(value, str) else json.dumps(value, default=str)
            body = {"ok": True, "content": content, "error_type": None}
            late = replace(record, state="done", result=body, note="finished late")
        elif isinstance(error, ToolError):
            body = {"ok": False, "content": str(error), "error_type": error.error_type}
            late = replace(record, state="failed", result=body, note="failed late")
        else:
            return record
        try:
            return self._append(late)
        except EventLogError:  # kept as write_error; the next write on the run's thread raises it
            return record

    def release(self) -> None:
        """Forget this turn's reservations (the executor calls it after every turn)."""
        self._reserved.clear()

    # -- settling unknown outcomes ------------------------------------------------------------

    def unsettled(self) -> list[WriteRecord]:
        """Writes whose outcome is not known (`started` or `unknown`), in key order of first use."""
        return [r for r in self.records.values() if r.state in ("started", "unknown")]

    def check(self, record: WriteRecord) -> EffectCheck:
        """Ask the tool's confirmer whether `record`'s effect happened.

        Returns:
            The confirmer's `EffectCheck`; `applied=None` when the tool has no confirmer.
        """
        confirm = self.confirmers.get(record.tool)
        if confirm is None:
            return EffectCheck(applied=None, evidence=f"no confirmer for {record.tool}")
        return confirm(record)

    def settle(self, key: str, check: EffectCheck, *, by: str = "confirmer") -> WriteRecord:
        """Record the established outcome of an unsettled write (human or confirmer reconciliation).

        Args:
            key: the idempotency key.
            check: an `EffectCheck`: `applied=True` with the result the tool returned (or would
                have) as `value`, which a repeat of the write then gets, or `applied=False`
                (the write may run again); `evidence` says how it was established.
            by: who established it (`"confirmer"`, `"human:alice"`), kept in the note.

        Returns:
            The record as written: `done` when applied, else `absent`.

        Raises:
            UsageError: `check` is not an `EffectCheck` (e.g. a bare `True`), no such key, or
                `check.applied` is None.
            EventLogError: the line could not be written (disk full).
        """
        if not isinstance(check, EffectCheck):
            raise UsageError(
                f"settle(key, check) takes an EffectCheck, got {type(check).__name__} "
                f"{check!r:.60}: pass harnesskit.tools.EffectCheck(applied=True, value=<what the "
                "tool returned, given to a repeat of this write>, evidence=<how you know>), or "
                "EffectCheck(applied=False, evidence=...) when the write did not happen"
            )
        record = self.records.get(key)
        if record is None:
            raise UsageError(f"no write with idempotency key {key!r} in the ledger")
        if check.applied is None:
            raise UsageError("settle needs applied=True or applied=False, not None")
        note = f"settled by {by}: {check.evidence}".strip()
        if not check.applied:
            return self._append(replace(record, state="absent", result=None, note=note))
        v = check.value
        content = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
        body = {"ok": True, "content": content, "error_type": None}
        return self._append(replace(record, state="done", result=body, note=note))

    def restore(self, record: WriteRecord, *, write: bool = True) -> WriteRecord:
        """Take in a record rebuilt from the event log for a write this ledger has no line for.

        Resume uses it when the ledger was lost, emptied or cut (R-E5): the log's `tool.call`
        (flushed before a write acts) and `tool.result` events still say which writes were done
        (`done`, with the logged result) and which started with no outcome (`started`: unknown,
        settled by a confirmer or by hand before anything is retried).

        Args:
            record: the rebuilt record (`started` or `done`).
            write: append it to the ledger file too (`False` keeps it in memory, for checks
                that change nothing).

        Returns:
            The record as kept.

        Raises:
            UsageError: the ledger already holds a record with that key.
            EventLogError: the line could not be written (disk full).
        """
        if record.key in self.records:
            raise UsageError(f"the ledger already holds a write with key {record.key!r}")
        if not write:
            self._remember(record)
            return record
        return self._append(record)

    def close(self) -> None:
        """Nothing to release (each line is written and closed at once); kept for symmetry."""

    # -- internals ------------------------------------------------------------------------------

    def _unknown_match(
        self, tool: Tool, arguments: dict[str, Any], natural: str | None, record: WriteRecord | None
    ) -> WriteRecord | None:
        if record is not None and record.state in ("started", "unknown"):
            return record
        wanted = _canonical(canonical_arguments(arguments, tool.parameters))
        for r in self.unsettled():
            if r.tool == tool.name and (
                self._canonical_of(tool, r) == wanted or (natural and r.natural == natural)
            ):
                return r
        return None

    def _canonical_of(self, tool: Tool, record: WriteRecord) -> str:
        """The canonical JSON of `record`'s arguments under `tool`'s schema (cached per line)."""
        cached = self._canon.get(record.key)
        if cached is None or cached[0] is not record:
            cached = (record, _canonical(canonical_arguments(record.arguments, tool.parameters)))
            self._canon[record.key] = cached
        return cached[1]

    def _same_write(
        self, tool: Tool, run_id: str, branch_id: str, arguments: Mapping[str, Any]
    ) -> WriteRecord | None:
        """A record of the same write under another key (an earlier version's line).

        Earlier versions keyed arguments as sent (`100.0`, a default passed explicitly).
        """
        wanted = None
        for r in self.records.values():
            if r.tool != tool.name or r.run_id != run_id or r.branch_id != branch_id:
                continue
            if wanted is None:
                wanted = _canonical(canonical_arguments(arguments, tool.parameters))
            if self._canonical_of(tool, r) == wanted:
                return r
        return None

    def _superseded(self, record: WriteRecord) -> bool:
        """Whether a later done write of the same run and branch acted on what `record` made.

        What a write made are the ids in its result (`_created_ids`): string values under an
        id-like key (`id`, `*_id`, `*Id`, `reference`) that its own arguments do not hold,
        such as the `reservation_id` of a booking. A later write whose arguments hold one of
        them (a `cancel_reservation` of that reservation) changed the state the first result
        described, so the same write issued after it is a new request, not a repeat: a
        recorded GPT-4o airline run (tau-bench task 0, trial 3) books, cancels that booking and
        books the same flights again, and the second booking must act. A later write that
        names nothing the first one made (another payment) leaves it a duplicate.
        """
        if not _created_ids(record):
            return False
        since = self._done_order.get(record.key, 0)
        return any(
            other.key != record.key
            and self._done_order.get(other.key, 0) > since
            and acted_on(record, other)
            for other in self.records.values()
        )

    def _remember(self, record: WriteRecord) -> None:
        if record.state not in _STATES:
            raise UsageError(f"unknown ledger state {record.state!r}")
        self.records[record.key] = record
        if record.state == "done":
            self._clock += 1  # done lines in the order they were written (or read back)
            self._done_order[record.key] = self._clock
        if record.natural is not None and record.state == "done":
            self._natural_done.setdefault(record.natural, record.key)

    def _append(self, record: WriteRecord) -> WriteRecord:
        line = _canonical(record.to_dict())
        if self.redactor is not None and self.redactor.needs(line):
            # each field that holds a call's data, alone: a rewrite never touches the ledger's
            # own names and values (`key`, `state`, `step`) nor the line's structure
            data = record.to_dict()
            changed = False
            for name in _CALL_FIELDS:
                if not isinstance(data[name], (str, dict, list)):  # null: nothing to hide
                    continue
                text = _canonical(data[name])
                redacted, counts = self.redactor.redact(text)
                if counts:
                    data[name] = json.loads(redacted)
                    changed = True
            if changed:  # keep in memory what is on disk (the key was derived before redaction)
                line = _canonical(data)
                data.pop("v", None)
                record = WriteRecord(**data)
        self._write_raw(line + "\n")  # on disk first: memory never claims what disk lacks
        self._remember(record)
        return record

    def _write_raw(self, text: str) -> None:
        # Opened per line: writes are few, and no handle outlives a killed or abandoned run.
        if self.path is None:
            return
        if self.write_error is not None:  # a line already failed: the ledger records no more
            raise self.write_error
        # One O_APPEND write per record: a line lands whole, even with other writers on the file.
        data = text.encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:  # the ledger as it is (a link to an existing file included)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            except FileNotFoundError:
                if self.path.is_symlink():  # a dangling link: it would create its target
                    self.write_error = EventLogError(_dangling(self.path))
                    raise self.write_error from None
                # created here, never through a link planted meanwhile (O_EXCL: EEXIST then)
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL
                fd = os.open(self.path, flags, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if self.durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            self.write_error = EventLogError(
                f"could not write the idempotency ledger {self.path}: "
                f"{exc.strerror or exc} (errno {exc.errno}); the run stopped so that no write "
                "tool acts without its ledger line. Free space on that disk (or fix its "
                "permissions), then resume the run (Harness.resume): a write recorded only as "
                "started is settled by Harness(confirmers=...) or by hand "
                "(IdempotencyLedger.settle) before anything is retried; a cut-off last line is "
                "skipped when the ledger is read"
            )
            raise self.write_error from exc

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        where = str(self.path) if self.path else "memory"
        return f"<IdempotencyLedger {len(self.records)} writes at {where}>"
