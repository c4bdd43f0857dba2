"""Where a step's time goes: the peer workload's run, with the main parts timed in place.

Wraps (in this process only) the parts of a step with wall-clock accumulators and runs the
peer workload through `Harness.run` with a disk log, then prints us per step for each part
and the floor's whole step for scale. Parts nest as shown by the indentation; the wrapping
adds about 1 us per wrapped call. Needs ../shared/bench/peers (the workload and the floor).

    python benchmarks/breakdown.py [--runs 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

import _common

sys.path.insert(0, str(_common.SHARED / "bench" / "peers"))
sys.path.insert(0, str(_common.HERE / "peers"))

import bench_floor
import bench_harnesskit

import harnesskit as hk
from harnesskit.context import builder as context
from harnesskit.log import events, redact
from harnesskit.models import offline
from harnesskit.run import _records, loop
from harnesskit.tools import executor

PARTS = [
    ("step", loop.Run, "step", 0),
    ("request (context, model, events)", loop.Run, "_query", 1),
    ("context build", context.ContextBuilder, "build", 2),
    ("model adapter (parse the reply)", offline.FunctionModel, "request", 2),
    ("tool calls (executor + events)", loop.Run, "_execute", 1),
    ("executor (validate, gate, call)", executor.Executor, "execute", 2),
    ("worker thread round trip", executor, "_run_on_worker", 3),
    ("input hash", _records, "hash_json", 2),
    ("event appends (all 5)", events.EventLog, "append", 1),
    ("JSON line", events, "_event_line", 2),
    ("redaction scan", redact.Redactor, "needs", 2),
    ("flush", events.EventLog, "flush", 1),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    spent: Counter[str] = Counter()
    clock = time.perf_counter
    for label, owner, name, _ in PARTS:
        original = getattr(owner, name)

        def timed(*a, __f=original, __label=label, **k):
            t = clock()
            try:
                return __f(*a, **k)
            finally:
                spent[__label] += clock() - t

        setattr(owner, name, timed)
    _, run = bench_harnesskit.VARIANTS["harnesskit/disk"]()
    _, floor = bench_floor.VARIANTS["floor"]()
    for _ in range(20):
        run()
    spent.clear()
    t = clock()
    for _ in range(args.runs):
        run()
    total = clock() - t
    steps = args.runs * 20
    t = clock()
    for _ in range(args.runs):
        floor()
    floor_us = (clock() - t) / steps * 1e6
    print(
        f"harnesskit {hk.__version__}: {total / steps * 1e6:.0f} us per step in all "
        f"(floor {floor_us:.0f} us per step)"
    )
    for label, _, _, depth in PARTS:
        print(f"{'  ' * depth}{label:<{44 - 2 * depth}} {spent[label] / steps * 1e6:7.1f} us/step")


if __name__ == "__main__":
    main()
