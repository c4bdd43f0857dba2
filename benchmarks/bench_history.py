"""Per-turn cost as history grows: one run of 1,000 tool steps, first turns against last turns.

A real run (FunctionModel, four tools, log on disk, default limits raised) where each turn's
cost is the time between consecutive model calls, by wall time and by CPU time (`process_time`:
it spreads far less on a busy machine). The full-history prompt grows by two
messages a turn; requests are logged as deltas and the builder is incremental, so the turn
cost should stay flat. Reports the mean of turns 11-60 (baseline) and of the last 50 turns,
their ratio, the least-squares slope (us per turn) and the log bytes per turn at both ends.
Each turn's cost is the median over `max(3, --repeat)` runs, so one run's stray pause (another
process, a page fault) does not decide a 50-turn mean; a pause every run pays at the same turn
(a garbage collection) stays in. Target (issue 19): last/first at most 1.2.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

import _common
import _synth

import harnesskit as hk

TURNS = 1000


def slope_us(ts: list[float]) -> float:
    """Least-squares slope of seconds per turn against the turn index, in us per turn."""
    n = len(ts)
    xm, ym = (n - 1) / 2, statistics.mean(ts)
    num = sum((i - xm) * (y - ym) for i, y in enumerate(ts))
    return num / sum((i - xm) ** 2 for i in range(n)) * 1e6


def one_run(log_dir: Path) -> tuple[list[float], list[float], list[int]]:
    """Per-turn wall seconds, CPU seconds and log bytes per turn of one long run."""
    stamps: list[float] = []
    cpu_stamps: list[float] = []
    sizes: list[int] = []
    calls = _synth.CALLS

    def policy(messages, info):
        stamps.append(time.perf_counter())
        cpu_stamps.append(time.process_time())
        i = len(stamps) - 1
        if i >= TURNS:
            return "Done."
        name, arguments = calls[i % len(calls)]
        return hk.ToolCall(id=f"call_{i}", name=name, arguments=arguments)

    h = hk.Harness(
        _synth._tools(),
        hk.FunctionModel(policy),
        limits=hk.Limits(max_steps=TURNS + 5),
        log_dir=log_dir,
        system_prompt="You are an airline agent.",
    )
    run = h.start("Please sort out my trip.")
    path = log_dir / f"{run.state.run_id}.jsonl"
    while run.finish_reason is None:
        before = path.stat().st_size
        run.step()
        sizes.append(path.stat().st_size - before)
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    cpu_gaps = [b - a for a, b in zip(cpu_stamps, cpu_stamps[1:], strict=False)]
    return gaps, cpu_gaps, sizes


def main() -> None:
    args = _common.parser(__doc__.splitlines()[0]).parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hk-bench-history-"))
    try:
        runs = [one_run(tmp) for _ in range(max(3, args.repeat))]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    gaps = [statistics.median(col) for col in zip(*(g for g, _, _ in runs), strict=True)]
    cpu_gaps = [statistics.median(col) for col in zip(*(c for _, c, _ in runs), strict=True)]
    sizes = runs[0][2]
    first, last = statistics.mean(gaps[10:60]), statistics.mean(gaps[-50:])
    cpu_first, cpu_last = statistics.mean(cpu_gaps[10:60]), statistics.mean(cpu_gaps[-50:])
    rows = [
        _common.row(
            "history",
            f"turn cost, last 50 of {TURNS} turns",
            last * 1e6,
            "us",
            baseline="turns 11-60",
            baseline_value=first * 1e6,
            cpu_value=cpu_last * 1e6,
            cpu_baseline_value=cpu_first * 1e6,
            note=f"slope {slope_us(gaps):+.3f} us/turn (CPU {slope_us(cpu_gaps):+.3f})",
        ),
        _common.row(
            "history",
            "last/first turn cost (flat = 1)",
            last / first,
            "x",
            target=1.2,
            cpu_value=cpu_last / cpu_first,
        ),
        _common.row(
            "history",
            "log bytes per turn, last 50 turns",
            statistics.mean(sizes[-51:-1]),
            "B",
            baseline="turns 11-60",
            baseline_value=statistics.mean(sizes[10:60]),
        ),
    ]
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
