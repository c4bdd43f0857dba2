"""Experiment results: the frame, summaries with pass^k, checks, charts, run directories.

`ExperimentResult.load(path)` reads a run directory written by `Experiment.run` back into the
same `frame`: `experiment.json` (configuration), `cases.jsonl` (the cases as run, redacted),
`results.jsonl` (one row per trial with every check), `logs/<run_id>.jsonl` (event logs),
`artifacts/<run_id>/` (each trial's artifact store).
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from harnesskit import _repr
from harnesskit.analysis.evals.scoring import CheckResult, Score, pass_hat_k
from harnesskit.errors import (
    CorruptLogError,
    SchemaVersionError,
    UsageError,
    checked_path,
    json_problem,
    refuse_type,
)
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
    `ExperimentResult.load(path)` rebuilds the same `frame`. Every file is redacted as the
    logs are (R-S1), the ids that name cases and trials excepted.
    """

    def __init__(
        self, rows: Sequence[Mapping[str, Any]], *, path: Path | None = None, repeats: int = 1
    ) -> None:
        """Wrap result rows (as written to `results.jsonl`).

        Args:
            rows: one dict per trial.
            path: the run directory.
            repeats: the experiment's repeats (the largest k for pass^k).

        Raises:
            UsageError: `rows` is not a list of dicts (a run directory is read with
                `ExperimentResult.load(path)`).
        """
        takes = "a list of result rows (dicts); read a run directory with .load(path)"
        refuse_type(rows, (list, tuple), "ExperimentResult(rows)", takes)
        if not all(isinstance(r, Mapping) for r in rows):
            refuse_type(next(r for r in rows if not isinstance(r, Mapping)), dict, "a row", takes)
        self.rows = [dict(r) for r in rows]
        self.path = path
        self.repeats = repeats

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> ExperimentResult:
        """Read a run directory written by `Experiment.run`.

        A last line of `results.jsonl` cut off mid-write is skipped with a `RuntimeWarning`
        (`Experiment.resume` runs that trial again).

        Args:
            path: the run directory.

        Returns:
            The result, rows in the order of `results.jsonl`.

        Raises:
            UsageError: `path` is not a usable folder path (`errors.checked_path`), or the
                folder has no `results.jsonl` or `experiment.json` (not an experiment
                directory).
            CorruptLogError: `experiment.json` or a line of `results.jsonl` other than a cut-off
                last one is damaged; the message names the file and line.
        """
        p = checked_path(
            path,
            "ExperimentResult.load(path)",
            kind="folder",
            fix="pass a run directory written by Experiment.run",
        )
        results = p / "results.jsonl"
        if not results.is_file():
            raise UsageError(f"{p} holds no results.jsonl: not a finished experiment directory")
        manifest = read_manifest(p, required=())
        rows = read_rows(results)
        return cls(rows, path=p, repeats=manifest.get("repeats", 1))

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


#: The `schema_version` of the `experiment.json` this harnesskit writes and reads.
EXPERIMENT_SCHEMA_VERSION = 1
#: Fields of `experiment.json` and their types; `read_manifest` checks those it is asked for.
MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "seed": int,
    "repeats": int,
    "cases": list,
    "policies": dict,
    "models": dict,
}
#: Fields every row of `results.jsonl` has: the trial it is, and the counts `frame` holds in
#: integer columns (a row without one cannot be summarized).
ROW_FIELDS = (
    "case", "policy", "model", "repeat", "run_id", "seed", "pass", "steps", "prompt_tokens",
    "completion_tokens", "tool_calls",
)  # fmt: skip
#: The JSON types of a row's fields, checked when present (an int field is never a bool).
ROW_TYPES: dict[str, tuple[type, ...]] = {
    "case": (str,),
    "policy": (str,),
    "model": (str,),
    "repeat": (int,),
    "run_id": (str,),
    "seed": (int,),
    "pass": (bool,),
    "steps": (int,),
    "prompt_tokens": (int,),
    "completion_tokens": (int,),
    "tool_calls": (int,),
    "finish_reason": (str, type(None)),
    "failed_checks": (list,),
    "error": (str, type(None)),
    "error_status": (int, type(None)),
    "checks": (list,),
}
#: The ranges `[low, high)` of a row's integer fields: counts fit `frame`'s 64-bit columns.
ROW_RANGES: dict[str, tuple[int, int]] = {
    "repeat": (0, 2**63),
    "seed": (-(2**63), 2**63),
    "steps": (0, 2**63),
    "prompt_tokens": (0, 2**63),
    "completion_tokens": (0, 2**63),
    "tool_calls": (0, 2**63),
    "error_status": (100, 600),
}
#: The JSON types of the fields of one check in a row's `checks` (`CheckResult.to_dict`).
CHECK_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "kind": (str,),
    "passed": (bool,),
    "detail": (str,),
    "event_ids": (list,),
}


