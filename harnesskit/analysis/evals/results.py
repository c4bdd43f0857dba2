"""Experiment results: the frame, summaries with pass^k, checks, charts, run directories.

`ExperimentResult.load(path)` reads a run directory written by `Experiment.run` back into the
same `frame`: `experiment.json` (configuration), `cases.jsonl` (the cases as run),
`results.jsonl` (one row per trial with every check), `logs/<run_id>.jsonl` (event logs),
`artifacts/<run_id>/` (each trial's artifact store).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harnesskit import _repr
from harnesskit.analysis.evals.scoring import CheckResult, Score, pass_hat_k
from harnesskit.errors import UsageError
from harnesskit.log.events import EventLog

__all__ = ["RESULT_COLUMNS", "ExperimentResult", "load_results"]

#: Columns of `ExperimentResult.frame`, in order.
RESULT_COLUMNS = (
    "case", "policy", "model", "repeat", "seed", "pass", "steps", "prompt_tokens",
    "completion_tokens", "tool_calls", "finish_reason", "failed_checks", "error", "run_id",
)  # fmt: skip


class ExperimentResult:
    """The rows of a finished experiment and its run directory.

    Layout of the directory: `experiment.json` (configuration), `cases.jsonl` (the cases as
    run), `results.jsonl` (one row per trial with every check), `logs/<run_id>.jsonl` (one
    event log per trial), `artifacts/<run_id>/` (its artifacts). After Ctrl-C
    `results.jsonl` holds the finished trials and `experiment.json` says `"finished": false`.
    `ExperimentResult.load(path)` rebuilds the same `frame`.
    """

    def __init__(
        self, rows: Sequence[Mapping[str, Any]], *, path: Path | None = None, repeats: int = 1
    ) -> None:
        """Wrap result rows (as written to `results.jsonl`).

        Args:
            rows: one dict per trial.
            path: the run directory.
            repeats: the experiment's repeats (the largest k for pass^k).
        """
        self.rows = [dict(r) for r in rows]
        self.path = path
        self.repeats = repeats

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ExperimentResult:
        """Read a run directory written by `Experiment.run`.

        Raises:
            UsageError: the folder has no `results.jsonl` (not a finished experiment).
        """
        p = Path(path)
        results = p / "results.jsonl"
        if not results.is_file():
            raise UsageError(f"{p} holds no results.jsonl: not a finished experiment directory")
        manifest = json.loads((p / "experiment.json").read_text(encoding="utf-8"))
        rows = [
            json.loads(line)
            for line in results.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        return cls(rows, path=p, repeats=int(manifest.get("repeats", 1)))

    @property
    def frame(self) -> Any:
        """A pandas DataFrame, one row per trial, columns `RESULT_COLUMNS`, in trial order."""
        import pandas as pd

        df = pd.DataFrame(
            [[r.get(c) for c in RESULT_COLUMNS] for r in self.rows], columns=list(RESULT_COLUMNS)
        )
        return df.astype(
            {
                "repeat": "int64",
                "seed": "int64",
                "pass": "bool",
                "steps": "int64",
                "prompt_tokens": "int64",
                "completion_tokens": "int64",
                "tool_calls": "int64",
            }
        )

    def checks(self) -> Any:
        """A long DataFrame, one row per check of every trial.

        Returns:
            Columns case, policy, model, repeat, check, kind, passed, detail, event_ids.
        """
        import pandas as pd

        keys = ("case", "policy", "model", "repeat")
        rows = [
            {
                **{k: r[k] for k in keys},
                **{("check" if k == "name" else k): v for k, v in c.items()},
            }
            for r in self.rows
            for c in r.get("checks", ())
        ]
        cols = [*keys, "check", "kind", "passed", "detail", "event_ids"]
        return pd.DataFrame(rows, columns=cols)

    def scores(self) -> list[Score]:
        """One `Score` per trial, in trial order."""
        return [
            Score(
                case_id=r["case"],
                checks=tuple(CheckResult.from_dict(c) for c in r.get("checks", ())),
            )
            for r in self.rows
        ]

    def pass_hat_k(self, k: int, *, by: Sequence[str] = ("policy", "model")) -> Any:
        """pass^k (τ-bench) per group: a pandas Series indexed by `by`.

        Raises:
            UsageError: a case has fewer than `k` trials in a group.
        """
        df = self.frame
        out = {}
        for key, g in df.groupby(list(by), sort=False):
            per_case = g.groupby("case", sort=False)["pass"].agg(["count", "sum"])
            out[key] = pass_hat_k(zip(per_case["count"], per_case["sum"], strict=True), k)
        import pandas as pd

        series = pd.Series(out, name=f"pass^{k}", dtype="float64")
        series.index.names = list(by)
        return series

    def summary(self, *, by: Sequence[str] = ("policy", "model"), k: int | None = None) -> Any:
        """The summary table: one row per group (default policy × model).

        Columns: cases, trials, pass_rate, pass^1..pass^k, mean_steps, mean_prompt_tokens,
        tokens_per_pass, errors. `errors` counts trials that did not run to an end of their own
        (the model server unreachable, 5xx after retries, a timeout, a crash); `pass_rate` is
        over the other trials (`nan` when none ran), so infrastructure is never blamed on the
        agent.

        Args:
            by: grouping columns.
            k: the largest k for pass^k; default the experiment's repeats.

        Returns:
            A pandas DataFrame indexed by `by`. `tokens_per_pass` is all prompt + completion
            tokens of the group divided by its passing trials (`inf` when none passed).
        """
        import pandas as pd

        df = self.frame
        kmax = k or self.repeats
        rows = []
        for key, g in df.groupby(list(by), sort=False):
            passes = int(g["pass"].sum())
            tokens = int(g["prompt_tokens"].sum() + g["completion_tokens"].sum())
            per_case = g.groupby("case", sort=False)["pass"].agg(["count", "sum"])
            row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
            ran = int(g["error"].isna().sum())  # errors are infrastructure, not behaviour
            row.update(
                cases=len(per_case), trials=len(g), pass_rate=passes / ran if ran else math.nan
            )
            # pass^k over the trials that ran, like pass_rate: NaN where a case has fewer than k
            ran_cases = (
                g[g["error"].isna()].groupby("case", sort=False)["pass"].agg(["count", "sum"])
            )
            for j in range(1, kmax + 1):
                ok = len(ran_cases) == len(per_case) and bool((ran_cases["count"] >= j).all())
                pairs = zip(ran_cases["count"], ran_cases["sum"], strict=True)
                row[f"pass^{j}"] = pass_hat_k(pairs, j) if ok else math.nan
            row.update(
                mean_steps=float(g["steps"].mean()),
                mean_prompt_tokens=float(g["prompt_tokens"].mean()),
                tokens_per_pass=tokens / passes if passes else (math.inf if ran else math.nan),
                errors=int(g["error"].notna().sum()),
            )
            rows.append(row)
        return pd.DataFrame(rows).set_index(list(by))

    def failures(self) -> Any:
        """The trials that ran and failed a check.

        Returns:
            A DataFrame: case, policy, model, repeat, failed_checks, run_id. Trials with an
            `error` (infrastructure) are not failures; see `errors()`.
        """
        df = self.frame
        return df.loc[
            ~df["pass"] & df["error"].isna(),
            ["case", "policy", "model", "repeat", "failed_checks", "run_id"],
        ]

    def errors(self) -> Any:
        """The trials that did not run to an end (infrastructure, a crash).

        Returns:
            A DataFrame: case, policy, model, repeat, error, run_id.
        """
        df = self.frame
        return df.loc[df["error"].notna(), ["case", "policy", "model", "repeat", "error", "run_id"]]

    def log(self, run_id: str) -> EventLog:
        """The event log of one trial (read-only).

        Raises:
            UsageError: the result has no run directory or no such log.
        """
        if self.path is None:
            raise UsageError("this result has no run directory")
        return EventLog.read(self.path / "logs" / f"{run_id}.jsonl")

    def chart(self, *, by: str = "policy", hue: str = "model") -> Any:
        """A matplotlib Figure: pass rate and tokens per pass, bars per `by`, one colour per `hue`.

        Returns:
            The `Figure` (two axes side by side).
        """
        import matplotlib.pyplot as plt

        summ = self.summary(by=(by, hue)).reset_index()
        groups = list(dict.fromkeys(summ[by]))
        hues = list(dict.fromkeys(summ[hue]))
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        width = 0.8 / max(len(hues), 1)
        for j, h in enumerate(hues):
            sub = summ[summ[hue] == h].set_index(by).reindex(groups)
            xs = [i + (j - (len(hues) - 1) / 2) * width for i in range(len(groups))]
            axes[0].bar(xs, sub["pass_rate"], width, label=str(h))
            tpp = sub["tokens_per_pass"].replace(math.inf, math.nan)
            axes[1].bar(xs, tpp, width, label=str(h))
        for ax, title in zip(
            axes, ("pass rate", "tokens per pass (prompt + completion)"), strict=True
        ):
            ax.set_xticks(range(len(groups)), [str(g) for g in groups])
            ax.set_title(title)
            ax.set_xlabel(by)
        axes[0].set_ylim(0, 1.05)
        axes[0].legend(title=hue, fontsize=8)
        fig.tight_layout()
        return fig

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        passed = sum(1 for r in self.rows if r.get("pass"))
        return f"<ExperimentResult {len(self.rows)} trials, {passed} passed, at {self.path}>"

    def _repr_html_(self) -> str | None:
        return _repr.html(self)


def load_results(rows: Iterable[Mapping[str, Any]]) -> ExperimentResult:
    """Wrap rows (e.g. from several `results.jsonl`) in an `ExperimentResult` without a folder."""
    return ExperimentResult(list(rows))
