"""Frames read from an event log (R-O1): the log is the trace. One function, one `kind` each.

The naming scheme: tables are `hk.frame(obj, kind=...)`, charts are `hk.plot_<what>(...)`
(in `charts.py`). Every table a notebook user reads comes from `frame`:

- `kind="events"` (default): one row per event of a `Run` or `EventLog`, or the frame of a
  report (an object with a `frame()` method), or one row per item of a list of results.
- `kind="budget"`: one row per model request with tokens, time and tool calls.
- `kind="composition"`: what filled each prompt, from the exact requests
  (`EventLog.request_messages`).
- `kind="comparison"`: one summary row per run of a `{label: run}` mapping.

The charts draw these: `plot_budget` (tokens per step against the token-budget and step
brakes), `plot_composition` (prompt composition per step), `plot_comparison` (runs under
different policies side by side), `plot_probes` and `plot_policy_tokens` (probe matrices and
policy budgets from `harnesskit.analysis.probes`). pandas is imported inside the functions.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from harnesskit.context.tokens import TokenEstimator
from harnesskit.errors import UsageError
from harnesskit.log.events import EventLog
from harnesskit.messages import Message
from harnesskit.notebook.parquet import typed_frame

__all__ = ["BUDGET_COLUMNS", "COMPOSITION_CATEGORIES", "FRAME_KINDS", "frame"]

#: The kinds `frame` builds, in the order the docstring lists them.
FRAME_KINDS = ("events", "budget", "composition", "comparison")

#: Columns of `frame(run, kind="composition")`, in stacking order.
COMPOSITION_CATEGORIES = ("system", "user", "assistant", "tool_results", "tool_specs", "other")

#: Columns of `frame(run, kind="budget")`, in order.
BUDGET_COLUMNS = [
    "request", "step", "final", "prompt_tokens", "cached_tokens", "completion_tokens",
    "total_tokens", "cum_prompt_tokens", "cum_tokens", "estimated", "seconds", "model_seconds",
    "tool_seconds", "tool_calls", "tool_errors", "messages",
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


def _events(obj: Any) -> Any:
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


def _budget(run: Any, *, branch_id: str = "main") -> Any:
    """Tokens, time and tool calls per step: one row per model request of a branch.

    A run closed by a brake has one more request than steps (the closing request,
    `final=True`, with the same `step` as the last one).

    Args:
        run: a `Run` or an `EventLog`.
        branch_id: the branch to read.

    Returns:
        A `pandas.DataFrame` with columns `request` (1-based), `step`, `final`,
        `prompt_tokens`, `cached_tokens` (the part of the prompt the provider served from its
        prompt cache, as it reported), `completion_tokens`, `total_tokens` (tokens of this
        request), `cum_prompt_tokens`, `cum_tokens` (running sums, tokens), `estimated` (True
        when the counts come from the estimator), `seconds` (log-clock time from this request to the
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
        p = e.payload
        if e.type == "model.request":
            current = {
                "request": len(rows) + 1,
                "step": p.get("step"),
                "final": bool(p.get("final")),
                "prompt_tokens": 0,
                "cached_tokens": 0,
                "completion_tokens": 0,
                "estimated": False,
                "model_seconds": 0.0,
                "tool_seconds": 0.0,
                "tool_calls": 0,
                "tool_errors": 0,
                "messages": p.get("n_messages", 0),
                "_start": e.created_at,
                "_end": e.created_at,
            }
            rows.append(current)
            continue
        if current is None:
            continue
        current["_end"] = e.created_at or current["_end"]
        if e.type == "model.response":
            usage = p.get("usage") or {}
            current["prompt_tokens"] = usage.get("prompt_tokens", 0)
            current["cached_tokens"] = usage.get("cached_tokens", 0) or 0
            current["completion_tokens"] = usage.get("completion_tokens", 0)
            current["estimated"] = bool(usage.get("estimated"))
            current["model_seconds"] = p.get("seconds", 0.0)
        elif e.type == "tool.result":
            current["tool_calls"] += 1
            current["tool_errors"] += 0 if p.get("ok") else 1
            current["tool_seconds"] += p.get("seconds", 0.0)
    for r in rows:
        r["total_tokens"] = r["prompt_tokens"] + r["completion_tokens"]
        cum_prompt += r["prompt_tokens"]
        cum_total += r["total_tokens"]
        r["cum_prompt_tokens"], r["cum_tokens"] = cum_prompt, cum_total
        r["seconds"] = _seconds_between(r.pop("_start"), r.pop("_end"))
    df = pd.DataFrame(rows, columns=BUDGET_COLUMNS)
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


def _composition(
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
    for e in log.of_type("model.request", branch_id=branch_id):
        counts = dict.fromkeys(COMPOSITION_CATEGORIES, 0)
        for i, raw in enumerate(log.request_messages(e.event_id)):
            message = Message.from_openai(raw)
            counts[_category(message, i)] += est.count_message(message)
        counts["tool_specs"] = est.count_tools(log.request_tools(e.event_id))
        rows.append(
            {
                "request": len(rows) + 1,
                "step": e.payload.get("step"),
                "final": bool(e.payload.get("final")),
                **counts,
                "total": sum(counts.values()),
            }
        )
    columns = ["request", "step", "final", *COMPOSITION_CATEGORIES, "total"]
    return pd.DataFrame(rows, columns=columns)


def _comparison(runs: Mapping[str, Any], *, branch_id: str = "main") -> Any:
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
        b = _budget(run, branch_id=branch_id)
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


def frame(
    obj: Any,
    kind: str = "events",
    *,
    branch_id: str = "main",
    estimator: TokenEstimator | None = None,
) -> Any:
    """A pandas DataFrame of `obj`, one of the `FRAME_KINDS` (see the module docstring).

    Args:
        obj: for `"events"`, a `Run` or `EventLog` (one row per event, see `EventLog.frame`),
            an object with a `frame()` method (reports), or an iterable of dataclasses or
            dicts such as the `LintIssue`s of `hk.lint` (one row per item); for `"budget"` and
            `"composition"`, a `Run` or `EventLog`; for `"comparison"`, `{label: Run or
            EventLog}`, e.g. one run of the same task per context policy.
        kind: `"events"`, `"budget"`, `"composition"` or `"comparison"`.
        branch_id: the branch to read (budget, composition, comparison; events show all).
        estimator: token estimator for `"composition"`; default the run harness's, else
            `TokenEstimator()`.

    Returns:
        A `pandas.DataFrame` with typed columns (`typed_frame`): nested values such as an
        event's `payload` are JSON text, so `.to_parquet(path)` works for every kind.
        `"budget"`: one row per model request of the branch, columns
        `BUDGET_COLUMNS`: `request` (1-based), `step`, `final` (the closing request after
        a brake), `prompt_tokens`, `cached_tokens` (served from the provider's prompt
        cache), `completion_tokens`, `total_tokens` (tokens of this request),
        `cum_prompt_tokens`, `cum_tokens` (running sums, tokens), `estimated`,
        `seconds` (log-clock time of the request), `model_seconds`, `tool_seconds`,
        `tool_calls`, `tool_errors`, `messages`; `df.attrs["limits"]` holds the run's brakes.
        `"composition"`: one row per request, `request`, `step`, `final`, one column per
        `COMPOSITION_CATEGORIES` entry (estimated tokens) and `total`. `"comparison"`: one
        row per label with `policy`, `model`, `steps`, `requests`, `tool_calls`,
        `tool_errors`, `prompt_tokens`, `completion_tokens`, `total_tokens`,
        `max_prompt_tokens`, `finish_reason` and `incomplete`.

    Raises:
        UsageError: an unknown kind, or `obj` does not fit the kind.
    """
    if kind == "events":
        return typed_frame(_events(obj))
    if kind == "budget":
        return typed_frame(_budget(obj, branch_id=branch_id))
    if kind == "composition":
        return typed_frame(_composition(obj, branch_id=branch_id, estimator=estimator))
    if kind == "comparison":
        if not isinstance(obj, Mapping):
            raise UsageError(
                f"frame(kind='comparison') takes {{label: run}}, got {type(obj).__name__}"
            )
        return typed_frame(_comparison(obj, branch_id=branch_id))
    raise UsageError(f"unknown frame kind {kind!r}; expected one of {list(FRAME_KINDS)}")
