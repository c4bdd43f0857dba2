"""Shared helpers for the benchmark scripts: timing, result rows, the JSON hand-off to run_all.

Every script prints its own figures and, with `--json PATH`, writes its rows for `run_all.py`.
A row: `{"bench", "figure", "value", "unit", "baseline", "baseline_value", "ratio", "target",
"met", "note"}` plus the same figures by CPU time (`cpu_value`, `cpu_baseline_value`,
`cpu_ratio`, `cpu_met`); `value` and `baseline_value` are wall time in `unit`, `ratio` = value /
baseline_value (both measured in the same process), `target` is the issue's limit in `unit` and
`target_ratio` its limit on the ratio (either may be None). `met` is True only when every target
holds by wall time and, where a CPU figure exists, by CPU time too (the machine is shared:
CPU time spreads far less than wall time).
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


class Seconds(float):
    """A median wall time in seconds that also carries the median CPU time (`cpu`)."""

    cpu: float

    def __new__(cls, wall: float, cpu: float) -> Seconds:
        self = super().__new__(cls, wall)
        self.cpu = cpu
        return self


class Timings(dict[str, list[float]]):
    """Wall seconds per name, as `interleave` measured them; `cpu` has the CPU seconds."""

    cpu: dict[str, list[float]]


def measure(fn: Callable[[], Any], repeat: int, setup: Callable[[], Any] | None = None) -> Seconds:
    """Median wall seconds of `fn()` over `repeat` calls (`setup()` untimed before each).

    The result is a float; its `cpu` attribute is the median CPU seconds (`process_time`).
    """
    times, cpus = [], []
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        c = time.process_time()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return Seconds(statistics.median(times), statistics.median(cpus))


def interleave(fns: dict[str, Callable[[], Any]], repeat: int) -> Timings:
    """Wall seconds of each function, run in turn `repeat` times (same process, same rounds).

    The result maps each name to its wall times; its `cpu` attribute maps each name to the CPU
    times (`process_time`) of the same calls.
    """
    out = Timings({k: [] for k in fns})
    out.cpu = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            c = time.process_time()
            t = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - t)
            out.cpu[name].append(time.process_time() - c)
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
    target_ratio: float | None = None,
    cpu_value: float | None = None,
    cpu_baseline_value: float | None = None,
    cpu_ratio: float | None = None,
    note: str = "",
) -> dict[str, Any]:
    """One result row; `met` is filled from `target` and `target_ratio` (lower is better)."""
    if ratio is None and value is not None and baseline_value:
        ratio = value / baseline_value
    if cpu_ratio is None and cpu_value is not None and cpu_baseline_value:
        cpu_ratio = cpu_value / cpu_baseline_value
    wall_met = _verdict(value, ratio, target, target_ratio)
    cpu_met = None if cpu_value is None else _verdict(cpu_value, cpu_ratio, target, target_ratio)
    met = wall_met if cpu_met is None or wall_met is None else wall_met and cpu_met
    return {
        "bench": bench,
        "figure": figure,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "baseline_value": baseline_value,
        "ratio": ratio,
        "target": target,
        "target_ratio": target_ratio,
        "met": met,
        "cpu_value": cpu_value,
        "cpu_baseline_value": cpu_baseline_value,
        "cpu_ratio": cpu_ratio,
        "wall_met": wall_met,
        "cpu_met": cpu_met,
        "note": note,
    }


def _verdict(
    value: float | None, ratio: float | None, target: float | None, target_ratio: float | None
) -> bool | None:
    """Whether `value` and `ratio` are within their targets (None: no target applies)."""
    checks = []
    if target is not None:
        checks.append(value is not None and value <= target)
    if target_ratio is not None:
        checks.append(ratio is not None and ratio <= target_ratio)
    return all(checks) if checks else None


def targets_line(rows: list[dict[str, Any]]) -> str:
    """The closing line of a report: `targets met: X of Y` over the rows that have a target."""
    judged = [r for r in rows if r.get("target") is not None or r.get("target_ratio") is not None]
    met = sum(1 for r in judged if r.get("met"))
    return f"targets met: {met} of {len(judged)}"


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
        if r.get("cpu_value") is not None:
            line += f" (cpu {fmt(r['cpu_value'], r['unit'])})"
        if r["baseline"] and r["baseline_value"] is not None:
            line += f" | {r['baseline']}: {fmt(r['baseline_value'], r['unit'])}"
            if r.get("cpu_baseline_value") is not None:
                line += f" (cpu {fmt(r['cpu_baseline_value'], r['unit'])})"
        elif r["baseline"]:
            line += f" | {r['baseline']}"
        if r["ratio"] is not None:
            line += f" | x{r['ratio']:.2f}"
            if r.get("cpu_ratio") is not None:
                line += f" (cpu x{r['cpu_ratio']:.2f})"
        if r["target"] is not None or r.get("target_ratio") is not None:
            verdict = "met" if r["met"] else "NOT met"
            line += f" | target {target_text(r)}: {verdict}"
        if r["note"]:
            line += f" | {r['note']}"
        print(line)
    if any(r["target"] is not None or r.get("target_ratio") is not None for r in rows):
        print(targets_line(rows))
    if json_path:
        Path(json_path).write_text(json.dumps(rows, indent=1), encoding="utf-8")


def target_text(r: dict[str, Any]) -> str:
    """The row's targets as text, e.g. `<= 5.00 s` or `<= x1.2 baseline`."""
    parts = []
    if r.get("target") is not None:
        parts.append(f"<= {fmt(r['target'], r['unit'])}")
    if r.get("target_ratio") is not None:
        parts.append(f"<= x{r['target_ratio']:g} baseline")
    return ", ".join(parts)
