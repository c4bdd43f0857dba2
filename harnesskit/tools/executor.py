"""Dispatch mechanism: validate, gate, run with a timeout, normalize, break circuits (R-E1–R-E4).

Every failure becomes a structured `ToolResult` (`{"ok": false, "error_type", "message",
"hint"}`), never an exception in the loop. Results are matched to calls by `tool_call_id`;
several calls in one turn run concurrently and each gets its own result. A lone call runs
without a thread hand-off when it can: inline without a timeout, and (opt-in, `INLINE_READS`)
inline under a SIGALRM timer when it is a synchronous read on the main thread
(`_run_under_alarm`); otherwise one worker thread enforces its timeout. The gate (policy)
lives in `gate.py`; this module only asks it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import inspect
import json
import os
import pathlib
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple

try:  # the C module: `signal.signal` and `getsignal` wrap it in enum conversions (~4 us a pair)
    import _signal as _sig  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - another Python
    import signal as _sig

from harnesskit import _json
from harnesskit._lazy import lazy_pattern
from harnesskit.errors import EventLogError, StopRun, ToolError
from harnesskit.messages import ToolCall, ToolResult
from harnesskit.tools.gate import Gate
from harnesskit.tools.idempotency import IdempotencyLedger
from harnesskit.tools.spec import FORMAT_EXAMPLES, Tool, ToolContext, ToolRegistry

if TYPE_CHECKING:  # imported where used: `import harnesskit` need not pay ~10 ms for them
    import concurrent.futures as cf

__all__ = ["CircuitBreaker", "Executed", "Executor", "exception_text", "schema_error_message"]

#: Results longer than this many chars are cut (and flagged) unless the tool says otherwise.
DEFAULT_MAX_RESULT_CHARS = 100_000


@dataclass(slots=True)
class CircuitBreaker:
    """Disables a tool after `threshold` consecutive failures with the same error_type (R-E3)."""

    threshold: int = 3
    """Consecutive equal failures that open the circuit."""
    streaks: dict[str, tuple[str, int]] = field(default_factory=dict)
    """`{tool: (error_type, count)}` of the current failure streak per tool."""
    open: dict[str, str] = field(default_factory=dict)
    """`{tool: reason}` of disabled tools."""

    def record(self, result: ToolResult) -> bool:
        """Update the streak for `result`; return True when this result opened the circuit."""
        name = result.name
        if result.ok or result.error_type in ("circuit_open", "permission_denied"):
            if result.ok:
                self.streaks.pop(name, None)
            return False
        kind, count = self.streaks.get(name, ("", 0))
        count = count + 1 if kind == result.error_type else 1
        self.streaks[name] = (result.error_type or "", count)
        if count >= self.threshold and name not in self.open:
            self.open[name] = (
                f"{name} failed {count} times in a row with {result.error_type}; it is disabled "
                "for the rest of this run"
            )
            return True
        return False


@dataclass(slots=True, kw_only=True)
class Executed:
    """One call as executed: the result plus what the loop logs around it."""

    call: ToolCall
    """The call (with its id)."""
    result: ToolResult
    """Its structured result."""
    tool: Tool | None = None
    """The tool, when the name was known."""
    arguments: dict[str, Any] | None = None
    """The arguments after binding and validation."""
    emitted: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Events the tool asked to append (`ToolContext.emit`), in order."""


def exception_text(exc: BaseException, *, with_type: bool = True) -> str:
    """Describe `exc` as text without ever raising (R-E1: every tool failure is a result).

    A tool's own exception class may have a `__str__` that itself raises (it reads an attribute
    its `__init__` never set); the description then falls back to the `repr`, and to a fixed
    text naming the type when the `repr` fails too.

    Args:
        exc: the exception.
        with_type: prefix the type name (`"ValueError: bad"`); without it only the message.

    Returns:
        One line of text, never raising.
    """
    name = type(exc).__name__
    try:
        text = str(exc)
    except Exception:  # a broken __str__
        try:
            text = f"{exc!r} (its message could not be made: str() raised)"
        except Exception:  # a broken __repr__ as well
            text = "(its message could not be made: str() and repr() raised)"
    return f"{name}: {text}" if with_type else text


def schema_error_message(error: Any) -> tuple[str, str]:
    """Turn a jsonschema `ValidationError` into `(message, hint)`.

    The message names the JSON path, what was expected and what was received (R-E1).
    """
    path = error.json_path
    received = json.dumps(error.instance, ensure_ascii=False, default=str)
    if len(received) > 200:
        received = received[:200] + "…"
    phrases: dict[str, Callable[[Any], str]] = {
        "type": lambda v: f"type {v}",
        "enum": lambda v: f"one of {json.dumps(v)}",
        "required": lambda v: f"required properties {json.dumps(v)}",
        "format": lambda v: (
            f"format {v}" + (f" ({FORMAT_EXAMPLES[v]})" if v in FORMAT_EXAMPLES else "")
        ),
        "additionalProperties": lambda v: "no properties beyond the schema's",
        "minItems": lambda v: f"at least {v} items",
        "maxItems": lambda v: f"at most {v} items",
        "minimum": lambda v: f"a value >= {v}",
        "maximum": lambda v: f"a value <= {v}",
        "pattern": lambda v: f"a string matching {v}",
    }
    phrase = phrases.get(str(error.validator), lambda v: f"{error.validator} {v}")
    expected = phrase(error.validator_value)
    message = f"at {path}: expected {expected}, received {received} ({error.message})"
    hint = f"fix the argument at {path} to match the tool's schema and call again"
    return message, hint


