"""Resume, restart and fork as distinct operations, each an event (R-V6, R-E5).

A run killed mid-step is resumed from its log, not from "the last message": `check_resume` runs
six checks (same workspace revision; every tool call has a result or its side effect is settled
by its idempotency record; the events after the last checkpoint; permissions still valid; same
policy and tool versions; unchanged task contract). A failed check names itself and offers
restart or fork. `reopen` rebuilds the run's state from the log, settles writes a confirmer could
establish, appends `run.resume`, and hands the loop the step in flight to finish. `restart_point`
starts again from the task on a fresh branch and keeps the first attempt as evidence.
`Harness.resume(path)` and `Harness.restart(path)` are the front doors.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import (
    CorruptLogError,
    EventLogError,
    ResumeError,
    UsageError,
    checked_call,
    checked_path,
)
from harnesskit.log._types import (
    BrakeEvent,
    BranchForkEvent,
    CheckpointEvent,
    Event,
    ModelResponseEvent,
    RunFinishedEvent,
    RunRestartEvent,
    TaskContractEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from harnesskit.log.events import EventLog
from harnesskit.log.redact import placeholders
from harnesskit.log.trajectory import Trajectory, _calls_of, frozen_start, visible_events
from harnesskit.messages import ToolCall, ToolResult
from harnesskit.models._parse import filtered_finish
from harnesskit.tools.idempotency import (
    EffectCheck,
    IdempotencyLedger,
    WriteRecord,
    acted_on,
    key_for,
    ledger_path,
    natural_key_for,
)

#: Finish reasons a new user turn goes on from (`Run.send`, and `fold` reading the log): an
#: answer (`stop`), a pause for a human, an answer cut by the output limit (`length`), and a
#: refusal or an answer the provider's content filter stopped (`content_filter`).
RESUMABLE_BY_USER = frozenset({"stop", "paused", "length", "content_filter"})

__all__ = [
    "ResumeCheck",
    "ResumePoint",
    "ResumeReport",
    "check_resume",
    "rebuild_state",
    "redacted_result",
    "reopen",
    "restart_point",
]


@frozen_dataclass(kw_only=True)
class ResumeCheck:
    """One resume check and its outcome."""

    name: str
    """`workspace_revision`, `tool_calls`, `checkpoint`, `permissions`, `tool_versions`,
    `policy` or `task_contract`."""
    ok: bool
    """True when it passed."""
    detail: str
    """What was found (and, on failure, what to do)."""
    recorded: Any = None
    """The value recorded in the log, when the check compares one."""
    current: Any = None
    """The value now."""


@frozen_dataclass(kw_only=True)
class ResumeReport:
    """The six resume checks for one branch of a logged run."""

    path: str
    """The log."""
    branch_id: str
    """The branch checked."""
    checks: tuple[ResumeCheck, ...]
    """Every check, in the order of the contract."""
    pending: tuple[str, ...] = ()
    """Tool call ids of the step in flight that have no result yet."""
    redacted_calls: tuple[str, ...] = ()
    """Tool call ids among `pending` whose arguments the log holds redacted
    (`[REDACTED:...]`): the real arguments are gone, so resuming never runs them again; each
    gets its settled write's recorded result, or a failure saying so."""

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return all(c.ok for c in self.checks)

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the failed checks."""
        return tuple(c.name for c in self.checks if not c.ok)

    @property
    def options(self) -> tuple[str, ...]:
        """What may be done: `resume` only when every check passed; `restart` and `fork` always."""
        return ("resume", "restart", "fork") if self.ok else ("restart", "fork")

    def frame(self) -> Any:
        """One row per check: name, ok, detail, recorded, current."""
        import pandas as pd

        return pd.DataFrame([dataclasses.asdict(c) for c in self.checks])

    def __repr__(self) -> str:
        verdict = "ok" if self.ok else f"failed: {', '.join(self.failed)}"
        return f"<ResumeReport {self.branch_id} {verdict}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


@dataclass(slots=True, kw_only=True)
class ResumePoint:
    """What `reopen` / `restart_point` hand to the loop to go on with a logged run."""

    log: EventLog
    """The log, reopened for appending."""
    ledger: IdempotencyLedger
    """The run's write ledger, reopened."""
    state: dict[str, Any]
    """`RunState` fields rebuilt from the log (`rebuild_state`)."""
    disabled: dict[str, str] = field(default_factory=dict)
    """Tools the circuit breaker had disabled: `{tool: reason}`."""
    pending: tuple[ToolCall, ...] = ()
    """Calls of the step in flight that still need a result."""
    logged: dict[str, int] = field(default_factory=dict)
    """`{tool_call_id: tool.call event id}` for pending calls already logged."""
    redacted: tuple[ToolCall, ...] = ()
    """Calls of the step in flight whose arguments the log holds redacted: never run again
    (not in `pending`); `redacted_result` answers each."""
    filtered: tuple[ToolCall, ...] = ()
    """Calls of a reply the provider's content filter stopped (`finish_reason`
    `content_filter`) still without results: answered "not run", never run (as the loop does)."""
    answered: str | None = None
    """A finish reason when the run had answered but not logged `run.finished`."""
    report: ResumeReport | None = None
    """The checks (for `reopen`)."""


