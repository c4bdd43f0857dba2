"""Frames and charts read from an event log (R-O1): the log is the trace.

`frame()` gives one row per event (or one row per item of a list of results), `budget_frame()`
one row per model request with tokens, time and tool calls, `composition_frame()` what filled
each prompt, computed from the exact requests (`EventLog.request_messages`). The charts draw
them with matplotlib: `plot_budget()` (tokens per step against the token-budget and step
brakes), `plot_composition()` (prompt composition per step) and `plot_comparison()` (runs under
different policies side by side, with `comparison_frame()` as the table).

pandas and matplotlib are imported inside the functions; with no display (a terminal, CI) the
charts use the Agg backend. Every chart function returns the `matplotlib.figure.Figure`, closed
for pyplot so a notebook shows it once (as the cell's value) and scripts can `savefig` it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from harnesskit.context.tokens import TokenEstimator
from harnesskit.errors import UsageError
from harnesskit.log._types import (
    ModelRequestEvent,
    ModelResponseEvent,
    RunFinishedEvent,
    ToolResultEvent,
)
from harnesskit.log.events import EventLog
from harnesskit.messages import Message

__all__ = [
    "COMPOSITION_CATEGORIES",
    "budget_frame",
    "comparison_frame",
    "composition_frame",
    "frame",
    "plot_budget",
    "plot_comparison",
    "plot_composition",
]

#: Columns of `composition_frame`, in stacking order.
COMPOSITION_CATEGORIES = ("system", "user", "assistant", "tool_results", "tool_specs", "other")

_BUDGET_COLUMNS = [
    "request", "step", "final", "prompt_tokens", "completion_tokens", "total_tokens",
    "cum_prompt_tokens", "cum_tokens", "estimated", "seconds", "model_seconds", "tool_seconds",
    "tool_calls", "tool_errors", "messages",
]  # fmt: skip


def _log_of(obj: Any) -> EventLog:
    if isinstance(obj, EventLog):
        return obj
    log = getattr(obj, "log", None)
    if isinstance(log, EventLog):
        return log
    raise UsageError(f"expected a Run or an EventLog, got {type(obj).__name__}")


def _contract(log: EventLog) -> dict[str, Any]:
    first = log.last("task.contract")
    return first.payload if first is not None else {}


def _limits(obj: Any, log: EventLog) -> dict[str, Any]:
    harness = getattr(obj, "harness", None)
    if harness is not None:
        return {k: getattr(harness.limits, k) for k in type(harness.limits).__slots__}
    return dict(_contract(log).get("limits") or {})


def frame(obj: Any) -> Any:
    """A pandas DataFrame of `obj`: events, or the items of a list of results.

    Args:
        obj: a `Run` or `EventLog` (one row per event, see `EventLog.frame`); an object with a
            `frame()` method (reports); or an iterable of dataclasses or dicts, such as the
            `LintIssue`s returned by `hk.lint` (one row per item, one column per field).

    Returns:
        A `pandas.DataFrame`.

    Raises:
        UsageError: `obj` is none of those.
    """
    import pandas as pd

    if isinstance(obj, EventLog) or isinstance(getattr(obj, "log", None), EventLog):
        return _log_of(obj).frame()
    if callable(getattr(obj, "frame", None)):
        return obj.frame()
    if isinstance(obj, Iterable) and not isinstance(obj, str | bytes | Mapping):
        items = list(obj)
        rows = []
        for item in items:
            if dataclasses.is_dataclass(item) and not isinstance(item, type):
                rows.append({f.name: getattr(item, f.name) for f in dataclasses.fields(item)})
            elif isinstance(item, Mapping):
                rows.append(dict(item))
            else:
                raise UsageError(
                    f"frame() of a list needs dataclasses or dicts, got {type(item).__name__}"
                )
        return pd.DataFrame(rows)
    raise UsageError(
        f"frame() takes a Run, an EventLog, a report or a list of records, got {type(obj).__name__}"
    )


def _seconds_between(a: str, b: str) -> float:
    try:
        return (dt.datetime.fromisoformat(b) - dt.datetime.fromisoformat(a)).total_seconds()
    except ValueError:
        return 0.0


def budget_frame(run: Any, *, branch_id: str = "main") -> Any:
    """Tokens, time and tool calls per step: one row per model request of a branch.

    A run closed by a brake has one more request than steps (the tool-less closing request,
    `final=True`, with the same `step` as the last one).

    Args:
        run: a `Run` or an `EventLog`.
        branch_id: the branch to read.

    Returns:
        A `pandas.DataFrame` with columns `request` (1-based), `step`, `final`,
        `prompt_tokens`, `completion_tokens`, `total_tokens` (tokens of this request),
        `cum_prompt_tokens`, `cum_tokens` (running sums, tokens), `estimated` (True when the
        counts come from the estimator), `seconds` (log-clock time from this request to the
        last event before the next one), `model_seconds`, `tool_seconds` (sum over the
        step's tool calls; calls of one turn may overlap), `tool_calls`, `tool_errors`,
        `messages` (messages sent). `df.attrs["limits"]` holds the run's brakes.

    Raises:
        UsageError: `run` is neither a Run nor an EventLog.
    """
    import pandas as pd

    log = _log_of(run)
    events = [e for e in log.events if e.branch_id == branch_id]
    rows: list[dict[str, Any]] = []
    cum_prompt = cum_total = 0
    current: dict[str, Any] | None = None
    for e in events:
        if isinstance(e, ModelRequestEvent):
            current = {
                "request": len(rows) + 1,
                "step": e.step,
                "final": bool(e.final),
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "estimated": False,
                "model_seconds": 0.0,
                "tool_seconds": 0.0,
                "tool_calls": 0,
                "tool_errors": 0,
                "messages": 0 if e.n_messages is None else e.n_messages,
                "_start": e.created_at,
                "_end": e.created_at,
            }
            rows.append(current)
            continue
        if current is None:
            continue
        current["_end"] = e.created_at or current["_end"]
        if isinstance(e, ModelResponseEvent):
            usage = e.usage or {}
            current["prompt_tokens"] = usage.get("prompt_tokens", 0)
            current["completion_tokens"] = usage.get("completion_tokens", 0)
            current["estimated"] = bool(usage.get("estimated"))
            current["model_seconds"] = 0.0 if e.seconds is None else e.seconds
        elif isinstance(e, ToolResultEvent):
            current["tool_calls"] += 1
            current["tool_errors"] += 0 if e.ok else 1
            current["tool_seconds"] += 0.0 if e.seconds is None else e.seconds
    for r in rows:
        r["total_tokens"] = r["prompt_tokens"] + r["completion_tokens"]
        cum_prompt += r["prompt_tokens"]
        cum_total += r["total_tokens"]
        r["cum_prompt_tokens"], r["cum_tokens"] = cum_prompt, cum_total
        r["seconds"] = _seconds_between(r.pop("_start"), r.pop("_end"))
    df = pd.DataFrame(rows, columns=_BUDGET_COLUMNS)
    df.attrs["limits"] = _limits(run, log)
    df.attrs["run_id"] = log.run_id or _contract(log).get("run_id", "")
    return df


def _category(message: Message, index: int) -> str:
    if message.role == "system":
        return "system" if index == 0 else "other"
    if message.role == "tool":
        return "tool_results"
    if message.role in ("user", "assistant"):
        return message.role
    return "other"  # pragma: no cover - Message only allows the four roles


def composition_frame(
    run: Any, *, branch_id: str = "main", estimator: TokenEstimator | None = None
) -> Any:
    """What filled each prompt, in estimated tokens per category, from the exact requests.

    Each `model.request` of the branch is rebuilt with `EventLog.request_messages` and its
    messages are counted by role: `system` (the first system message), `user`,
    `assistant` (text and tool calls), `tool_results`, `tool_specs` (the tool list sent) and
    `other` (later system messages: runtime notes such as a brake's closing instruction,
    injected summaries).

    Args:
        run: a `Run` or an `EventLog`.
        branch_id: the branch to read.
        estimator: token estimator; default the run harness's, else `TokenEstimator()`.

    Returns:
        A `pandas.DataFrame`, one row per request: `request`, `step`, `final`, one column per
        `COMPOSITION_CATEGORIES` entry (estimated tokens) and `total`.

    Raises:
        UsageError: `run` is neither a Run nor an EventLog.
    """
    import pandas as pd

    log = _log_of(run)
    harness = getattr(run, "harness", None)
    est = estimator or getattr(harness, "estimator", None) or TokenEstimator()
    rows: list[dict[str, Any]] = []
    for e in log.of_type(ModelRequestEvent, branch_id=branch_id):
        counts = dict.fromkeys(COMPOSITION_CATEGORIES, 0)
        for i, raw in enumerate(log.request_messages(e.event_id)):
            message = Message.from_openai(raw)
            counts[_category(message, i)] += est.count_message(message)
        counts["tool_specs"] = est.count_tools(log.request_tools(e.event_id))
        rows.append(
            {
                "request": len(rows) + 1,
                "step": e.step,
                "final": bool(e.final),
                **counts,
                "total": sum(counts.values()),
            }
        )
    columns = ["request", "step", "final", *COMPOSITION_CATEGORIES, "total"]
    return pd.DataFrame(rows, columns=columns)


def comparison_frame(runs: Mapping[str, Any], *, branch_id: str = "main") -> Any:
    """One summary row per run, to compare policies (or models, or tool descriptions).

    Args:
        runs: `{label: Run or EventLog}`, e.g. one run of the same task per context policy.
        branch_id: the branch to read in each run.

    Returns:
        A `pandas.DataFrame` indexed by label with columns `policy`, `model`, `steps`,
        `requests`, `tool_calls`, `tool_errors`, `prompt_tokens`, `completion_tokens`,
        `total_tokens` (sums, tokens), `max_prompt_tokens` (the largest single prompt),
        `finish_reason` and `incomplete`.

    Raises:
        UsageError: a value is neither a Run nor an EventLog.
    """
    import pandas as pd

    rows = []
    for label, run in runs.items():
        log = _log_of(run)
        b = budget_frame(run, branch_id=branch_id)
        contract = _contract(log)
        finished = log.last("run.finished", branch_id=branch_id)
        fin = finished.payload if finished is not None else {}
        rows.append(
            {
                "label": label,
                "policy": (contract.get("policy") or {}).get("name"),
                "model": contract.get("model"),
                "steps": int(b["step"].max()) if len(b) else 0,
                "requests": len(b),
                "tool_calls": int(b["tool_calls"].sum()),
                "tool_errors": int(b["tool_errors"].sum()),
                "prompt_tokens": int(b["prompt_tokens"].sum()),
                "completion_tokens": int(b["completion_tokens"].sum()),
                "total_tokens": int(b["total_tokens"].sum()),
                "max_prompt_tokens": int(b["prompt_tokens"].max()) if len(b) else 0,
                "finish_reason": fin.get("finish_reason"),
                "incomplete": bool(fin.get("incomplete", False)),
            }
        )
    return pd.DataFrame(rows).set_index("label") if rows else pd.DataFrame()


# -- charts ------------------------------------------------------------------------------------


def _pyplot() -> Any:
    """Import pyplot, choosing Agg first when nothing can show a window (terminal, CI)."""
    import matplotlib

    if "matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND"):
        in_kernel = "ipykernel" in sys.modules
        has_display = bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
        if not in_kernel and not has_display and sys.platform.startswith("linux"):
            matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _done(plt: Any, fig: Any) -> Any:
    fig.tight_layout()
    plt.close(fig)
    return fig


def _near(limit: Any, reached: float, factor: float) -> bool:
    """Draw a limit line only when it is within `factor` of what was reached (else say it)."""
    return limit is not None and limit <= max(reached, 1) * factor


def plot_budget(run: Any, *, branch_id: str = "main", figsize: tuple[float, float] = (8, 5)) -> Any:
    """Tokens per step against the token-budget and step brakes.

    Top: prompt and completion tokens of each request (stacked bars; the closing request of
    a braked run is hatched). Bottom: cumulative tokens and cumulative prompt tokens with the
    `max_tokens` and `max_prompt_tokens` budgets. A dashed vertical line marks `max_steps`.
    A limit far beyond what the run used (more than 4x) is named in the legend instead of
    drawn, so the bars stay readable.

    Args:
        run: a `Run` or an `EventLog`.
        branch_id: the branch to draw.
        figsize: figure size in inches (width, height).

    Returns:
        The `matplotlib.figure.Figure`.

    Raises:
        UsageError: `run` is neither a Run nor an EventLog, or it has no model request yet.
    """
    df = budget_frame(run, branch_id=branch_id)
    if df.empty:
        raise UsageError("the run has no model request yet: step it before plotting its budget")
    limits = df.attrs["limits"]
    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=figsize)
    x = df["request"].to_numpy()
    hatch = ["//" if f else "" for f in df["final"]]
    top.bar(x, df["prompt_tokens"], color="#4c78a8", label="prompt", hatch=hatch)
    top.bar(
        x, df["completion_tokens"], bottom=df["prompt_tokens"], color="#f58518",
        label="completion", hatch=hatch,
    )  # fmt: skip
    top.set_ylabel("tokens per step")
    bottom.plot(x, df["cum_tokens"], marker="o", color="#54a24b", label="cumulative tokens")
    bottom.plot(
        x, df["cum_prompt_tokens"], marker=".", color="#4c78a8", label="cumulative prompt tokens"
    )
    used_total, used_prompt = int(df["cum_tokens"].iloc[-1]), int(df["cum_prompt_tokens"].iloc[-1])
    for name, used, color in (
        ("max_tokens", used_total, "#e45756"),
        ("max_prompt_tokens", used_prompt, "#b279a2"),
    ):
        limit = limits.get(name)
        if limit is None:
            continue
        label = f"{name} = {limit:,}"
        if _near(limit, used, 4):
            bottom.axhline(limit, color=color, linestyle="--", label=label)
        else:
            bottom.plot([], [], " ", label=f"{label} ({used / limit:.0%} used)")
    bottom.set_ylabel("cumulative tokens")
    bottom.set_xlabel("step" + (" (hatched: closing request after a brake)" if any(hatch) else ""))
    steps = [str(s) + ("*" if f else "") for s, f in zip(df["step"], df["final"], strict=True)]
    bottom.set_xticks(x, steps)
    max_steps = limits.get("max_steps")
    if max_steps is not None:
        n = int(df["step"].max())
        label = f"max_steps = {max_steps}"
        if _near(max_steps, n, 2) or max_steps <= n + 3:
            before = df.loc[(df["step"] <= max_steps) & ~df["final"], "request"]
            pos = float(before.max()) + 0.5  # after the last step the brake allowed
            for ax in (top, bottom):
                ax.axvline(pos, color="#e45756", linestyle=":", label=label if ax is top else None)
        else:
            top.plot([], [], " ", label=f"{label} (used {n})")
    top.legend(loc="upper left", fontsize=8)
    bottom.legend(loc="upper left", fontsize=8)
    finished = _log_of(run).last(RunFinishedEvent, branch_id=branch_id)
    reason = finished.finish_reason if isinstance(finished, RunFinishedEvent) else "running"
    top.set_title(
        f"{df.attrs['run_id']}: {_plural(int(df['step'].max()), 'step')}, {used_total:,} tokens, "
        f"finish_reason={reason}",
        fontsize=10,
    )
    return _done(plt, fig)


def plot_composition(
    run: Any,
    *,
    branch_id: str = "main",
    estimator: TokenEstimator | None = None,
    figsize: tuple[float, float] = (8, 4),
) -> Any:
    """Prompt composition per step: which categories filled each request (stacked bars).

    Args:
        run: a `Run` or an `EventLog`.
        branch_id: the branch to draw.
        estimator: token estimator (see `composition_frame`).
        figsize: figure size in inches (width, height).

    Returns:
        The `matplotlib.figure.Figure`.

    Raises:
        UsageError: `run` is neither a Run nor an EventLog, or it has no model request yet.
    """
    df = composition_frame(run, branch_id=branch_id, estimator=estimator)
    if df.empty:
        raise UsageError("the run has no model request yet: step it before plotting its prompts")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize)
    x = df["request"].to_numpy()
    bottom = None
    colors = ["#9d755d", "#4c78a8", "#f58518", "#54a24b", "#bab0ac", "#e45756"]
    for cat, color in zip(COMPOSITION_CATEGORIES, colors, strict=True):
        values = df[cat].to_numpy()
        if not values.any():
            continue
        ax.bar(x, values, bottom=bottom, label=cat.replace("_", " "), color=color)
        bottom = values if bottom is None else bottom + values
    steps = [str(s) + ("*" if f else "") for s, f in zip(df["step"], df["final"], strict=True)]
    ax.set_xticks(x, steps)
    ax.set_xlabel("step (* closing request after a brake)" if df["final"].any() else "step")
    ax.set_ylabel("estimated prompt tokens")
    ax.set_title("What filled each prompt", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    return _done(plt, fig)


def plot_comparison(
    runs: Mapping[str, Any],
    *,
    metric: str = "prompt_tokens",
    branch_id: str = "main",
    figsize: tuple[float, float] = (8, 4),
) -> Any:
    """One line per run of a `budget_frame` column against the request number.

    Args:
        runs: `{label: Run or EventLog}` (e.g. the same task under different policies).
        metric: a `budget_frame` column: `prompt_tokens` (size of each prompt, default),
            `cum_tokens`, `total_tokens`, `tool_calls`, ...
        branch_id: the branch to read in each run.
        figsize: figure size in inches (width, height).

    Returns:
        The `matplotlib.figure.Figure`.

    Raises:
        UsageError: an unknown metric, or a value is neither a Run nor an EventLog.
    """
    if metric not in _BUDGET_COLUMNS:
        raise UsageError(f"metric must be a budget_frame column, one of {_BUDGET_COLUMNS}")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize)
    for label, run in runs.items():
        df = budget_frame(run, branch_id=branch_id)
        ax.plot(df["request"], df[metric], marker="o", label=str(label))
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("request (step)")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(f"{metric.replace('_', ' ')} per request", fontsize=10)
    ax.legend(fontsize=8)
    return _done(plt, fig)
