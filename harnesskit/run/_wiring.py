"""Private: the parts a run is built from — context builder, data transport, executor, tool specs.

One place decides how a harness's settings become those parts (including the replay case:
a recorded run replays its own R-A5 outcomes, so the transport does not refuse on its own).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harnesskit.context.builder import ContextBuilder
from harnesskit.data.transport import Transport
from harnesskit.models.offline import ReplayModel
from harnesskit.tools.executor import Executor
from harnesskit.tools.spec import ToolContext

if TYPE_CHECKING:
    from harnesskit.context.tokens import TokenEstimator
    from harnesskit.log.events import EventLog
    from harnesskit.messages import ToolCall
    from harnesskit.run.harness import Harness
    from harnesskit.run.state import RunState
    from harnesskit.tools.idempotency import IdempotencyLedger
    from harnesskit.tools.spec import ToolRegistry

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
    ) -> None:
        self._registry, self._executor, self._transport = tools, executor, transport
        self._estimator = estimator
        self._key: tuple[Any, ...] | None = None
        self._specs: tuple[dict[str, Any], ...] = ()
        self._tokens: tuple[Any, int] = ((), 0)

    def current(self) -> tuple[dict[str, Any], ...]:
        """The specs of the tools not disabled by the circuit breaker, plus the data tools."""
        off = tuple(sorted(self._executor.disabled))
        key = (*off, self._transport.holds_artifacts)
        if key != self._key:
            specs = self._registry.specs(exclude=off) + self._transport.tool_specs(off)
            self._key, self._specs = key, specs
        return self._specs

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
    executor = Executor(
        transport.registry(harness.tools),
        harness.gate,
        idempotency=ledger,
        bind=transport.bind,
        postprocess=transport.postprocess,
        timer=harness.timer,
    )
    context = ContextBuilder(harness.policy, estimator=harness.estimator)
    return (
        context,
        transport,
        executor,
        ToolSpecs(harness.tools, executor, transport, harness.estimator),
    )


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
