"""The agent loop: an explicit state machine, stepped by `Run.step()` (R-L1–R-L3).

`step()` = check brakes → build the prompt under the context policy → call the model → run the
tool calls → append events → flush. `run()` repeats `step()` until a finish reason is set.
A tripped brake ends the run with one tool-less request for the best answer from what is known,
marked incomplete. The loop renders nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnesskit.context.builder import ContextBuilder, ContextPolicy
from harnesskit.context.tokens import TokenEstimator
from harnesskit.data.artifacts import ArtifactStore
from harnesskit.data.transport import Transport, TransportPolicy
from harnesskit.errors import BrakeTripped, ModelError, ModelOutputError, StopRun, UsageError
from harnesskit.log.events import EventLog, hash_json
from harnesskit.log.redact import Redactor
from harnesskit.messages import Message, ModelRequest, ModelResponse, ToolCall, Usage
from harnesskit.models import ReplayModel
from harnesskit.models.base import Model, get_model
from harnesskit.tools.executor import Executor
from harnesskit.tools.gate import Gate
from harnesskit.tools.idempotency import Confirmer, IdempotencyLedger, ledger_path
from harnesskit.tools.spec import Tool, ToolContext, ToolRegistry

__all__ = ["Harness", "Limits", "Progress", "Run", "RunState"]

CLOSING = (
    "A limit of this run was reached ({brake}). Do not call tools. Give your best answer "
    "from what is known so far, and say what is still unknown or undone."
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The brakes, checked at the top of every iteration and after each response. `None` = off."""

    max_steps: int | None = 30
    """Model turns (steps) before the `max_steps` brake."""
    max_tokens: int | None = None
    """Cumulative prompt + completion tokens of the run (the token budget)."""
    max_prompt_tokens: int | None = None
    """Cumulative prompt tokens of the run."""
    max_seconds: float | None = None
    """Wall-clock seconds since the run started."""
    max_consecutive_errors: int | None = 5
    """Consecutive steps whose every tool call failed (a stuck agent)."""

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_tokens", "max_prompt_tokens", "max_seconds",
                     "max_consecutive_errors"):  # fmt: skip
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UsageError(f"Limits.{name} must be a number or None, got {value!r}")
            if value < 0:
                raise UsageError(f"Limits.{name} must be >= 0 (None means no limit), got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """One item of the progress stream (R-L3): a step began, a tool finished, the run ended."""

    step: int
    """The step (1-based)."""
    status: str
    """`model`, `ok`, an error_type, or `finished`."""
    tool: str | None = None
    """The tool, for tool items."""
    max_steps: int | None = None
    """The step brake, for progress bars."""
    finish_reason: str | None = None
    """Set on the `finished` item."""


@dataclass(slots=True, kw_only=True)
class RunState:
    """Everything the loop knows about a run between steps."""

    run_id: str
    """Unique id of the run."""
    branch_id: str = "main"
    """The branch being extended."""
    step: int = 0
    """Completed model turns."""
    prompt_tokens: int = 0
    """Cumulative prompt tokens (provider counts, else estimates)."""
    completion_tokens: int = 0
    """Cumulative completion tokens."""
    started: float = field(default_factory=time.monotonic)
    """`time.monotonic()` when the run started."""
    consecutive_errors: int = 0
    """Steps in a row whose every tool call failed."""
    tool_history: list[tuple[int, str, bool]] = field(default_factory=list)
    """`(step, tool, ok)` for every call, in order."""
    finish_reason: str | None = None
    """Why the run ended, or `None` while it can go on."""
    incomplete: bool = False
    """True when a brake ended the run (the final answer is a best effort)."""
    cancelled: bool = False
    """Set by `Run.cancel()`; honoured at the top of the next iteration."""
    call_ids: set[str] = field(default_factory=set)
    """Every tool_call_id used in the run (ids are made unique, R-E2)."""

    @property
    def total_tokens(self) -> int:
        """`prompt_tokens + completion_tokens`."""
        return self.prompt_tokens + self.completion_tokens

    def __repr__(self) -> str:
        return (
            f"<RunState {self.run_id} step={self.step} finish_reason={self.finish_reason} "
            f"tokens={self.total_tokens}>"
        )

    def _repr_html_(self) -> str | None:
        from harnesskit.notebook import display

        return display.render_html(self)


class Harness:
    """The runtime around a model: tools, gate, context policy, limits and the log folder.

    Args:
        tools: a `ToolRegistry` or an iterable of `Tool`s / functions.
        model: a `Model` or a `get_model` spec such as `"scripted"`.
        policy: context policy (name, dict or `ContextPolicy`).
        limits: the brakes.
        log_dir: folder for `<run_id>.jsonl` logs; `None` keeps logs in memory.
        system_prompt: the system message of every run.
        gate: the permission gate; default `Gate()`.
        settings: sampling settings sent with every request.
        progress: callback receiving `Progress` items.
        estimator: token estimator used when a model reports no usage.
        clock: wall clock (seconds since epoch) for event timestamps.
        artifacts: where large tool results go (R-A1): an `ArtifactStore` or a folder; default
            `<log_dir>/artifacts/`, or memory when there is no `log_dir`.
        transport: externalization thresholds, bindings note, R-A5 mode (`TransportPolicy`).
        workspace_revision: the workspace revision (a string, or a function returning the
            current one, e.g. a git commit); recorded in the contract, on write results and on
            forks, and checked on resume.
        confirmers: `{write_tool: confirm(record) -> EffectCheck}`: how to find out whether a
            write whose outcome is unknown took effect (used on resume, R-E5).
        redactor: secret scanner for every event (R-S1); default `Redactor()` (keys, tokens,
            passwords, private keys, e-mails); `None` turns it off.
        on_unavailable: when the model (or every node of a `FallbackModel` chain) stays
            unavailable after its retries: `"error"` ends the run (`finish_reason="error"`),
            `"pause"` ends the step with `finish_reason="paused"` and a later `step()` or
            `run()` tries again (R-M5).
    """

    def __init__(
        self,
        tools: ToolRegistry | Sequence[Tool | Callable[..., Any]] = (),
        model: Model | str = "scripted",
        *,
        policy: Any = None,
        limits: Limits | None = None,
        log_dir: str | Path | None = None,
        system_prompt: str = "",
        gate: Gate | None = None,
        settings: dict[str, Any] | None = None,
        progress: Callable[[Progress], None] | None = None,
        estimator: TokenEstimator | None = None,
        clock: Callable[[], float] = time.time,
        artifacts: ArtifactStore | str | Path | None = None,
        transport: TransportPolicy | None = None,
        workspace_revision: str | Callable[[], str | None] | None = None,
        confirmers: dict[str, Confirmer] | None = None,
        redactor: Redactor | None | str = "default",
        on_unavailable: str = "error",
    ) -> None:
        if isinstance(tools, Tool) or callable(tools) and not isinstance(tools, ToolRegistry):
            raise UsageError(
                "Harness(tools=...) takes a list of tools or a ToolRegistry: [my_tool]"
            )
        self.tools = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        self.model = get_model(model)
        if not callable(getattr(self.model, "request", None)):
            raise UsageError(
                f"Harness(model=...) needs a model (e.g. hk.ScriptedModel([...]) or "
                f"'ollama:qwen2.5'), got {model!r}"
            )
        if limits is not None and not isinstance(limits, Limits):
            raise UsageError(
                f"Harness(limits=...) takes hk.Limits(...), got {type(limits).__name__}"
            )
        if gate is not None and not isinstance(gate, Gate):
            raise UsageError(f"Harness(gate=...) takes hk.Gate(...), got {type(gate).__name__}")
        unknown = sorted(set((gate or Gate()).tools) - set(self.tools.names))
        if unknown:
            raise UsageError(
                f"Gate(tools=...) names tools this harness does not have: {unknown}; "
                f"known tools: {self.tools.names}"
            )
        self.policy = ContextPolicy.resolve(policy)
        self.limits = limits or Limits()
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.system_prompt = system_prompt
        self.gate = gate or Gate()
        self.settings = dict(settings or {})
        self.progress = progress
        self.estimator = estimator or TokenEstimator()
        self.clock = clock
        self.artifacts = ArtifactStore.resolve(artifacts, log_dir=self.log_dir)
        self.transport = transport or TransportPolicy()
        self.redactor = Redactor() if redactor == "default" else redactor
        if on_unavailable not in ("error", "pause"):
            raise UsageError(f"on_unavailable must be 'error' or 'pause', got {on_unavailable!r}")
        self.on_unavailable = on_unavailable
        self.workspace_revision = workspace_revision
        self.confirmers = dict(confirmers or {})

    def revision(self) -> str | None:
        """The current workspace revision (`None` when not tracked)."""
        rev = self.workspace_revision
        return rev() if callable(rev) else rev

    @property
    def run_system_prompt(self) -> str:
        """The system prompt each run records and sends: `system_prompt` + bindings note (R-A6)."""
        return self.transport.system_prompt(self.system_prompt, has_tools=len(self.tools) > 0)

    def start(
        self,
        user_message: str | Sequence[str] | None = None,
        *,
        run_id: str | None = None,
        task: dict[str, Any] | None = None,
    ) -> Run:
        """Open a run: write its `task.contract` and the first user message(s).

        Args:
            user_message: the user's opening turn(s).
            run_id: the run's id; default a fresh `run-<12 hex>`.
            task: extra task facts recorded in the contract (e.g. a benchmark task id).
        """
        if isinstance(user_message, str):
            turns = [user_message]
        elif isinstance(user_message, list | tuple) or user_message is None:
            turns = list(user_message or ())
        else:
            turns = [user_message]
        if not all(isinstance(t, str) for t in turns):
            raise UsageError(f"user turns must be text, got {user_message!r:.80}")
        return Run(self, run_id or f"run-{uuid.uuid4().hex[:12]}", turns, task or {})

    def run(self, user_message: str | Sequence[str], **kwargs: Any) -> Run:
        """`start(...)` then `run()`: the run, finished."""
        return self.start(user_message, **kwargs).run()

    def resume(self, path: str | Path, *, branch_id: str | None = None) -> Run:
        """Reopen a logged run and go on from where it stopped (R-V6; see `resume.reopen`).

        The six resume checks must pass; the step in flight is finished (writes already done
        return their recorded results, never act twice), then `run()` goes on.

        Raises:
            ResumeError: a check failed (`.failed` names it; restart or fork instead).
        """
        from harnesskit.log.resume import reopen

        point = reopen(self, path, branch_id=branch_id)
        run = Run._attach(self, point)
        if point.pending:
            run._execute(point.pending, logged=point.logged)
        elif point.answered:
            run._finish(point.answered)
        run.log.flush()
        return run

    def restart(self, path: str | Path, *, reason: str, branch_id: str | None = None) -> Run:
        """Run a logged task again from its start, on a new branch (`run.restart`).

        The old attempt stays in the log as evidence; see `resume.restart_point`.
        """
        from harnesskit.log.resume import restart_point

        return Run._attach(self, restart_point(self, path, reason=reason, branch_id=branch_id))


class Run:
    """One run of a harness: step it in a notebook cell with `step()`, or `run()` to the end."""

    def __init__(
        self, harness: Harness, run_id: str, user_message: Any, task: dict[str, Any]
    ) -> None:
        path = harness.log_dir / f"{run_id}.jsonl" if harness.log_dir else None
        log = EventLog(path, run_id=run_id, clock=harness.clock, redactor=harness.redactor)
        ledger = IdempotencyLedger(
            ledger_path(path) if path else None,
            confirmers=harness.confirmers,
            redactor=harness.redactor,
        )
        self._setup(harness, RunState(run_id=run_id), log, ledger)
        revision = harness.revision()
        self.log.append(
            "task.contract",
            {
                "run_id": run_id,
                "system_prompt": harness.run_system_prompt,
                "task": task,
                "model": harness.model.name,
                "policy": harness.policy.to_dict(),
                "tools": harness.tools.versions(),
                "gate": harness.gate.to_dict(),
                "limits": {k: getattr(harness.limits, k) for k in Limits.__slots__},
                "workspace_revision": revision,
                "idempotency": {"ledger": ledger.path.name if ledger.path else "memory"},
            },
            workspace_revision=revision,
            summary=f"run {run_id} with {len(harness.tools)} tools",
        )
        for text in [user_message] if isinstance(user_message, str) else user_message or ():
            self.send(text, flush=False)
        self.log.flush()

    def _setup(
        self, harness: Harness, state: RunState, log: EventLog, ledger: IdempotencyLedger
    ) -> None:
        self.harness, self.state, self.log, self.ledger = harness, state, log, ledger
        self.error: BaseException | None = None
        self.context = ContextBuilder(harness.policy, estimator=harness.estimator)
        replay = harness.transport.on_violation is None and isinstance(harness.model, ReplayModel)
        self.transport = Transport(
            harness.artifacts, harness.transport, log=log, refuse=False if replay else None
        )
        self.executor = Executor(
            self.transport.registry(harness.tools),
            harness.gate,
            idempotency=ledger,
            bind=self.transport.bind,
            postprocess=self.transport.postprocess,
        )
        self._tools_key: tuple[Any, ...] | None = None
        self._tools: tuple[dict[str, Any], ...] = ()
        self._tools_tokens: tuple[Any, int] = ((), 0)

    @classmethod
    def _attach(cls, harness: Harness, point: Any) -> Run:
        """A run going on from a reopened log (`resume.ResumePoint`): no new contract."""
        run = cls.__new__(cls)
        run._setup(harness, RunState(**point.state), point.log, point.ledger)
        run.executor.breaker.open.update(point.disabled)
        return run

    # -- public API --------------------------------------------------------------------------
    @property
    def finish_reason(self) -> str | None:
        """Why the run ended (`stop`, a brake's name, `cancelled`, `error`), or `None`."""
        return self.state.finish_reason

    @property
    def final_text(self) -> str:
        """The text of the last assistant message ("" when there is none)."""
        last = self.log.last("model.response", branch_id=self.state.branch_id)
        return (last.payload["message"].get("content") or "") if last else ""

    def send(self, text: str, *, flush: bool = True) -> Run:
        """Add a user turn; a run that had stopped (`stop`, `paused`) may go on. Returns `self`."""
        self.log.append(
            "user.message",
            {"content": text},
            source="user",
            branch_id=self.state.branch_id,
            summary=text[:80],
        )
        if self.state.finish_reason in ("stop", "paused"):
            self.state.finish_reason = None
        if flush:
            self.log.flush()
        return self

    def fork(
        self, event_id: int, name: str, *, harness: Harness | None = None, reason: str = ""
    ) -> Run:
        """Start branch `name` at `event_id` and return a run on it (R-V5; same log).

        The branch records its frozen start (revision, tool versions, permissions, policy from
        `harness`, default this run's) and sees its ancestors, never a sibling branch.

        Raises:
            UsageError: a taken name, or tool calls without results at `event_id`.
        """
        from harnesskit.log.resume import ResumePoint, rebuild_state
        from harnesskit.log.trajectory import Trajectory, frozen_start

        h = harness or self.harness
        Trajectory(self.log).fork(event_id, name, frozen=frozen_start(h), reason=reason)
        point = ResumePoint(log=self.log, ledger=self.ledger, state=rebuild_state(self.log, name))
        return Run._attach(h, point)

    def cancel(self) -> None:
        """Ask the run to stop at the top of the next iteration (finish_reason `cancelled`)."""
        self.state.cancelled = True

    def run(self) -> Run:
        """Step until a finish reason is set (a `paused` run tries again); returns `self`."""
        if self.state.finish_reason == "paused":
            self.state.finish_reason = None
        while self.state.finish_reason is None:
            self.step()
        return self

    def raise_for_stop(self) -> Run:
        """Raise `BrakeTripped` if a brake ended the run, or the model error if one did.

        Returns:
            `self` when the run ended normally (or has not ended).
        """
        if self.error is not None:
            raise self.error
        brake = self._brake_values().get(self.state.finish_reason or "")
        if brake is not None:
            raise BrakeTripped(
                self.state.finish_reason or "", value=brake[0], limit=brake[1], unit=brake[2]
            )
        return self

    def step(self) -> Run:
        """Advance one model turn and its tool calls (or close the run if a brake trips).

        A `paused` run (model unavailable, `on_unavailable="pause"`) tries the model again.

        Raises:
            UsageError: the run has already finished, or a fake model ran out of turns.
        """
        st = self.state
        if st.finish_reason == "paused":
            st.finish_reason = None
        if st.finish_reason is not None:
            raise UsageError(
                f"run {st.run_id} finished ({st.finish_reason}); send() a user turn to go on"
            )
        try:
            if st.cancelled:
                return self._finish("cancelled")
            brake = self._tripped()
            if brake:
                return self._close_with_brake(brake)
            st.step += 1
            self._emit_progress("model")
            response = self._request(final=False)
            calls = response.message.tool_calls
            if not calls:
                return self._finish("stop")
            self._execute(calls)
            if self._tripped() == "max_consecutive_errors":
                return self._close_with_brake("max_consecutive_errors")
        except StopRun as stop:
            self._finish(stop.finish_reason, reason=str(stop))
        except ModelError as exc:
            reason = f"{type(exc).__name__}: {exc}"
            if self.harness.on_unavailable == "pause" and not isinstance(exc, ModelOutputError):
                st.step -= 1  # the turn did not happen; step() again retries it
                self._finish("paused", error=reason)
            else:
                self.error = exc
                self._finish("error", error=reason)
        except BaseException as exc:  # a bug or Ctrl-C: record the end, then let it propagate
            if st.finish_reason is None:
                interrupted = isinstance(exc, KeyboardInterrupt | SystemExit)
                self.error = exc
                self._finish(
                    "cancelled" if interrupted else "error", error=f"{type(exc).__name__}: {exc}"
                )
            raise
        finally:
            self.log.flush()
        return self

    # -- internals ---------------------------------------------------------------------------
    def _brake_values(self) -> dict[str, tuple[float, float | None, str]]:
        lim, st = self.harness.limits, self.state
        return {
            "max_steps": (st.step, lim.max_steps, "steps"),
            "max_tokens": (st.total_tokens, lim.max_tokens, "tokens"),
            "max_prompt_tokens": (st.prompt_tokens, lim.max_prompt_tokens, "tokens"),
            "max_seconds": (time.monotonic() - st.started, lim.max_seconds, "seconds"),
            "max_consecutive_errors": (st.consecutive_errors, lim.max_consecutive_errors, "steps"),
        }

    def _tripped(self) -> str | None:
        for name, (value, limit, _) in self._brake_values().items():
            if limit is not None and value >= limit:
                return name
        return None

    def _tool_specs(self) -> tuple[dict[str, Any], ...]:
        key = (*sorted(self.executor.disabled), self.transport.holds_artifacts)
        if key != self._tools_key:  # the same tuple object while nothing changes (log delta)
            off = key[:-1]
            specs = self.harness.tools.specs(exclude=off) + self.transport.tool_specs(off)
            self._tools_key, self._tools = key, specs
        return self._tools

    def _count_tools(self, tools: tuple[dict[str, Any], ...]) -> int:
        if self._tools_tokens[0] is not tools:  # re-encode the specs only when they change
            self._tools_tokens = (tools, self.harness.estimator.count_tools(tools))
        return self._tools_tokens[1]

    def _request(self, *, final: bool, note: str = "") -> ModelResponse:
        st, h = self.state, self.harness
        extra = (Message(role="system", content=note),) if note else ()
        prompt = self.context.build(self.log, branch_id=st.branch_id, extra=extra)
        if prompt.pause:  # two tool facts disagree (R-C6): no request until it is resolved
            self.log.append(
                "alert.conflict",
                {"step": st.step, "reason": prompt.pause, "conflicts": list(prompt.conflicts)},
                branch_id=st.branch_id,
                summary=prompt.pause[:80],
            )
            st.step -= 0 if final else 1  # the turn did not happen; step() tries it again
            raise StopRun("paused", prompt.pause)
        self.transport.check(prompt.messages, step=st.step, branch_id=st.branch_id)  # R-A5
        tools = () if final else self._tool_specs()
        injected = self.context.record(
            self.log, prompt, branch_id=st.branch_id, step=st.step, model=h.model.name
        )
        request = ModelRequest(
            messages=prompt.messages,
            tools=tools,
            settings=h.settings,
            **self._model_hooks(injected.event_id),
            run_id=st.run_id,
            step=st.step,
            final=final,
        )
        req_event = self.log.append_request(
            prompt.messages,
            tools,
            branch_id=st.branch_id,
            step=st.step,
            final=final,
            settings=h.settings,
            model=h.model.name,
            token_estimate=prompt.token_estimate,
            summary=f"step {st.step}: {len(prompt.messages)} messages",
        )
        t0 = time.monotonic()
        response = h.model.request(request)
        usage = response.usage or Usage(
            prompt_tokens=prompt.token_estimate + self._count_tools(tools),
            completion_tokens=h.estimator.count_message(response.message),
            estimated=True,
        )
        st.prompt_tokens += usage.prompt_tokens
        st.completion_tokens += usage.completion_tokens
        message = self._unique_ids(response.message)
        self.log.append(
            "model.response",
            {
                "step": st.step,
                "message": message.to_openai(),
                "usage": usage.to_dict(),
                "finish_reason": response.finish_reason,
                "model": response.model or h.model.name,
                "seconds": round(time.monotonic() - t0, 6),
                "final": final,
                "incomplete": final,
                "id_replacements": {
                    c.id: c.original_id for c in message.tool_calls if c.original_id is not None
                },
            },
            parent_id=req_event.event_id,
            branch_id=st.branch_id,
            source="model",
            summary=(message.content or ", ".join(c.name for c in message.tool_calls))[:80],
        )
        return ModelResponse(
            message=message,
            usage=usage,
            finish_reason=response.finish_reason,
            model=response.model,
            raw=response.raw,
        )

    def _model_hooks(self, context_event_id: int) -> dict[str, Any]:
        """Per-request settings, never logged: retries and switches become events (R-M3, R-M5).

        `model.retry` and `model.switch` carry the context.injected event that was (re-)sent;
        `deadline_monotonic` keeps a provider's retries inside the `max_seconds` brake.
        """
        st, limit = self.state, self.harness.limits.max_seconds

        def note(kind: str, item: Any) -> None:  # item: models' Attempt or Switch
            data = item.to_dict()
            self.log.append(
                kind,
                {"step": st.step, "context_event_id": context_event_id, **data},
                branch_id=st.branch_id,
                summary=str(data.get("error") or f"{data.get('old')} -> {data.get('new')}")[:80],
            )

        hooks: dict[str, Any] = {
            "on_attempt": lambda a: note("model.retry", a),
            "on_switch": lambda s: note("model.switch", s),
        }
        if limit is not None:
            hooks["deadline_monotonic"] = st.started + limit  # a ModelRequest field
        return hooks

    def _unique_ids(self, message: Message) -> Message:
        """Replace missing or already-used tool_call ids so results match calls by id (R-E2)."""
        calls, changed = [], False
        for i, c in enumerate(message.tool_calls):
            if not c.id or c.id in self.state.call_ids:
                new_id = f"call_{self.state.step}_{i}_{uuid.uuid4().hex[:6]}"
                c = dataclasses.replace(c, id=new_id, original_id=c.id)
                changed = True
            self.state.call_ids.add(c.id)
            calls.append(c)
        if not changed:
            return message
        return Message(
            role="assistant", content=message.content, tool_calls=tuple(calls), name=message.name
        )

    def _execute(self, calls: tuple[ToolCall, ...], logged: dict[str, int] | None = None) -> None:
        st, log = self.state, self.log
        call_events = dict(logged or {})
        for c in (c for c in calls if c.id not in call_events):
            call_events[c.id] = log.append(
                "tool.call",
                {
                    "step": st.step,
                    "tool": c.name,
                    "tool_call_id": c.id,
                    "arguments": c.arguments,
                    "raw_arguments": c.raw_arguments if c.arguments is None else None,
                },
                branch_id=st.branch_id,
                source="model",
                input_hash=hash_json([c.name, c.arguments]),
                summary=f"{c.name}({_args_text(c)})"[:80],
            ).event_id
        if any(_writes(self.harness.tools.get(c.name)) for c in calls):
            log.flush()  # write-ahead: write calls are on disk before their side effect (R-E5)

        def make_context(call: ToolCall) -> ToolContext:
            return ToolContext(
                run_id=st.run_id,
                branch_id=st.branch_id,
                step=st.step,
                tool_call_id=call.id,
                workspace=self.harness.gate.workspace,  # type: ignore[arg-type]
                now=lambda: dt.datetime.fromtimestamp(self.harness.clock(), dt.UTC),
            )

        executed = self.executor.execute(calls, make_context)
        for ex in executed:
            r, parent = ex.result, call_events[ex.call.id]
            for type_, payload in ex.emitted:
                log.append(
                    type_,
                    {"step": st.step, "tool_call_id": r.tool_call_id, **payload},
                    parent_id=parent,
                    branch_id=st.branch_id,
                    source="tool",
                )
            log.append(
                "tool.result",
                {
                    "step": st.step,
                    "tool": r.name,
                    "tool_call_id": r.tool_call_id,
                    "ok": r.ok,
                    "content": r.content,
                    "error_type": r.error_type,
                    "seconds": round(r.duration_seconds, 6),
                    **r.meta,
                },
                parent_id=parent,
                branch_id=st.branch_id,
                source="tool",
                summary=(r.content if r.ok else f"{r.error_type}: {r.message}")[:80],
                workspace_revision=self.harness.revision() if _writes(ex.tool) else None,
            )
            st.tool_history.append((st.step, r.name, r.ok))
            self._emit_progress(r.error_type or "ok", tool=r.name)
        st.consecutive_errors = (
            0 if any(ex.result.ok for ex in executed) else st.consecutive_errors + 1
        )

    def _close_with_brake(self, brake: str) -> Run:
        value, limit, unit = self._brake_values()[brake]
        self.log.append(
            "brake",
            {"step": self.state.step, "brake": brake, "value": value, "limit": limit, "unit": unit},
            branch_id=self.state.branch_id,
            summary=f"{brake}: {value:g} {unit} >= {limit}",
        )
        self.state.incomplete = True
        try:
            self._request(final=True, note=CLOSING.format(brake=brake))
        except ModelError as exc:
            self.error = exc
        return self._finish(brake)

    def _finish(self, finish_reason: str, **extra: Any) -> Run:
        st = self.state
        st.finish_reason = finish_reason
        self.executor.close()
        self.log.append(
            "run.finished",
            {
                "step": st.step,
                "finish_reason": finish_reason,
                "incomplete": st.incomplete,
                "prompt_tokens": st.prompt_tokens,
                "completion_tokens": st.completion_tokens,
                "seconds": round(time.monotonic() - st.started, 6),
                **extra,
            },
            branch_id=st.branch_id,
            summary=f"finished: {finish_reason}",
        )
        self._emit_progress("finished", finish_reason=finish_reason)
        self.log.close()
        return self

    def _emit_progress(self, status: str, **kw: Any) -> None:
        if self.harness.progress is not None:
            self.harness.progress(
                Progress(
                    step=self.state.step,
                    status=status,
                    max_steps=self.harness.limits.max_steps,
                    **kw,
                )
            )

    def __repr__(self) -> str:
        st = self.state
        return (
            f"<Run {st.run_id} step={st.step} finish_reason={st.finish_reason} "
            f"tokens={st.total_tokens} events={len(self.log)}>"
        )

    def _repr_html_(self) -> str | None:
        from harnesskit.notebook import display

        return display.render_html(self)


def _args_text(call: ToolCall) -> str:
    if call.arguments is None:
        return call.raw_arguments or ""
    return json.dumps(call.arguments, ensure_ascii=False, default=str)


def _writes(tool: Tool | None) -> bool:
    return tool is not None and tool.risk != "read"
