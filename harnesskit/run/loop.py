"""The agent loop: an explicit state machine, stepped by `Run.step()` (R-L1–R-L3).

`run()` repeats `step()` until a finish reason is set. `step()` = check the limits → build the
prompt → call the model (`_call`) → run the tool calls → check the limits on the response;
events are appended as it goes (`_records`) and flushed in `finally`. A tripped brake ends the
run with one closing request for the best answer (same tools, `tool_choice="none"`), marked
incomplete. Opening, resuming, restarting and forking runs happen around the loop
(`lifecycle`). The loop renders nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from harnesskit import _repr
from harnesskit.data.artifacts import _max_class
from harnesskit.errors import BrakeTripped, ModelError, StopRun, UsageError, checked_call
from harnesskit.log import ToolResultEvent
from harnesskit.log.resume import RESUMABLE_BY_USER
from harnesskit.messages import Message, ModelResponse, ToolCall, ToolResult
from harnesskit.models._parse import filtered_finish
from harnesskit.run import _records as record
from harnesskit.run._call import call_model, record_context, run_deadline, turn_room
from harnesskit.run._classes import RequestClasses
from harnesskit.run._outcome import ends_step, pauses
from harnesskit.run._wiring import tool_contexts, wire
from harnesskit.run.harness import Harness
from harnesskit.run.limits import CLOSING, Limits
from harnesskit.run.progress import Progress
from harnesskit.run.state import RunState
from harnesskit.tools.executor import Executed
from harnesskit.tools.spec import Tool

if TYPE_CHECKING:
    from harnesskit.log.events import EventLog
    from harnesskit.tools.idempotency import IdempotencyLedger

__all__ = ["Run"]

#: The `run.finished` reason of a run ended by a refusal or the provider's content filter.
FILTERED = (
    "the model refused, or the provider's content filter stopped the answer "
    "(finish_reason content_filter); send() a rephrased turn to go on"
)


class Run:
    """One run of a harness: step it in a notebook cell with `step()`, or `run()` to the end.

    Runs are opened by `Harness.start` / `resume` / `restart` and `Run.fork`.

    One step at a time: `step`, `run`, `send` and `fork` called while a step of this run (or
    of a branch forked from it: they share the log) is running — from another thread, such as
    a `StepControls` widget's "Run to end", or from inside the step — raise `UsageError`
    instead of interleaving their events. `cancel` is never refused.

    Args:
        harness: the harness the run belongs to.
        state: the run's state (fresh, or rebuilt from a log).
        log: the run's event log.
        ledger: the run's write ledger (R-E5).
    """

    def __init__(
        self, harness: Harness, state: RunState, log: EventLog, ledger: IdempotencyLedger
    ) -> None:
        self.harness, self.state, self.log, self.ledger = harness, state, log, ledger
        self.error: BaseException | None = None
        self._tripped: BrakeTripped | None = None  # the brake that ended the run, as it tripped
        self.context, self.transport, self.executor, self.tool_specs = wire(harness, log, ledger)
        self.data_classes = RequestClasses()  # the log's event classes, read once (R-S2)
        self._busy = threading.Lock()  # held by the step running; forks share it (one log)
        # calls a pause left without results (`{call: tool.call event id}`): the next step
        # runs them, as resume does, instead of asking the model for a new turn
        self._waiting: tuple[tuple[ToolCall, ...], dict[str, int]] | None = None

    @property
    def finish_reason(self) -> str | None:
        """Why the run ended, or `None`.

        `stop`, `length` (the last answer was cut by the model's output limit; the run is
        `incomplete`), `content_filter` (the model refused, or the provider's filter stopped
        the reply; a tool call in such a reply is never run, its result says so), a brake's
        name, `cancelled`, `paused`, `error`, or a `StopRun` reason.
        """
        return self.state.finish_reason

    @property
    def final_text(self) -> str:
        """The text of the last assistant message ("" when there is none)."""
        last = self.log.last("model.response", branch_id=self.state.branch_id)
        return (last.payload["message"].get("content") or "") if last else ""

    def send(self, text: str, *, flush: bool = True) -> Run:
        """Add a user turn; a run that had stopped (`stop`, `paused`, `length`) may go on.

        A run that ended otherwise (`error`, `cancelled`, a brake, a tool's `StopRun`) takes
        no new turn: it is refused, and the message says what goes on instead (`run.fork`
        from its end, `h.resume(path)` for tool calls it was stopped in, `h.restart`).

        Args:
            text: the user's message.
            flush: write the log to disk now.

        Returns:
            `self`.

        Raises:
            UsageError: `text` is not a string, the run ended with a finish reason other than
                `stop`, `paused` or `length` (nothing is written), or a step of this run is
                running (see the class docstring).
        """
        if not isinstance(text, str):
            raise UsageError(f"run.send(...) takes the user's message as a str, got {text!r:.80}")
        st = self.state
        with self._one_at_a_time("send()"):
            if st.finish_reason is not None and st.finish_reason not in RESUMABLE_BY_USER:
                raise UsageError(
                    _ended(
                        self,
                        "send() takes a new user turn only after stop, length or paused, "
                        "and nothing was written",
                    )
                )
            record.user_message(self.log, st, text)
            if st.finish_reason in RESUMABLE_BY_USER:
                st.incomplete = st.incomplete and st.finish_reason != "length"
                st.finish_reason = None
            if flush:
                self.log.flush()
        return self

    @checked_call("call it as run.fork(event_id, 'branch-name', reason='...')")
    def fork(
        self, event_id: int, name: str, *, harness: Harness | None = None, reason: str = ""
    ) -> Run:
        """Start branch `name` at `event_id` and return a run on it (R-V5; same log).

        The branch records its frozen start and sees its ancestors, never a sibling branch.

        Args:
            event_id: the fork point: a 1-based event id, or -1..-len counting from the end.
            name: the new branch's name.
            harness: the branch's harness; default this run's.
            reason: why (recorded on the branch).

        Returns:
            A run on the new branch.

        Raises:
            UsageError: no such event, a taken name, tool calls without results at `event_id`,
                a step of this run is running, `harness` is not a `Harness`, or the arguments
                do not fit (`event_id` or `name` missing, an unknown keyword).
        """
        from harnesskit.run import lifecycle

        with self._one_at_a_time("fork()"):
            return lifecycle.fork(self, event_id, name, harness=harness, reason=reason)

    def cancel(self) -> None:
        """Ask the run to stop at the top of the next iteration (finish_reason `cancelled`)."""
        self.state.cancelled = True

    @checked_call(
        "run.run() takes no arguments: it steps until the run ends; a new user turn goes in "
        "with run.send('...'), and the step limit is hk.Limits(max_steps=...) on the Harness"
    )
    def run(self) -> Run:
        """Step until a finish reason is set (a `paused` run tries once more).

        A run that has already ended otherwise is returned as it is (`step()` and `send()`
        say how to go on from it).

        Returns:
            `self`.

        Raises:
            UsageError: a step of this run is already running (see the class docstring), or
                it was given an argument (it takes none).
        """
        with self._one_at_a_time("run()"):
            if self.state.finish_reason in (None, "paused"):
                try:
                    self._step()
                    while self.state.finish_reason is None:
                        self._step()
                finally:
                    self.log.flush()
            if self.state.finish_reason is not None:
                # an ended run holds no writer lock (a resumed one that had already ended
                # opened its log to resume): `h.resume(path)` again works; `send` reopens it
                self.log.close()
        return self

    def raise_for_stop(self) -> Run:
        """Raise `BrakeTripped` if a brake ended the run, or the model error if one did.

        Returns:
            `self` when the run ended normally (or has not ended).

        Raises:
            BrakeTripped: a brake ended the run.
        """
        if self.error is not None:
            raise self.error
        brake = self._tripped
        if brake is None or brake.brake != self.state.finish_reason:  # resumed: from the state
            brake = self.harness.limits.explain(self.state, seconds=self._elapsed())
        if brake is not None:
            raise brake
        return self

    @checked_call(
        "run.step() takes no arguments: it advances one model turn; call it again for the "
        "next, or run.run() to go on until a brake (hk.Limits(max_steps=...) on the Harness)"
    )
    def step(self) -> Run:
        """Advance one model turn and its tool calls (or close the run if a brake trips).

        A `paused` run (a fact conflict, or the model unavailable) tries the same turn again;
        one paused at an approval (a confirm callback raising `StopRun("paused")`) runs the
        calls that were waiting, asking about them again, before the model is asked anything.

        Returns:
            `self`.

        Raises:
            UsageError: the run has already finished (the message says how to go on:
                `send()` after `stop` or `length`, else a fork, resume or restart), a fake
                model ran out of turns, a step
                of this run is already running (see the class docstring), or it was given an
                argument (it takes none).
        """
        with self._one_at_a_time("step()"):
            return self._step()

    def _step(self) -> Run:
        st = self.state
        if st.finish_reason in RESUMABLE_BY_USER and st.finish_reason != "paused":
            raise UsageError(
                f"run {st.run_id} finished ({st.finish_reason}); send() a user turn to go on"
            )
        if st.finish_reason not in (None, "paused"):
            raise UsageError(_ended(self, "step() cannot go on with it"))
        waiting = self._waiting if st.finish_reason == "paused" else None
        self._waiting = None
        st.finish_reason = None
        with ends_step(self):  # brakes, pauses, errors and crashes end the step in one place
            if waiting is not None:  # paused at an approval: the same calls, asked again
                self._execute(*waiting)
            else:
                self._turn()
        return self

    @contextlib.contextmanager
    def _one_at_a_time(self, what: str) -> Iterator[None]:
        """Hold the run's step lock for `what`, or refuse at once (never waits).

        Raises:
            UsageError: another step, run, send or fork of this run holds it.
        """
        if not self._busy.acquire(blocking=False):
            raise UsageError(
                f"a step of this run is already running ({what} was called while it runs: "
                "from another thread, such as a StepControls widget's 'Run to end', or from "
                "inside the step); wait for it to end, or run.cancel() it, then call again"
            )
        try:
            yield
        finally:
            self._busy.release()

    def _turn(self) -> None:
        st, limits = self.state, self.harness.limits
        if st.cancelled:
            self._finish("cancelled")
            return
        limits.check_before_request(st, seconds=self._elapsed())
        st.step += 1
        self._progress("model")
        try:
            response = self._query(final=False)
        except (StopRun, ModelError) as exc:
            if pauses(exc, self.harness.on_unavailable):
                st.step -= 1  # the turn did not happen; the next step() tries it again
            raise
        calls = response.message.tool_calls
        if filtered_finish(response.finish_reason):  # a refusal or a filtered answer
            # the filter may have cut or withheld part of the reply: none of its calls acts,
            # and each gets a "not run" result, so a user turn goes on from a valid prompt
            self._answer_unrun(calls, lambda c: _filtered(c, response.finish_reason))
            unrun = f"; its {len(calls)} tool call(s) were not run" if calls else ""
            self._finish("content_filter", reason=FILTERED + unrun)
            return
        if not calls:
            if response.finish_reason == "length":  # R-M2: a cut answer never passes as whole
                st.incomplete = True
                limit = _output_limit(self.harness)
                self._finish(
                    "length",
                    reason="the answer was cut off by the model's output token limit"
                    + (f" (max_tokens={limit})" if limit is not None else "")
                    + "; raise max_tokens, or send() a turn asking for a shorter answer",
                )
                return
            self._finish("stop")
            return
        self._execute(self._within_cap(calls))
        limits.check_after_response(st, response, seconds=self._elapsed())

    def _within_cap(
        self, calls: tuple[ToolCall, ...], logged: dict[str, int] | None = None
    ) -> tuple[ToolCall, ...]:
        """The calls of one reply that may run: the first `Limits.max_calls_per_turn`.

        The others are answered "not run" first (`_answer_unrun`, before any call runs, so a
        pause or a stop leaves none of them pending): a write among them never acts.
        """
        cap = self.harness.limits.max_calls_per_turn
        if cap is None or len(calls) <= cap:
            return calls
        self._answer_unrun(calls[cap:], lambda c: _over_cap(c, cap, len(calls)), logged)
        return calls[:cap]

    def _query(self, *, final: bool, note: str = "") -> ModelResponse:
        st, h, log = self.state, self.harness, self.log
        extra = (Message(role="system", content=note),) if note else ()
        prompt = self.context.build(log, branch_id=st.branch_id, extra=extra)
        if prompt.pause:  # two tool facts disagree (R-C6): no request until it is resolved
            record.conflict(log, st, prompt.pause, prompt.conflicts)
            raise StopRun("paused", prompt.pause)
        self.transport.check(prompt.messages, step=st.step, branch_id=st.branch_id)  # R-A5
        # the closing request keeps the same tools (a provider's prompt cache keys on them) and
        # forbids calling them with tool_choice="none" (`call_model`)
        tools = self.tool_specs.current()
        ctx_id = record_context(self.context, h, st, log, prompt, tools, self.tool_specs)
        return call_model(
            h, st, log, prompt, tools, final=final, context_event_id=ctx_id,
            specs=self.tool_specs, classes=self.data_classes,
        )  # fmt: skip

    def _execute(self, calls: tuple[ToolCall, ...], logged: dict[str, int] | None = None) -> None:
        st, log, h = self.state, self.log, self.harness
        made_by = log.last("model.response", branch_id=st.branch_id)  # R-S2: its class
        made_class = made_by.data_class if made_by is not None else "internal"
        call_events = record.tool_calls(log, st, calls, logged or {}, made_class)
        if any(_writes(h.tools.get(c.name)) for c in calls):
            log.flush()  # write-ahead: write calls are on disk before their side effect (R-E5)
        executed = []
        try:
            executed = self.executor.execute(
                calls, tool_contexts(h, st), deadline=run_deadline(h, st)
            )
            self.transport.fit_turn(executed, room_chars=turn_room(self, calls, executed))
            floors: dict[str, str] = {}  # R-S2: the classes of the values `$bind` moved in
            for ex in executed:
                revision = h.revision() if _writes(ex.tool) else None
                # what a tool makes of restricted arguments (bound, or typed by a model that
                # saw restricted data) is restricted
                bound = _max_class(made_class, self.transport.binder.bound_class(ex.call.id) or "")
                if bound != "internal":
                    floors[ex.call.id] = bound
                record.tool_result(log, st, ex, call_events[ex.call.id], revision, floor=bound)
                st.tool_history.append((st.step, ex.result.name, ex.result.ok))
                self._progress(ex.result.error_type or "ok", tool=ex.result.name)
            record.emitted(log, st, executed, call_events, floors)
            self.executor.raise_stop()  # a tool's StopRun ends the run once the turn is recorded
        except StopRun as stop:  # a pause (a confirm callback, a tool) leaves calls waiting
            if stop.finish_reason == "paused":
                done = {ex.call.id for ex in executed}
                left = tuple(c for c in calls if c.id not in done)
                self._waiting = (left, call_events) if left else None
            raise
        ok = any(ex.result.ok for ex in executed)
        st.consecutive_errors = 0 if ok else st.consecutive_errors + 1

    def _answer_unrun(
        self,
        calls: tuple[ToolCall, ...],
        result_of: Callable[[ToolCall], ToolResult],
        logged: dict[str, int] | None = None,
    ) -> None:
        """Log `calls` (those not in `logged`) with the result `result_of(call)`, never run.

        The one way a call is answered without running: a call of a filtered reply, one
        beyond `Limits.max_calls_per_turn`, or a resumed call whose arguments the log holds
        redacted (`lifecycle.resume`).
        """
        st, log = self.state, self.log
        made_by = log.last("model.response", branch_id=st.branch_id)  # R-S2: its class
        made_class = made_by.data_class if made_by is not None else "internal"
        events = record.tool_calls(log, st, calls, logged or {}, made_class)
        for call in calls:
            result = result_of(call)
            ex = Executed(call=call, result=result, tool=self.harness.tools.get(call.name))
            record.tool_result(log, st, ex, events[call.id], None)
            st.tool_history.append((st.step, call.name, result.ok))

    def _close(self, brake: BrakeTripped) -> None:
        record.brake(self.log, self.state, brake)
        self.state.incomplete = True
        self._tripped = brake
        extra = {}
        try:
            self._query(final=True, note=CLOSING.format(brake=brake.brake))
        except ModelError as exc:
            self.error = exc
        except BrakeTripped as over:  # the closing prompt is over max_prompt_tokens: not sent
            extra["closing"] = f"not sent: {over.value:g} {over.unit} > {over.brake}={over.limit}"
        self._finish(brake.brake, **extra)

    def _finish(self, finish_reason: str, **extra: Any) -> Run:
        self.state.finish_reason = finish_reason
        self.executor.close()
        record.finished(self.log, self.state, self._elapsed(), extra)
        self._progress("finished", finish_reason=finish_reason)
        self.log.close()
        return self

    def _elapsed(self) -> float:
        return self.harness.timer() - self.state.started

    def _progress(self, status: str, **kw: Any) -> None:
        if (emit := self.harness.progress) is not None:
            max_steps = self.harness.limits.max_steps
            emit(Progress(step=self.state.step, status=status, max_steps=max_steps, **kw))

    def __repr__(self) -> str:
        st = self.state
        return (
            f"<Run {st.run_id} step={st.step} finish_reason={st.finish_reason} "
            f"tokens={st.total_tokens} events={len(self.log)}>"
        )

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def _ended(run: Run, what: str) -> str:
    """The message for `what` refused on a run that ended for good, with the ways that work.

    The run ended `error`, `cancelled`, with a brake or a tool's `StopRun`; every way named
    works on this run (`tests/run/test_send_after_end.py` follows each).
    """
    st, log = run.state, run.log
    reason = st.finish_reason
    path = str(log.path) if log.path is not None else None
    ways = []
    if _calls_in_flight(log, st.branch_id):  # a fork at the end is refused: no results yet
        if path is not None:
            ways.append(
                f"h.resume({path!r}) runs the tool calls it was stopped in (a write done "
                "before returns its recorded result) and goes on"
            )
        ways.append(
            "run.fork(event_id, 'retry') from an event before its last model response goes on "
            "from there on a new branch"
        )
    elif reason in _BRAKES:
        ways.append(
            f"run.fork(-1, 'retry', harness=h2) goes on from its end on a new branch, with h2 a "
            f"Harness whose hk.Limits({reason}=...) is higher (with the same limits the brake "
            "trips again)"
        )
    else:
        ways.append(
            "run.fork(-1, 'retry') goes on from its end on a new branch (the same history; the "
            "model is asked again)"
        )
    if path is not None:
        ways.append(f"h.restart({path!r}, reason='...') runs the task again from the start")
    extra = ""
    if (
        reason == "error"
        and run.error is not None
        and run.harness.on_unavailable == "error"
        and pauses(run.error, "pause")
    ):
        extra = (
            "; next time, Harness(on_unavailable='pause') makes a model that stays unavailable "
            "pause the run instead, and run() tries again"
        )
    return f"run {st.run_id} finished ({reason}); {what}. To go on: " + "; or ".join(ways) + extra


_BRAKES = frozenset(f.name for f in dataclasses.fields(Limits))


def _calls_in_flight(log: EventLog, branch_id: str) -> bool:
    """Whether the branch's last model response holds tool calls that have no result."""
    last = log.last("model.response", branch_id=branch_id)
    if last is None:
        return False
    calls = {c.get("id") for c in (last.payload["message"].get("tool_calls") or ())}
    if not calls:
        return False
    results = log.of_type(ToolResultEvent, branch_id=branch_id)
    done = {e.tool_call_id for e in results if e.event_id > last.event_id}
    return not calls <= done


def _filtered(call: ToolCall, finish: str | None) -> ToolResult:
    """The result of a call in a reply the provider's filter stopped: not run."""
    return ToolResult.failure(
        call,
        "permission_denied",
        f"not run: the provider's content filter stopped the reply that made this call "
        f"(finish_reason {finish}); a filtered reply may be cut or altered, so none of its "
        "tool calls were run",
        "nothing was done by this call; if it is still needed, make it again in a new reply",
        not_run=True,
    )


def _over_cap(call: ToolCall, cap: int, made: int) -> ToolResult:
    """The result of a call beyond `Limits.max_calls_per_turn`: not run.

    Kept short: a reply with thousands of calls gets one such result each.
    """
    return ToolResult.failure(
        call,
        "permission_denied",
        f"not run: the reply made {made} tool calls and at most {cap} run per turn "
        f"(max_calls_per_turn); only the first {cap} ran",
        "nothing was done; make it again in a later turn if still needed",
        not_run=True,
    )


def _output_limit(harness: Harness) -> int | None:
    """The output limit (tokens) the harness's settings give each request, if any."""
    value = harness.settings.get("max_tokens", harness.settings.get("max_completion_tokens"))
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _writes(tool: Tool | None) -> bool:
    return tool is not None and tool.risk != "read"