def rebuild_state(log: EventLog, branch_id: str = "main") -> dict[str, Any]:
    """`RunState` fields of a branch, rebuilt from the events it sees.

    Returns:
        `{"run_id", "branch_id", "step", "prompt_tokens", "completion_tokens",
        "consecutive_errors", "tool_history", "finish_reason", "incomplete", "call_ids"}`.
    """
    view = visible_events(log, branch_id)
    run_id = next((e.run_id or "" for e in view if isinstance(e, TaskContractEvent)), "")
    state: dict[str, Any] = {
        "run_id": run_id or log.run_id,
        "branch_id": branch_id,
        "step": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "consecutive_errors": 0,
        "tool_history": [],
        "finish_reason": None,
        "incomplete": False,
        "call_ids": set(),
    }
    step_ok: dict[int, bool] = {}
    for e in view:
        if isinstance(e, ModelResponseEvent):
            state["step"] = max(state["step"], e.step or 0)
            usage = e.usage or {}
            state["prompt_tokens"] += usage.get("prompt_tokens", 0)
            state["completion_tokens"] += usage.get("completion_tokens", 0)
            state["call_ids"].update(c.id for c in _calls_of(e))
        elif isinstance(e, ToolResultEvent):
            step = e.step or 0
            state["tool_history"].append((step, e.tool, bool(e.ok)))
            step_ok[step] = step_ok.get(step, False) or bool(e.ok)
        elif isinstance(e, RunFinishedEvent):
            state["finish_reason"] = e.finish_reason
            state["incomplete"] = bool(e.incomplete)
        elif isinstance(e, BranchForkEvent | RunRestartEvent) or (
            isinstance(e, UserMessageEvent) and state["finish_reason"] in RESUMABLE_BY_USER
        ):
            if state["finish_reason"] == "length":  # as `Run.send`: the cut answer is behind
                state["incomplete"] = False
            state["finish_reason"] = None  # a new branch, or a new user turn after an answer
    streak = 0
    for step in sorted(step_ok):
        streak = 0 if step_ok[step] else streak + 1
    state["consecutive_errors"] = streak
    return state


def _disabled_tools(view: Sequence[Event]) -> dict[str, str]:
    out: dict[str, str] = {}
    for e in view:
        if isinstance(e, ToolResultEvent) and e.circuit_opened:
            try:
                reason = json.loads(e.content or "{}").get("disabled", "")
            except json.JSONDecodeError:
                reason = ""
            out[e.tool or ""] = reason or "disabled by the circuit breaker"
    return out


#: What to do about an unusable log path.
_PATH_FIX = "pass the path of a run's .jsonl log, e.g. 'runs/<run_id>.jsonl'"


def _open_log(harness: Any, path: str | os.PathLike[str]) -> EventLog:
    """Reopen a run's log for appending with the harness's clock and redactor."""
    if hasattr(harness, "redactor"):
        return EventLog.open_existing(path, clock=harness.clock, redactor=_redactor(harness))
    return EventLog.open_existing(path, clock=harness.clock)


def _redactor(harness: Any) -> Any:
    """The harness's run redactor (its model's secrets as literals), else its `redactor`."""
    made = getattr(harness, "run_redactor", None)
    return made() if callable(made) else getattr(harness, "redactor", None)


def _open_ledger(
    harness: Any, path: str | os.PathLike[str], log: EventLog | None = None
) -> IdempotencyLedger:
    """Reopen a run's write ledger with the harness's confirmers and redactor.

    Raises:
        CorruptLogError: the ledger is corrupt (`log`, the run's reopened log, is closed first).
    """
    try:
        return IdempotencyLedger.open(
            ledger_path(path),
            confirmers=getattr(harness, "confirmers", None),
            redactor=_redactor(harness),
        )
    except EventLogError:
        if log is not None:
            log.close()
        raise


