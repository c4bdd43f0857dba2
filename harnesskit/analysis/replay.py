"""Replay a recorded run, and counterfactual context under another policy (R-V7).

`replay` re-runs a logged run with its recorded model responses (a `ReplayModel`), sends the
user turns where they were sent, and compares every step with the recording: the exact request,
the tool calls, the tool results and the finish reason. `counterfactual` rebuilds each recorded
prompt under another context policy from the events that existed at that moment and sets the
selections and token estimates side by side.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

from harnesskit import _repr
from harnesskit._lazy import frozen_dataclass
from harnesskit.errors import (
    ContextError,
    CorruptLogError,
    HarnessError,
    StopRun,
    ToolError,
    UsageError,
    checked_path,
)
from harnesskit.log._codec import event_seconds
from harnesskit.log._types import (
    ArtifactCreatedEvent,
    ContextInjectedEvent,
    Event,
    ModelRequestEvent,
    ModelResponseEvent,
    RunFinishedEvent,
    TaskContractEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from harnesskit.log.events import EventLog, hash_json
from harnesskit.log.redact import placeholders
from harnesskit.log.resume import RESUMABLE_BY_USER
from harnesskit.log.trajectory import _calls_of, visible_events
from harnesskit.messages import Message, ModelResponse, ToolCall, Usage
from harnesskit.tools.spec import Tool, ToolContext, ToolRegistry

__all__ = ["Divergence", "ReplayReport", "counterfactual", "replay"]


@frozen_dataclass(kw_only=True)
class Divergence:
    """One place where a replay differs from its recording."""

    step: int
    """The loop step (1-based)."""
    what: str
    """`request`, `tool_calls`, `tool_result`, `finish_reason` or `length`."""
    recorded: Any
    """The recorded value (for `request`: the first differing message)."""
    replayed: Any
    """The replayed value."""


@frozen_dataclass(kw_only=True)
class ReplayReport:
    """The outcome of `replay`: the divergences, and the replay run itself."""

    divergences: tuple[Divergence, ...]
    """Every divergence, in step order; empty when the replay reproduced the recording."""
    steps: int
    """Steps recorded."""
    replayed_steps: int
    """Steps replayed."""
    run: Any = None
    """The replay `Run` (its log is in memory)."""

    @property
    def identical(self) -> bool:
        """True when nothing diverged."""
        return not self.divergences

    def frame(self) -> Any:
        """One row per divergence: step, what, recorded, replayed."""
        import pandas as pd

        rows = [dataclasses.asdict(d) for d in self.divergences]
        return pd.DataFrame(rows, columns=["step", "what", "recorded", "replayed"])

    def __repr__(self) -> str:
        verdict = "identical" if self.identical else f"{len(self.divergences)} divergences"
        return f"<ReplayReport {self.steps} steps, {verdict}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def _steps(log: EventLog, view: Sequence[Event]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for e in view:
        if isinstance(e, ModelRequestEvent):
            steps.append({"step": e.step, "request": e.event_id, "calls": [], "results": {}})
        elif isinstance(e, ModelResponseEvent) and steps:
            steps[-1]["calls"] = [(c.name, c.arguments) for c in _calls_of(e)]
        elif isinstance(e, ToolResultEvent) and steps:
            steps[-1]["results"][e.tool_call_id] = (e.ok, e.content)
        elif isinstance(e, RunFinishedEvent) and steps:
            steps[-1]["finish"] = e.finish_reason
    for s in steps:
        s["messages"] = log.request_messages(s["request"])
        s["tools"] = log.request_tools(s["request"])
    return steps


def _recorded_registry(log: EventLog, view: Sequence[Event]) -> ToolRegistry:
    """Stand-in tools answering every call with its recorded result (by tool_call_id).

    A result the recording stored as an artifact is answered with the artifact's stored value,
    read from the recorded store, so the replay stores it again as the recording did (the same
    summary, and the built-in artifact tools offered from then on); the built-in tools
    themselves are not stood in for: the replay's harness adds its own.
    """
    results = {e.tool_call_id: e.payload for e in view if isinstance(e, ToolResultEvent)}
    for e in view:
        if isinstance(e, ToolResultEvent) and e.ok is False:
            _failure_body(log, e)  # checked before anything runs
    stops = _stopping_calls(view, results)
    stored = _recorded_artifacts(log, view)
    from harnesskit.run.harness import RESERVED_TOOL_PREFIX
    from harnesskit.tools.groups import CHOOSE_GROUP

    specs: dict[str, tuple[dict[str, Any], ModelRequestEvent]] = {}
    for e in view:
        if isinstance(e, ModelRequestEvent):
            for spec in log.request_tools(e.event_id):
                function = spec.get("function") if isinstance(spec, dict) else None
                name = function.get("name") if isinstance(function, dict) else None
                if not isinstance(function, dict) or not isinstance(name, str) or not name:
                    raise _corrupt(
                        log,
                        e,
                        f"a stored tool spec is not a chat-completions tool "
                        f"({json.dumps(spec, default=str)[:120]}; expected "
                        '{"type": "function", "function": {"name": ..., "parameters": {...}}})',
                        _SPEC_TODO,
                    )
                if name.startswith(RESERVED_TOOL_PREFIX) or name == CHOOSE_GROUP:
                    continue  # a built-in tool: the replay's harness adds its own again
                specs.setdefault(name, (function, e))

    def make(name: str) -> Callable[..., Any]:
        def recorded(ctx: ToolContext, **_: Any) -> Any:
            r = results.get(ctx.tool_call_id)
            if r is None and ctx.tool_call_id in stops:  # it ended the recorded run: again
                finish = stops[ctx.tool_call_id]
                reason = finish.payload.get("reason")
                raise StopRun(
                    finish.finish_reason or "stopped", reason if isinstance(reason, str) else ""
                )
            if r is None:
                raise ToolError(f"no recorded result for call {ctx.tool_call_id} of {name}")
            if r.get("ok"):
                if ctx.tool_call_id in stored:
                    return stored[ctx.tool_call_id]
                return r.get("content", "")
            body = json.loads(r.get("content") or "{}")
            err = ToolError(body.get("message", ""), hint=body.get("hint"))
            err.error_type = body.get("error_type", "tool_error")
            raise err

        return recorded

    tools = []
    for name, (spec, request) in specs.items():
        description = spec.get("description")
        try:
            stand_in = Tool(
                name=name,
                description=description if isinstance(description, str) else "",
                parameters=spec.get("parameters") or {"type": "object"},
                fn=make(name),
                context_param="ctx",
                timeout_seconds=None,
            )
        except UsageError as exc:
            raise _corrupt(
                log, request, f"the stored spec of tool {name!r} is damaged ({exc})", _SPEC_TODO
            ) from None
        # every call is answered with its recorded result, a schema failure included, so the
        # arguments are not validated again: as logged they may hold redaction placeholders
        # (`[REDACTED:password]`) that no longer fit the schema the real values fitted (R-S1)
        object.__setattr__(stand_in, "_accepts", _accept_any)
        tools.append(stand_in)
    return ToolRegistry(tools)


def _accept_any(arguments: Any) -> bool:
    """A stand-in tool's argument check: the recorded call was checked when it was made."""
    return True


