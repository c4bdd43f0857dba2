"""Per-turn cost as history grows: turns 951-1,000 of a long run against turns 11-60 of a new one.

Real runs (FunctionModel, four tools, log on disk, default limits raised). A turn's cost is one
`run.step()` (one model call and its tool call, events written and flushed), by wall time and by
CPU time (`process_time`: it spreads far less on a busy machine). The full-history prompt grows
by two messages a turn; requests are logged as deltas and the builder is incremental, so the
turn cost should stay flat.

Each round steps one run to turn 950, starts a second run and steps it 10 turns (warm-up), then
alternates single steps of the two: turn 11 of the new run, turn 951 of the long one, and so on
for 50 turns each (which goes first alternates too). Both ends of the comparison are measured in
the same seconds of the same process, so a machine that slows down or speeds up mid-run moves
both alike (timing the two ends a second apart, as before, spread the ratio from 0.7 to 1.8 on
one commit). Both runs are alive during the alternation, so garbage collection costs the same
for both; the least-squares slope over the long run's own 950 turns (in the note) still
includes the growth of its own heap. Reports the median over rounds of the mean turn cost at
each end, the median of the rounds' ratios, and the log bytes per turn at both ends.
Target: last/first at most 1.2 (issue 19).
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
WINDOW = 50  # turns timed at each end
WARMUP = 10  # turns of the new run before its window (the baseline is turns 11-60)


def slope_us(ts: list[float]) -> float:
    """Least-squares slope of seconds per turn against the turn index, in us per turn."""
    n = len(ts)
    xm, ym = (n - 1) / 2, statistics.mean(ts)
    num = sum((i - xm) * (y - ym) for i, y in enumerate(ts))
    return num / sum((i - xm) ** 2 for i in range(n)) * 1e6


class _Stepper:
    """One run of the synthetic workload, stepped and timed one turn at a time."""

    def __init__(self, log_dir: Path) -> None:
        calls = _synth.CALLS
        self.turn = 0

        def policy(messages, info):
            i = self.turn
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
        self.run = h.start("Please sort out my trip.")
        self.path = log_dir / f"{self.run.state.run_id}.jsonl"

    def step(self) -> tuple[float, float, int]:
        """Wall seconds, CPU seconds and log bytes of one turn."""
        before = self.path.stat().st_size
        c = time.process_time()
        t = time.perf_counter()
        self.run.step()
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        self.turn += 1
        return wall, cpu, self.path.stat().st_size - before


def one_round(log_dir: Path) -> dict[str, list]:
    """The two ends of one round, interleaved, plus the long run's own per-turn CPU seconds."""
    long = _Stepper(log_dir)
    climb = [long.step() for _ in range(TURNS - WINDOW)]
    fresh = _Stepper(log_dir)
    for _ in range(WARMUP):
        fresh.step()
    first, last = [], []
    for i in range(WINDOW):
        if i % 2:
            last.append(long.step())
            first.append(fresh.step())
        else:
            first.append(fresh.step())
            last.append(long.step())
    for stepper in (long, fresh):  # end both runs (their model answers from now on)
        stepper.turn = TURNS
        stepper.run.run()
    return {"first": first, "last": last, "climb": climb}


def _mean(samples: list[tuple[float, float, int]], k: int) -> float:
    return statistics.mean(s[k] for s in samples)


def main() -> None:
    args = _common.parser(__doc__.splitlines()[0]).parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hk-bench-history-"))
    try:
        rounds = [one_round(tmp) for _ in range(max(3, args.repeat))]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = statistics.median
    first = med(_mean(r["first"], 0) for r in rounds)
    last = med(_mean(r["last"], 0) for r in rounds)
    cpu_first = med(_mean(r["first"], 1) for r in rounds)
    cpu_last = med(_mean(r["last"], 1) for r in rounds)
    ratio = med(_mean(r["last"], 0) / _mean(r["first"], 0) for r in rounds)
    cpu_ratio = med(_mean(r["last"], 1) / _mean(r["first"], 1) for r in rounds)
    slope = med(slope_us([s[0] for s in r["climb"]]) for r in rounds)
    cpu_slope = med(slope_us([s[1] for s in r["climb"]]) for r in rounds)
    rows = [
        _common.row(
            "history",
            f"turn cost, turns {TURNS - WINDOW + 1}-{TURNS}",
            last * 1e6,
            "us",
            baseline=f"turns {WARMUP + 1}-{WARMUP + WINDOW}, interleaved",
            baseline_value=first * 1e6,
            cpu_value=cpu_last * 1e6,
            cpu_baseline_value=cpu_first * 1e6,
            note=f"slope over turns 1-{TURNS - WINDOW} {slope:+.3f} us/turn (CPU {cpu_slope:+.3f})",
        ),
        _common.row(
            "history",
            f"last/first turn cost (flat = 1), median of {len(rounds)} rounds",
            ratio,
            "x",
            target=1.2,
            cpu_value=cpu_ratio,
        ),
        _common.row(
            "history",
            f"log bytes per turn, turns {TURNS - WINDOW + 1}-{TURNS}",
            _mean(rounds[0]["last"], 2),
            "B",
            baseline=f"turns {WARMUP + 1}-{WARMUP + WINDOW}",
            baseline_value=_mean(rounds[0]["first"], 2),
        ),
    ]
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