def _not_an_object_with(value: Any, fields: Iterable[str]) -> str | None:
    """What keeps decoded JSON `value` from being an object holding `fields`, or None."""
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}"
    missing = [k for k in fields if k not in value]
    return f"a JSON object without {', '.join(map(repr, missing))}" if missing else None


def read_manifest(
    directory: str | os.PathLike[str], *, required: Iterable[str] = tuple(MANIFEST_FIELDS)
) -> dict[str, Any]:
    """The `experiment.json` of a run directory, checked.

    Args:
        directory: the run directory.
        required: fields that must be present (every field present is type-checked).

    Returns:
        The manifest dict.

    Raises:
        UsageError: there is no `experiment.json` (not an experiment directory).
        CorruptLogError: it is not UTF-8 JSON, not an object, lacks a required field or holds
            a field of the wrong type; the message names the file and says what to do.
        SchemaVersionError: its `schema_version` is not `EXPERIMENT_SCHEMA_VERSION` (written
            by another harnesskit version); a manifest without one is read as version 1.
    """
    path = Path(directory) / "experiment.json"
    if not path.is_file():
        raise UsageError(f"{Path(directory)} holds no experiment.json: not an experiment directory")

    def corrupt(what: str) -> CorruptLogError:
        return CorruptLogError(
            f"{path}: {what}; it is not an experiment manifest (a JSON object with "
            f"{', '.join(MANIFEST_FIELDS)}). Restore it from a backup, or run the experiment "
            "again into a new directory"
        )

    try:
        manifest = json.loads(path.read_bytes().decode("utf-8"))
    except (RecursionError, ValueError) as exc:  # JSONDecodeError, UnicodeDecodeError too
        raise corrupt(json_problem(exc) or type(exc).__name__) from exc
    shape = _not_an_object_with(manifest, required)
    if shape is not None:
        raise corrupt(shape)
    for key, kind in MANIFEST_FIELDS.items():
        value = manifest.get(key)
        if key in manifest and (not isinstance(value, kind) or isinstance(value, bool)):
            raise corrupt(f"{key!r} is {type(value).__name__} {str(value)[:40]!r}")
    if manifest.get("repeats", 1) < 1:
        raise corrupt(f"'repeats' is {manifest['repeats']} (at least 1 expected)")
    version = manifest.get("schema_version", EXPERIMENT_SCHEMA_VERSION)
    if type(version) is not int:
        raise corrupt(f"'schema_version' is {type(version).__name__} {str(version)[:40]!r}")
    if version != EXPERIMENT_SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{path}: experiment schema_version {version}; this harnesskit reads version "
            f"{EXPERIMENT_SCHEMA_VERSION}. Open it with the harnesskit that wrote it, or run "
            "the experiment again into a new directory"
        )
    return cast(dict[str, Any], manifest)  # an object: `_not_an_object_with` said so


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a `results.jsonl`, one dict per trial, in file order.

    A last line cut off mid-write (not valid JSON) is skipped with a `RuntimeWarning` naming
    the file and line: that trial counts as not run, and `Experiment.resume` runs it again.
    A line that repeats an earlier row of the same trial (`run_id`) exactly is skipped: the
    trial counts once. A trial is its case, policy, model and repeat: a second row for one
    under another `run_id` is corruption (counting both would count it twice).

    Args:
        path: the `results.jsonl` file.

    Returns:
        The rows, one per trial.

    Raises:
        CorruptLogError: a line other than a cut-off last one is not UTF-8 JSON, not an
            object, lacks the fields of a trial (`ROW_FIELDS`), holds a field of the wrong
            type (`ROW_TYPES`, `CHECK_TYPES`: `"pass": "false"` is not a bool) or a count out
            of range (`ROW_RANGES`: `"prompt_tokens": 10**30`), or is a
            second, different row of a trial already read (same `run_id`, or same case,
            policy, model and repeat); the message names the file and both lines and says what
            to do.
    """
    import warnings

    p = Path(path)
    lines = p.read_bytes().split(b"\n")
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    rows: list[dict[str, Any]] = []
    seen: dict[str, tuple[int, dict[str, Any]]] = {}  # run_id -> (line, row)
    trials: dict[tuple[Any, ...], tuple[int, dict[str, Any]]] = {}  # case/policy/model/repeat
    for n, line in numbered:
        corrupt = functools.partial(_bad_row, p, n)
        try:
            row = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            if n == numbered[-1][0]:  # the line being written when the process died
                warnings.warn(
                    f"{p}:{n}: skipped a last line cut off mid-write; its trial counts as not "
                    "run (Experiment.resume / `harnesskit eval --resume` runs it again)",
                    RuntimeWarning,
                    stacklevel=3,
                )
                continue
            why = f"not UTF-8 ({exc.reason})" if isinstance(exc, UnicodeDecodeError) else None
            raise corrupt(why or f"not valid JSON ({getattr(exc, 'msg', exc)})") from exc
        except (RecursionError, ValueError) as exc:  # nested too deep, an int too long
            raise corrupt(json_problem(exc) or type(exc).__name__) from exc
        shape = _not_an_object_with(row, ROW_FIELDS)
        if shape is not None:
            raise corrupt(shape)
        wrong = _wrong_type(row, ROW_TYPES, "", ROW_RANGES)
        for j, check in enumerate(() if wrong else row.get("checks") or ()):
            if wrong:
                break
            if not isinstance(check, dict):
                wrong = f"'checks.{j}' is {_json_type(check)} (an object expected)"
            else:
                wrong = _wrong_type(check, CHECK_TYPES, f"checks.{j}.")
        if wrong:
            raise corrupt(wrong)
        first = seen.get(row["run_id"])
        if first is not None:
            if first[1] == row:
                continue  # the same trial written twice: it counts once
            raise CorruptLogError(
                f"{p}:{n}: a second row for trial {row['run_id']!r} (first at line {first[0]}) "
                "that differs from it; the experiment's results are damaged. Remove the wrong "
                "one of the two lines (or both: Experiment.resume then runs the trial again), "
                "or restore the file from a backup"
            )
        trial = (row["case"], row["policy"], row["model"], row["repeat"])
        other = trials.get(trial)
        if other is not None:  # the same trial under another run_id: which one happened?
            raise CorruptLogError(
                f"{p}:{n}: a second row for trial case={row['case']!r} policy="
                f"{row['policy']!r} model={row['model']!r} repeat={row['repeat']} (run_id "
                f"{row['run_id']!r}; the first is line {other[0]}, run_id "
                f"{other[1]['run_id']!r}, pass={other[1].get('pass')!r}; this one pass="
                f"{row.get('pass')!r}); the experiment's results are damaged and counting both "
                "would count the trial twice. Keep the line of the run that belongs to this "
                "experiment and remove the other (or both: Experiment.resume then runs the "
                "trial again), or restore the file from a backup"
            )
        seen[row["run_id"]] = (n, row)
        trials[trial] = (n, row)
        rows.append(row)
    return rows


def _json_type(value: Any) -> str:
    """The JSON name of `value`'s type, for messages (`string`, `number`, `true`, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    names = {str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return f"{names.get(type(value), type(value).__name__)} {json.dumps(value)[:40]}"


