"""The airline domain's command-line jobs: `run_demo()` and `run_replay()`.

`harnesskit demo` and `harnesskit replay PATH` call these. They print their tables (the CLI
is one of the few places allowed to print) and return the report objects for notebooks.
"""

from __future__ import annotations

import dataclasses
import gc
import multiprocessing
import os
import shutil
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harnesskit as hk
from harnesskit.domains.airline.agent import DEMO_TASKS, DemoTask, agent_model
from harnesskit.domains.airline.data import load_database
from harnesskit.domains.airline.replay import ReplayResult, replay_run
from harnesskit.domains.airline.scoring import expected_state_hash, pass_hat_ks, score
from harnesskit.domains.airline.tools import POLICY, tools
from harnesskit.domains.airline.trajectories import RecordedRun, load_recorded_runs

__all__ = ["DemoReport", "DemoRow", "ReplayReport", "run_demo", "run_replay"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayReport:
    """What `run_replay` measured over a set of recorded runs."""

    results: tuple[ReplayResult, ...]
    """One result per replayed run, in file order."""
    seconds: float
    """Wall-clock time of the whole replay (loading, replaying, scoring)."""
    pass_hat: dict[int, float] = field(default_factory=dict)
    """pass^k of the computed rewards for k = 1..4 (where enough trials exist)."""

    @property
    def agreement(self) -> int:
        """Runs whose computed reward equals the recorded reward."""
        return sum(r.agrees for r in self.results)

    @property
    def mean_reward(self) -> float:
        """Mean computed reward."""
        return sum(r.result.reward for r in self.results) / max(1, len(self.results))

    @property
    def recorded_mean_reward(self) -> float:
        """Mean recorded reward of the same runs."""
        return sum(r.recorded_reward for r in self.results) / max(1, len(self.results))

    @property
    def divergence_causes(self) -> dict[str, int]:
        """How many tool results differed from the recording, by cause."""
        return dict(Counter(d.cause for r in self.results for d in r.divergences))

    def to_text(self, *, per_run: bool = True) -> str:
        """The report as a plain-text table plus summary lines."""
        lines = []
        if per_run:
            lines.append(
                f"{'task':>4} {'trial':>5} {'recorded':>8} {'computed':>8} {'agree':>5} "
                f"{'steps':>5} {'calls':>5} {'diverged':>8}  reason"
            )
            for r in self.results:
                lines.append(
                    f"{r.task_id:>4} {r.trial:>5} {r.recorded_reward:>8.1f} "
                    f"{r.result.reward:>8.1f} {'yes' if r.agrees else 'NO':>5} {r.steps:>5} "
                    f"{r.tool_calls:>5} {len(r.divergences):>8}  {r.result.reason}"
                )
        n = len(self.results)
        lines.append(f"agreement with recorded reward: {self.agreement}/{n}")
        lines.append(
            f"mean reward: computed {self.mean_reward:.4f}, "
            f"recorded {self.recorded_mean_reward:.4f}"
        )
        lines.append(
            "pass^k: " + ", ".join(f"pass^{k} = {v:.4f}" for k, v in self.pass_hat.items())
        )
        for cause, count in sorted(self.divergence_causes.items()):
            lines.append(f"tool outputs differing from the recording: {count} ({cause})")
        reused = sum(1 for r in self.results if r.replaced_call_ids)
        lines.append(f"runs whose reused tool_call ids the loop replaced: {reused}")
        for r in self.results:
            if not r.agrees:
                lines.append(
                    f"DISAGREEMENT task {r.task_id} trial {r.trial}: recorded "
                    f"{r.recorded_reward}, computed {r.result.reward} ({r.result.reason})"
                )
        if any(r.mode == "strict" for r in self.results):
            lines += self.strict_lines()
        lines.append(f"elapsed: {self.seconds:.1f} s ({self.seconds / max(1, n):.3f} s per run)")
        return "\n".join(lines)

    def strict_lines(self) -> list[str]:
        """Strict mode: how each missing field was derived, and cancellations per rule."""
        lines = []
        for r in self.results:
            for d in r.derived:
                said = f"user said {d.words!r}" if d.words else "no rule matched"
                lines.append(
                    f"derived task {r.task_id} trial {r.trial} call {d.call_index}: {d.tool}."
                    f"{d.field} = {d.value} (rule {d.rule}: {said})"
                )
        by_rule: dict[str, list[int]] = {}
        for r in self.results:
            for rule, allowed in r.cancellations:
                by_rule.setdefault(rule, [0, 0])[0 if allowed else 1] += 1
        derived = Counter(d.rule for r in self.results for d in r.derived)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(derived.items()))
        lines.append(f"reason derivations by rule: {counts or 'none'}")
        lines.append(f"{'deciding rule':<26} {'allowed':>7} {'refused':>7}")
        for rule, (ok, no) in sorted(by_rule.items()):
            lines.append(f"{rule:<26} {ok:>7} {no:>7}")
        total_ok = sum(v[0] for v in by_rule.values())
        total_no = sum(v[1] for v in by_rule.values())
        lines.append(f"{'total cancellations':<26} {total_ok:>7} {total_no:>7}")
        return lines

    def __repr__(self) -> str:
        return (
            f"ReplayReport(runs={len(self.results)}, agreement={self.agreement}, "
            f"mean_reward={self.mean_reward:.4f}, seconds={self.seconds:.1f})"
        )


