"""Status fold and context build from a 100k-event log, against parsing the same bytes.

The log (100k events of real run steps, with supersede/reject events) is written by the real
`EventLog` and read back with `EventLog.read`. Then, on the loaded log: the status fold (from
`harnesskit.log.trajectory` or `harnesskit.context.builder`, whichever has one) and a fresh
`ContextBuilder(policy).build(log)` for every built-in policy this harnesskit has. Baseline:
`json.loads` of every line of the same file bytes, in the same process. Target (issue 19): fold +
cold context build with the default policy at most 50 ms (the other policies are shown beside).
"""

from __future__ import annotations

import importlib
import inspect
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common
import _synth

import harnesskit as hk

N = 100_000
POLICIES = ("full-history", "default", "window", "summary")


def find_folds() -> list[tuple[str, Callable[[hk.EventLog], Any]]]:
    """The status folds this harnesskit has: `Trajectory(log).statuses()` (a cold fold on a
    fresh view) and the log's `StatusFold` fed every event (the one the context builder uses;
    older trees had a separate `context.fold_statuses(log.events)`, measured when present)."""
    folds: list[tuple[str, Callable[[hk.EventLog], Any]]] = []
    try:
        trajectory = importlib.import_module("harnesskit.log.trajectory")
    except ImportError:
        trajectory = None
    cls = getattr(trajectory, "Trajectory", None)
    if cls is not None and hasattr(cls, "statuses"):
        folds.append(("Trajectory(log).statuses()", lambda log: cls(log).statuses()))
    fold_cls = getattr(importlib.import_module("harnesskit.log"), "StatusFold", None)
    if fold_cls is not None:

        def fold_all(log: hk.EventLog) -> Any:
            fold = fold_cls()
            for e in log.events:
                fold.add(e, log.events)
            return fold.statuses

        folds.append(("log.StatusFold over log.events", fold_all))
    context = importlib.import_module("harnesskit.context.builder")
    fn = getattr(context, "fold_statuses", None)
    if callable(fn):
        first = next(iter(inspect.signature(fn).parameters), "")
        if first == "events":
            folds.append(("context.fold_statuses(log.events)", lambda log: fn(log.events)))
    return folds


def main() -> None:
    args = _common.parser(__doc__.splitlines()[0]).parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hk-bench-fold-"))
    try:
        path = tmp / "scale.jsonl"
        live = _synth.write_log(path, N)
        data = path.read_bytes()
        rows = run(path, data, args.repeat)
        rows += incremental(live, args.repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _common.report(rows, args.json)


def run(path: Path, data: bytes, repeat: int) -> list[dict[str, Any]]:
    """Time parse, read, fold and builds; return the result rows."""
    loads = json.loads
    log = hk.EventLog.read(path)
    times = _common.interleave(
        {
            "parse": lambda: [loads(line) for line in data.splitlines() if line],
            "read": lambda: hk.EventLog.read(path),
        },
        max(1, repeat // 2),
    )
    parse_s = min(times["parse"])
    parse_cpu = min(times.cpu["parse"])
    rows = [
        _common.row(
            "fold+context",
            f"EventLog.read of {N:,} events ({len(data) / 1e6:.0f} MB)",
            min(times["read"]),
            "s",
            baseline="json.loads of each line",
            baseline_value=parse_s,
            cpu_value=min(times.cpu["read"]),
            cpu_baseline_value=parse_cpu,
        )
    ]
    folds = find_folds()
    fold_s = _common.Seconds(0.0, 0.0)
    if not folds:
        rows.append(
            _common.skipped("fold+context", "status fold", "no status fold in harnesskit yet")
        )
    for label, fn in folds:
        try:
            seconds = _common.measure(lambda fn=fn: fn(log), repeat)
        except Exception as exc:  # report, do not hide, a fold that rejects the synthetic log
            rows.append(
                _common.skipped(
                    "fold+context", f"status fold {label}", f"{type(exc).__name__}: {exc}"
                )
            )
            continue
        fold_s = fold_s or seconds  # the first (trajectory's) is added to the builds below
        rows.append(
            _common.row(
                "fold+context",
                f"status fold {label}",
                seconds,
                "s",
                baseline="parse",
                baseline_value=parse_s,
                cpu_value=seconds.cpu,
                cpu_baseline_value=parse_cpu,
            )
        )
    for policy in POLICIES:
        try:
            hk.ContextPolicy.resolve(policy)
        except hk.UsageError:
            rows.append(
                _common.skipped(
                    "fold+context", f"context build '{policy}'", "no such built-in policy yet"
                )
            )
            continue
        prompt: list[Any] = []

        def build(policy: str = policy, prompt: list[Any] = prompt) -> None:
            prompt[:] = [hk.context.ContextBuilder(policy).build(log)]

        try:
            build_s = _common.measure(build, repeat)
        except hk.HarnessError as exc:  # e.g. 'summary' refusing a core past its token limit
            rows.append(
                _common.skipped(
                    "fold+context", f"context build '{policy}'", f"{type(exc).__name__}: {exc}"
                )
            )
            continue
        total = fold_s + build_s
        rows.append(
            _common.row(
                "fold+context",
                f"fold + context build '{policy}' ({len(prompt[0].messages):,} msgs)",
                total,
                "s",
                baseline="parse",
                baseline_value=parse_s,
                target=0.05 if policy == "default" else None,  # one figure per target
                cpu_value=fold_s.cpu + build_s.cpu,
                cpu_baseline_value=parse_cpu,
                note=f"build {build_s * 1e3:.0f} ms"
                + (f" + fold {fold_s * 1e3:.0f} ms" if fold_s else ""),
            )
        )
    return rows


def incremental(live: hk.EventLog, repeat: int) -> list[dict[str, Any]]:
    """What a live run pays per step at 100k events: the next build after one more step.

    A builder that has built the prompt once is kept, one step's five events are appended,
    and the next `build` is timed (the builders read only the new events).
    """
    rows = []
    step = list(_synth.stream(12))[-5:]  # one step: context, request, response, call, result
    for policy in POLICIES:
        try:
            builder = hk.context.ContextBuilder(policy)
        except hk.UsageError:
            continue
        try:
            builder.build(live)
        except hk.HarnessError:  # reported by `run` above
            continue
        times = []
        for _ in range(max(repeat, 5)):
            for type_, payload, kw in step:
                live.append(type_, payload, **kw)
            t = time.perf_counter()
            builder.build(live)
            times.append(time.perf_counter() - t)
        rows.append(
            _common.row(
                "fold+context",
                f"next build after one more step at 100k events, '{policy}'",
                statistics.median(times) * 1e3,
                "ms",
                note="incremental: the cost a live run pays per step",
            )
        )
    return rows


if __name__ == "__main__":
    main()
