"""`EventLog.frame()` of 100k events, against a plain pandas DataFrame of the same records.

The log (100k events of real run steps) is read back with `EventLog.read`; `frame()` builds
one row per event with the step, tool, ok, error type and token columns pulled out of the
payload. Baseline: `pandas.DataFrame(records)` of the same events' line dicts, in the same
process. Target (issue 19): at most x1.3 the pandas baseline, by wall and by CPU time.
"""

from __future__ import annotations

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
    import pandas as pd

    tmp = Path(tempfile.mkdtemp(prefix="hk-bench-frame-"))
    try:
        _synth.write_log(tmp / "scale.jsonl", N)
        log = hk.EventLog.read(tmp / "scale.jsonl")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    records = [e.to_dict() for e in log.events]
    log.frame()  # first call imports pandas' lazy parts; not what a user waits for each time
    times = _common.interleave(
        {"frame": log.frame, "pandas": lambda: pd.DataFrame(records)}, args.repeat
    )
    frame_s, base_s = (statistics.median(times[k]) for k in ("frame", "pandas"))
    frame_cpu, base_cpu = (statistics.median(times.cpu[k]) for k in ("frame", "pandas"))
    rows = [
        _common.row(
            "frame",
            f"EventLog.frame() of {N:,} events",
            frame_s,
            "s",
            baseline="pd.DataFrame(records)",
            baseline_value=base_s,
            ratio=_common.ratio_median(times["frame"], times["pandas"]),
            target_ratio=1.3,
            cpu_value=frame_cpu,
            cpu_baseline_value=base_cpu,
            cpu_ratio=_common.ratio_median(times.cpu["frame"], times.cpu["pandas"]),
            note=f"{frame_s / N * 1e6:.1f} us/event",
        )
    ]
    _common.report(rows, args.json)


if __name__ == "__main__":
    main()