def _wrong_type(
    row: Mapping[str, Any],
    types: Mapping[str, tuple[type, ...]],
    at: str,
    ranges: Mapping[str, tuple[int, int]] | None = None,
) -> str:
    """What is wrong with the first field of `row` of another type than `types` says, else ''.

    An integer field is also wrong outside its `[low, high)` in `ranges`.
    """
    for key, kinds in types.items():
        if key not in row:
            continue
        value = row[key]
        if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
            low, high = (ranges or {}).get(key, (None, None))
            if (
                isinstance(value, int)
                and low is not None
                and high is not None
                and not (low <= value < high)
            ):
                shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:20]}..."
                return f"'{at}{key}' is {shown} (an integer from {low} to {high - 1} expected)"
            continue
        expected = " or ".join(
            {str: "a string", int: "an integer", bool: "true/false", list: "a list"}.get(k, "null")
            for k in kinds
        )
        return f"'{at}{key}' is {_json_type(value)} ({expected} expected)"
    return ""


def _bad_row(path: Path, number: int, what: str) -> CorruptLogError:
    return CorruptLogError(
        f"{path}:{number}: {what}, not a trial row; the experiment's results are damaged. "
        "Remove that line (Experiment.resume then runs its trial again) or restore the file "
        "from a backup"
    )


def load_results(rows: Iterable[Mapping[str, Any]]) -> ExperimentResult:
    """Wrap rows (e.g. from several `results.jsonl`) in an `ExperimentResult` without a folder."""
    return ExperimentResult(list(rows))
