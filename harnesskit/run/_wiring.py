"""Private: the parts a run is built from — context builder, data transport, executor, tool specs.

One place decides how a harness's settings become those parts (including the replay case:
a recorded run replays its own R-A5 outcomes, so the transport does not refuse on its own).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harnesskit import _json
from harnesskit.context.builder import ContextBuilder
from harnesskit.data.transport import Transport
from harnesskit.log import ToolResultEvent
from harnesskit.models.offline import ReplayModel
from harnesskit.tools.executor import Executor
from harnesskit.tools.groups import GroupSelector
from harnesskit.tools.spec import ToolContext, ToolRegistry

if TYPE_CHECKING:
    from harnesskit.context.tokens import TokenEstimator
    from harnesskit.log.events import EventLog
    from harnesskit.messages import ToolCall
    from harnesskit.run.harness import Harness
    from harnesskit.run.state import RunState
    from harnesskit.tools.idempotency import IdempotencyLedger

__all__ = ["ToolSpecs", "tool_contexts", "wire"]


class ToolSpecs:
    """The tool specs offered to the model, rebuilt only when the enabled set changes.

    The same tuple object is returned while nothing changes, so the log stores the tool list
    once (`tools_sha`) and the token count is encoded once.
    """

    def __init__(
        self,
        tools: ToolRegistry,
        executor: Executor,
        transport: Transport,
        estimator: TokenEstimator,
        groups: GroupSelector | None = None,
        *,
        stable: bool = False,
    ) -> None:
        self._registry, self._executor, self._transport = tools, executor, transport
        self._estimator, self.groups, self.stable = estimator, groups, stable
        self._key: tuple[Any, ...] | None = None
        self._specs: tuple[dict[str, Any], ...] = ()
        self._tokens: tuple[Any, int] = ((), 0)

    def current(self) -> tuple[dict[str, Any], ...]:
        """The specs of the tools not disabled by the circuit breaker, plus the data tools.

        With `stable`, the same list on every request: disabled tools stay listed (the executor
        still refuses their calls) and the data tools are listed from the first request, so a
        provider's prompt cache, keyed on a prefix that holds the tool specs, is reused.
        """
        off = () if self.stable else tuple(sorted(self._executor.disabled))
        group = self.groups.open if self.groups is not None else None
        key = (*off, self.stable or self._transport.holds_artifacts, group)
        if key != self._key:
            own = self.groups.specs(off) if self.groups else self._registry.specs(exclude=off)
            specs = own + self._transport.tool_specs(off, always=self.stable)
            # read-only copies: a model that edits its request cannot change a tool's schema
            self._key, self._specs = (
                key,
                tuple(s if type(s) is _json.ReadOnlyDict else _json.read_only(s) for s in specs),
            )
        return self._specs

    def fields(self) -> dict[str, Any]:
        """The open tool group for the request and injection records (R-T3).

        Returns:
            `{"tool_group": group or None}` when group selection is on; `{}` otherwise, so
            the logs of ungrouped runs are unchanged.
        """
        return {} if self.groups is None else {"tool_group": self.groups.open}

    def tokens(self, specs: tuple[dict[str, Any], ...]) -> int:
        """Estimated prompt tokens of `specs` (re-encoded only when the tuple changes)."""
        if self._tokens[0] is not specs:
            self._tokens = (specs, self._estimator.count_tools(specs))
        return self._tokens[1]


def wire(
    harness: Harness, log: EventLog, ledger: IdempotencyLedger
) -> tuple[ContextBuilder, Transport, Executor, ToolSpecs]:
    """Build a run's parts from its harness, log and write ledger.

    Args:
        harness: the harness the run belongs to.
        log: the run's event log.
        ledger: the run's idempotency ledger.

    Returns:
        `(context, transport, executor, tool_specs)`.
    """
    replay = harness.transport.on_violation is None and isinstance(harness.model, ReplayModel)
    transport = Transport(
        harness.artifacts, harness.transport, log=log, refuse=False if replay else None
    )
    groups, tools = _groups(harness, log), harness.tools
    bind: Callable[[dict[str, Any], ToolCall], dict[str, Any]] = transport.bind
    if groups is not None:  # R-T3: choose_group joins the tools; calls outside the group fail
        tools = ToolRegistry([*harness.tools, groups.tool])
        bind = _chain(groups.check, transport.bind)
    executor = Executor(
        transport.registry(tools),
        harness.gate,
        idempotency=ledger,
        bind=bind,
        postprocess=transport.postprocess,
        timer=harness.timer,
    )
    context = ContextBuilder(harness.policy, estimator=harness.estimator)
    if harness.tracer is not None:  # live spans (R-O5): the log is the trace
        from harnesskit.log.otel import SpanRecorder

        log.subscribe(SpanRecorder(harness.tracer, run_id=log.run_id or "").on_event)
    return (
        context,
        transport,
        executor,
        ToolSpecs(
            harness.tools,
            executor,
            transport,
            harness.estimator,
            groups,
            stable=harness.stable_tools,
        ),
    )


def _groups(harness: Harness, log: EventLog) -> GroupSelector | None:
    """The run's group selector when the harness's tools call for one (R-T3), else `None`."""
    if not harness.tool_groups.applies(harness.tools):
        return None
    results = ((e.tool, bool(e.ok), e.content or "") for e in log.of_type(ToolResultEvent))
    opened = GroupSelector.open_in(results)
    return GroupSelector(harness.tools, harness.tool_groups, open_group=opened)


def _chain(
    first: Callable[[dict[str, Any], ToolCall], dict[str, Any]],
    then: Callable[[dict[str, Any], ToolCall], dict[str, Any]],
) -> Callable[[dict[str, Any], ToolCall], dict[str, Any]]:
    def both(arguments: dict[str, Any], call: ToolCall) -> dict[str, Any]:
        return then(first(arguments, call), call)

    return both


def tool_contexts(harness: Harness, st: RunState) -> Callable[[ToolCall], ToolContext]:
    """The executor's `make_context` for this step: run facts and the harness's clock.

    Args:
        harness: the harness (its gate's workspace and its wall clock).
        st: the run's state at this step.

    Returns:
        A function `call -> ToolContext`.
    """

    def now() -> dt.datetime:
        return dt.datetime.fromtimestamp(harness.clock(), dt.UTC)

    def make_context(call: ToolCall) -> ToolContext:
        return ToolContext(
            run_id=st.run_id,
            branch_id=st.branch_id,
            step=st.step,
            tool_call_id=call.id,
            workspace=harness.gate.workspace,  # type: ignore[arg-type]
            now=now,
        )

    return make_context
