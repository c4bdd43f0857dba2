"""Which parts of a turn grow with the history: bench_history's run, with the parts timed.

Wraps (in this process only) the parts of a turn with accumulators on CPU time
(`process_time`) and times garbage collections by generation (`gc.callbacks`), runs
bench_history's 1,000-turn workload and prints, per part, the mean us per turn over turns
11-60 and over the last 50 turns, and the difference. Parts nest (a part includes the parts
and collections run inside it); `gc genN` are the collections wherever they ran. Then the
objects each turn leaves for the garbage collector to track (after full collections at turns
100 and 500), by type. `--runs N` repeats the run and prints medians.

    python benchmarks/breakdown_history.py [--runs 3]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts the checkout on sys.path)
import _synth
import bench_history

import harnesskit as hk
from harnesskit.context.builder import ContextBuilder
from harnesskit.data.representation import RepresentationChecker
from harnesskit.data.transport import Transport
from harnesskit.log.events import EventLog
from harnesskit.run.loop import Run

TURNS = bench_history.TURNS
PARTS: list[tuple[str, Any, str]] = [
    ("turn (Run.step)", Run, "step"),
    ("context build", ContextBuilder, "build"),
    ("context record", ContextBuilder, "record"),
    ("R-A5 check", RepresentationChecker, "check"),
    ("transport check", Transport, "check"),
    ("log append_request", EventLog, "append_request"),
    ("log append", EventLog, "append"),
    ("model (FunctionModel.request)", hk.FunctionModel, "request"),
    ("tools (Run._execute)", Run, "_execute"),
]
spent: Counter[str] = Counter()


def _wrap() -> None:
    clock = time.process_time
    for label, owner, name in PARTS:
        original = getattr(owner, name)

        def timed(*a: Any, _f: Callable[..., Any] = original, _k: str = label, **k: Any) -> Any:
            t = clock()
            try:
                return _f(*a, **k)
            finally:
                spent[_k] += clock() - t

        setattr(owner, name, timed)
    started = [0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = clock()
        else:
            spent[f"gc gen{info['generation']}"] += clock() - started[0]

    gc.callbacks.append(on_gc)


def _run(census_at: tuple[int, ...] = ()) -> tuple[list[dict[str, float]], dict[int, Counter[str]]]:
    """Cumulative seconds per part before each turn, and the tracked objects at `census_at`."""
    calls = _synth.CALLS

    def policy(messages: Any, info: Any) -> Any:
        if info.step > TURNS:
            return "Done."
        name, arguments = calls[(info.step - 1) % len(calls)]
        return hk.ToolCall(id=f"call_{info.step}", name=name, arguments=arguments)

    h = hk.Harness(
        _synth._tools(),
        hk.FunctionModel(policy),
        limits=hk.Limits(max_steps=TURNS + 5),
        log_dir=Path(tempfile.mkdtemp(prefix="hk-breakdown-history-")),
        system_prompt="You are an airline agent.",
    )
    run = h.start("Please sort out my trip.")
    marks: list[dict[str, float]] = []  # plain dicts of floats: the collector skips them
    census: dict[int, Counter[str]] = {}
    while run.finish_reason is None:
        if len(marks) in census_at:
            gc.collect()
            census[len(marks)] = Counter(type(o).__name__ for o in gc.get_objects())
        marks.append(dict(spent))
        run.step()
    marks.append(dict(spent))
    return marks, census


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1, help="runs (medians are printed)")
    args = ap.parse_args()
    _wrap()
    first: dict[str, list[float]] = {}
    last: dict[str, list[float]] = {}
    for _ in range(args.runs):
        marks, _ = _run()
        for k in marks[-1]:
            first.setdefault(k, []).append((marks[60].get(k, 0) - marks[10].get(k, 0)) / 50)
            last.setdefault(k, []).append((marks[-1][k] - marks[-51].get(k, 0)) / 50)
    print(f"{'part (CPU us per turn)':32} {'turns 11-60':>12} {'last 50':>9} {'growth':>8}")
    labels = [p[0] for p in PARTS] + sorted(k for k in first if k.startswith("gc"))
    for k in labels:
        a = statistics.median(first.get(k, [0.0])) * 1e6
        b = statistics.median(last.get(k, [0.0])) * 1e6
        print(f"{k:32} {a:12.1f} {b:9.1f} {b - a:+8.1f}")
    _, census = _run((100, 500))
    grew = census[500] - census[100]
    print(f"tracked objects left per turn: {grew.total() / 400:.1f}; by type:")
    for name, n in grew.most_common(8):
        print(f"  {name:30} {n / 400:6.2f}")


if __name__ == "__main__":
    main()
