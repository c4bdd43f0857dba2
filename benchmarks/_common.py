"""Shared helpers for the benchmark scripts: timing, result rows, the JSON hand-off to run_all.

Every script prints its own figures and, with `--json PATH`, writes its rows for `run_all.py`.
A row: `{"bench", "figure", "value", "unit", "baseline", "baseline_value", "ratio", "target",
"met", "note"}`; `value` and `baseline_value` are in `unit`, `ratio` = value / baseline_value
(both measured in the same process), `target` is the issue's limit in `unit` (or None).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared"
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every script takes (`--json`, `--repeat`)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--json", help="write the result rows here (for run_all.py)")
    ap.add_argument("--repeat", type=int, default=5, help="timed repetitions (median reported)")
    return ap


def measure(fn: Callable[[], Any], repeat: int, setup: Callable[[], Any] | None = None) -> float:
    """Median wall seconds of `fn()` over `repeat` calls (`setup()` untimed before each)."""
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def interleave(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, list[float]]:
    """Wall seconds of each function, run in turn `repeat` times (same process, same rounds)."""
    out: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            t = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - t)
    return out


def ratio_median(xs: list[float], ref: list[float]) -> float:
    """Median of the per-round ratios `xs[i] / ref[i]`."""
    return statistics.median(a / b for a, b in zip(xs, ref, strict=True))


def row(
    bench: str,
    figure: str,
    value: float | None,
    unit: str,
    *,
    baseline: str = "",
    baseline_value: float | None = None,
    ratio: float | None = None,
    target: float | None = None,
    note: str = "",
) -> dict[str, Any]:
    """One result row; `met` is filled from `target` (lower is better)."""
    if ratio is None and value is not None and baseline_value:
        ratio = value / baseline_value
    met = None if target is None or value is None else value <= target
    return {
        "bench": bench,
        "figure": figure,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "baseline_value": baseline_value,
        "ratio": ratio,
        "target": target,
        "met": met,
        "note": note,
    }


def skipped(bench: str, figure: str, why: str) -> dict[str, Any]:
    """A row for a measurement that could not run here, saying why."""
    return row(bench, figure, None, "", note=f"skipped: {why}")


def fmt(value: float | None, unit: str) -> str:
    """A figure with a sensible number of digits."""
    if value is None:
        return "–"
    if value >= 100:
        return f"{value:,.0f} {unit}".strip()
    if value >= 10:
        return f"{value:.1f} {unit}".strip()
    return f"{value:.3g} {unit}".strip()


def report(rows: list[dict[str, Any]], json_path: str | None) -> None:
    """Print the rows and write them as JSON for run_all."""
    for r in rows:
        line = f"{r['bench']:>14} | {r['figure']:<44} {fmt(r['value'], r['unit']):>12}"
        if r["baseline"] and r["baseline_value"] is not None:
            line += f" | {r['baseline']}: {fmt(r['baseline_value'], r['unit'])}"
        elif r["baseline"]:
            line += f" | {r['baseline']}"
        if r["ratio"] is not None:
            line += f" | x{r['ratio']:.2f}"
        if r["target"] is not None:
            verdict = "met" if r["met"] else "NOT met"
            line += f" | target <= {fmt(r['target'], r['unit'])}: {verdict}"
        if r["note"]:
            line += f" | {r['note']}"
        print(line)
    if json_path:
        Path(json_path).write_text(json.dumps(rows, indent=1), encoding="utf-8")
