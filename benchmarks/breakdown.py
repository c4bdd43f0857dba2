"""Where a step's time goes: the peer workload's run, with the main parts timed in place.

Wraps (in this process only) the parts of a step with accumulators on CPU time
(`process_time`; `--clock wall` for wall time) and runs the peer workload through
`Harness.run` with a disk log, then prints us per step for each part and the floor's whole
step for scale. Parts nest as shown by the indentation; the wrapping adds about 1 us per
wrapped call. A part this tree does not have is listed as absent. Then the top 5 innermost
parts, and the top 5 functions by own CPU time under `cProfile` (inflated by the profiler,
but in proportion). Needs ../shared/bench/peers (the workload and the floor).

    python benchmarks/breakdown.py [--runs 200] [--clock cpu|wall]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
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
from harnesskit.data import representation
from harnesskit.log import events, redact
from harnesskit.models import offline
from harnesskit.run import _records, loop
from harnesskit.tools import executor

PARTS = [
    ("step", loop.Run, "_step", 0),  # `step()` and `run()` both go through `_step`
    ("request (context, model, events)", loop.Run, "_query", 1),
    ("context build", context.ContextBuilder, "build", 2),
    ("R-A5 single-representation check", representation.RepresentationChecker, "check", 2),
    ("append_request (request event)", events.EventLog, "append_request", 2),
    ("model adapter (parse the reply)", offline.FunctionModel, "request", 2),
    ("tool calls (executor + events)", loop.Run, "_execute", 1),
    ("executor (validate, gate, call)", executor.Executor, "execute", 2),
    ("worker thread round trip", executor, "_run_on_worker", 3),
    ("inline call under SIGALRM", executor, "_run_under_alarm", 3),
    ("input hash", _records, "hash_json", 2),
    ("event appends (all 5)", events.EventLog, "append", 1),
    ("JSON line", events, "line_parts", 2),
    ("redaction scan", redact.Redactor, "needs", 2),
    ("flush", events.EventLog, "flush", 1),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = ap.parse_args()
    spent: Counter[str] = Counter()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    absent = set()
    originals = []
    for label, owner, name, _ in PARTS:
        original = getattr(owner, name, None)
        if original is None:
            absent.add(label)
            continue
        originals.append((owner, name, original))

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
        f"(floor {floor_us:.0f} us per step), {args.clock} time"
    )
    for label, _, _, depth in PARTS:
        cost = "absent" if label in absent else f"{spent[label] / steps * 1e6:7.1f} us/step"
        print(f"{'  ' * depth}{label:<{44 - 2 * depth}} {cost}")
    inner = [
        label
        for i, (label, _, _, depth) in enumerate(PARTS)
        if label not in absent and (i + 1 == len(PARTS) or PARTS[i + 1][3] <= depth)
    ]
    print("top 5 innermost parts:")
    for label in sorted(inner, key=lambda k: -spent[k])[:5]:
        print(f"  {label:<42} {spent[label] / steps * 1e6:7.1f} us/step")
    for owner, name, original in originals:  # profile the unwrapped code
        setattr(owner, name, original)
    profile = cProfile.Profile(time.process_time if args.clock == "cpu" else time.perf_counter)
    profile.enable()
    for _ in range(max(1, args.runs // 4)):
        run()
    profile.disable()
    prof_steps = max(1, args.runs // 4) * 20
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    top = sorted(stats.items(), key=lambda kv: -kv[1][2])[:5]
    print("top 5 functions by own time under cProfile:")
    for (file, line, fn), (_, calls, own, _, _) in top:
        where = f"{'/'.join(file.rsplit('/', 2)[-2:])}:{line}({fn})" if line else fn
        print(
            f"  {where:<60} {own / prof_steps * 1e6:7.1f} us/step, {calls / prof_steps:.1f} calls"
        )


if __name__ == "__main__":
    main()
