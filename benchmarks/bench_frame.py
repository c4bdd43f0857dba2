"""`EventLog.frame()` of 100k events, against a plain pandas DataFrame of the same records.

The log (100k events of real run steps) is written, then opened with `EventLog.open_existing`;
`frame()` builds one row per event with the step, tool, ok, error type and token columns pulled
out of the payload. The log keeps the last frame it built, so three rows are reported, each
round in this order: **grown** (100 more events appended since the last call: a notebook
framing a live run again; the new rows are built and appended), **repeat** (no new event: a
copy of the kept frame) and **cold** (the kept frame dropped first: every row built, as on the
first call after `EventLog.read`). Baseline: `pandas.DataFrame(records)` of the log's line dicts
at that moment, in the same process and round. Target (issue 19): at most x1.3 the pandas
baseline, by wall and by CPU time; set on the grown and cold rows.
"""

from __future__ import annotations

import gc
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
GROW = 100


def main() -> None:
    args = _common.parser(__doc__.splitlines()[0]).parse_args()
    import pandas as pd

    tmp = Path(tempfile.mkdtemp(prefix="hk-bench-frame-"))
    try:
        more = iter(list(_synth.stream(N + GROW * (args.repeat + 1)))[N:])
        _synth.write_log(tmp / "scale.jsonl", N)
        log = hk.EventLog.open_existing(tmp / "scale.jsonl")
        log.frame()  # first call imports pandas' lazy parts; not what a user waits for each time
        names = ("grown", "repeat", "cold", "pandas")
        wall: dict[str, list[float]] = {k: [] for k in names}
        cpu: dict[str, list[float]] = {k: [] for k in names}

        def cold() -> Any:
            log._frame_cache = None  # as on the first call after EventLog.read
            return log.frame()

        for _ in range(max(args.repeat, 3)):
            for _ in range(GROW):
                type_, payload, kw = next(more)
                log.append(type_, payload, **kw)
            records = [e.to_dict() for e in log.events]
            calls: dict[str, Callable[[], Any]] = {
                "grown": log.frame,
                "repeat": log.frame,
                "cold": cold,
                "pandas": lambda records=records: pd.DataFrame(records),
            }
            for name in names:
                gc.collect()
                c, t = time.process_time(), time.perf_counter()
                calls[name]()
                wall[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
        log.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base_s, base_cpu = statistics.median(wall["pandas"]), statistics.median(cpu["pandas"])
    figures = {
        "grown": f"EventLog.frame() of {N:,} events, {GROW} more since the last call",
        "repeat": f"EventLog.frame() of {N:,} events again, no new event (copy of the kept frame)",
        "cold": f"EventLog.frame() of {N:,} events, cold (nothing kept: every row built)",
    }
    rows = [
        _common.row(
            "frame",
            figure,
            statistics.median(wall[name]),
            "s",
            baseline="pd.DataFrame(records)",
            baseline_value=base_s,
            ratio=_common.ratio_median(wall[name], wall["pandas"]),
            target_ratio=None if name == "repeat" else 1.3,
            cpu_value=statistics.median(cpu[name]),
            cpu_baseline_value=base_cpu,
            cpu_ratio=_common.ratio_median(cpu[name], cpu["pandas"]),
            note=f"{statistics.median(wall[name]) / N * 1e6:.1f} us/event",
        )
        for name, figure in figures.items()
    ]
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
