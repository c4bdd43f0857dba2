"""Charts of runs, probes and policy budgets: every function is `plot_<what>` (R-O1).

`plot_budget` (tokens per step against the token-budget and step brakes), `plot_composition`
(prompt composition per step), `plot_comparison` (runs side by side), `plot_probes` (the
contamination probe matrix of `run_probes`) and `plot_policy_tokens` (prompt tokens per step of
`compare_policies`). The tables behind them come from `frames.frame(..., kind=...)`.

matplotlib is imported inside the functions; with no display (a terminal, CI) the run charts use
the Agg backend. Every chart function returns the `matplotlib.figure.Figure`; the run charts
close it for pyplot so a notebook shows it once (as the cell's value) and scripts can `savefig`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from harnesskit.context.tokens import TokenEstimator
from harnesskit.errors import UsageError, refuse_type
from harnesskit.notebook.frames import (
    BUDGET_COLUMNS,
    COMPOSITION_CATEGORIES,
    _budget,
    _composition,
    _log_of,
)

__all__ = [
    "plot_budget",
    "plot_comparison",
    "plot_composition",
    "plot_policy_tokens",
    "plot_probes",
]


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
    a braked run is hatched); when the provider reported prompt-cache hits, the cached part of
    each prompt is drawn lighter, labelled with the run's cache share. Bottom: cumulative
    tokens and cumulative prompt tokens with the
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
    df = _budget(run, branch_id=branch_id)
    if df.empty:
        raise UsageError("the run has no model request yet: step it before plotting its budget")
    limits = df.attrs["limits"]
    plt = _pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=figsize)
    x = df["request"].to_numpy()
    hatch = ["//" if f else "" for f in df["final"]]
    top.bar(x, df["prompt_tokens"], color="#4c78a8", label="prompt", hatch=hatch)
    cached = df["cached_tokens"]
    if cached.sum() > 0:
        share = cached.sum() / max(1, df["prompt_tokens"].sum())
        top.bar(x, cached, color="#9ecae9", label=f"prompt from cache ({share:.0%})", hatch=hatch)
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
    finished = _log_of(run).last("run.finished", branch_id=branch_id)
    reason = finished.payload.get("finish_reason") if finished else "running"
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
        estimator: token estimator (see `frame(run, kind="composition")`).
        figsize: figure size in inches (width, height).

    Returns:
        The `matplotlib.figure.Figure`.

    Raises:
        UsageError: `run` is neither a Run nor an EventLog, or it has no model request yet.
    """
    df = _composition(run, branch_id=branch_id, estimator=estimator)
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
    """One line per run of a budget column (`frame(run, kind="budget")`) per request.

    Args:
        runs: `{label: Run or EventLog}` (e.g. the same task under different policies).
        metric: a `BUDGET_COLUMNS` entry: `prompt_tokens` (size of each prompt, default),
            `cum_tokens`, `total_tokens`, `tool_calls`, ...
        branch_id: the branch to read in each run.
        figsize: figure size in inches (width, height).

    Returns:
        The `matplotlib.figure.Figure`.

    Raises:
        UsageError: an unknown metric, `runs` is not a dict, or a value is neither a Run nor
            an EventLog.
    """
    refuse_type(runs, Mapping, "plot_comparison(runs)", "a dict {label: Run or EventLog}")
    if metric not in BUDGET_COLUMNS:
        raise UsageError(f"metric must be a budget column, one of {BUDGET_COLUMNS}")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize)
    for label, run in runs.items():
        df = _budget(run, branch_id=branch_id)
        ax.plot(df["request"], df[metric], marker="o", label=str(label))
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("request (step)")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(f"{metric.replace('_', ' ')} per request", fontsize=10)
    ax.legend(fontsize=8)
    return _done(plt, fig)


# -- probes and policy budgets ------------------------------------------------------------


def plot_probes(matrix: Any, *, ax: Any = None) -> Any:
    """Draw the probe matrix as a heatmap: leak rate per policy × kind (red = leaked).

    Args:
        matrix: the DataFrame `harnesskit.analysis.probes.run_probes` returned.
        ax: a matplotlib Axes to draw on; `None` makes a new figure.

    Returns:
        The matplotlib Figure.

    Raises:
        UsageError: `matrix` is not a DataFrame.
    """
    import pandas as pd
    from matplotlib.figure import Figure

    refuse_type(matrix, pd.DataFrame, "plot_probes(matrix)", "the DataFrame hk.run_probes returned")
    runs = matrix.attrs.get("runs")
    if runs is not None:
        rates = runs.groupby(["policy", "kind"], sort=False)["leaked"].mean().unstack("kind")
        rates = rates.reindex(index=matrix.index, columns=matrix.columns)
    else:
        rates = matrix.apply(lambda col: col.map(lambda v: 0.0 if v == "blocked" else 1.0))
    if ax is None:
        fig = Figure(figsize=(1.4 * len(rates.columns) + 2, 0.6 * len(rates.index) + 1.6))
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    image = ax.imshow(rates.to_numpy(dtype=float), cmap="RdYlGn_r", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(len(rates.columns)), [c.replace("_", "\n") for c in rates.columns])
    ax.set_yticks(range(len(rates.index)), list(rates.index))
    for (i, j), value in _cells(matrix):
        ax.text(j, i, value, ha="center", va="center", fontsize=8)
    ax.set_title("contamination probes: canary reached the model?")
    fig.colorbar(image, ax=ax, label="leak rate")
    fig.tight_layout()
    return fig


def _cells(matrix: Any) -> list[tuple[tuple[int, int], str]]:
    return [
        ((i, j), str(matrix.iat[i, j]))
        for i in range(matrix.shape[0])
        for j in range(matrix.shape[1])
    ]


def plot_policy_tokens(frame: Any, *, ax: Any = None) -> Any:
    """Chart prompt tokens per step for each policy, with each policy's total in the legend.

    Args:
        frame: the DataFrame `harnesskit.analysis.probes.compare_policies` returned.
        ax: a matplotlib Axes to draw on; `None` makes a new figure.

    Returns:
        The matplotlib Figure.

    Raises:
        UsageError: `frame` is not a DataFrame.
    """
    import pandas as pd
    from matplotlib.figure import Figure

    refuse_type(
        frame,
        pd.DataFrame,
        "plot_policy_tokens(frame)",
        "the DataFrame hk.compare_policies returned",
    )

    if ax is None:
        fig = Figure(figsize=(8, 4))
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    for name in frame.columns:
        ax.plot(frame.index, frame[name], marker=".", label=f"{name} (total {frame[name].sum():,})")
    ax.set_xlabel("step")
    ax.set_ylabel("prompt tokens (estimated)")
    ax.set_title("prompt tokens per step, same scripted run")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