def run_replay(
    path: str | Path,
    limit: int | None = None,
    *,
    log_dir: str | Path | None = None,
    per_run: bool = True,
    echo: Callable[[str], None] | None = print,
    mode: str = "tau_bench",
    workers: int | None = None,
) -> ReplayReport:
    """Replay recorded τ-bench airline runs through the harness and compare rewards.

    With more than one worker the runs are replayed in a process pool (each run is
    independent: its own database and log); the results are the same and in file order.

    Args:
        path: the trajectory file (e.g. `.../historical_trajectories/gpt-4o-airline.json`).
        limit: replay only the first `limit` runs (`None`: all).
        log_dir: parent folder; the logs (one JSONL per run) go to a new
            `<log_dir>/replay-<timestamp>/`; `None` keeps logs in memory.
        per_run: include one line per run in the printed table.
        echo: where the table goes (`print` by default; `None` prints nothing).
        mode: `tau_bench` (as recorded) or `strict` (the strict tools; a missing `reason` is
            derived from the user's words, see `replay_run`; the report adds the derivations
            and a per-rule table of allowed and refused cancellations).
        workers: processes to replay in; `None` uses one per CPU when there are at least
            `_POOL_MIN_RUNS` runs, `1` replays in this process.

    Returns:
        The `ReplayReport`.

    Raises:
        UsageError: the file is missing or not a trajectory file.
    """
    started = time.perf_counter()
    runs = load_recorded_runs(path, limit=limit)
    if log_dir is not None:  # a new folder per replay: logs are append-only, never reused
        log_dir = _fresh_dir(Path(log_dir), "replay", flag="--log-dir")
    if mode not in ("tau_bench", "strict"):
        raise hk.UsageError(f"mode must be 'tau_bench' or 'strict', got {mode!r}")
    if workers is None:
        workers = (os.cpu_count() or 1) if len(runs) >= _POOL_MIN_RUNS else 1
    workers = max(1, min(workers, len(runs)))
    if workers == 1:
        results = tuple(replay_run(run, log_dir=log_dir, mode=mode) for run in runs)
    else:
        results = _replay_in_pool(runs, log_dir, workers, mode)
    by_task: dict[int, list[float]] = defaultdict(list)
    for r in results:
        by_task[r.task_id].append(r.result.reward)
    report = ReplayReport(
        results=results,
        seconds=time.perf_counter() - started,
        pass_hat=pass_hat_ks(by_task) if results else {},
    )
    if echo is not None:
        echo(report.to_text(per_run=per_run))
    return report


#: Fewer runs than this replay in-process by default (a pool's start-up would not pay off).
_POOL_MIN_RUNS = 16


def _replay_one(job: tuple[RecordedRun, str, str]) -> tuple[dict[str, Any], str]:
    """Replay one run in a pool worker; return its result's fields and its log's path.

    The log itself (not picklable) is written to `job[1]` and read back by the parent.
    """
    run, folder, mode = job
    result = replay_run(run, log_dir=folder, mode=mode)
    path = result.log.path
    result.log.close()
    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    del fields["log"]
    return fields, str(path)