def _restore_from_log(
    harness: Any, log: EventLog, ledger: IdempotencyLedger, *, write: bool
) -> list[WriteRecord]:
    """Rebuild the ledger records the log proves but the ledger lacks (R-E5).

    The loop flushes a write's `tool.call` to the log before the tool acts, so a lost, emptied
    or cut ledger does not make a write "never started". A write `tool.call` without a result
    or ledger record has an unknown outcome (rebuilt as `started`: settled by a confirmer or by
    hand before anything is retried) when the run was killed after it (no `run.finished` on
    its branch after the call) or when the ledger lacks records of writes the log shows it
    recorded (it was lost or emptied). Only a run that stopped in order after the call (a
    gate waiting for approval, a ledger line that could not be written) with a ledger that
    holds every write the log shows has a call that never started. A write with a successful
    result was done (rebuilt as `done` with the logged result, so a repeat gets it instead of
    acting again); one that timed out is `unknown`.

    Args:
        harness: the harness going on (its tool registry says which tools write).
        log: the run's log.
        ledger: the run's ledger, as read.
        write: append the rebuilt records to the ledger file (reopen, restart) or keep them in
            memory only (`check_resume`, which changes nothing).

    Returns:
        The records rebuilt, in log order.
    """
    results: dict[int, ToolResultEvent] = {}
    by_call: dict[tuple[str, str], ToolResultEvent] = {}
    finished: dict[str, int] = {}  # branch -> its last run.finished
    ledger_lost = False  # a write the log shows went through the ledger has no record there
    for e in log.events:
        if isinstance(e, ToolResultEvent):
            if e.parent_id is not None:
                results.setdefault(e.parent_id, e)
            by_call[(e.branch_id, e.tool_call_id or "")] = e
            key = e.payload.get("idempotency_key")
            own = not (e.payload.get("duplicate") or e.payload.get("blocked_by"))
            ledger_lost = ledger_lost or (
                own and isinstance(key, str) and key not in ledger.records
            )
        elif isinstance(e, RunFinishedEvent):
            finished[e.branch_id] = e.event_id
    known = {(r.branch_id, r.tool_call_id, r.tool) for r in ledger.records.values()}
    contract = next((e for e in log.events if isinstance(e, TaskContractEvent)), None)
    run_id = log.run_id or (contract.run_id if contract is not None else "") or ""
    # key -> record, in the order of each key's latest execution: a write repeated after a
    # later write acted on what it made ran again under the same key (`IdempotencyLedger.admit`),
    # and the ledger must hold that latest outcome, after the write that made it run again
    rebuilt: dict[str, WriteRecord] = {}
    for e in log.events:
        if not isinstance(e, ToolCallEvent) or e.arguments is None or not e.tool:
            continue
        tool = harness.tools.get(e.tool)
        if tool is None or tool.risk == "read":
            continue
        if (e.branch_id, e.tool_call_id or "", e.tool) in known:
            continue
        r = results.get(e.event_id)
        if r is None:
            later = by_call.get((e.branch_id, e.tool_call_id or ""))
            r = later if later is not None and later.event_id > e.event_id else None
        logged_key = r.payload.get("idempotency_key") if r is not None else None
        key = (
            logged_key
            if isinstance(logged_key, str)
            else key_for(run_id, e.branch_id, e.tool, e.arguments, tool.parameters)
        )
        if key in ledger.records or (key in rebuilt and rebuilt[key].state != "done"):
            continue
        where = f"rebuilt from the log: {e.label} ({e.tool}, call {e.tool_call_id})"
        if r is None:
            if finished.get(e.branch_id, 0) > e.event_id and not ledger_lost:
                continue  # stopped in order before it started (e.g. a gate waiting)
            state, result = "started", None
            note = f"{where} was logged before it acted and has no result: outcome unknown"
        elif r.outcome_unknown or r.error_type == "timeout":
            state, result = "unknown", None
            note = f"{where} timed out ({r.label}): outcome unknown"
        elif r.ok is not False and not r.payload.get("duplicate") and r.error_type is None:
            state = "done"
            result = {"ok": True, "content": r.content or "", "error_type": None}
            note = f"{where} is done ({r.label})"
        else:
            continue  # failed: no effect, nothing to guard
        record = WriteRecord(
            key=key,
            state=state,
            tool=e.tool,
            arguments=dict(e.arguments),
            run_id=run_id,
            branch_id=e.branch_id,
            step=e.step if isinstance(e.step, int) and not isinstance(e.step, bool) else 0,
            tool_call_id=e.tool_call_id or "",
            natural=natural_key_for(tool, e.arguments),
            result=result,
            note=note,
        )
        if key in rebuilt and state != "done" and not _acted_on(rebuilt, key):
            continue  # a repeat served from the done write (killed before its result)
        rebuilt.pop(key, None)
        rebuilt[key] = record
        known.add((record.branch_id, record.tool_call_id, record.tool))
    return [ledger.restore(record, write=write) for record in rebuilt.values()]


def _acted_on(rebuilt: dict[str, WriteRecord], key: str) -> bool:
    """Whether a done write rebuilt after `rebuilt[key]` names an id that write made.

    Then a repeat of `rebuilt[key]` ran as a new write (`IdempotencyLedger.admit`), so a
    repeat logged without a result has an unknown outcome; otherwise it was served as a
    duplicate and never acted.
    """
    keys = list(rebuilt)
    return any(acted_on(rebuilt[key], rebuilt[k]) for k in keys[keys.index(key) + 1 :])


def _record_for(
    ledger: IdempotencyLedger, key: str, call: ToolCall, branch_id: str
) -> WriteRecord | None:
    """The ledger record of a pending call: by key, else by its call id (bound arguments)."""
    record = ledger.records.get(key)
    if record is not None:
        return record
    return next(
        (
            r
            for r in ledger.records.values()
            if r.tool_call_id == call.id and r.tool == call.name and r.branch_id == branch_id
        ),
        None,
    )