#: What to do about a damaged tool spec in a recorded log.
_SPEC_TODO = (
    "replay with tools='live' (the harness's own tools answer; the specs are only compared), "
    "or restore the log from a backup"
)


def _corrupt(log: EventLog, event: Event, what: str, todo: str) -> CorruptLogError:
    """A `CorruptLogError` naming the log, the event and what is wrong, and what to do."""
    where = log.path or "the recorded log"
    return CorruptLogError(
        f"{where}: event {event.event_id} ({event.type}): {what}; the log is corrupt (a hand "
        f"edit, a damaged copy or a log written by another tool), so it cannot be replayed: "
        f"{todo}"
    )


def _failure_body(log: EventLog, e: ToolResultEvent) -> None:
    """Check that a recorded failure is the structured body the stand-in tools give back.

    Raises:
        CorruptLogError: its content is not `{"ok": false, "error_type", "message", "hint"}`
            (plain text such as `Error: upstream failed`, or other JSON).
    """
    try:
        body = json.loads(e.content or "{}")
    except json.JSONDecodeError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("message", ""), str):
        raise _corrupt(
            log,
            e,
            f"a failed tool result holds {(e.content or '')[:80]!r}, not the structured "
            '{"ok": false, "error_type", "message", "hint"} a failure is logged as (R-E1)',
            "replay with tools='live' (the tools run again and their results are compared), "
            "or restore the log from a backup",
        )