class Executor:
    """Runs tool calls against a registry under a gate.

    Args:
        registry: the tools.
        gate: permission policy; default `Gate()` (read/write allow, destructive confirm→deny).
        circuit_threshold: equal consecutive failures before a tool is disabled (R-E3).
        max_workers: how many calls of one turn run at once; the rest start as earlier ones
            end or are given up on.
        bind: optional hook `bind(arguments, call) -> arguments` run before validation
            (parameter bindings, R-A6); it raises `ToolError` for a bad binding.
        postprocess: optional hook `postprocess(executed) -> ToolResult` run on every result
            (e.g. forced externalization, R-A1).
        idempotency: the run's write ledger (R-E5): write calls are admitted, recorded before
            they run and after, and a repeated or unknown-outcome write does not act again.
        timer: monotonic clock (seconds) that tool durations are measured on; inject one for
            deterministic logs.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        gate: Gate | None = None,
        *,
        circuit_threshold: int = 3,
        max_workers: int = 8,
        bind: Callable[[dict[str, Any], ToolCall], dict[str, Any]] | None = None,
        postprocess: Callable[[Executed], ToolResult] | None = None,
        idempotency: IdempotencyLedger | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.registry = registry
        self.timer = timer
        self.idempotency = idempotency
        self.gate = gate or Gate()
        self.breaker = CircuitBreaker(threshold=circuit_threshold)
        self.stopped: StopRun | None = None
        self.ledger_error: EventLogError | None = None
        self.bind = bind
        self.postprocess = postprocess
        self._max_workers = max(1, max_workers)

    @property
    def disabled(self) -> dict[str, str]:
        """`{tool: reason}` of tools disabled by the circuit breaker."""
        return self.breaker.open

    def raise_stop(self) -> None:
        """Re-raise the `StopRun` a tool raised during the last `execute`, if any.

        `execute` lets every other call of the turn finish first, so that the loop records
        their results before the run ends; the stopping call itself gets no result.

        It also re-raises a failure to write the idempotency ledger after a write acted
        (disk full): `execute` returns every result first, so the loop logs them, then the run
        ends with `error`.

        Raises:
            EventLogError: the ledger could not record an outcome during the last `execute`.
            StopRun: the signal the tool raised.
        """
        failed, self.ledger_error = self.ledger_error, None
        stop, self.stopped = self.stopped, None
        if failed is not None:
            raise failed
        if stop is not None:
            raise stop

    def close(self) -> None:
        """Release what the executor holds between turns (nothing today; kept for callers).

        Calls run on daemon worker threads shared by all executors (`_Worker`): an idle one is
        reused by the next call, and one whose call was given up on (a timeout, the run's
        deadline) is never handed out again and ends when its call returns. Running tools
        are not interrupted, and a call that never returns never blocks interpreter exit.
        """

    def execute(
        self,
        calls: Sequence[ToolCall],
        context: Callable[[ToolCall], ToolContext],
        *,
        deadline: float | None = None,
    ) -> list[Executed]:
        """Execute the calls of one model turn.

        Args:
            calls: the turn's tool calls (ids must be unique; the loop ensures it).
            context: builds the `ToolContext` for a call.
            deadline: a reading of `timer` (seconds) no call is waited for past (the run's
                `max_seconds`); a call still running then fails with `timeout` (its thread is
                not interrupted; a write's outcome is unknown). `None` = only tool timeouts.
                With `INLINE_READS` on, a lone synchronous read on the main thread without a
                deadline runs inline and is interrupted at its timeout (SIGALRM, when no one
                else uses it); the result is the same `timeout` failure a worker's call gets.

        Returns:
            One `Executed` per call, in the order of `calls`; each result carries its call's id.
            A call whose tool raised `StopRun` is left out (see `raise_stop`).

        Raises:
            EventLogError: a write's `started` line could not be written to the idempotency
                ledger (disk full); no call of the turn was started. A failure to record an
                outcome is raised later, by `raise_stop`, once the loop has logged the results.
        """
        try:
            prepared = [self._prepare(c, context(c)) for c in calls]
        except BaseException:  # a pause (a confirm callback's StopRun): no call started, so
            if self.idempotency is not None:  # the turn's reserved writes are free again
                self.idempotency.release()
            raise
        runnable = [p for p in prepared if p[1] is None]
        started: dict[int, _Running | _Start | None] = {}
        pooled: list[tuple[_Ready, Executed | None]] = []  # run on workers, max_workers at once
        for p in runnable:  # every `started` line before any call: if one fails, none runs
            tool, call, args, ctx = p[0][:4]
            if ctx.idempotency_key is not None and self.idempotency is not None:
                self.idempotency.begin(tool, call, args, ctx)  # EventLogError: disk full
        for p in runnable:  # start all first: calls of one turn run concurrently
            tool, ctx, args = p[0].tool, p[0].ctx, p[0].call_args  # paths as the gate checked
            lone = len(runnable) == 1 and deadline is None
            if lone and not (tool.timeout_seconds is None and tool.is_async):
                # nothing to overlap: inline (a read under an alarm), or on one worker thread
                # that enforces the timeout
                if tool.timeout_seconds is None:
                    started[id(p)] = None
                elif _inline_eligible(tool, ctx) and _alarm_free():
                    started[id(p)] = _INLINE
                else:
                    started[id(p)] = _ON_WORKER
            else:
                pooled.append(p)
        for p in pooled[: self._max_workers]:
            started[id(p)] = self._start(p[0])
        later = iter(pooled[self._max_workers :])  # each starts when an earlier call is settled
        outcomes: dict[int, Executed] = {}
        try:
            for p in runnable:
                try:
                    outcomes[id(p)] = self._finish(p[0], started[id(p)], deadline)
                except StopRun as exc:  # the turn's other calls still finish, keep their results
                    self.stopped = self.stopped or exc
                if isinstance(started[id(p)], _Running):
                    following = next(later, None)
                    if following is not None:
                        started[id(following)] = self._start(following[0])
        finally:  # Ctrl-C while waiting: the calls still running are given up on
            for state in started.values():
                if isinstance(state, _Running) and state.worker is not None:
                    state.worker.abandon(None)
        out = []
        for p in prepared:
            if p[1] is None and id(p) not in outcomes:
                continue  # the call that stopped the run: no result, so resume sees it pending
            executed = p[1] if p[1] is not None else outcomes[id(p)]
            if self.postprocess is not None and executed.result.ok:
                executed.result = self.postprocess(executed)
            if self.breaker.record(executed.result):
                executed.result = _with_circuit_notice(
                    executed.result, self.breaker.open[executed.call.name]
                )
            if p[1] is None and p[0].paths:  # what the tool got for the paths the model sent
                executed.result = _replace_meta(executed.result, {"resolved_paths": p[0].paths})
            key = p[0].ctx.idempotency_key if p[1] is None else None
            if key is not None and self.idempotency is not None:
                try:
                    self.idempotency.finish(key, executed.result)
                except EventLogError as exc:  # the tool acted: its result is still recorded
                    self.ledger_error = self.ledger_error or exc
                # the key goes into the tool.result event, so every write names it (R-E5)
                executed.result = _replace_meta(executed.result, {"idempotency_key": key})
            out.append(executed)
        if self.idempotency is not None:
            self.idempotency.release()
        return out

    def _prepare(self, call: ToolCall, ctx: ToolContext) -> tuple[_Ready, Executed | None]:
        """Check everything that needs no tool execution; return a failure or what to run."""
        tool = self.registry.get(call.name)
        none: Any = _Ready(None, call, {}, ctx, {}, {})  # type: ignore[arg-type]  # never run
        if call.name in self.breaker.open:  # an invented name trips the circuit too (R-E3)
            return none, self._fail(
                call,
                tool,
                "circuit_open",
                self.breaker.open[call.name],
                "do not call this tool again in this run; use another way",
            )
        if tool is None:
            names = self.registry.closest(call.name, n=len(self.registry))
            msg = f"no tool named {_json.excerpt(call.name, 80)!r}"
            if call.parse_error is not None:  # a malformed call entry: say what was wrong too
                msg += f" ({call.parse_error})"
            hint = f"call one of these tools instead (closest first): {', '.join(names)}"
            return none, Executed(
                call=call,
                result=ToolResult.failure(call, "unknown_tool", msg, hint, valid_names=names),
            )
        if call.arguments is None:
            if call.parse_error == "truncated":
                return none, self._fail(
                    call,
                    tool,
                    "truncated_call",
                    "the arguments were cut off by the output limit (finish_reason=length)",
                    "raise the model's output limit (max_tokens) or make the call smaller",
                )
            return none, self._fail(
                call,
                tool,
                call.parse_error_type or "invalid_argument",
                call.parse_error or "no arguments",
                call.parse_hint or "send the arguments as one JSON object matching the schema",
                received=_json.stand_in(call.raw_arguments or "", None),
            )
        args = dict(call.arguments)
        if self.bind is not None:
            try:
                args = self.bind(args, call)
            except ToolError as exc:
                return none, self._fail(call, tool, exc.error_type, str(exc), exc.hint)
        errors = tool.argument_errors(args)
        if errors:
            message, hint = schema_error_message(errors[0])
            if len(errors) > 1:
                message += f" (and {len(errors) - 1} more schema errors)"
            return none, self._fail(call, tool, "invalid_argument", message, hint, arguments=args)
        try:  # dates, datetimes and Enum members must parse as the function's hints say
            tool.call_arguments(args)
        except ToolError as exc:
            return none, self._fail(call, tool, exc.error_type, str(exc), exc.hint, arguments=args)
        preview = None
        dry_run = bool(self.gate.dry_run and tool.risk != "read")
        if dry_run and not tool.supports_dry_run:
            return none, self._fail(
                call,
                tool,
                "permission_denied",
                f"this run is dry-run only and {tool.name} cannot dry-run",
                "describe the change to the user instead of making it",
            )
        # R-E4: a relative path is checked from the workspace root, so the tool gets the
        # resolved absolute path that was checked, never the text it would open from the cwd
        call_args, paths = self.gate.resolve_paths(tool, args)
        if (
            tool.supports_dry_run
            and self.gate.decision_for(tool, recovered=call.recovered) == "confirm"
            and self.gate.check_paths(tool, call_args) is None  # no dry run on a denied path
        ):
            preview = self._call(tool, call_args, ctx, dry_run=True)[0]
        decision = self.gate.check(
            tool, call_args, tool_call_id=call.id, preview=preview, recovered=call.recovered
        )
        if not decision.allowed:
            failed = self._fail(
                call,
                tool,
                "permission_denied",
                decision.reason,
                "make a real tool call if you mean to run it; do not write it as JSON in text"
                if call.recovered and decision.decision == "confirm"
                else "do not retry this call; ask the user or choose another action",
                arguments=args,
            )
            if decision.decision == "confirm":  # a human (callback) said no: keep the fact
                failed.result = _replace_meta(failed.result, {"approval": "denied"})
            return none, failed
        if self.idempotency is not None and not dry_run and tool.risk != "read":
            recorded = self.idempotency.admit(tool, call, args, ctx)
            if recorded is not None:
                return none, Executed(call=call, tool=tool, arguments=args, result=recorded)
        ctx.dry_run = dry_run
        ctx.approval = "approved" if decision.approved_by == "callback" else None
        return _Ready(tool, call, args, ctx, call_args, paths), None

    def _start(self, ready: _Ready) -> _Running:
        """Start a call on an idle (or new) daemon worker thread."""
        tool, ctx = ready.tool, ready.ctx
        worker = _take_worker()
        worker.start(functools.partial(self._call, tool, ready.call_args, ctx, dry_run=ctx.dry_run))
        return _Running(worker, time.monotonic())

    def _fail(
        self,
        call: ToolCall,
        tool: Tool | None,
        error_type: str,
        message: str,
        hint: str | None,
        *,
        arguments: dict[str, Any] | None = None,
        received: str | None = None,
    ) -> Executed:
        result = ToolResult.failure(call, error_type, message, hint)
        if received is not None:  # the raw text, bounded and clean, for the model to see
            body = json.loads(result.content)
            body["received"] = json.loads(received)["_unparsed_arguments"]["excerpt"]
            raw = call.raw_arguments or ""
            result = dataclasses.replace(
                result,
                content=json.dumps(body, ensure_ascii=False),
                meta={**result.meta, "raw_arguments": _json.clean_text(raw)},
            )
        return Executed(call=call, tool=tool, arguments=arguments, result=result)

    def _call(
        self, tool: Tool, args: dict[str, Any], ctx: ToolContext, *, dry_run: bool
    ) -> tuple[Any, float]:
        kwargs = tool.call_arguments(args)  # JSON strings -> date, datetime, Enum (checked)
        for key, value in kwargs.items():  # the tool gets its own lists and dicts: the logged
            if type(value) in _CONTAINERS:  # call and the model's arguments stay as sent
                kwargs[key] = _fresh(value)
        if tool.context_param:
            kwargs[tool.context_param] = ctx
        if tool.supports_dry_run:
            kwargs["dry_run"] = dry_run
        t0 = self.timer()
        value = tool.fn(**kwargs)
        if type(value) not in _NEVER_AWAITABLE and inspect.isawaitable(value):
            # async tools run to completion on this worker thread
            import asyncio  # deferred: about a third of `import harnesskit`'s time otherwise

            value = asyncio.run(_await(value))
        return value, self.timer() - t0

    def _finish(
        self,
        ready: _Ready,
        started: _Running | _Start | None,
        deadline: float | None = None,
    ) -> Executed:
        tool, call, args, ctx = ready.tool, ready.call, ready.args, ready.ctx
        try:
            if started is None:
                value, seconds = self._call(tool, ready.call_args, ctx, dry_run=ctx.dry_run)
            elif started is _INLINE:
                done = _run_under_alarm(
                    functools.partial(self._call, tool, ready.call_args, ctx, dry_run=ctx.dry_run),
                    tool.timeout_seconds or 0.0,
                )
                if done is None:
                    return self._timed_out(tool, call, args, ctx)
                value, seconds = done
            elif started is _ON_WORKER:
                job = functools.partial(self._call, tool, ready.call_args, ctx, dry_run=ctx.dry_run)
                on_late = None
                if ctx.idempotency_key is not None and self.idempotency is not None:
                    key, ledger = ctx.idempotency_key, self.idempotency
                    on_late = functools.partial(ledger.late, key)  # a write that ends late
                # never None here: a lone call without a timeout runs inline
                done = _run_on_worker(job, tool.timeout_seconds or 0.0, on_late)
                if done is None:
                    return self._timed_out(tool, call, args, ctx)
                value, seconds = done
            else:
                worker, timeout = started.worker, tool.timeout_seconds
                assert worker is not None  # settled once, here
                elapsed = time.monotonic() - started.t0
                remaining = None if timeout is None else max(0.0, timeout - elapsed)
                outcome = self._wait(worker, remaining, deadline)
                started.worker = None
                if outcome is None:  # given up on: the thread ends when the call returns
                    on_late = None
                    if ctx.idempotency_key is not None and self.idempotency is not None:
                        key, ledger = ctx.idempotency_key, self.idempotency
                        on_late = functools.partial(ledger.late, key)  # a write that ends late
                    worker.abandon(on_late)
                    late = deadline is not None and self.timer() >= deadline
                    return self._timed_out(tool, call, args, ctx, run_time=late)
                _return_worker(worker)
                ok, done = outcome
                if not ok:
                    raise done
                value, seconds = done
        except StopRun:  # a control-flow signal for the loop, not a tool failure
            raise
        except ToolError as exc:
            message = exception_text(exc, with_type=False)
            ex = self._fail(call, tool, exc.error_type, message, exc.hint, arguments=args)
        except BaseException as exc:  # GeneratorExit, CancelledError, SystemExit: the tool's
            if not _tool_failure(exc):
                raise  # Ctrl-C, or SIGTERM's handler ending the process while the tool ran
            writes = tool.risk != "read"  # it may have acted before it raised
            ex = self._fail(
                call,
                tool,
                "tool_error",
                _failure_text(tool, exc)
                + ("; side effect: unknown (the write may have happened)" if writes else ""),
                "the write may have happened before it failed: do not repeat it blindly; check "
                "its effect with a read tool first"
                if writes
                else "the tool exited, as a command-line parser does on bad arguments; check "
                "the arguments against the tool's description"
                if isinstance(exc, SystemExit)
                else "the tool failed; check the arguments or try another approach",
                arguments=args,
            )
            meta: dict[str, Any] = {"traceback": traceback.format_exc(limit=8)}
            if writes:
                meta["outcome_unknown"] = True
            ex.result = _replace_meta(ex.result, meta)
        else:
            ex = Executed(
                call=call,
                tool=tool,
                arguments=args,
                result=_success(call, tool, value, seconds, dry_run=ctx.dry_run),
            )
            if ctx.approval:
                ex.result = _replace_meta(ex.result, {"approval": ctx.approval})
        ex.emitted = list(ctx.emitted)
        return ex

    def _wait(
        self, worker: _Worker, remaining: float | None, deadline: float | None
    ) -> tuple[bool, Any] | None:
        """The worker's outcome within `remaining` seconds and before `deadline` on `timer`.

        `None` when either passed first (the call still runs).
        """
        if deadline is None:
            return worker.wait(remaining)
        end = None if remaining is None else time.monotonic() + remaining
        while self.timer() < deadline:  # poll: the deadline is on the (injectable) timer
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                break
            outcome = worker.wait(_POLL_SECONDS if left is None else min(left, _POLL_SECONDS))
            if outcome is not None:
                return outcome
        return worker.wait(0.0)  # it may have ended just now

    def _timed_out(
        self,
        tool: Tool,
        call: ToolCall,
        args: dict[str, Any],
        ctx: ToolContext,
        *,
        run_time: bool = False,
    ) -> Executed:
        writes = tool.risk != "read"
        outcome = "unknown (the call may still complete)" if writes else "none (read-only tool)"
        within = "the run's remaining time (max_seconds)" if run_time else None
        within = within or f"{tool.timeout_seconds:g} s"
        ex = self._fail(
            call,
            tool,
            "timeout",
            f"{tool.name} did not finish within {within}; side effect: {outcome}",
            "do not repeat a write whose outcome is unknown; check its effect first"
            if writes
            else "try again later or with a narrower request",
            arguments=args,
        )
        ex.result = _replace_meta(ex.result, {"outcome_unknown": writes})
        ex.emitted = list(ctx.emitted)
        return ex


def _failure_text(tool: Tool, exc: BaseException) -> str:
    """What the model is told a tool's exception was; `sys.exit` is named as such."""
    if isinstance(exc, SystemExit):  # argparse / click in a tool: a failure, not an exit
        return f"the tool {tool.name} called sys.exit({exc.code!r}) (SystemExit)"
    return exception_text(exc)


def _tool_failure(exc: BaseException) -> bool:
    """Whether `exc`, raised by a tool call, is the tool's failure (a `tool_error` result).

    Every exception is, `BaseException`s included (`GeneratorExit`, `asyncio.CancelledError`,
    a tool's own `BaseException` subclass, `sys.exit` from argparse), but the ones that are
    the process's: Ctrl-C (`KeyboardInterrupt`), a `SystemExit` a signal handler raised, and
    the executor's own timeout alarm. `StopRun` and `ToolError` are handled before this.
    """
    if isinstance(exc, KeyboardInterrupt | _Alarm):
        return False
    return not (isinstance(exc, SystemExit) and _from_signal_handler(exc))


def _from_signal_handler(exc: SystemExit) -> bool:
    """True when a Python signal handler raised `exc` (`sys.exit` on SIGTERM, say).

    Such a handler interrupts whatever runs on the main thread, a tool included; its exit
    is the process's, so it must reach the loop (the run ends `cancelled`) rather than
    become the tool's failure. Handlers run on the main thread only, so a call on a worker
    thread never sees one.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    codes = set()
    for signum in _sig.valid_signals():
        try:
            handler = _sig.getsignal(signum)
        except (OSError, ValueError):  # pragma: no cover - a signal the platform lists oddly
            continue
        code = getattr(getattr(handler, "__func__", handler), "__code__", None)
        if code is not None:
            codes.add(code)
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            return True
        tb = tb.tb_next
    return False


#: Types a tool commonly returns that are never awaitable (skips `inspect.isawaitable`).
_NEVER_AWAITABLE = frozenset({dict, list, str, int, float, bool, type(None), tuple})
_CONTAINERS = frozenset({dict, list})  # argument values copied before a tool may change them


def _fresh(value: Any) -> Any:
    """A copy of the dicts and lists in `value`, at any depth, without recursion.

    Other values are shared; a container met twice (or in a cycle) is copied once.
    """
    copies: dict[int, Any] = {}

    def copy_of(container: Any) -> Any:
        seen = copies.get(id(container))
        if seen is None:
            seen = copies[id(container)] = (
                dict(container) if type(container) is dict else list(container)
            )
            todo.append(seen)
        return seen

    todo: list[Any] = []
    root = copy_of(value)
    while todo:
        node = todo.pop()
        for key, item in node.items() if type(node) is dict else enumerate(node):
            if type(item) in _CONTAINERS:
                node[key] = copy_of(item)
    return root


_POLL_SECONDS = 0.02  # how often a call bounded by a run deadline looks at the timer


class _Ready(NamedTuple):
    """A call that passed every check, ready to run."""

    tool: Tool
    call: ToolCall
    args: dict[str, Any]
    """The arguments after binding and validation: keyed, recorded and shown as sent."""
    ctx: ToolContext
    call_args: dict[str, Any]
    """`args` with each path resolved inside the workspace (`Gate.resolve_paths`): the tool's."""
    paths: dict[str, str]
    """`{location: absolute path}` of the paths that resolving changed."""


class _Running:
    """A call started on a worker by `Executor._start`; `worker` is None once settled."""

    __slots__ = ("t0", "worker")

    def __init__(self, worker: _Worker, t0: float) -> None:
        self.worker: _Worker | None = worker
        self.t0 = t0  # time.monotonic() at the start: the tool's timeout counts from here


class _Start(enum.Enum):
    ON_WORKER = "worker"  # a lone call with a timeout: run it on a reused worker thread
    INLINE = "inline"  # a lone read call with a timeout: on the caller's thread, under SIGALRM


_ON_WORKER: Final = _Start.ON_WORKER
_INLINE: Final = _Start.INLINE

#: Opt-in: lone synchronous read calls on the main thread run inline with their timeout enforced
#: by SIGALRM (no thread hand-off, ~15 us less CPU per call). Off by default: a tool that catches
#: every exception in a loop, or sets its own SIGALRM timer, defeats the alarm and hangs the run,
#: while a worker thread is given up on at the timeout whatever the tool does. Tests compare both.
INLINE_READS = False
_SIGALRM: int = getattr(_sig, "SIGALRM", 14)
_ITIMER_REAL: int = getattr(_sig, "ITIMER_REAL", 0)
_NO_TIMER = (0.0, 0.0)


def _inline_eligible(tool: Tool, ctx: ToolContext) -> bool:
    """A call that may run inline under an alarm: a plain synchronous read (no ledger).

    Write tools (their late outcome is settled by the ledger), async tools and tools whose
    function says it must run on a thread (`_hk_needs_thread`, e.g. an MCP forwarder) are not.
    """
    return (
        INLINE_READS
        and tool.risk == "read"
        and not tool.is_async
        and ctx.idempotency_key is None
        and not getattr(tool.fn, "_hk_needs_thread", False)
    )


def _alarm_free() -> bool:
    """True on the main thread when nothing else uses SIGALRM (default handler, no timer)."""
    if threading.get_ident() != threading.main_thread().ident:  # handlers run there only
        return False
    handler = _sig.getsignal(_SIGALRM)
    return (
        isinstance(handler, int)
        and handler == _sig.SIG_DFL
        and _sig.getitimer(_ITIMER_REAL) == _NO_TIMER
    )


class _Alarm(BaseException):
    """Raised into an inline call when its timeout passes (never leaves this module)."""


#: After the first alarm, how often (seconds) it is raised again into a call that swallowed it.
_REARM_SECONDS = 0.05
#: An alarm that comes while `_run_under_alarm` itself runs, before the call starts, comes
#: again this soon (seconds), inside the call.
_SOON_SECONDS = 0.001


def _run_under_alarm(job: Callable[[], Any], timeout: float) -> Any:
    """`job()` on this (main) thread, interrupted after `timeout` seconds: `None` then.

    The SIGALRM handler and the real-time timer are installed for the call only and put back
    exactly as they were (the default handler, no timer: `_alarm_free`). The alarm is raised
    only inside the call, never in this function's own bookkeeping; a call that catches it
    gets it again every `_REARM_SECONDS`, and its outcome after the alarm went off (a value,
    or an `Exception`) counts as a timeout, as a worker's answer after its caller gave up.
    What `job` raises otherwise is re-raised (KeyboardInterrupt and SystemExit always: the
    caller tells a tool's `sys.exit` from a signal handler's).
    """
    fired = done = False

    def on_alarm(signum: int, frame: Any) -> None:
        nonlocal fired
        if frame is not None and frame.f_code is _RUN_UNDER_ALARM_CODE:
            if not done:  # not in the call yet: ring again once it is
                _sig.setitimer(_ITIMER_REAL, _SOON_SECONDS)
            return
        fired = True
        _sig.setitimer(_ITIMER_REAL, _REARM_SECONDS)  # swallowed? it comes again
        raise _Alarm

    previous = _sig.signal(_SIGALRM, on_alarm)
    try:
        _sig.setitimer(_ITIMER_REAL, timeout)
        value = job()
    except _Alarm:
        return None
    except Exception:
        if fired:  # it caught the alarm and then failed otherwise: still a timeout
            return None
        raise
    finally:
        done = True
        _sig.setitimer(_ITIMER_REAL, 0)
        _sig.signal(_SIGALRM, previous)  # runs a pending alarm first (ignored here)
    return None if fired else value


_RUN_UNDER_ALARM_CODE = _run_under_alarm.__code__


class _Worker:
    """A daemon thread that runs one call at a time for a caller waiting with a timeout.

    A lone call with a timeout runs here rather than in the thread pool: two raw locks cost
    less than a pool round trip (future, work queue, the pool's semaphore). Idle workers are
    shared by all executors; one whose call timed out is abandoned: it exits once the call
    returns, handing the late outcome to `on_late` as a `Future` (like a pool future's done
    callback).
    """

    __slots__ = ("_abandoned", "_done", "_go", "_job", "_late", "_lock", "_outcome")

    def __init__(self) -> None:
        self._go = threading.Lock()
        self._go.acquire()
        self._done = threading.Lock()
        self._done.acquire()
        self._lock = threading.Lock()
        self._job: Callable[[], Any] | None = None
        self._outcome: tuple[bool, Any] | None = None
        self._abandoned = False
        self._late: Callable[[cf.Future[Any]], Any] | None = None
        threading.Thread(target=self._serve, name="hk-tool", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self._go.acquire()
            job, self._job = self._job, None
            if job is None:
                return
            try:
                outcome: tuple[bool, Any] = (True, job())
            except BaseException as exc:  # handed to the waiting caller, as a Future does
                outcome = (False, exc)
            with self._lock:
                abandoned = self._abandoned
                self._outcome = outcome
            if abandoned:  # the caller gave up: settle the late outcome and end
                _settle_late(self._late, outcome)
                return
            self._done.release()

    def run(
        self,
        job: Callable[[], Any],
        timeout: float,
        on_late: Callable[[cf.Future[Any]], Any] | None = None,
    ) -> tuple[bool, Any] | None:
        """`(ok, value or exception)`, or `None` when `timeout` seconds passed first."""
        self.start(job)
        outcome = self.wait(timeout)
        if outcome is None:
            self.abandon(on_late)
        return outcome

    def start(self, job: Callable[[], Any]) -> None:
        """Hand `job` to the thread (which must be idle)."""
        self._job = job
        self._go.release()

    def wait(self, timeout: float | None) -> tuple[bool, Any] | None:
        """`(ok, value or exception)` of the started job within `timeout` seconds.

        `None` when the time passed with the job still running (`timeout=None`: no limit).
        """
        if timeout is None:
            got = self._done.acquire()
        elif timeout <= 0:
            got = self._done.acquire(blocking=False)
        else:
            got = self._done.acquire(timeout=min(timeout, threading.TIMEOUT_MAX))
        if not got:
            return None
        outcome, self._outcome = self._outcome, None
        return outcome

    def abandon(self, on_late: Callable[[cf.Future[Any]], Any] | None) -> None:
        """Give up on the running job: the thread ends once it returns, never to be reused.

        `on_late(future)` gets the job's outcome then (at once if it has just ended).
        """
        with self._lock:
            self._abandoned, self._late = True, on_late
            ended = self._outcome  # the call ended between the timeout and this lock
        self.stop()
        if ended is not None:
            _settle_late(on_late, ended)

    def stop(self) -> None:
        """Let the thread end after its current call (if any)."""
        self._job = None
        self._go.release()


def _settle_late(
    on_late: Callable[[cf.Future[Any]], Any] | None, outcome: tuple[bool, Any]
) -> None:
    if on_late is None:
        return
    import concurrent.futures as cf

    future: cf.Future[Any] = cf.Future()
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
    try:
        on_late(future)
    except Exception:  # as for a Future's done callback: log it, never raise into the thread
        import logging

        logging.getLogger(__name__).exception("settling a timed-out call's late outcome failed")


_IDLE_WORKERS: list[_Worker] = []
_MAX_IDLE_WORKERS = 8
if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's threads
    os.register_at_fork(after_in_child=_IDLE_WORKERS.clear)


def _take_worker() -> _Worker:
    """An idle worker, or a new one when none is idle."""
    try:
        return _IDLE_WORKERS.pop()
    except IndexError:
        return _Worker()


def _return_worker(worker: _Worker) -> None:
    """Keep a worker whose call ended for the next call, or let it end (enough are idle)."""
    if len(_IDLE_WORKERS) < _MAX_IDLE_WORKERS:
        _IDLE_WORKERS.append(worker)
    else:
        worker.stop()


def _run_on_worker(
    job: Callable[[], Any],
    timeout: float,
    on_late: Callable[[cf.Future[Any]], Any] | None = None,
) -> Any:
    """`job()` on an idle worker thread; `None` on timeout; re-raises what `job` raised.

    After a timeout, `on_late(future)` gets the call's outcome when it finally ends.
    """
    worker = _take_worker()
    outcome = worker.run(job, timeout, on_late)
    if outcome is None:
        return None
    _return_worker(worker)
    ok, value = outcome
    if not ok:
        raise value
    return value


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _json_default(value: Any) -> Any:
    """JSON for the common non-JSON values tools return; anything else is the tool's bug."""
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    import decimal  # a value can only be one of these once its module is loaded
    import uuid

    if isinstance(value, pathlib.PurePath | uuid.UUID | decimal.Decimal):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


#: `json.dumps(value, ensure_ascii=False, default=_json_default, allow_nan=False)`, built once
#: (`json.dumps` with options builds a new encoder per call).
_STRICT_JSON = json.JSONEncoder(ensure_ascii=False, default=_json_default, allow_nan=False)


def _make_fast_strict() -> Callable[[Any], str] | None:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator
        return None
    quote = json.encoder.encode_basestring  # the C escaper (ensure_ascii=False)
    # markers=None: no circular-reference check, so the one C encoder holds no state between
    # calls and threads; a cycle then fails with RecursionError, and `_strict_text` asks
    # `_STRICT_JSON` again for the exact error it gives
    c_encode = make(None, _json_default, quote, None, ": ", ", ", False, False, False)
    return lambda value: "".join(c_encode(value, 0))


_FAST_STRICT = _make_fast_strict()


def _strict_text(value: Any) -> str:
    """`_STRICT_JSON.encode(value)` (the same text, the same errors) with one reused C encoder.

    Raises:
        TypeError, ValueError, RecursionError: what `_STRICT_JSON.encode` raises for `value`.
    """
    if _FAST_STRICT is None or isinstance(value, str):
        return _STRICT_JSON.encode(value)
    try:
        return _FAST_STRICT(value)
    except (TypeError, ValueError, RecursionError):
        return _STRICT_JSON.encode(value)  # raises the same error (a cycle: its own message)


#: A key JSON wrote from a non-str dict key (an int, float, bool or None) looks like one of
#: these; content without any cannot hold two keys that became the same text.
_CONVERTED_KEY = lazy_pattern(r'"(?:-?\d[^"]*|-?Infinity|NaN|true|false|null)": ')


def _key_clash(value: Any) -> str | None:
    """Where two keys of one dict in `value` are written as the same JSON text, or None.

    JSON object keys are strings: `json` writes `1`, `1.5`, `True` and `None` keys as
    `"1"`, `"1.5"`, `"true"` and `"null"`, so `{1: "a", "1": "b"}` becomes an object with a
    duplicate key, which readers resolve differently (most keep the last).
    """
    todo: list[tuple[Any, str]] = [(value, "$")]
    seen: set[int] = set()
    while todo:
        node, where = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if any(type(k) is not str for k in node):
                names: dict[str, Any] = {}
                for key in node:
                    name = (
                        key
                        if isinstance(key, str)
                        else next(iter(json.loads(json.dumps({key: 0}))))
                    )
                    if name in names:
                        return (
                            f"the keys {names[name]!r} and {key!r} at {where} are both written "
                            f"as {json.dumps(name, ensure_ascii=False)} (JSON keys are strings); "
                            "use one type of key per dict"
                        )
                    names[name] = key
            todo.extend((v, f"{where}.{k}") for k, v in node.items() if isinstance(v, _NESTED))
        elif isinstance(node, list | tuple):
            todo.extend((v, f"{where}[{i}]") for i, v in enumerate(node) if isinstance(v, _NESTED))
    return None


_NESTED = (dict, list, tuple)


def _success(
    call: ToolCall, tool: Tool, value: Any, seconds: float, *, dry_run: bool
) -> ToolResult:
    non_finite = False
    if isinstance(value, str):
        content = value = _json.clean_text(value)
    else:
        try:
            try:  # strict RFC 8259 JSON: a provider refuses NaN / Infinity
                content = _strict_text(value)
            except ValueError as exc:
                if "Out of range float" not in str(exc):
                    raise
                non_finite = True
                value = _json.clean(value)[0]  # NaN / +-Infinity -> None
                content = json.dumps(value, ensure_ascii=False, default=_json_default)
            if _json.clean_text(content) is not content:  # lone surrogates (os.listdir, ...)
                value = _json.clean(value)[0]
                content = _json.clean_text(
                    json.dumps(value, ensure_ascii=False, default=_json_default), escape=False
                )
        except (TypeError, ValueError, RecursionError) as exc:  # tuple keys, cycles, bytes, ...
            return ToolResult.failure(
                call,
                "tool_error",
                f"{tool.name} returned a value that cannot be sent as JSON: {exc}",
                "this is a bug in the tool, not in the call; try another approach",
            )
        clash = _key_clash(value) if _CONVERTED_KEY.search(content) else None
        if clash is not None:  # `{1: "a", "1": "b"}` would be sent as `{"1": "a", "1": "b"}`
            return ToolResult.failure(
                call,
                "tool_error",
                f"{tool.name} returned a value that cannot be sent as JSON: {clash}",
                "this is a bug in the tool, not in the call; try another approach",
            )
    limit = tool.max_result_chars or DEFAULT_MAX_RESULT_CHARS
    meta: dict[str, Any] = {"dry_run": True} if dry_run else {}
    if non_finite:  # noted, so a reader knows a null was a NaN / Infinity the tool returned
        meta["non_finite_floats"] = "sent as null"
    if len(content) > limit:
        meta.update(truncated=True, full_chars=len(content))
        content = content[:limit] + f"\n[truncated: {limit} of {len(content)} chars shown]"
    return ToolResult(
        tool_call_id=call.id,
        name=call.name,
        ok=True,
        content=content,
        value=value,
        duration_seconds=seconds,
        meta=meta,
    )


def _with_circuit_notice(result: ToolResult, reason: str) -> ToolResult:
    """The failure that opened a circuit also tells the model the tool is now disabled."""
    body = json.loads(result.content)
    body["disabled"] = reason
    return dataclasses.replace(
        result,
        content=json.dumps(body, ensure_ascii=False),
        meta={**result.meta, "circuit_opened": True},
    )


def _replace_meta(result: ToolResult, meta: dict[str, Any]) -> ToolResult:
    return dataclasses.replace(result, meta={**result.meta, **meta})
