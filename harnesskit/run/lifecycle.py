"""Around the loop: open a run, resume it, restart it, fork it (R-V5, R-V6).

Each function builds or reopens a log, rebuilds a `RunState`, and hands a `Run` back; the
loop itself knows nothing of where its state came from.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harnesskit.errors import UsageError
from harnesskit.log.events import EventLog
from harnesskit.run.limits import Limits
from harnesskit.run.loop import Run
from harnesskit.run.state import RunState
from harnesskit.tools.idempotency import IdempotencyLedger, ledger_path

if TYPE_CHECKING:
    from harnesskit.log.resume import ResumePoint
    from harnesskit.run.harness import Harness

__all__ = ["attach", "fork", "open_run", "restart", "resume"]


def open_run(harness: Harness, run_id: str, turns: list[str], task: dict[str, Any]) -> Run:
    """Open a new run: write its `task.contract` and the first user turns.

    Args:
        harness: the harness.
        run_id: the run's id (names the log file `<run_id>.jsonl`).
        turns: the opening user messages.
        task: extra task facts for the contract.

    Returns:
        The run, before its first step.

    Raises:
        UsageError: the harness's timer does not return seconds (nothing is created).
    """
    started = _started(harness)  # a timer that is no clock fails here, before any file
    path = harness.log_dir / f"{run_id}.jsonl" if harness.log_dir else None
    redactor = harness.run_redactor()  # with the model's own key as a literal (R-S1)
    # the ledger first: it checks its path and creates nothing, so a refusal leaves no log
    ledger = IdempotencyLedger(
        ledger_path(path) if path else None,
        confirmers=harness.confirmers,
        redactor=redactor,
    )
    log = EventLog(path, run_id=run_id, clock=harness.clock, redactor=redactor)
    run = Run(harness, RunState(run_id=run_id, started=started), log, ledger)
    revision = harness.revision()
    log.append(
        "task.contract",
        {
            "run_id": run_id,
            "system_prompt": harness.run_system_prompt,
            "task": task,
            "model": harness.model.name,
            "policy": harness.policy.to_dict(),
            "tools": harness.tools.versions(),
            "gate": harness.gate.to_dict(),
            "limits": {f.name: getattr(harness.limits, f.name) for f in dataclasses.fields(Limits)},
            "workspace_revision": revision,
            "idempotency": {"ledger": ledger.path.name if ledger.path else "memory"},
            # the run's least class (R-S2), kept by every later request of this log
            **({"data_class": harness.data_class} if harness.data_class else {}),
        },
        workspace_revision=revision,
        summary=f"run {run_id} with {len(harness.tools)} tools",
    )
    for text in turns:
        run.send(text, flush=False)
    log.flush()
    return run


def _started(harness: Harness) -> float:
    """The harness's timer read once as a run starts, checked: seconds, a finite number.

    Raises:
        UsageError: the timer returned something else (a str, None, a bool, NaN).
    """
    t = harness.timer()
    if isinstance(t, bool) or not isinstance(t, int | float) or t != t or t in (_INF, -_INF):
        raise UsageError(
            f"Harness(timer=...) returned {t!r:.60} ({type(t).__name__}); the timer must return "
            "seconds as a finite number, like time.monotonic (nothing was started)"
        )
    return t


_INF = float("inf")


def attach(harness: Harness, point: ResumePoint, *, started: float | None = None) -> Run:
    """A run going on from a reopened log: no new contract.

    Args:
        harness: the harness to go on with.
        point: what `resume.reopen` / `restart_point` rebuilt from the log.
        started: the timer's reading as the run starts (`_started`); `None` reads it here.

    Returns:
        The run, with its circuit breaker as the log left it.
    """
    if started is None:
        started = _started(harness)
    state = RunState(**{"started": started, **point.state})
    run = Run(harness, state, point.log, point.ledger)
    run.executor.breaker.open.update(point.disabled)
    return run


def resume(harness: Harness, path: str | Path, *, branch_id: str | None = None) -> Run:
    """Reopen a logged run and finish the step in flight (see `Harness.resume`).

    Args:
        harness: the harness to go on with.
        path: the run's log.
        branch_id: the branch to go on with.

    Finishing the step in flight ends like a step of `run()` (`ends_step`): a pause (the
    gate's confirm callback raising `StopRun("paused")`), a tool's `StopRun`, a brake or a
    crash is recorded with `run.finished` and the run is returned (or the crash re-raised)
    as `run()` would. Once the pending calls have results the run's finish reason is current:
    `None` (it goes on with `run()`), or how that step ended.

    Returns:
        The run; pending calls have results (writes done return their recorded results; a
        call whose arguments the log holds redacted is answered, never run again), unless a
        pause or stop ended the step again (`finish_reason` says which).

    Raises:
        ResumeError: a resume check failed.
        UsageError: the harness's timer does not return seconds (checked before anything).
    """
    from harnesskit.log.resume import reopen
    from harnesskit.run._outcome import ends_step

    started = _started(harness)  # before the log is opened: a bad timer leaves nothing open
    point = reopen(harness, path, branch_id=branch_id)
    run = attach(harness, point, started=started)
    if point.pending or point.redacted:
        # the step in flight goes on: whatever ended it before (a pause at an approval, a
        # Ctrl-C during a tool) is behind it, so the state is not left reading that reason
        run.state.finish_reason = None
    with ends_step(run):  # a pause, a stop or a crash ends here as it does in `run()`
        if point.redacted:
            _answer_redacted(run, point)
        if point.filtered:  # killed between a filtered reply and its "not run" results
            _answer_filtered(run, point)
        if point.pending:  # a reply over max_calls_per_turn: the calls beyond it never run
            run._execute(run._within_cap(point.pending, point.logged), logged=point.logged)
        elif point.answered:
            run._finish(point.answered)
    run.log.flush()
    return run


def _answer_redacted(run: Run, point: ResumePoint) -> None:
    """Log a result for each pending call whose arguments the log holds redacted, unrun.

    The real arguments are not on disk (R-S1), so the call is never run again with the
    placeholders: a write the ledger holds as done answers with its recorded result, any
    other call with a failure saying why (`resume.redacted_result`).
    """
    from harnesskit.log.resume import redacted_result

    branch = run.state.branch_id
    run._answer_unrun(
        point.redacted, lambda c: redacted_result(point.ledger, c, branch), point.logged
    )


def _answer_filtered(run: Run, point: ResumePoint) -> None:
    """Answer the calls of a reply the content filter stopped "not run", as `Run.step` does."""
    from harnesskit.run.loop import _filtered

    run._answer_unrun(point.filtered, lambda c: _filtered(c, "content_filter"), point.logged)


def restart(
    harness: Harness, path: str | Path, *, reason: str, branch_id: str | None = None
) -> Run:
    """Run a logged task again from its start, on a new branch (see `Harness.restart`).

    Args:
        harness: the harness to go on with.
        path: the run's log.
        reason: why (recorded on the branch).
        branch_id: the new branch's name.

    Returns:
        A run on the new branch.

    Raises:
        UsageError: the harness's timer does not return seconds (checked before anything).
    """
    from harnesskit.log.resume import restart_point

    started = _started(harness)  # before the log is opened: a bad timer leaves nothing open
    point = restart_point(harness, path, reason=reason, branch_id=branch_id)
    run = attach(harness, point, started=started)
    run.log.flush()  # the new branch is on disk now, as a resumed run's first events are
    return run


def _covering(current: Any, other: Any) -> Any:
    """The redactor of a log two harnesses write: `current` with `other`'s literals added.

    A branch forked with another harness (another model, another API key) writes into the
    same log, whose redactor knew only the first harness's secrets. Redaction is never
    weakened: `None` on either side takes the other; otherwise `other`'s kinds, `extra`
    patterns and literals (its model's key, raw and encoded) join `current`'s.
    """
    if other is None or other is current:
        return current
    if current is None:
        return other
    literals = tuple(x for x in other.literals if x not in current.literals)
    kinds = tuple(k for k in other.kinds if k not in current.kinds)
    extra = {k: p for k, p in other.extra.items() if k not in current.extra}
    if not (literals or kinds or extra):
        return current
    return dataclasses.replace(
        current,
        literals=(*current.literals, *literals),
        kinds=(*current.kinds, *kinds),
        extra={**current.extra, **extra},
    )


def fork(run: Run, event_id: int, name: str, *, harness: Harness | None, reason: str) -> Run:
    """Start branch `name` at `event_id` of `run`'s log (see `Run.fork`).

    Args:
        run: the run whose log is forked.
        event_id: the fork point.
        name: the new branch's name.
        harness: the branch's harness; `None` = the run's.
        reason: why (recorded on the branch).

    Returns:
        A run on the new branch, in the same log.

    Raises:
        UsageError: a taken name, tool calls without results at `event_id`, or `harness` is
            not a `Harness`.
    """
    from harnesskit.log.resume import ResumePoint, rebuild_state
    from harnesskit.log.trajectory import Trajectory, frozen_start
    from harnesskit.run.harness import Harness

    if harness is not None and not isinstance(harness, Harness):
        raise UsageError(
            f"fork(..., harness=...) takes a Harness (or None for the run's own), got "
            f"{type(harness).__name__} {harness!r:.60}; nothing was forked"
        )
    h = harness or run.harness
    if h is not run.harness:  # one log for both: it hides what either harness's redactor hides
        covering = _covering(run.log.redactor, h.run_redactor())
        run.log.redactor = covering
        if run.ledger is not None:
            run.ledger.redactor = covering
    Trajectory(run.log).fork(event_id, name, frozen=frozen_start(h), reason=reason)
    point = ResumePoint(log=run.log, ledger=run.ledger, state=rebuild_state(run.log, name))
    branch = attach(h, point)
    branch._busy = run._busy  # one log: a branch and its root step one at a time
    return branch