#: The finish reason of a live replay stopped before a call whose arguments were redacted.
REDACTED_ARGUMENTS = "redacted_arguments"


def _refusing_redacted(
    bind: Callable[[dict[str, Any], ToolCall], dict[str, Any]] | None,
) -> Callable[[dict[str, Any], ToolCall], dict[str, Any]]:
    """The live replay's argument hook: stop before a call whose arguments were redacted.

    The recorded log holds `[REDACTED:<kind>]` where a secret was typed (R-S1); the real
    value is not kept, so the call cannot be made again as it was. The check runs before
    bindings, validation and the gate, so no tool of that turn starts.
    """

    def check(arguments: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        found = placeholders(arguments)
        if found:
            raise StopRun(
                REDACTED_ARGUMENTS,
                f"live replay stopped before call {call.id} ({call.name}): its recorded "
                f"arguments hold {', '.join(found[:3])}, where the log redacted a secret; the "
                "real value is not kept, so the call is not run with the placeholder. Replay "
                "with tools='recorded' to reproduce the recorded results",
            )
        return bind(arguments, call) if bind is not None else arguments

    return check


def _stopping_calls(
    view: Sequence[Event], results: dict[str | None, Any]
) -> dict[str, RunFinishedEvent]:
    """`{tool_call_id: run.finished}` of the calls that ended a recorded segment.

    A tool that raises `StopRun` (the airline `transfer_to_human_agents` in strict mode) gets
    no result: its `tool.call` is followed by the segment's `run.finished`, whose finish
    reason (`transferred`) and `reason` text the stand-in raises again.
    """
    stops: dict[str, RunFinishedEvent] = {}
    open_calls: list[str] = []
    for e in view:
        if isinstance(e, ToolCallEvent) and e.tool_call_id and e.tool_call_id not in results:
            open_calls.append(e.tool_call_id)
        elif isinstance(e, RunFinishedEvent):
            for call_id in open_calls:
                stops.setdefault(call_id, e)
            open_calls = []
        elif isinstance(e, UserMessageEvent | ModelResponseEvent):
            open_calls = []  # the run went on past them: they did not end it
    return stops


def _recorded_artifacts(log: EventLog, view: Sequence[Event]) -> dict[str, Any]:
    """`{tool_call_id: stored value}` of the results the recording stored as artifacts.

    The store is the one named in the `artifact.created` event, else `artifacts/` beside the
    log file. An artifact that cannot be read (store gone, expired, deleted) is left out: that
    call is answered with its recorded summary, and the replay reports the difference.
    """
    from harnesskit.data.artifacts import ArtifactStore

    wanted: dict[str, tuple[str, str]] = {}
    for e in view:
        if isinstance(e, ArtifactCreatedEvent) and e.tool_call_id and e.artifact_id:
            where = e.payload.get("store")
            if not isinstance(where, str) and log.path is not None:
                where = str(pathlib.Path(log.path).parent / "artifacts")
            if isinstance(where, str):
                wanted[e.tool_call_id] = (where, e.artifact_id)
    stores: dict[str, ArtifactStore] = {}
    out: dict[str, Any] = {}
    for call_id, (where, artifact_id) in wanted.items():
        try:
            store = stores.get(where) or stores.setdefault(where, ArtifactStore(where))
            text = store.read(artifact_id)
            out[call_id] = json.loads(text) if store.ref(artifact_id).kind == "json" else text
        except (HarnessError, ValueError):  # not readable: the recorded summary answers instead
            continue
    return out


def _recorded_message(log: EventLog, e: ModelResponseEvent) -> Message:
    """The assistant message a `model.response` recorded.

    Raises:
        CorruptLogError: it recorded no message (`null`), a failure (`{"error": ...}`) or a
            message that is not a chat message (no role, a call without a name).
    """
    if e.message is None:
        raise _corrupt(log, e, "it records no message", _MESSAGE_TODO)
    try:
        return Message.from_openai(e.message)
    except UsageError as exc:
        raise _corrupt(
            log,
            e,
            f"its message {json.dumps(e.message, default=str)[:100]} is not an assistant chat "
            f"message ({str(exc)[:160]})",
            _MESSAGE_TODO,
        ) from None


#: What to do about a model turn a recorded log holds damaged.
_MESSAGE_TODO = (
    "a model call that failed is logged as `run.finished` with finish_reason 'error', never as "
    "a model.response; restore the log from a backup, or replay a copy cut before this event"
)


def _first_difference(a: Sequence[Any], b: Sequence[Any]) -> int | None:
    """Index of the first message that differs (or where one list ends), `None` if equal."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def _log_path(log: Any, call: str) -> Any:
    """`log` checked as a log path (`errors.checked_path`), naming `call`'s argument."""
    return checked_path(
        log, f"{call}(log, ...)", kind="file", fix="pass an EventLog or the path of a .jsonl log"
    )


def replay(
    log: EventLog | str | os.PathLike[str],
    harness: Any,
    *,
    branch_id: str = "main",
    tools: str = "live",
) -> ReplayReport:
    """Re-run a recorded run on its recorded model responses and report divergences (R-V7).

    The replay uses a copy of `harness` whose model is a `ReplayModel` of the recorded
    responses (with their usage), whose log is in memory and whose clock is fixed, so two
    replays are identical. User turns are sent at the points they were sent. Compared per
    step: the exact request (messages and tools), the tool calls, the tool results, and the
    finish reason.

    Args:
        log: the recorded log (or its path).
        harness: supplies tools, gate, policy and limits (use fresh tool state, e.g. a new
            copy of the database: with `tools="live"` write tools act again).
        branch_id: the branch to replay (its view: ancestors and itself).
        tools: `"live"` runs `harness.tools`; `"recorded"` answers every call with its
            recorded result (nothing acts; only context building and the loop are replayed).
            A live replay stops (finish reason `redacted_arguments`, the call named in the
            `run.finished` reason) before a call whose recorded arguments hold a redaction
            placeholder: the real value is not in the log, and nothing acts on a placeholder.

    Returns:
        A `ReplayReport`.

    Raises:
        UsageError: `log` is not an `EventLog` or a usable path of one (a NUL byte, a name
            too long, a folder: `errors.checked_path`), no task contract on the branch, an
            unknown `tools` mode, or `harness` is not a `Harness`.
        CorruptLogError: the log is corrupt (see `EventLog.read`), or its contract's
            `created_at`, the replay's clock, is not a time; a `model.response` records no
            chat message (`null`, a recorded failure such as `{"error": ...}`, a call without a
            name); with `tools="recorded"`, a stored tool spec is damaged or a failed result is
            not the structured failure body (plain text). Each names the event and what to do.
    """
    from harnesskit.models.offline import ReplayModel
    from harnesskit.run.harness import Harness

    if not isinstance(harness, Harness):
        raise UsageError(
            f"replay(log, harness) needs the Harness that supplies tools, gate and policy, got "
            f"{type(harness).__name__}; e.g. hk.replay(log, hk.Harness(tools))"
        )

    recorded_log = log if isinstance(log, EventLog) else EventLog.read(_log_path(log, "replay"))
    view = visible_events(recorded_log, branch_id)
    contract = next((e for e in view if isinstance(e, TaskContractEvent)), None)
    if contract is None:
        raise UsageError(f"no task.contract visible on branch {branch_id!r}")
    if tools not in ("live", "recorded"):
        raise UsageError(f"tools must be 'live' or 'recorded', got {tools!r}")
    responses = []
    for e in view:
        if isinstance(e, ModelResponseEvent):
            usage = e.usage or {}
            responses.append(
                ModelResponse(
                    message=_recorded_message(recorded_log, e),
                    usage=Usage(
                        prompt_tokens=usage.get("prompt_tokens", 0),
                        completion_tokens=usage.get("completion_tokens", 0),
                        cached_tokens=usage.get("cached_tokens", 0),
                        estimated=usage.get("estimated", False),
                    ),
                    finish_reason=e.finish_reason,  # None when the provider sent none
                    model=e.model or "",
                    provider_finish_reason=e.payload.get("provider_finish_reason"),
                )
            )
    first_request = next((e for e in view if isinstance(e, ModelRequestEvent)), None)
    start = first_request.event_id if first_request is not None else len(recorded_log) + 1
    users = [e for e in view if isinstance(e, UserMessageEvent)]
    opening = ["" if e.content is None else e.content for e in users if e.event_id < start]
    # each later user turn goes with the recorded segment it opened (the run.finished events
    # before it say which), so turns sent together are sent together again
    finishes = [e for e in view if isinstance(e, RunFinishedEvent)]
    later: list[list[str]] = [[] for _ in range(len(finishes) + 1)]
    for e in users:
        if e.event_id > start:
            ended = sum(f.event_id < e.event_id for f in finishes)
            later[max(ended, 1)].append("" if e.content is None else e.content)
    contract_time = event_seconds(contract, recorded_log.path or "the recorded log")
    h = copy.copy(harness)
    h.model = ReplayModel(responses, name=contract.model or "replay")
    h.log_dir = None
    h.progress = None
    h.clock = lambda: contract_time
    h.system_prompt = "" if contract.system_prompt is None else contract.system_prompt
    if tools == "recorded":
        h.tools = _recorded_registry(recorded_log, view)
    run = _open(h, contract.run_id, opening, contract.task)
    if tools == "live":  # a placeholder is not the value it replaced: never act on one
        run.executor.bind = _refusing_redacted(run.executor.bind)
    divergences: list[Divergence] = []
    try:
        _drive(run, finishes[0] if finishes else None)
        for number, texts in enumerate(later[1:], start=1):
            if not texts:
                continue
            if run.finish_reason not in RESUMABLE_BY_USER:  # the recorded user went on
                break
            for text in texts:
                run.send(text)
            _drive(run, finishes[number] if number < len(finishes) else None)
    except UsageError as exc:
        divergences.append(
            Divergence(
                step=run.state.step, what="length", recorded=len(responses), replayed=str(exc)
            )
        )
    old, new = _steps(recorded_log, view), _steps(run.log, visible_events(run.log, "main"))
    seen = 0  # messages of the previous request: a difference there was reported already
    for a, b in zip(old, new, strict=False):
        step = a["step"]
        first = _first_difference(a["messages"], b["messages"])
        if first is not None and first >= seen:
            am, bm = a["messages"], b["messages"]
            divergences.append(
                Divergence(
                    step=step,
                    what="request",
                    recorded=am[first] if first < len(am) else None,
                    replayed=bm[first] if first < len(bm) else None,
                )
            )
        seen = len(a["messages"])
        if first is None and a["tools"] != b["tools"]:
            divergences.append(
                Divergence(
                    step=step,
                    what="request",
                    recorded=hash_json(a["tools"]),
                    replayed=hash_json(b["tools"]),
                )
            )
        if a["calls"] != b["calls"]:
            divergences.append(
                Divergence(step=step, what="tool_calls", recorded=a["calls"], replayed=b["calls"])
            )
        for call_id, result in a["results"].items():
            if b["results"].get(call_id) != result:
                divergences.append(
                    Divergence(
                        step=step,
                        what="tool_result",
                        recorded=result,
                        replayed=b["results"].get(call_id),
                    )
                )
        if a.get("finish") != b.get("finish"):
            divergences.append(
                Divergence(
                    step=step,
                    what="finish_reason",
                    recorded=a.get("finish"),
                    replayed=b.get("finish"),
                )
            )
    last = finishes[-1].finish_reason if finishes else None
    if not old and not new and finishes and last != run.finish_reason:  # no step to attach to
        divergences.append(
            Divergence(step=0, what="finish_reason", recorded=last, replayed=run.finish_reason)
        )
    if len(old) != len(new) and not any(d.what == "length" for d in divergences):
        divergences.append(
            Divergence(
                step=min(len(old), len(new)) + 1,
                what="length",
                recorded=len(old),
                replayed=len(new),
            )
        )
    return ReplayReport(
        divergences=tuple(divergences), steps=len(old), replayed_steps=len(new), run=run
    )


def counterfactual(
    log: EventLog | str | os.PathLike[str],
    policy: Any,
    *,
    branch_id: str = "main",
    estimator: Any = None,
) -> Any:
    """What the model would have seen under another context policy, step by step (R-V7).

    For every recorded request, the prompt is rebuilt from the events that existed just
    before it under `policy`, and set beside the recorded `context.injected` record.

    Args:
        log: the recorded log (or its path).
        policy: a policy name, dict or `ContextPolicy`, or a ready builder (anything with
            `build(log, branch_id=...)` returning a `Prompt`).
        branch_id: the branch whose requests to revisit.
        estimator: token estimator for the rebuilt prompts.

    Returns:
        A DataFrame, one row per request: step, request_id, recorded_policy, recorded_ids,
        recorded_tokens, policy, ids, tokens, only_recorded, only_policy, messages (the
        counterfactual prompt as chat-completions dicts), error (`None`, or why the policy
        could not build that request: the `ContextError` message; then `messages` and
        `tokens` are `None` and the next requests are still rebuilt).

    Raises:
        UsageError: `log` is not an `EventLog` or a usable path of one (a NUL byte, a name
            too long, a folder: `errors.checked_path`), or the file does not exist.
        CorruptLogError: the log is corrupt (see `EventLog.read`).
    """
    import pandas as pd

    from harnesskit.context._record import selected_ids
    from harnesskit.context.builder import ContextBuilder

    recorded_log = (
        log if isinstance(log, EventLog) else EventLog.read(_log_path(log, "counterfactual"))
    )
    builder = policy if hasattr(policy, "build") else ContextBuilder(policy, estimator=estimator)
    name = getattr(getattr(builder, "policy", None), "name", type(builder).__name__)
    view = EventLog(None, run_id=recorded_log.run_id)  # the log as it stood before each request
    rows = []
    injected: ContextInjectedEvent | None = None
    for e in recorded_log.events:
        if isinstance(e, ContextInjectedEvent) and e.branch_id == branch_id:
            injected = e
        if isinstance(e, ModelRequestEvent) and e.branch_id == branch_id:
            rec_ids = selected_ids(recorded_log, injected) if injected else ()
            try:
                prompt = builder.build(view, branch_id=branch_id)
            except ContextError as exc:  # report the step the policy cannot build, go on
                rows.append(
                    {
                        "step": e.step,
                        "request_id": e.event_id,
                        "recorded_policy": injected.policy if injected else None,
                        "recorded_ids": rec_ids,
                        "recorded_tokens": injected.token_estimate if injected else None,
                        "policy": name,
                        "ids": (),
                        "tokens": None,
                        "only_recorded": rec_ids,
                        "only_policy": (),
                        "messages": None,
                        "error": str(exc),
                    }
                )
                injected = None
                view.events.append(e)
                continue
            alt_ids = tuple(prompt.selected)
            rows.append(
                {
                    "step": e.step,
                    "request_id": e.event_id,
                    "recorded_policy": injected.policy if injected else None,
                    "recorded_ids": rec_ids,
                    "recorded_tokens": injected.token_estimate if injected else None,
                    "policy": name,
                    "ids": alt_ids,
                    "tokens": prompt.token_estimate,
                    "only_recorded": tuple(i for i in rec_ids if i not in set(alt_ids)),
                    "only_policy": tuple(i for i in alt_ids if i not in set(rec_ids)),
                    "messages": [m.to_openai() for m in prompt.messages],
                    "error": None,
                }
            )
            injected = None
        view.events.append(e)
    return pd.DataFrame(rows)


def _drive(run: Any, finish: RunFinishedEvent | None) -> None:
    """Run the replay to the end its recorded segment had.

    A `cancelled` end came from outside the model (`run.cancel()`, Ctrl-C, a replay whose
    recording ended): the replay steps to the step it was cancelled at and is cancelled there,
    without asking the model for a turn the recording never had. Any other end is the loop's
    own, and `run()` reproduces it from the recorded responses.
    """
    if finish is None or finish.finish_reason != "cancelled":
        run.run()
        return
    target = finish.step or 0
    while run.finish_reason is None and run.state.step < target:
        run.step()
    if run.finish_reason is None:
        run.cancel()
        run.step()


def _open(h: Any, run_id: str | None, opening: list[str], task: Any) -> Any:
    """Start the replay under the recorded run id (call ids derive from it), in memory.

    A log recorded before run ids were checked may hold one `Harness.start` now refuses; the
    replay keeps no log file, so that id names nothing on disk and is kept as it was.
    """
    from harnesskit.run import lifecycle
    from harnesskit.run._ids import check_run_id

    if run_id:
        try:
            check_run_id(run_id)
        except UsageError:
            return lifecycle.open_run(h, run_id, list(opening), task or {})
    return h.start(opening, run_id=run_id or None, task=task)
