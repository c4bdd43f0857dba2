"""Append 100k events to an on-disk event log, against writing the same JSON lines with the stdlib.

harnesskit: `EventLog.append` for each event (envelope, timestamp, parent, the JSONL line) with
a flush every 5 events, as a run flushes after each step. Baseline: `json.dumps` of the same
events' dicts and `write` + `flush` at the same points (the bytes a bare logger would write).
Target (issue 19): at most x1.2 the stdlib baseline, by wall and by CPU time.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
from pathlib import Path

import _common
import _synth

import harnesskit as hk

N = 100_000


def main() -> None:
    args = _common.parser(__doc__.splitlines()[0]).parse_args()
    events = list(_synth.stream(N))
    tmp = Path(tempfile.mkdtemp(prefix="hk-bench-append-"))
    counter = iter(range(10**9))
    made: list[hk.EventLog] = []

    def harnesskit_append() -> None:
        log = hk.EventLog(tmp / f"hk-{next(counter)}.jsonl", run_id="scale")
        append, flush = log.append, log.flush
        for i, (type_, payload, kw) in enumerate(events):
            append(type_, payload, **kw)
            if i % 5 == 4:
                flush()
        log.close()
        made[:] = [log]

    harnesskit_append()
    dicts = [e.to_dict() for e in made[0].events]

    def stdlib_lines() -> None:
        with open(tmp / f"std-{next(counter)}.jsonl", "a", encoding="utf-8") as f:
            for i, d in enumerate(dicts):
                f.write(json.dumps(d, ensure_ascii=False, separators=(",", ":"), default=str))
                f.write("\n")
                if i % 5 == 4:
                    f.flush()

    try:
        times = _common.interleave({"hk": harnesskit_append, "std": stdlib_lines}, args.repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    hk_s, std_s = (statistics.median(times[k]) for k in ("hk", "std"))
    hk_cpu, std_cpu = (statistics.median(times.cpu[k]) for k in ("hk", "std"))
    rows = [
        _common.row(
            "append",
            f"{N:,} events appended (disk, flush per step)",
            hk_s,
            "s",
            baseline="stdlib json lines",
            baseline_value=std_s,
            ratio=_common.ratio_median(times["hk"], times["std"]),
            target_ratio=1.2,
            cpu_value=hk_cpu,
            cpu_baseline_value=std_cpu,
            cpu_ratio=_common.ratio_median(times.cpu["hk"], times.cpu["std"]),
            note=f"{hk_s / N * 1e6:.1f} us/event",
        )
    ]
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