def _redacted_arguments(call: ToolCall) -> str:
    """Why `call`'s logged arguments are not its real ones ("" when they are).

    The log writes a tool call's arguments redacted (R-S1); read back, a placeholder
    (`[REDACTED:password]`) stands where the clear value was, and the value is nowhere else.
    """
    found = placeholders(call.arguments if call.arguments is not None else call.raw_arguments)
    if not found:
        return ""
    return f"its arguments were redacted in the log ({', '.join(found[:3])})"


def redacted_result(ledger: IdempotencyLedger, call: ToolCall, branch_id: str) -> ToolResult:
    """The result a resumed call whose arguments were redacted gets instead of running again.

    A write the ledger holds as done (finished, or settled as applied by a confirmer) answers
    with its recorded result, as a repeat of that write would; anything else is a failure
    telling the model the call was not run because its real arguments are gone.

    Args:
        ledger: the run's write ledger, reopened (and settled).
        call: the pending call, as the log holds it.
        branch_id: the branch it was made on.

    Returns:
        The `ToolResult` to log for `call`.
    """
    record = _record_for(ledger, "", call, branch_id)
    if record is not None and record.state == "done" and record.result:
        r = record.result
        return ToolResult(
            tool_call_id=call.id,
            name=call.name,
            ok=bool(r.get("ok")),
            content=r.get("content", ""),
            error_type=r.get("error_type"),
            meta={"idempotency_key": record.key, "duplicate": True, "duplicate_of": call.id},
        )
    effect = (
        f"; its ledger record says it had no effect ({record.state})"
        if record is not None and record.state in ("absent", "failed")
        else ""
    )
    return ToolResult.failure(
        call,
        "invalid_argument",
        f"not run: the run was resumed from its log, where this call's arguments are redacted "
        f"({', '.join(placeholders(call.arguments or call.raw_arguments)[:3])}); the real "
        f"values are not kept, so the call was not run again{effect}",
        "ask the user for the value again (it was a secret) and make the call again",
        redacted_arguments=True,
    )


def _default_branch(log: EventLog) -> str:
    for e in reversed(log.events):
        if e.type not in ("run.resume",):
            return e.branch_id
    return "main"