def _replay_in_pool(
    runs: list[RecordedRun], log_dir: Path | None, workers: int, mode: str
) -> tuple[ReplayResult, ...]:
    """Replay `runs` in `workers` processes; the results come back in file order."""
    scratch = None if log_dir is not None else Path(tempfile.mkdtemp(prefix="hk-replay-"))
    folder = str(log_dir if log_dir is not None else scratch)
    context = None
    if "fork" in multiprocessing.get_all_start_methods():
        # Forked workers share what this process built before the fork (copy-on-write): the
        # imports, the database snapshot with its hash index, the tools' compiled templates.
        context = multiprocessing.get_context("fork")
        tools(load_database(), mode=mode).get("get_user_details")  # type: ignore[arg-type]
        load_database().state_hash()
        gc.freeze()  # the children's collections then skip (and do not copy) those objects
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            chunk = max(1, len(runs) // (workers * 8))
            results = []
            # each log is read back while the workers replay the next runs
            for fields, path in pool.map(
                _replay_one, [(run, folder, mode) for run in runs], chunksize=chunk
            ):
                log = hk.EventLog.read(path)
                if scratch is not None:  # the caller asked for in-memory logs
                    log.path = None
                results.append(ReplayResult(log=log, **fields))
        return tuple(results)
    finally:
        if context is not None:
            gc.unfreeze()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoRow:
    """One demo task's run, as the table shows it."""

    task: str
    """The task's name."""
    steps: int
    """Model turns."""
    tool_calls: int
    """Tool calls made."""
    prompt_tokens: int
    """Prompt tokens over the whole run: as the provider reported them, or estimated (the
    offline agent reports no usage; see `estimated`)."""
    finish_reason: str | None
    """Why the run ended."""
    passed: bool
    """Final database as expected, required outputs said, expected `alert.mismatch` count."""
    mismatches: int = 0
    """`alert.mismatch` events logged."""
    reason: str = ""
    """Why it failed (or `pass`)."""
    error: str | None = None
    """The model error that ended the run, if any."""
    tokens_per_step: tuple[int, ...] = ()
    """Prompt tokens of each step's request, in step order."""
    log_path: str | None = None
    """The run's JSONL event log."""
    estimated: bool = True
    """True when some request's tokens were estimated (the model reported no usage)."""
    cached_tokens: int = 0
    """Prompt tokens the provider reported as served from its prompt cache (tokens)."""
    cached_per_step: tuple[int, ...] = ()
    """Prompt tokens served from the provider's cache at each step, in step order."""
    policy: str = "full-history"
    """The context policy the run was built under (the `Harness` default)."""

    @property
    def cache_share(self) -> float | None:
        """Share of the prompt tokens served from cache (0-1), `None` when none was reported."""
        return self.cached_tokens / self.prompt_tokens if self.cached_tokens else None

    @property
    def cache_share_from_step_2(self) -> float | None:
        """Share of the prompt tokens of steps 2 on served from cache (0-1).

        The first request of a run is cold. `None` when the run had one step or no cache was
        reported.
        """
        prompt = sum(self.tokens_per_step[1:])
        cached = sum(self.cached_per_step[1:])
        return cached / prompt if prompt and any(self.cached_per_step) else None


def _verdict(row: DemoRow) -> str:
    """The table's pass cell: `yes`, `NO: <why>`, or the error that kept the run from an end.

    A run ended by an error (the model never answered: server down, a bad key, no such model
    file) was not the agent's doing, so its final database is not scored as a failure. A run
    that reached a brake is scored even when its closing request failed.
    """
    if row.passed:
        return "yes"
    if _unfinished(row):
        first = row.error.splitlines()[0] if row.error else ""
        return "ERROR (not scored): " + (first if len(first) <= 90 else first[:89] + "…")
    return "NO: " + row.reason


def _unfinished(row: DemoRow) -> bool:
    """True when an error ended the run before any end of its own (a brake is an end)."""
    return row.error is not None and row.finish_reason in (None, "error")


def _tokens_label(rows: tuple[DemoRow, ...]) -> str:
    estimated = {r.estimated for r in rows}
    if estimated == {False}:
        return "reported by the provider"
    return "estimated" if estimated == {True} else "reported, estimated for some tasks"


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoReport:
    """What `run_demo` did."""

    rows: tuple[DemoRow, ...]
    """One row per task, in task order."""
    chart: Path | None = None
    """The tokens-per-step PNG, when matplotlib could draw it."""
    skipped: tuple[str, ...] = ()
    """Tasks not run because an earlier run ended with a model error, or after Ctrl-C."""
    interrupted: bool = False
    """Ctrl-C stopped the demo; `rows` holds the tasks that finished before it."""
    seconds: float = 0.0
    """Wall-clock time of the demo."""

    @property
    def passed(self) -> int:
        """Tasks that passed."""
        return sum(r.passed for r in self.rows)

    def to_text(self) -> str:
        """The table plus where the logs and chart are."""
        width = max([len("task")] + [len(r.task) for r in self.rows])
        cache = any(r.cached_tokens for r in self.rows)
        lines = [
            f"{'task':<{width}}  {'steps':>5}  {'tool calls':>10}  {'prompt tokens':>13}  "
            + (f"{'cached':>6}  " if cache else "")
            + f"{'finish_reason':<13}  pass"
        ]
        for r in self.rows:
            share = f"{r.cache_share:>6.0%}  " if r.cache_share is not None else f"{'-':>6}  "
            lines.append(
                f"{r.task:<{width}}  {r.steps:>5}  {r.tool_calls:>10}  {r.prompt_tokens:>13}  "
                + (share if cache else "")
                + f"{r.finish_reason or '-':<13}  {_verdict(r)}"
            )
        if self.rows:
            lines.append(f"prompt tokens: {_tokens_label(self.rows)}")
        policies = sorted({r.policy for r in self.rows})
        if policies:
            lines.append(f"context policy: {', '.join(policies)}")
        if cache:
            later = sum(sum(r.tokens_per_step[1:]) for r in self.rows)
            cached = sum(sum(r.cached_per_step[1:]) for r in self.rows)
            total = sum(r.prompt_tokens for r in self.rows)
            lines.append(
                f"prompt cache: {cached / later if later else 0:.1%} of prompt tokens served from "
                f"the cache from step 2 on ({sum(r.cached_tokens for r in self.rows) / total:.1%}"
                " with the first steps)"
            )
        broken = sum(_unfinished(r) for r in self.rows)
        lines.append(
            f"passed {self.passed}/{len(self.rows)} in {self.seconds:.1f} s"
            + (f" ({broken} did not run to an end: not scored, see the error)" if broken else "")
        )
        lines += [f"error: {r.error} (task {r.task})" for r in self.rows if r.error]
        if self.interrupted:
            lines.append(f"interrupted (Ctrl-C); not run: {', '.join(self.skipped) or '-'}")
        elif self.skipped:
            lines.append(f"not run after the model error: {', '.join(self.skipped)}")
        logs = {str(Path(r.log_path).parent) for r in self.rows if r.log_path}
        if logs:
            lines.append(f"logs: {', '.join(sorted(logs))}")
        if self.chart is not None:
            lines.append(f"chart: {self.chart}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"DemoReport(tasks={len(self.rows)}, passed={self.passed})"


class OneWritePerTurn:
    """A confirmation callback for the airline policy's "one action at a time".

    Approves the first write (or destructive) call of a model turn and refuses the others of
    the same turn; the model sees them refused (`permission_denied`) and may ask again on a
    later turn. It reads the turn from the run's log, so bind it with `watch(run)` before the
    run steps.
    """

    def __init__(self, registry: hk.ToolRegistry) -> None:
        """Remember which tools write.

        Args:
            registry: the run's tools; calls to tools of risk `write` or `destructive` count.
        """
        self._writes = {t.name for t in registry if t.risk in ("write", "destructive")}
        self._log: hk.EventLog | None = None

    def watch(self, run: hk.Run) -> None:
        """Bind the callback to `run` (its last `model.response` is the turn in question)."""
        self._log = run.log

    def __call__(self, request: Any) -> bool:
        """Whether `request` is the turn's first write.

        Args:
            request: the confirm-level call (`hk.tools.ApprovalRequest`).

        Returns:
            True for the first write call of the current turn (or when no turn is known).
        """
        last = self._log.last("model.response") if self._log is not None else None
        calls = (last.payload.get("message") or {}).get("tool_calls") or [] if last else []
        writes = [c.get("id") for c in calls if c.get("function", {}).get("name") in self._writes]
        return not writes or writes[0] == request.tool_call_id


def _check_demo_args(
    out_dir: Any, tasks: Any, model: Any, policy: Any, max_steps: Any, echo: Any
) -> None:
    """Refuse bad `run_demo` arguments before a folder is made or a task runs.

    Raises:
        UsageError: naming the argument, what it must be and what came.
    """
    if not isinstance(out_dir, str | os.PathLike):
        raise hk.UsageError(f"out_dir must be a folder path, got {out_dir!r}")
    if not isinstance(tasks, tuple | list) or not tasks:
        raise hk.UsageError(
            f"tasks must be a non-empty tuple of DemoTask (e.g. DEMO_TASKS[:2]), got {tasks!r:.80}"
        )
    bad = [t for t in tasks if not isinstance(t, DemoTask)]
    if bad:
        names = ", ".join(t.name for t in DEMO_TASKS)
        raise hk.UsageError(
            f"tasks must be DemoTask objects, got {bad[0]!r:.60}; pick from DEMO_TASKS ({names})"
        )
    if model is not None and not callable(getattr(model, "request", None)):
        raise hk.UsageError(f"model must be a Model (with .request) or None, got {model!r:.60}")
    hk.ContextPolicy.resolve(policy)  # UsageError naming the unknown policy
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise hk.UsageError(f"max_steps must be an int >= 1, got {max_steps!r}")
    if echo is not None and not callable(echo):
        raise hk.UsageError(
            f"echo must be a function taking the table's text, or None, got {echo!r}"
        )


def _closing_seconds(model: Any | None) -> float:
    """Seconds for the closing request: the model's per-attempt timeout, at least 30."""
    timeout = getattr(model, "timeout_seconds", None)
    return max(30.0, float(timeout)) if isinstance(timeout, int | float) else 30.0


def _run_task(
    task: DemoTask,
    log_dir: Path | None,
    model: Any | None,
    policy: str = "full-history",
    max_steps: int = 20,
) -> DemoRow:
    db = load_database()
    registry = tools(db, mode="strict")
    one_write = OneWritePerTurn(registry)
    harness = hk.Harness(
        tools=registry,
        model=model if model is not None else agent_model(),
        system_prompt=POLICY,
        policy=policy,
        # 20: a large search result is read back page by page with artifact_slice (R-A1, R-A4)
        # the closing request after a brake may take as long as one attempt of the model (a
        # CPU model's answer can take over a minute; the 30 s default suits hosted models)
        limits=hk.Limits(max_steps=max_steps, closing_seconds=_closing_seconds(model)),
        log_dir=log_dir,
        # the customer's opening message already says yes (a notebook would ask a human
        # here), to one write per turn as the policy says
        gate=hk.Gate(policy={"write": "confirm", "destructive": "confirm"}, confirm=one_write),
        progress=hk.TqdmProgress(desc=task.name, leave=False),  # R-L3: a bar on stderr
    )
    run = harness.start(task.user_message, run_id=f"demo-{task.name}", task={"demo": task.name})
    one_write.watch(run)
    run.run()
    log = run.log
    # what the agent told the customer, also beside a call (a transfer ends the run there)
    said = [e.payload["message"].get("content") or "" for e in log.of_type("model.response")]
    result = score(
        final_hash=db.state_hash(),
        expected_hash=expected_state_hash(task.actions),
        required_outputs=task.outputs,
        agent_texts=said,
    )
    mismatches = len(log.of_type("alert.mismatch"))
    reason = result.reason
    if mismatches != task.expect_mismatches:
        reason = f"{mismatches} alert.mismatch events, expected {task.expect_mismatches}"
    usages = [e.payload["usage"] for e in log.of_type("model.response")]
    per_step = tuple(int(u["prompt_tokens"]) for u in usages)
    return DemoRow(
        task=task.name,
        steps=run.state.step,
        tool_calls=len(log.of_type("tool.call")),
        prompt_tokens=run.state.prompt_tokens,
        finish_reason=run.finish_reason,
        passed=result.reward == 1.0 and mismatches == task.expect_mismatches,
        mismatches=mismatches,
        reason=reason,
        error=f"{type(run.error).__name__}: {run.error}" if run.error is not None else None,
        tokens_per_step=per_step,
        log_path=str(log.path) if log.path is not None else None,
        estimated=any(u.get("estimated") for u in usages) or not usages,
        cached_tokens=sum(int(u.get("cached_tokens") or 0) for u in usages),
        cached_per_step=tuple(int(u.get("cached_tokens") or 0) for u in usages),
        policy=policy,
    )


def _draw_chart(rows: tuple[DemoRow, ...], path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4.5), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for row in rows:
        steps = range(1, len(row.tokens_per_step) + 1)
        axes.plot(steps, row.tokens_per_step, marker="o", label=row.task)
    axes.set_xlabel("step")
    axes.set_ylabel(f"prompt tokens ({_tokens_label(rows)})")
    axes.set_title("Airline demo: prompt tokens per step")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    return path


def _fresh_dir(parent: Path, prefix: str, *, flag: str) -> Path:
    """Create and return a new folder `<parent>/<prefix>-<timestamp>[-N]` (never an old one).

    Args:
        parent: where to create it (created if missing).
        prefix: the folder name's prefix.
        flag: the option `parent` came from, named in the error (`--out`, `--log-dir`).

    Raises:
        UsageError: `parent` exists and is not a folder, or is no usable path (a NUL byte, a
            name too long, a file in the way: `hk.errors.checked_path`).
    """
    hk.errors.checked_path(parent, flag, fix=f"give {flag} a folder (it is created if missing)")
    if parent.exists() and not parent.is_dir():
        raise hk.UsageError(f"{parent} is a file; give {flag} a folder (it is created if missing)")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        path = parent / (f"{prefix}-{stamp}" if n == 0 else f"{prefix}-{stamp}-{n}")
        try:
            path.mkdir(parents=True)
        except FileExistsError:
            continue
        return path
    raise hk.UsageError(f"could not create a new folder under {parent}")


def run_demo(
    out_dir: str | Path = "runs/",
    *,
    tasks: tuple[DemoTask, ...] = DEMO_TASKS,
    model: Any | None = None,
    policy: str = "full-history",
    max_steps: int = 20,
    echo: Callable[[str], None] | None = print,
) -> DemoReport:
    """Run the embedded offline airline agent on the demo tasks (no network, no keys).

    Each task gets a fresh database and a strict-mode harness. Every invocation writes into
    a new folder `<out_dir>/demo-<YYYYmmdd-HHMMSS>/` (logs are append-only, never reused):
    one `<run_id>.jsonl` per task and `tokens_per_step.png`. A run that ends with a model
    error (finish_reason `error`, e.g. an unreachable server) stops the demo; the remaining tasks
    are listed as not run. A run that a brake ended goes on to the next task, also when its
    closing request failed (the row's `error` says how).

    Args:
        out_dir: folder for logs and the chart (created if missing).
        tasks: the tasks to run (default `DEMO_TASKS`).
        model: a model to run instead of the embedded offline agent (e.g. `get_model(
            "ollama:qwen2.5")`); `None` uses `agent_model()`.
        policy: the context policy of every task's run (a built-in name: `full-history`,
            the `Harness` default, `default`, `window`, `summary`).
        max_steps: the step brake of every task (20 lets the offline agent page through a
            large search result).
        echo: where the table goes (`print` by default; `None` prints nothing).

    Returns:
        The `DemoReport` (rows: task, steps, tool calls, prompt tokens, finish_reason, pass).
        After Ctrl-C it holds the tasks finished so far and `interrupted=True`.

    Raises:
        UsageError: a bad argument (checked before any folder is made): `out_dir` not a path
            or not a usable one (a NUL byte, a name too long, a file), `tasks` empty or not
            `DemoTask`s, a `model` without `request`, an unknown `policy`, `max_steps` not an
            int >= 1, `echo` not callable.
    """
    _check_demo_args(out_dir, tasks, model, policy, max_steps, echo)
    started = time.perf_counter()
    root = _fresh_dir(Path(out_dir), "demo", flag="--out")
    rows: list[DemoRow] = []
    interrupted = False
    try:
        for task in tasks:
            rows.append(_run_task(task, root, model, policy, max_steps))
            if (
                rows[-1].finish_reason == "error"
            ):  # a model that cannot answer won't answer the next
                break
    except KeyboardInterrupt:  # Ctrl-C: report the tasks that finished (the run logged its end)
        interrupted = True
    skipped = tuple(t.name for t in tasks[len(rows) :])
    chart = _draw_chart(tuple(rows), root / "tokens_per_step.png") if rows else None
    report = DemoReport(
        rows=tuple(rows),
        chart=chart,
        skipped=skipped,
        seconds=time.perf_counter() - started,
        interrupted=interrupted,
    )
    if echo is not None:
        echo(report.to_text())
    return report