def _limits_dict(limits: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(limits) and not isinstance(limits, type):
        return dataclasses.asdict(limits)
    return dict(limits or {})


def _as_logged(value: Any) -> Any:
    """`value` as a log line holds it (tuples as lists, dates as their text): what it compares to.

    The recorded side of a resume check is read back from JSON; the current side is put
    through the same encoding, so an unchanged harness compares equal and a changed one does
    not.
    """
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _redacted_as_logged(harness: Any, value: Any) -> Any:
    """`value` as the log wrote it: encoded, then redacted by the harness's redactor (R-S1).

    The system prompt and the task are run data the log redacts; a placeholder in the
    recorded contract compares with the same placeholder now, not with the clear text.
    """
    redactor = getattr(harness, "redactor", None)
    if redactor is None or isinstance(redactor, str):
        return _as_logged(value)
    text = json.dumps(value, ensure_ascii=False, default=str)
    redacted, counts = redactor.redact(text)
    return json.loads(redacted if counts else text)


def _diff(recorded: Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> str:
    recorded, current = recorded or {}, current or {}
    keys = sorted(set(recorded) | set(current))
    changed = [k for k in keys if recorded.get(k) != current.get(k)]
    parts = []
    for k in changed[:6]:
        parts.append(f"{k}: {recorded.get(k, '<absent>')!r} -> {current.get(k, '<absent>')!r}")
    more = f" (+{len(changed) - 6} more)" if len(changed) > 6 else ""
    return "; ".join(parts) + more


def _filtered_reply(view: Sequence[Event]) -> bool:
    """Whether the last model response in `view` was stopped by the provider's content filter.

    Its calls are never run (`Run.step` answers them "not run"); a run killed before those
    results were logged leaves them pending, and resume must answer them the same way.
    """
    for e in reversed(view):
        if isinstance(e, ModelResponseEvent):
            return filtered_finish(e.finish_reason)  # the loop's test: any filtered word
        if isinstance(e, UserMessageEvent):
            return False
    return False


def _pending_step(view: Sequence[Event]) -> tuple[list[ToolCall], dict[str, int], str | None, int]:
    """What is left of the step in flight.

    Returns:
        The last model response's calls still without a result, `{call id: tool.call event}`
        for those already logged, a finish reason when the run had answered but not finished,
        and that response's step.
    """
    last = None
    for e in reversed(view):
        if isinstance(e, ModelResponseEvent):
            last = e
            break
        if isinstance(e, UserMessageEvent):
            return [], {}, None, 0
        # a run.finished (paused at an approval, a StopRun, an error) does not settle calls
        # that have no result yet: they stay pending
    if last is None:
        return [], {}, None, 0
    after = [e for e in view if e.event_id > last.event_id]
    calls = _calls_of(last)
    step = last.step or 0
    if not calls:
        if any(isinstance(e, RunFinishedEvent) for e in after):
            return [], {}, None, step
        brake = next((e for e in reversed(view) if isinstance(e, BrakeEvent)), None)
        reason = brake.brake if last.final and brake else "stop"
        return [], {}, reason, step
    answered = {e.tool_call_id for e in after if isinstance(e, ToolResultEvent)}
    logged = {e.tool_call_id: e.event_id for e in after if isinstance(e, ToolCallEvent)}
    pending = [c for c in calls if c.id not in answered]
    return pending, {c.id: logged[c.id] for c in pending if c.id in logged}, None, step


def _check(
    harness: Any,
    log: EventLog,
    ledger: IdempotencyLedger,
    branch_id: str,
    *,
    task: Mapping[str, Any] | None = None,
) -> tuple[ResumeReport, list[tuple[str, EffectCheck]]]:
    """Run the six resume checks; return the report and the settlements they established."""
    tr = Trajectory(log)
    view = visible_events(log, branch_id)
    contract = next((e for e in view if isinstance(e, TaskContractEvent)), None)
    if contract is None:
        raise UsageError(
            f"{log.path}: no task.contract visible on branch {branch_id!r}{_never(log)}"
        )
    start = tr.start_of(branch_id)
    checks: list[ResumeCheck] = []
    current_rev = harness.revision()

    # 1. same workspace revision
    recorded_rev = next(
        (e.workspace_revision for e in reversed(view) if e.workspace_revision is not None), None
    )
    ok = recorded_rev is None or recorded_rev == current_rev
    checks.append(
        ResumeCheck(
            name="workspace_revision",
            ok=ok,
            detail="unchanged"
            if ok
            else f"the workspace moved from {recorded_rev} to "
            f"{current_rev} while the run was interrupted; fork a branch on the new revision or "
            "restart",
            recorded=recorded_rev,
            current=current_rev,
        )
    )

    # 2. every tool call has a result or its side effect is confirmed by its ledger record
    pending, _, _, step = _pending_step(view)
    settlements: list[tuple[str, EffectCheck]] = []
    notes, unknown = [], []
    ledger_on = bool((contract.idempotency or {}).get("ledger"))
    redacted: list[str] = []
    filtered = _filtered_reply(view)
    for c in pending:
        if filtered:  # never run: `lifecycle.resume` answers it as the loop would have
            notes.append(f"{c.id} ({c.name}): in a reply the content filter stopped; not run")
            continue
        tool = harness.tools.get(c.name)
        hidden = _redacted_arguments(c)
        if hidden:
            redacted.append(c.id)
        if tool is None or tool.risk == "read" or c.arguments is None:
            notes.append(
                f"{c.id} ({c.name}): {hidden}; not run again"
                if hidden
                else f"{c.id} ({c.name}): no side effect; runs again"
            )
            continue
        run_id = log.run_id or contract.run_id or ""
        key = key_for(run_id, branch_id, c.name, c.arguments, tool.parameters)
        record = _record_for(ledger, key, c, branch_id)
        if record is not None:  # the key it was written under (redacted arguments key else)
            key = record.key
        if record is None:  # not even its tool.call was logged: it never started
            if hidden:
                notes.append(f"{c.id} ({c.name}): never started and {hidden}; not run again")
            elif ledger_on:
                notes.append(f"{c.id} ({c.name}): never started (no tool.call logged); runs now")
            else:
                unknown.append(f"{c.id} ({c.name}): the run kept no write ledger")
        elif record.state in ("done", "failed", "absent"):
            notes.append(
                f"{c.id} ({c.name}): {record.state} per its ledger record"
                + (f"; {hidden}: not run again" if hidden else "")
            )
        else:
            verdict = ledger.check(record)
            if verdict.applied is None:
                unknown.append(
                    f"{c.id} ({c.name}) started and has no result ({verdict.evidence}); pass "
                    f"Harness(confirmers={{{c.name!r}: check}}) where check(record) returns "
                    f"harnesskit.tools.EffectCheck(applied=True|False, evidence=...), or settle "
                    f"it by hand: harnesskit.tools.IdempotencyLedger.open(<log>.jsonl.idem)"
                    f".settle({key!r}, EffectCheck(...))"
                )
            else:
                settlements.append((key, verdict))
                what = "applied" if verdict.applied else "not applied"
                notes.append(f"{c.id} ({c.name}): confirmed {what} ({verdict.evidence})")
    detail = "; ".join(unknown or notes) or "every tool call has its result"
    checks.append(ResumeCheck(name="tool_calls", ok=not unknown, detail=detail))

    # 3. events after the last checkpoint
    last_cp = next((e for e in reversed(view) if isinstance(e, CheckpointEvent)), None)
    since = [e for e in view if last_cp is None or e.event_id > last_cp.event_id]
    ok = True
    if last_cp is None:
        detail = f"no checkpoint; {len(since)} events since the start"
    else:
        stage = last_cp.stage
        detail = f"last checkpoint {stage} at {last_cp.label}; {len(since)} events after it"
        cp_rev = last_cp.extra.get("workspace_revision")  # the payload's, as written
        if stage == "human-approved" and cp_rev is not None and cp_rev != current_rev:
            ok = False
            detail += (
                f"; the approval was for revision {cp_rev} and the workspace is now {current_rev}"
                ": it is void, ask again (restart) or fork"
            )
    checks.append(ResumeCheck(name="checkpoint", ok=ok, detail=detail))

    # 4. permissions still valid
    gate_now = _as_logged(harness.gate.to_dict())
    statuses = tr.statuses(now=dt.datetime.fromtimestamp(harness.clock(), dt.UTC))
    expired = [
        e.label for e in view if e.type == "human.decision" and statuses[e.event_id] == "expired"
    ]
    ok = start.get("permissions") == gate_now and not expired
    detail = (
        "unchanged"
        if start.get("permissions") == gate_now
        else _diff(start.get("permissions"), gate_now)
    )
    if expired:
        detail = ("" if detail == "unchanged" else detail + "; ") + f"expired: {', '.join(expired)}"
    checks.append(
        ResumeCheck(
            name="permissions",
            ok=ok,
            detail=detail,
            recorded=start.get("permissions"),
            current=gate_now,
        )
    )

    # 5. same policy and tool versions
    for name, key, now in (
        ("tool_versions", "tools", _as_logged(harness.tools.versions())),
        ("policy", "policy", _as_logged(harness.policy.to_dict())),
    ):
        ok = start.get(key) == now
        checks.append(
            ResumeCheck(
                name=name,
                ok=ok,
                detail="unchanged" if ok else _diff(start.get(key), now),
                recorded=start.get(key),
                current=now,
            )
        )

    # 6. unchanged task contract (goal and stop conditions)
    recorded_task = {
        "system_prompt": contract.system_prompt,
        "limits": contract.limits,
        "task": contract.task,
    }
    current_task = {
        # as recorded: with the bindings note, redacted as the log wrote it
        "system_prompt": _redacted_as_logged(harness, harness.run_system_prompt),
        "limits": _as_logged(_limits_dict(harness.limits)),
        "task": _redacted_as_logged(harness, dict(task)) if task is not None else contract.task,
    }
    ok = recorded_task == current_task
    checks.append(
        ResumeCheck(
            name="task_contract",
            ok=ok,
            detail="unchanged" if ok else _diff(recorded_task, current_task),
            recorded=recorded_task,
            current=current_task,
        )
    )
    report = ResumeReport(
        path=str(log.path),
        branch_id=branch_id,
        checks=tuple(checks),
        pending=tuple(c.id for c in pending),
        redacted_calls=tuple(redacted),
    )
    return report, settlements


#: What `check_resume` reads off the harness it is given (the run floor's `Harness`).
_HARNESS_PARTS = ("tools", "gate", "limits", "policy", "revision")


@checked_call("call it as hk.check_resume(harness, 'runs/<run_id>.jsonl')")
def check_resume(
    harness: Any,
    path: str | os.PathLike[str],
    *,
    branch_id: str | None = None,
    task: Mapping[str, Any] | None = None,
) -> ResumeReport:
    """Run the resume checks on a logged run without changing anything (R-V6).

    The six checks: `workspace_revision` (unchanged), `tool_calls` (each call of the step in
    flight has a result, or its idempotency record settles whether its side effect happened),
    `checkpoint` (the events after the last one; a `human-approved` one is void once the
    workspace moved), `permissions` (same gate, no expired approval), `tool_versions` and
    `policy` (unchanged), `task_contract` (same system prompt, limits and task).

    Args:
        harness: the harness that would go on (tools, gate, policy, limits, revision).
        path: the run's JSONL log.
        branch_id: the branch to resume; default the branch of the last event.
        task: the task now, when the caller has one to compare with the contract's.

    Returns:
        The `ResumeReport`.

    Raises:
        UsageError: `harness` is not a `Harness`, the arguments do not fit (no path), `path`
            is not a usable file path (`errors.checked_path`), the file is missing or holds
            no task contract.
        CorruptLogError: the log or its write ledger (`<log>.idem`) is corrupt, or the log's
            causal order cannot be established (a missing or looping parent, R-V4).
    """
    if not all(hasattr(harness, part) for part in _HARNESS_PARTS):
        raise UsageError(
            f"check_resume(harness, path) takes the Harness that would go on first, got "
            f"{type(harness).__name__} {harness!r:.60}; call it as hk.check_resume(h, path) "
            "with the hk.Harness you would resume with"
        )
    checked_path(path, "check_resume(harness, path)", kind="file", fix=_PATH_FIX)
    log = EventLog.read(path)
    _refuse_broken_ancestry(log, close=False)
    ledger = _open_ledger(harness, path)
    _restore_from_log(harness, log, ledger, write=False)
    report, _ = _check(harness, log, ledger, branch_id or _default_branch(log), task=task)
    ledger.close()
    return report


def reopen(
    harness: Any,
    path: str | os.PathLike[str],
    *,
    branch_id: str | None = None,
    task: Mapping[str, Any] | None = None,
) -> ResumePoint:
    """Check, then reopen a logged run for resuming: appends `run.resume` (R-V6).

    Writes whose outcome a confirmer established are settled in the ledger first; the loop
    then finishes the step in flight (`ResumePoint.pending`) and goes on. Use
    `Harness.resume(path)`, which calls this.

    Raises:
        ResumeError: a check failed; `.failed` names it and `.options` offers restart or fork.
        UsageError: `path` is not a usable file path (`errors.checked_path`), the file is
            missing or holds no task contract, or `branch_id` names no
            branch of the log (with a did-you-mean; nothing is written).
        CorruptLogError: the write ledger (`<log>.idem`) is corrupt: a line other than a
            cut-off last one is not a write record (it could hide a write that started); or
            the log's causal order cannot be established (a missing or looping parent, R-V4).
    """
    checked_path(path, "reopen(harness, path)", kind="file", fix=_PATH_FIX)
    log = _open_log(harness, path)
    with _closed_on_error(log):
        return _reopen(harness, log, path, branch_id, task)


def _reopen(
    harness: Any,
    log: EventLog,
    path: str | os.PathLike[str],
    branch_id: str | None,
    task: Mapping[str, Any] | None,
) -> ResumePoint:
    _refuse_never_started(log)
    _refuse_broken_ancestry(log, close=True)
    if branch_id is not None:  # before anything is written
        log.check_branch(branch_id, where="resume(branch_id=...)")
    ledger = _open_ledger(harness, path, log)
    restored = _restore_from_log(harness, log, ledger, write=True)
    branch = branch_id or _default_branch(log)
    report, settlements = _check(harness, log, ledger, branch, task=task)
    if not report.ok:
        log.close()
        ledger.close()
        failed = [c for c in report.checks if not c.ok]
        lines = "; ".join(f"{c.name}: {c.detail}" for c in failed)
        raise ResumeError(
            f"cannot resume {path} on branch {branch!r}: {lines}. Instead restart "
            "(harness.restart(path): run again from the task, keeping this attempt as evidence) "
            "or fork (a new branch with the current tools, policy and revision)",
            failed=report.failed,
            report=report,
        )
    for key, verdict in settlements:
        ledger.settle(key, verdict)
    view = visible_events(log, branch)
    pending, logged, answered, _ = _pending_step(view)
    filtered = list(pending) if _filtered_reply(view) else []
    if filtered:  # the loop was stopped between the filtered reply and its "not run" results
        pending, answered = [], "content_filter"
    redacted = [c for c in pending if c.id in report.redacted_calls]
    pending = [c for c in pending if c.id not in report.redacted_calls]
    state = rebuild_state(log, branch)
    log.append(
        "run.resume",
        {
            "checks": [
                dataclasses.asdict(c) | {"recorded": None, "current": None} for c in report.checks
            ],
            "pending": [c.id for c in pending],
            # calls whose real arguments the log does not hold: answered, never run again
            "redacted_calls": [{"tool_call_id": c.id, "tool": c.name} for c in redacted],
            **(
                {"filtered_calls": [{"tool_call_id": c.id, "tool": c.name} for c in filtered]}
                if filtered
                else {}
            ),
            "settled": [k for k, _ in settlements],
            **({"ledger_restored": [r.key for r in restored]} if restored else {}),
            "torn_tail": log.incomplete_tail is not None,
            "from_step": state["step"],
            "frozen": frozen_start(harness),
        },
        branch_id=branch,
        workspace_revision=harness.revision(),
        summary=f"resume {branch} at step {state['step']} ({len(pending)} pending calls)",
    )
    log.incomplete_tail = None
    return ResumePoint(
        log=log,
        ledger=ledger,
        state=state,
        disabled=_disabled_tools(view),
        pending=tuple(pending),
        logged=logged,
        redacted=tuple(redacted),
        filtered=tuple(filtered),
        answered=answered,
        report=report,
    )


def restart_point(
    harness: Any,
    path: str | os.PathLike[str],
    *,
    reason: str,
    branch_id: str | None = None,
) -> ResumePoint:
    """Restart a logged run: keep its events as evidence, run again from the task (R-V6).

    Appends a `branch.fork` at the last event before the first model request (the task
    contract and opening user turns) with the harness's frozen start, and a `run.restart` on
    that new branch `<branch>.restart<N>`. Writes keep their ledger: a natural-key duplicate
    of an earlier attempt's write is still caught, and the writes the earlier attempt
    committed are listed to the new attempt as a fact (a `user.message` from the harness with
    `committed_writes`, the ledger keys).

    Raises:
        UsageError: `path` is not a usable file path (`errors.checked_path`), the file is
            missing or holds no task contract.
        CorruptLogError: the write ledger (`<log>.idem`) is corrupt, or the log's causal order
            cannot be established (a missing or looping parent, R-V4).
    """
    checked_path(path, "restart_point(harness, path)", kind="file", fix=_PATH_FIX)
    log = _open_log(harness, path)
    with _closed_on_error(log):
        return _restart_point(harness, log, path, reason, branch_id)


def _restart_point(
    harness: Any,
    log: EventLog,
    path: str | os.PathLike[str],
    reason: str,
    branch_id: str | None,
) -> ResumePoint:
    _refuse_never_started(log)
    _refuse_broken_ancestry(log, close=True)
    ledger = _open_ledger(harness, path, log)
    _restore_from_log(harness, log, ledger, write=True)
    old = branch_id or _default_branch(log)
    view = visible_events(log, old)
    first = next((e for e in view if e.type in ("context.injected", "model.request")), None)
    opening = [e for e in view if first is None or e.event_id < first.event_id]
    if not opening or opening[0].type != "task.contract":
        raise UsageError(f"{path}: no task contract on branch {old!r} to restart from{_never(log)}")
    tr = Trajectory(log)
    taken = tr.branches()
    n = 1
    while f"{old}.restart{n}" in taken:
        n += 1
    name = f"{old}.restart{n}"
    tr.fork(opening[-1].event_id, name, frozen=frozen_start(harness), reason=f"restart: {reason}")
    log.append(
        "run.restart",
        {
            "from_branch": old,
            "reason": reason,
            "evidence_head": view[-1].event_id if view else None,
        },
        branch_id=name,
        workspace_revision=harness.revision(),
        summary=f"restart of {old}: {reason}"[:80],
    )
    done = [r for r in ledger.records.values() if r.state == "done" and r.branch_id == old]
    if done:  # the world already changed: the new attempt must know it (as a fact, R-V3)
        lines = [
            f"- {r.tool}({json.dumps(r.arguments, ensure_ascii=False, sort_keys=True)}) at step "
            f"{r.step} (call {r.tool_call_id}) -> {(r.result or {}).get('content', '')}"[:600]
            for r in sorted(done, key=lambda r: (r.step, r.tool_call_id or ""))
        ]
        log.append(
            "user.message",
            {
                "content": "[from the harness] This task is being restarted. The earlier "
                "attempt already committed these writes; they happened and must not be "
                "repeated:\n" + "\n".join(lines),
                "committed_writes": [r.key for r in done],
            },
            branch_id=name,
            summary=f"restart: {len(done)} committed writes",
        )
    return ResumePoint(log=log, ledger=ledger, state=rebuild_state(log, name))


@contextlib.contextmanager
def _closed_on_error(log: EventLog) -> Iterator[None]:
    """Close `log` (its file, and so its writer's lock) when reopening it fails half-way."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(EventLogError):
            log.close()
        raise


def _refuse_never_started(log: EventLog) -> None:
    """Raise (closing the log) when the log holds no task contract at all: nothing to go on from.

    Raises:
        UsageError: naming what happened and how to start the run again under its id.
    """
    hint = _never(log)
    if hint:
        log.close()
        raise UsageError(f"{log.path}: no task.contract in the log{hint}")


def _refuse_broken_ancestry(log: EventLog, *, close: bool) -> None:
    """Raise when the log's causal order cannot be established (R-V4): nothing appends to it.

    A parent that is not in the log, that the event's branch cannot see, or a parent chain
    that loops (an event its own ancestor) leaves the events after it out of the causal order;
    going on would add steps whose context and resume checks were built on a guess.

    Raises:
        CorruptLogError: naming the file, the events and what is wrong (the log is closed
            first when `close`).
    """
    gaps = [g for g in Trajectory(log).gaps if g.kind in ("parent", "fork")]
    if not gaps:
        return
    if close:
        log.close()
    listed = "; ".join(f"EV-{g.event_id}: {g.reason}" for g in gaps[:5])
    more = f" (+{len(gaps) - 5} more)" if len(gaps) > 5 else ""
    raise CorruptLogError(
        f"{log.path}: the causal order of the log cannot be established ({listed}{more}); "
        "the log is corrupt (a hand edit or a damaged copy), so it is not resumed or restarted. "
        "Restore the log from a backup, or read it as it is (hk.EventLog.read, "
        "hk.Trajectory(log).gaps) and run the task again as a new run"
    )


def _never(log: EventLog) -> str:
    """The hint for a log whose opening lines never completed (a kill during the first line)."""
    if any(isinstance(e, TaskContractEvent) for e in log.events):
        return ""
    run_id = log.path.name.removesuffix(".jsonl") if log.path is not None else "..."
    return (
        "; the run was stopped while writing its first line, so it never started (nothing ran "
        f"and nothing was sent): start it again under its id, harness.start(..., "
        f"run_id={run_id!r}); the cut-off line stays in the file and readers skip it"
    )
